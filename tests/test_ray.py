"""``--ray``: the sweep's rounds on a local Ray (2 CPUs, no dashboard), and the row mappings.

The mapping tests need no Ray. The rest share one local Ray started here (skipped cleanly
only when ray is not installed) that every sweep joins with ``--ray ADDRESS``.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.cue.run import cli
from judgeprobe.engine.batch import _answer
from judgeprobe.engine.client import Completion, ServerInfo, chat_body
from judgeprobe.engine.ray_rounds import (
    answer_line,
    cluster_endpoint,
    cluster_info,
    failed_line,
    vllm_answer,
    vllm_row,
)
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.retry import HTTPStatusError
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.protocols.replies import PairwiseReply
from judgeprobe.runs.ray import check_engines
from judgeprobe.runs.rundir import EXIT_INCOMPLETE, EXIT_UNRELIABLE
from tests.conftest import ROOT, make_items, run_cli, write_config
from tests.fakeserver import FakeJudge

IN_CLUSTER = JudgeConfig.model_validate(
    {"name": "q7", "model": "Qwen/Qwen2.5-7B-Instruct", "backend": "vllm",
     "disable_thinking": True,
     "cluster": {"model_source": "/models/qwen7b", "replicas": 4, "gpus_per_replica": 2,
                 "engine_kwargs": {"max_model_len": 16384}}}
)  # fmt: skip


def _body(max_tokens: int = 400) -> dict[str, Any]:
    schema = PairwiseReply.model_json_schema()
    req = Request(
        endpoint="q7",
        messages=({"role": "user", "content": "Which summary is better?"},),
        schema_name="pairwise",
        schema=schema,
        reply_model=PairwiseReply,
        sampling=Sampling(temperature=0.0, top_p=1.0, max_tokens=max_tokens),
        seed=7,
        fingerprint="fp",
    )
    return chat_body(req, list(req.messages), cluster_info(IN_CLUSTER), IN_CLUSTER)


# --- mapping: a request onto vLLM's row, and its output back (no Ray, no GPU) -----------------


def test_a_request_maps_onto_vllm_sampling_and_structured_outputs() -> None:
    body = _body()
    row = vllm_row("key1", body)
    assert row["custom_id"] == "key1"
    assert row["messages"] == body["messages"]
    assert row["sampling_params"] == {
        "temperature": 0.0,
        "top_p": 1.0,
        "seed": 7,
        "max_tokens": 400,
        "structured_outputs": {"json": PairwiseReply.model_json_schema()},
    }
    assert row["max_tokens"] == 400


@pytest.mark.parametrize(("used", "finish"), [(37, "stop"), (400, "length")])
def test_vllm_output_maps_back_to_a_chat_completion(used: int, finish: str) -> None:
    out = {**vllm_row("key1", _body()), "generated_text": '{"verdict": "Tie"}',
           "num_input_tokens": 120, "num_generated_tokens": used}  # fmt: skip
    mapped = vllm_answer(out)
    assert mapped["custom_id"] == "key1"
    answer = _answer(orjson.loads(mapped["answer"]))
    assert answer == Completion('{"verdict": "Tie"}', finish, 120, used)


def test_a_failed_vllm_row_is_a_failed_line() -> None:
    out = {**vllm_row("key1", _body()), "__inference_error__": "CUDA out of memory"}
    answer = _answer(orjson.loads(vllm_answer(out)["answer"]))
    assert isinstance(answer, HTTPStatusError)
    assert answer.status_code == 500
    assert "CUDA out of memory" in answer.message


def test_answer_lines_read_back_as_the_batch_path_reads_them() -> None:
    done = Completion("{}", "stop", 3, 4)
    assert _answer(orjson.loads(answer_line("k", done))) == done
    refused = _answer(orjson.loads(failed_line("k", 400, "bad request: no such model")))
    assert isinstance(refused, HTTPStatusError)
    assert (refused.status_code, "no such model" in refused.message) == (400, True)


def test_an_in_cluster_judge_is_keyed_by_its_engine_and_model() -> None:
    info = cluster_info(IN_CLUSTER)
    assert (info.backend, info.model) == ("vllm", "Qwen/Qwen2.5-7B-Instruct")
    other = IN_CLUSTER.model_copy(
        update={"cluster": IN_CLUSTER.cluster.model_copy(update={"engine_kwargs": {}})}  # type: ignore[union-attr]
    )
    assert cluster_info(other).fingerprint != info.fingerprint
    assert isinstance(info, ServerInfo)


def test_an_in_cluster_judge_needs_ray() -> None:
    check_engines([IN_CLUSTER], ray=True)
    with pytest.raises(JudgeprobeError, match="run the sweep with --ray"):
        check_engines([IN_CLUSTER], ray=False)


@pytest.mark.parametrize(
    ("address", "endpoint"),
    [
        ("10.0.0.5:6379", ("10.0.0.5", 6379)),
        ("head.cluster.local:6380", ("head.cluster.local", 6380)),
        ("[::1]:6379", ("::1", 6379)),
        ("ray://head:10002", ("head", 10002)),
        ("ray://head", ("head", 10001)),  # the Ray Client's own port
    ],
)
def test_a_ray_address_names_a_host_and_port(address: str, endpoint: tuple[str, int]) -> None:
    assert cluster_endpoint(address) == endpoint


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("127.0.0.1:{port}", "no Ray cluster answers at 127.0.0.1:"),
        ("ray://127.0.0.1:{port}", "no Ray cluster answers at 127.0.0.1:"),
        ("nonsense:xx", "not a Ray address"),
        ("nonsense", "not a Ray address"),
        ("head:99999", "not a Ray address"),
        ("http://head:6379", "not a Ray address"),
    ],
)
def test_a_dead_or_malformed_ray_address_is_one_line_within_seconds(
    address: str, said: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    address = address.format(port=_closed_port())  # a closed port, drawn when the test runs
    out = tmp_path / "run"
    start = time.monotonic()
    code = cli(["--ray", address, "--out", str(out)])
    took = time.monotonic() - start
    err = capfd.readouterr().err  # file descriptors too: Ray's own logs bypass sys.stderr
    assert code == 2
    assert err.startswith(f"error: --ray {address}: ")
    assert err.count("\n") == 1
    assert said in err
    assert took <= 10
    assert not out.exists()  # checked before anything is planned or written


def test_the_vllm_processor_config_is_built_without_a_gpu() -> None:
    pytest.importorskip("ray.data.llm")
    from judgeprobe.engine.ray_rounds import vllm_config

    config = vllm_config(IN_CLUSTER)
    assert config.model_source == "/models/qwen7b"
    assert config.engine_kwargs["tensor_parallel_size"] == 2
    assert config.engine_kwargs["max_model_len"] == 16384
    assert config.concurrency == 4
    assert config.chat_template_stage == {"chat_template_kwargs": {"enable_thinking": False}}
    assert config.should_continue_on_error


# --- sweeps on a local Ray ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A local Ray for this module: 2 CPUs, no dashboard, a small object store."""
    ray = pytest.importorskip("ray")
    context = ray.init(
        num_cpus=2, include_dashboard=False, object_store_memory=128 * 1024**2,
        log_to_driver=False, logging_level="ERROR",
    )  # fmt: skip
    try:
        yield str(context.address_info["gcs_address"])
    finally:
        ray.shutdown()


