"""Sharding: the shards partition the sweep, and their merge equals an unsharded run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.engine.shard import Shard
from tests.conftest import ROOT, make_items, run_cli, write_config
from tests.fakeserver import FakeJudge

COLUMNS = ["judge", "condition", "item_id", "order", "seed", "verdict", "explanation",
           "request_key", "fingerprint"]  # fmt: skip


def _shard(cfg: Path, out: Path, spec: str, *more: str) -> subprocess.CompletedProcess[str]:
    return run_cli("--config", str(cfg), "--out", str(out), "--shard", spec, *more)


def _merge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe.merge", *args],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip


def test_every_document_belongs_to_exactly_one_shard() -> None:
    docs = [f"document {i}" for i in range(300)]
    shards = [Shard(i, 3) for i in range(3)]
    owners = [[s.index for s in shards if s.owns(d)] for d in docs]
    assert all(len(o) == 1 for o in owners)
    assert all(sum(o == [i] for o in owners) > 60 for i in range(3))  # a fair share each


@pytest.mark.parametrize("spec", ["3/3", "-1/2", "1", "a/b", "0/0"])
def test_bad_shard_spec(spec: str) -> None:
    with pytest.raises(JudgeprobeError, match="--shard"):
        Shard.parse(spec)


def test_shard_union_equals_unsharded_run(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 20)
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, order="both")
        whole = run_cli("--config", str(cfg), "--out", str(tmp_path / "whole"))
        assert whole.returncode == 0, whole.stderr
        for i in range(3):
            proc = _shard(cfg, tmp_path / f"s{i}", f"{i}/3")
            assert proc.returncode == 0, proc.stderr
            assert not (tmp_path / f"s{i}" / "metrics.csv").exists()  # metrics only when merged
        sizes = [pl.read_parquet(tmp_path / f"s{i}" / "judgments.parquet").height for i in range(3)]
        assert all(0 < n < 20 * 8 for n in sizes)
        assert sum(sizes) == 20 * 8

        # A shard resumed with another --shard is refused.
        wrong = _shard(cfg, tmp_path / "s0", "1/3", "--resume")
        assert wrong.returncode == 2
        assert "shard" in wrong.stderr

    # Refused: a missing shard, a shard twice, a shard of another config; nothing written.
    missing = _merge("--out", str(tmp_path / "m"), str(tmp_path / "s0"), str(tmp_path / "s1"))
    assert missing.returncode == 2
    assert "shard 2/3 is missing" in missing.stderr
    twice = _merge("--out", str(tmp_path / "m"), *(str(tmp_path / f"s{i}") for i in (0, 1, 1)))
    assert twice.returncode == 2
    assert "given twice" in twice.stderr
    assert not (tmp_path / "m").exists()

    merged = _merge("--out", str(tmp_path / "m"), *(str(tmp_path / f"s{i}") for i in range(3)))
    assert merged.returncode == 0, merged.stderr
    got = pl.read_parquet(tmp_path / "m" / "judgments.parquet").select(COLUMNS).sort(COLUMNS)
    want = pl.read_parquet(tmp_path / "whole" / "judgments.parquet").select(COLUMNS).sort(COLUMNS)
    assert got.equals(want)
    assert (tmp_path / "m" / "metrics.csv").exists()


def test_merge_refuses_shards_of_different_configs(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 4)
    with FakeJudge() as judge:
        a = write_config(tmp_path / "a.toml", judge.url, items)
        b = write_config(tmp_path / "b.toml", judge.url, items, seeds=[1])
        assert _shard(a, tmp_path / "a", "0/2").returncode == 0
        assert _shard(b, tmp_path / "b", "1/2").returncode == 0
    proc = _merge("--out", str(tmp_path / "m"), str(tmp_path / "a"), str(tmp_path / "b"))
    assert proc.returncode == 2, proc.stderr
    assert "different config" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "m").exists()


def test_a_merge_counts_judgments_the_breaker_never_sent(tmp_path: Path) -> None:
    """A shard whose judge the circuit breaker stopped has judgments that never ran ("not run:
    circuit breaker ..."): the merge says so and exits 3, as for a stopped sweep."""
    items = make_items(tmp_path / "items.jsonl", 30)
    with FakeJudge(fault_rate=1.0, faults=("wrongschema",)) as bad, FakeJudge() as good:
        cfg = write_config(tmp_path / "c.toml", bad.url, items, {"breaker_after": 2})
        tripped = _shard(cfg, tmp_path / "s0", "0/2")
        assert tripped.returncode == 4, tripped.stderr  # the judge is unreliable
        cfg = write_config(tmp_path / "c.toml", good.url, items, {"breaker_after": 2})
        assert _shard(cfg, tmp_path / "s1", "1/2").returncode == 0
    shard0 = pl.read_parquet(tmp_path / "s0" / "judgments.parquet")
    skipped = shard0.filter(pl.col("invalid_reason").str.starts_with("not run: circuit breaker"))
    assert skipped.height > 0

    merged = _merge("--out", str(tmp_path / "m"), str(tmp_path / "s0"), str(tmp_path / "s1"))
    assert merged.returncode == 3, merged.stderr
    assert f"{skipped.height} judgments were not run" in merged.stderr
