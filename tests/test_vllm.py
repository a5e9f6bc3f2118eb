"""judgeprobe against vLLM, through a fake that enforces vLLM's request validation (the
rules it copies are listed in ``tests/fake_vllm.py``), and the sampling refusals that hold
on every backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from judgeprobe.engine.request import Sampling
from tests.conftest import make_items, run_cli
from tests.fake_vllm import FakeVLLM
from tests.fakeserver import FakeJudge
from tests.test_tgi import PAPER, refused_on_tgi, sent_body, sweep_config


def test_sampling_reaches_vllm_and_nothing_is_ignored(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 2)
    with FakeVLLM() as vllm:
        cfg = sweep_config(tmp_path / "c.toml", vllm.url, items, sampling=PAPER)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        received, ignored, rejected = list(vllm.received), list(vllm.ignored), vllm.rejected
    assert proc.returncode == 0, proc.stderr
    assert ignored == []
    assert rejected == []
    sweep = [r for r in received if r["schema"]["title"] != "probe"]
    assert len(sweep) == 2 * 4
    assert all(r["repetition_penalty"] == 1.15 and r["top_p"] == 0.95 for r in sweep)
    manifest = orjson.loads((tmp_path / "run" / "manifest.json").read_bytes())
    assert manifest["judges"][0]["sampling"] == {
        "sent": {"temperature": 1.0, "top_p": 0.95, "repetition_penalty": 1.15, "seed": [0]},
        "mapped": [],
    }


def test_llama_cpp_gets_its_own_penalty_name() -> None:
    body = sent_body("llama-server", Sampling(**PAPER))
    assert body["repeat_penalty"] == 1.15
    assert "repetition_penalty" not in body


def test_penalty_is_refused_where_no_field_honours_it(tmp_path: Path) -> None:
    """A generic OpenAI-compatible server has no repetition penalty: refused, not dropped."""
    items = make_items(tmp_path / "items.jsonl", 1)
    with FakeJudge() as judge:
        cfg = sweep_config(
            tmp_path / "c.toml", judge.url, items, judge={"backend": "openai"}, sampling=PAPER
        )
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        sent = judge.chat_requests
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("error: judge fake: repetition_penalty 1.15 has no OpenAI-API")
    assert sent == 0
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("seed", [-1, 2**32 - 1])
def test_seeds_that_mean_random_are_refused(tmp_path: Path, seed: int) -> None:
    items = make_items(tmp_path / "items.jsonl", 1)
    with FakeVLLM() as vllm:
        cfg = sweep_config(tmp_path / "c.toml", vllm.url, items, seeds=[0, seed])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    assert proc.returncode == 2
    assert f"error: judge fake: seed {seed} is out of range" in proc.stderr
    assert not (tmp_path / "run").exists()


def _manifest(tmp_path: Path, url: str, out: str, **judge: object) -> dict[str, Any]:
    items = make_items(tmp_path / "items.jsonl", 1)
    cfg = sweep_config(tmp_path / f"{out}.toml", url, items, judge=judge)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / out))
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = orjson.loads((tmp_path / out / "manifest.json").read_bytes())
    return data


def test_batch_invariance_is_recorded_and_keyed(tmp_path: Path) -> None:
    """A judge declared batch-invariant (vLLM with VLLM_BATCH_INVARIANT=1) is recorded in the
    determinism level, and its fingerprint differs: its replies never share a cache entry
    with a batch-dependent server's."""
    with FakeVLLM() as vllm:
        plain = _manifest(tmp_path, vllm.url, "plain")
        invariant = _manifest(tmp_path, vllm.url, "invariant", batch_invariant=True)
    assert plain["determinism"] == "greedy"
    assert invariant["determinism"] == "greedy+batch-invariant"
    (p,), (i,) = plain["judges"], invariant["judges"]
    assert (p["determinism"], i["determinism"]) == ("greedy", "greedy+batch-invariant")
    assert i["server"]["batch_invariant"] is True
    assert "batch_invariant" not in p["server"]
    assert i["fingerprint"] != p["fingerprint"]


def test_batch_invariance_is_refused_off_vllm(tmp_path: Path) -> None:
    said = refused_on_tgi(tmp_path, {"batch_invariant": True})
    assert "error: judge fake: batch_invariant is a vLLM option" in said
