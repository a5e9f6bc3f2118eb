"""A judge server that goes down mid-sweep: the sweep waits it out, or says what to resume.

The live engine holds a judge's requests while its server refuses connections and probes it
until it answers, within each request's deadline. A judgment that still failed for a reason a
resume clears makes the run exit 3 with their count and the command, never 0; the resume then
sends exactly those.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import polars as pl

from judgeprobe.runs.rundir import EXIT_INCOMPLETE
from tests.conftest import ROOT, make_items, write_config
from tests.fakeserver import FakeJudge


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "judgeprobe.run", "--no-progress", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip


def _outage(tmp_path: Path, down_s: float, engine: dict[str, float]) -> tuple[int, str, int]:
    """A 30-item Baseline sweep whose judge stops after 16 requests and is back ``down_s``
    later on the same port: the exit code, stderr and the requests the second server got."""
    items = make_items(tmp_path / "items.jsonl", 30)
    first = FakeJudge(latency_s=0.2)
    with first:
        cfg = write_config(tmp_path / "c.toml", first.url, items, engine=engine)
        proc = _start("--config", str(cfg), "--out", str(tmp_path / "run"))
        while first.chat_requests < 16 and proc.poll() is None:
            time.sleep(0.02)
    assert proc.poll() is None, proc.communicate()[1]  # still sweeping when the server went
    time.sleep(down_s)
    second = FakeJudge()
    second.port = first.port
    with second:
        _, err = proc.communicate(timeout=120)
        sent = second.chat_requests
    return proc.returncode, err, sent


def test_a_sweep_waits_out_a_server_restart(tmp_path: Path) -> None:
    code, err, sent = _outage(tmp_path, 3.0, {"request_deadline_s": 60.0})
    assert code == 0, err
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert j.height == 120
    assert (j["verdict"] != "Invalid").all(), j["invalid_reason"].unique().to_list()
    assert sent > 0  # the rest went to the restarted server


def test_failures_a_resume_clears_exit_3_and_the_resume_sends_exactly_them(
    tmp_path: Path,
) -> None:
    # The server stays down past the request deadline: requests taken up meanwhile fail.
    code, err, _ = _outage(tmp_path, 4.0, {"request_deadline_s": 1.5})
    assert code == EXIT_INCOMPLETE, err
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    failed = j.filter(pl.col("verdict") == "Invalid")
    assert failed.height > 0
    assert failed["invalid_reason"].str.contains("transport: judge unreachable").all()
    assert f"{failed.height} judgments failed for a reason a resume may clear" in err
    assert "--resume" in err.split("clear")[-1]
    with FakeJudge() as third:
        cfg = write_config(tmp_path / "c.toml", third.url, tmp_path / "items.jsonl",
                           engine={"request_deadline_s": 1.5})  # fmt: skip
        resumed = _start("--config", str(cfg), "--out", str(tmp_path / "run"), "--resume")
        _, again = resumed.communicate(timeout=120)
        bodies = list(third.bodies)
    assert resumed.returncode == 0, again
    assert len(bodies) == failed.height  # Baseline: one request per judgment, only the failed
    after = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert (after["verdict"] != "Invalid").all()
    kept = j.filter(pl.col("verdict") != "Invalid").select("request_key", "verdict")
    assert kept.join(after.select("request_key", "verdict"), on="request_key").height == kept.height
