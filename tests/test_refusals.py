"""Runs a judge cannot serve are stopped and refused: the circuit breaker stops sending to a
judge whose first judgments all fail, and a judge whose Invalid share is above the limit
makes the run exit 4 with its most frequent reasons. Runs leave nothing half-written behind
and say what their deadline covered. Fake servers on loopback only."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tests.conftest import make_items, run_cli, write_config
from tests.fakeserver import FakeJudge

EXIT_UNRELIABLE = 4


def test_breaker_stops_a_judge_that_ignores_the_schema(tmp_path: Path) -> None:
    """It passes the probe, then answers every real request with the wrong JSON."""
    items = make_items(tmp_path / "i.jsonl", 10)
    with FakeJudge(fault_rate=1.0, faults=("wrongschema",)) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        sent = judge.chat_requests
    assert proc.returncode == EXIT_UNRELIABLE, proc.stderr
    assert "circuit breaker: its first 8 judgments were all Invalid" in proc.stderr
    assert "most frequent reasons: " in proc.stderr
    assert "× baseline: " in proc.stderr
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert j.height == 40
    assert (j["verdict"] == "Invalid").all()  # nothing lost
    stopped = j.filter(pl.col("invalid_reason").str.starts_with("not run: circuit breaker"))
    ran = j.height - stopped.height
    assert 8 <= ran <= 16  # the first 8, and those already in flight (8 lanes)
    assert sent == ran * 3  # each asked once and re-asked twice; the others never sent
    assert stopped.height >= 24


def test_breaker_judgments_run_on_resume_once_the_judge_is_fixed(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 10)
    out = tmp_path / "run"
    with FakeJudge(fault_rate=1.0, faults=("wrongschema",)) as broken:
        cfg = write_config(tmp_path / "c.toml", broken.url, items, engine={"max_reasks": 0})
        first = run_cli("--config", str(cfg), "--out", str(out))
    assert first.returncode == EXIT_UNRELIABLE, first.stderr
    before = pl.read_parquet(out / "judgments.parquet")
    stopped = before["invalid_reason"].str.starts_with("not run: circuit breaker")
    with FakeJudge() as fixed:  # the same model and build, at another address
        cfg = write_config(tmp_path / "c.toml", fixed.url, items, engine={"max_reasks": 0})
        again = run_cli("--config", str(cfg), "--out", str(out), "--resume")
        sent = fixed.chat_requests
    assert again.returncode == 0, again.stderr  # under half Invalid now
    assert sent == stopped.sum()  # exactly the stopped judgments were sent
    after = pl.read_parquet(out / "judgments.parquet")
    assert (after["verdict"] == "Invalid").sum() == before.height - stopped.sum()
    assert not after["invalid_reason"].str.starts_with("not run").any()


def test_invalid_share_above_the_limit_exits_4(tmp_path: Path) -> None:
    """No breaker (it is configurable): about 70% Invalid, over the default limit 0.5, but
    under a limit of 0.9."""
    items = make_items(tmp_path / "i.jsonl", 5)
    engine = {"max_reasks": 0, "breaker_after": 0}
    with FakeJudge(fault_rate=0.7, faults=("nonjson",), seed=3) as judge:
        strict = write_config(tmp_path / "c.toml", judge.url, items, engine=engine)
        proc = run_cli("--config", str(strict), "--out", str(tmp_path / "run"))
        lenient = write_config(
            tmp_path / "c2.toml", judge.url, items, engine={**engine, "fail_invalid_rate": 0.9}
        )
        ok = run_cli("--config", str(lenient), "--out", str(tmp_path / "run2"))
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    rate = (j["verdict"] == "Invalid").mean()
    assert 0.5 < rate < 0.9, rate  # type: ignore[operator]
    assert proc.returncode == EXIT_UNRELIABLE, proc.stderr
    assert "above [engine] fail_invalid_rate 0.5" in proc.stderr
    assert "× baseline: verdict: not JSON" in proc.stderr
    assert "circuit breaker" not in proc.stderr
    assert ok.returncode == 0, ok.stderr


def test_a_killed_table_write_leaves_nothing_after_the_next_run(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    out = tmp_path / "run"
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items)
        assert run_cli("--config", str(cfg), "--out", str(out)).returncode == 0
        stale = out / ".judgments-k1ll3d"  # what a kill during the table write leaves
        stale.mkdir()
        (stale / "000000.parquet").write_bytes(b"half a chunk")
        (out / "judgments.parquet.tmp").write_bytes(b"half a table")
        again = run_cli("--config", str(cfg), "--out", str(out), "--resume")
    assert again.returncode == 0, again.stderr
    assert not list(out.glob(".judgments-*"))
    assert not (out / "judgments.parquet.tmp").exists()
    assert pl.read_parquet(out / "judgments.parquet").height == 8
