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
from typing import Any

import orjson
import polars as pl

from judgeprobe.candidates.llm import TextReply
from judgeprobe.engine.store import Store
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


def test_stores_written_before_typed_records_still_load(tmp_path: Path) -> None:
    """Rows as earlier versions wrote them (plain strings) load as typed records."""
    path = tmp_path / "store.sqlite"
    Store(path).close()
    old: list[tuple[str, dict[str, Any]]] = [
        ("cue", {"key": "cue", "status": "valid", "verdict": "B", "raw_verdict": "[2,1]",
                 "turn1_verdict": "Tie", "details": {"criteria": {}}}),
        ("rubric", {"key": "rubric", "status": "valid", "verdict": "violated",
                    "raw_verdict": "false"}),
        ("failed", {"key": "failed", "status": "invalid", "verdict": "Invalid",
                    "invalid_reason": "schema: verdict", "retryable": False}),
    ]  # fmt: skip
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO outcomes (key, retryable, data) VALUES (?, 0, ?)",
            [(key, orjson.dumps(data)) for key, data in old],
        )
        db.execute(
            "INSERT INTO results (key, retryable, data) VALUES ('r', 0, ?)",
            (orjson.dumps({"key": "r", "status": "valid", "reply": {"text": "A summary."}}),),
        )
    store = Store(path)
    try:
        for key, data in old:
            outcome = store.get_outcome(key)
            assert outcome is not None
            assert outcome.model_dump(include=set(data)) == data
        result = store.get("r")
        assert result is not None
        assert result.reply_as(TextReply) == TextReply(text="A summary.")
    finally:
        store.close()