def _frame(run: Path) -> pl.DataFrame:
    key = ["judge", "protocol", "condition", "item_id", "order", "seed"]
    return pl.read_parquet(run / "judgments.parquet").sort(key)


def test_ray_gives_the_live_engines_judgments(tmp_path: Path, ray_address: str) -> None:
    items = make_items(tmp_path / "items.jsonl", 3)
    conditions = ["Blind", "Flip", "RevealAfter", "Verbosity", "Confidence", "Injected"]
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=conditions,
                           protocols=["baseline", "scot", "pbp"])  # fmt: skip
        live = run_cli("--config", str(cfg), "--out", str(tmp_path / "live"))
        sent_live = judge.chat_requests
        on_ray = run_cli("--config", str(cfg), "--out", str(tmp_path / "ray"),
                         "--ray", ray_address, timeout=600)  # fmt: skip
        sent_ray = judge.chat_requests - sent_live
    assert live.returncode == 0, live.stderr
    assert on_ray.returncode == 0, on_ray.stderr
    assert "round 3:" in on_ray.stderr  # PBP's stages and the reveal are later rounds
    a, b = _frame(tmp_path / "live"), _frame(tmp_path / "ray")
    assert a.height == b.height == 3 * 6 * 3
    assert (a["verdict"] != "Invalid").all()
    timing = ["latency_s"]
    assert a.drop(timing).equals(b.drop(timing))
    with sqlite3.connect(tmp_path / "ray" / "store.sqlite") as db:
        requests = db.execute("SELECT count(*) FROM results").fetchone()[0]
    assert sent_ray == requests <= sent_live  # each request once (live may ask one twice)


