"""Crash and resume: kill -9 a sweep at random moments; the final judgments equal an
uninterrupted run's, with nothing lost and nothing duplicated."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

from tests.conftest import ROOT, make_items, run_cli, write_config
from tests.fakeserver import FakeJudge

COLUMNS = [
    "condition",
    "item_id",
    "order",
    "seed",
    "verdict",
    "target",
    "explanation",
    "request_key",
]


def _start(cfg: Path, out: Path, resume: bool) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        "-m",
        "judgeprobe.run",
        "--no-progress",
        "--config",
        str(cfg),
        "--out",
        str(out),
    ]
    if resume:
        args.append("--resume")
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _stored(out: Path) -> int:
    db = out / "store.sqlite"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM results").fetchone()[0])


def test_kill_minus_nine_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 40)
    with FakeJudge(latency_s=0.15) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items)
        reference = tmp_path / "reference"
        proc = run_cli("--config", str(cfg), "--out", str(reference))
        assert proc.returncode == 0, proc.stderr
        total = 40 * 4

        out = tmp_path / "crashed"
        rng = random.Random(1234)
        kills = 0
        seen_progress: list[int] = []
        for attempt in range(6):
            child = _start(cfg, out, resume=attempt > 0)
            # Kill at a random moment once requests are flowing (or the process ends first).
            deadline = time.monotonic() + 60
            target_delay = rng.uniform(0.05, 0.6)
            while child.poll() is None and time.monotonic() < deadline:
                if _stored(out) > (seen_progress[-1] if seen_progress else 0):
                    time.sleep(target_delay)
                    break
                time.sleep(0.02)
            if child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
                child.wait()
                kills += 1
            seen_progress.append(_stored(out))
            if child.returncode == 0:
                break
        assert kills >= 3, "the sweep finished before it could be killed several times"
        assert seen_progress == sorted(seen_progress)  # nothing stored is ever lost
        final = run_cli("--config", str(cfg), "--out", str(out), "--resume")
        assert final.returncode == 0, final.stderr

    assert _stored(out) == total  # one result per key: no duplicates, no losses
    got = pl.read_parquet(out / "judgments.parquet").select(COLUMNS).sort(COLUMNS)
    want = pl.read_parquet(reference / "judgments.parquet").select(COLUMNS).sort(COLUMNS)
    assert got.height == total
    assert got.equals(want)
    assert (got["verdict"] != "Invalid").all()
