"""Replicas: least-outstanding balancing, prefix affinity, ejection and re-admission."""

from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl
import pytest

from judgeprobe.engine.replicas import ReplicaPool
from judgeprobe.engine.settings import JudgeConfig
from tests.conftest import make_items, run_cli, toml_value, write_config
from tests.fakeserver import FakeJudge


def _with_replicas(cfg: Path, urls: list[str]) -> Path:
    text = cfg.read_text()
    line = next(x for x in text.splitlines() if x.startswith("url = "))
    cfg.write_text(text.replace(line, f"urls = {toml_value(urls)}"))
    return cfg


def test_url_and_urls_are_both_accepted() -> None:
    one = JudgeConfig(name="j", url="http://a/v1/")
    many = JudgeConfig.model_validate({"name": "j", "urls": ["http://a/v1", "http://b/v1/"]})
    assert one.replicas == ("http://a/v1",)
    assert many.url == "http://a/v1"
    assert many.replicas == ("http://a/v1", "http://b/v1")
    with pytest.raises(ValueError, match="not both"):
        JudgeConfig(name="j", url="http://c/v1", urls=("http://a/v1",))
    with pytest.raises(ValueError, match="repeat"):
        JudgeConfig.model_validate({"name": "j", "urls": ["http://a/v1", "http://a/v1"]})


async def test_least_outstanding_and_prefix_affinity() -> None:
    pool = ReplicaPool(["http://a", "http://b", "http://c"], 3, {}, 5.0)
    try:
        a, b, c = pool.replicas
        a.outstanding, b.outstanding, c.outstanding = 3, 0, 1
        assert pool.pick() is b
        b.outstanding = 1
        chosen = pool.pick("doc-1")
        chosen.outstanding += 1
        assert chosen in (b, c)
        # The same prefix returns to the same replica while it has a free slot...
        assert pool.pick("doc-1") is chosen
        # ...and goes to the least loaded one once that replica is full.
        chosen.outstanding = 3
        other = pool.pick("doc-1")
        assert other is not chosen
        assert other.outstanding < 3
    finally:
        await pool.close()


async def test_failing_replica_is_ejected_then_readmitted_after_probe() -> None:
    with FakeJudge() as healthy:
        pool = ReplicaPool(["http://127.0.0.1:9/v1", healthy.url], 4, {}, 5.0, cooldown_s=0.0)
        try:
            bad, good = pool.replicas
            for _ in range(3):
                pool.failed(bad)
            assert not bad.healthy
            assert all(pool.pick() is good for _ in range(5))
            good.ejected_until = 0.0  # cool-down over: the next pick probes it
            pool.pick()
            await asyncio.gather(*pool._probes)
            assert good.healthy
            assert good.failures == 0
        finally:
            await pool.close()


def test_sweep_balances_over_replicas_and_survives_a_failing_one(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 24)
    with (
        FakeJudge(latency_s=0.02) as one,
        FakeJudge(latency_s=0.02) as two,
        FakeJudge(fixed_status=500) as broken,
    ):
        cfg = write_config(tmp_path / "c.toml", one.url, items)
        _with_replicas(cfg, [one.url, two.url, broken.url])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        served = (one.chat_requests, two.chat_requests, broken.chat_requests)
    assert proc.returncode == 0, proc.stderr
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert j.height == 24 * 4
    assert (j["verdict"] != "Invalid").all()  # every request failing on `broken` was retried
    assert served[0] + served[1] == j.height
    assert min(served[0], served[1]) >= 0.25 * j.height  # both healthy replicas share the load
    assert served[2] < 0.25 * j.height  # ejected after a few failures, not sent a third


def test_replicas_from_the_command_line(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 6)
    with FakeJudge() as one, FakeJudge() as two:
        cfg = write_config(tmp_path / "c.toml", one.url, items)
        both = f"fake={one.url},{two.url}"
        proc = run_cli("--config", str(cfg), "--judge", both, "--out", str(tmp_path / "run"))
        served = (one.chat_requests, two.chat_requests)
    assert proc.returncode == 0, proc.stderr
    assert "+1 replicas" in proc.stderr
    assert sum(served) == 6 * 4
    assert min(served) > 0
    bad = run_cli(
        "--config", str(cfg), "--judge", f"fake={one.url},ftp://x", "--out", str(tmp_path / "r2")
    )
    assert bad.returncode == 2
    assert "http" in bad.stderr
    assert "Traceback" not in bad.stderr