def test_served_judges_under_ray_retry_what_clears_and_record_what_does_not(
    tmp_path: Path, ray_address: str
) -> None:
    items = make_items(tmp_path / "items.jsonl", 6)
    with FakeJudge(fault_rate=0.4, faults=("429", "500", "503", "reset"), seed=3) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=["Blind"])
        flaky = run_cli("--config", str(cfg), "--out", str(tmp_path / "flaky"),
                        "--ray", ray_address, timeout=600)  # fmt: skip
        injected = sum(judge.injected.values())
    assert flaky.returncode == 0, flaky.stderr
    assert injected > 0
    assert (_frame(tmp_path / "flaky")["verdict"] != "Invalid").all()
    with FakeJudge(fixed_status=400) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=["Blind"])
        refused = run_cli("--config", str(cfg), "--out", str(tmp_path / "refused"),
                          "--ray", ray_address, timeout=600)  # fmt: skip
        sent = judge.chat_requests
    assert refused.returncode == EXIT_UNRELIABLE, refused.stderr
    j = _frame(tmp_path / "refused")
    assert j["invalid_reason"].str.contains("HTTP 400").all()
    assert j["invalid_reason"].str.contains("fixed").all()  # the server's message
    assert sent == j.height  # a 4xx is not retried


def test_failures_a_resume_clears_are_counted_once_and_exit_3(
    tmp_path: Path, ray_address: str
) -> None:
    # Half the requests fail (503, one attempt): some judgments end Invalid in round 1 while
    # Reveal-After's second turns go on in round 2. The count is of judgments, not of walks.
    items = make_items(tmp_path / "items.jsonl", 8)
    engine = {"max_attempts": 1, "fail_invalid_rate": 1.0, "breaker_after": 0}
    with FakeJudge(fault_rate=0.5, faults=("503",), seed=5) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, engine=engine,
                           conditions=["Blind", "RevealAfter"])  # fmt: skip
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"),
                       "--ray", ray_address, timeout=600)  # fmt: skip
    assert proc.returncode == EXIT_INCOMPLETE, proc.stderr
    assert "round 2:" in proc.stderr
    failed = _frame(tmp_path / "run").filter(pl.col("verdict") == "Invalid").height
    assert 0 < failed < 16
    assert f"{failed} judgments failed for a reason a resume may clear" in proc.stderr
    assert "--resume" in proc.stderr.split("resume may clear")[-1]


def test_the_breaker_and_the_sweep_deadline_hold_under_ray(
    tmp_path: Path, ray_address: str
) -> None:
    items = make_items(tmp_path / "items.jsonl", 10)
    with FakeJudge(fault_rate=1.0, faults=("wrongschema",)) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=["Blind"])
        broken = run_cli("--config", str(cfg), "--out", str(tmp_path / "broken"),
                         "--ray", ray_address, timeout=600)  # fmt: skip
    assert broken.returncode == EXIT_UNRELIABLE, broken.stderr
    assert "circuit breaker: its first 8 judgments were all Invalid" in broken.stderr
    with FakeJudge(latency_s=0.5) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=["Blind"],
                           protocols=["pbp"], engine={"sweep_deadline_s": 1.0})  # fmt: skip
        stopped = run_cli("--config", str(cfg), "--out", str(tmp_path / "stopped"),
                          "--ray", ray_address, timeout=600)  # fmt: skip
    assert stopped.returncode == EXIT_INCOMPLETE, stopped.stderr
    assert "sweep deadline (1s) reached" in stopped.stderr
    j = _frame(tmp_path / "stopped")
    assert j.height == 10
    assert j["invalid_reason"].str.starts_with("not run").all()  # PBP's later stages never ran


def _driver(cfg: Path, out: Path, address: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgeprobe.run", "--no-progress", "--config", str(cfg),
         "--out", str(out), "--ray", address, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip


def _wait_for(judge: FakeJudge, n: int, proc: subprocess.Popen[str]) -> None:
    while judge.chat_requests < n:
        assert proc.poll() is None, proc.communicate()[1]
        time.sleep(0.02)


def _answers(run: Path) -> int:
    """Answers the run's store holds (0 before it exists)."""
    if not (run / "store.sqlite").exists():
        return 0
    with sqlite3.connect(run / "store.sqlite") as db:
        try:
            return int(db.execute("SELECT count(*) FROM batch_answers").fetchone()[0])
        except sqlite3.OperationalError:  # no table yet
            return 0


def test_a_killed_driver_resumes_and_sends_only_what_the_store_lacks(
    tmp_path: Path, ray_address: str
) -> None:
    items = make_items(tmp_path / "items.jsonl", 40)  # Baseline, Blind: one request each
    run = tmp_path / "run"
    with FakeJudge(latency_s=0.5) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=["Blind"])
        proc = _driver(cfg, run, ray_address)
        while _answers(run) == 0:  # mid-round: some answers stored, not all
            assert proc.poll() is None, proc.communicate()[1]
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        time.sleep(3.0)  # Ray ends the dead driver's workers
        stored = _answers(run)
        assert 0 < stored < 40
        before = judge.chat_requests
        resumed = _driver(cfg, run, ray_address, "--resume")
        _, err = resumed.communicate(timeout=600)
        sent = judge.chat_requests - before
    assert resumed.returncode == 0, err
    assert sent == 40 - stored
    j = _frame(run)
    assert j.height == 40
    assert j["item_id"].is_unique().all()
    assert (j["verdict"] != "Invalid").all()


def _ray_workers(name: str) -> list[int]:
    """Pids of this machine's Ray worker processes whose title names ``name``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                title = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if title.startswith(b"ray::") and name.encode() in title:
                found.append(int(entry.name))
    return found


def test_a_killed_ray_worker_is_retried_and_nothing_is_lost_or_doubled(
    tmp_path: Path, ray_address: str
) -> None:
    items = make_items(tmp_path / "items.jsonl", 40)
    run = tmp_path / "run"
    with FakeJudge(latency_s=0.3) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=["Blind"])
        proc = _driver(cfg, run, ray_address)
        _wait_for(judge, 12, proc)
        workers = _ray_workers("ServedJudge")
        assert workers, "no Ray worker runs the served judge"
        for pid in workers:
            os.kill(pid, signal.SIGKILL)
        _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    j = _frame(run)
    assert j.height == 40
    assert j["item_id"].is_unique().all()
    assert (j["verdict"] != "Invalid").all()
    with sqlite3.connect(run / "store.sqlite") as db:
        assert db.execute("SELECT count(*) FROM outcomes").fetchone()[0] == 40


def test_the_rayjob_runs_the_paper_config_with_in_cluster_judges() -> None:
    yaml = pytest.importorskip("yaml")
    from judgeprobe.cue.config import load_config

    ray_cfg = load_config(ROOT / "servers" / "ray" / "cue-labels.toml")
    paper = load_config(ROOT / "experiments" / "paper" / "cue-labels.toml")
    assert ray_cfg.digest() == paper.digest()  # the same sweep; only how judges are reached
    assert all(j.cluster is not None and not j.url for j in ray_cfg.judges)
    job = yaml.safe_load((ROOT / "servers" / "ray" / "rayjob.yaml").read_text())
    assert job["kind"] == "RayJob"
    entry = job["spec"]["entrypoint"]
    assert "--config /app/servers/ray/cue-labels.toml" in entry
    assert "--ray auto" in entry
    assert "--resume" in entry
    gpus = sum(g["replicas"] for g in job["spec"]["rayClusterSpec"]["workerGroupSpecs"])
    engines = [j.cluster for j in ray_cfg.judges if j.cluster is not None]
    assert gpus == sum(c.replicas * c.gpus_per_replica for c in engines)


def test_a_sequential_run_on_ray_takes_the_live_runs_rounds(
    tmp_path: Path, ray_address: str
) -> None:
    """A sequential design under --ray: each round a Ray sweep; the same judgments, round by
    round, as the live run of the same config."""
    items = make_items(tmp_path / "items.jsonl", 6)
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, design="sequential", round=3)
        live = run_cli("--config", str(cfg), "--out", str(tmp_path / "live"))
        on_ray = run_cli("--config", str(cfg), "--out", str(tmp_path / "ray"),
                         "--ray", ray_address, timeout=600)  # fmt: skip
    assert live.returncode == 0, live.stderr
    assert on_ray.returncode == 0, on_ray.stderr
    assert "round 2: 6 documents" in on_ray.stderr
    timing = ["latency_s", "run_id"]
    assert _frame(tmp_path / "live").drop(timing).equals(_frame(tmp_path / "ray").drop(timing))
