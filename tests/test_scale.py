"""Prefix-aware scheduling: a document's judgments stay together, in plan and in lanes."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from pathlib import Path

import pytest

from judgeprobe.conditions import builtin_conditions
from judgeprobe.core.corpus import load_items
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.stream import cue_jobs, document_of, protocols_for
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.runner import run_jobs
from judgeprobe.engine.store import Outcome, Store
from tests.conftest import make_items


@dataclass(frozen=True)
class FakeJob:
    key: str
    judge: str
    document: str


def test_plan_yields_each_documents_jobs_together(tmp_path: Path) -> None:
    items = load_items(str(make_items(tmp_path / "items.jsonl", 12)))
    cfg = SweepConfig(order="both", seeds=[0, 1], protocols=["baseline", "scot"])
    fingerprints = {judge.name: "f" for judge in cfg.judges}  # the default judge, whichever
    docs = [
        document_of(job)
        for job in cue_jobs(cfg, protocols_for(cfg), items, builtin_conditions(), fingerprints)
    ]
    runs = [doc for doc, _ in itertools.groupby(docs)]
    assert len(runs) == len(set(runs)) == 12  # one run per document, never interleaved
    assert len(docs) == 12 * 2 * 2 * 2 * len(cfg.conditions)


async def test_lanes_run_a_documents_jobs_back_to_back(tmp_path: Path) -> None:
    # 30 documents of 10 jobs on one judge, 4 lanes, chunks of at most 6 jobs.
    jobs = [FakeJob(f"{d}-{j}", "judge", f"doc{d}") for d in range(30) for j in range(10)]
    seen: dict[asyncio.Task[object] | None, list[str]] = {}

    async def handle(job: FakeJob) -> Outcome:
        seen.setdefault(asyncio.current_task(), []).append(job.document)
        await asyncio.sleep(0)  # let other lanes interleave in time
        return Outcome(key=job.key, status="valid", verdict="A")

    store = Store(tmp_path / "s.sqlite")
    with SweepProgress(len(jobs), enabled=False) as progress:
        done = await run_jobs(
            jobs, handle, {"judge": 4}, store, progress, group=lambda j: j.document, max_group=6
        )
    store.close()
    assert done.sent == 300
    assert len(seen) == 4
    for lane in seen.values():
        runs = [(doc, len(list(group))) for doc, group in itertools.groupby(lane)]
        # Within a lane, a document's jobs come back to back in chunks of 6 then 4.
        assert all(n in (4, 6, 10) for _, n in runs), runs
    per_doc = sum(len({doc for doc in lane}) for lane in seen.values())
    assert per_doc <= 60  # each document spread over at most two chunks


async def test_without_grouping_jobs_spread_over_lanes(tmp_path: Path) -> None:
    jobs = [FakeJob(str(i), "judge", "same document") for i in range(40)]
    lanes: set[asyncio.Task[object] | None] = set()

    async def handle(job: FakeJob) -> Outcome:
        lanes.add(asyncio.current_task())
        await asyncio.sleep(0)
        return Outcome(key=job.key, status="valid", verdict="A")

    store = Store(tmp_path / "s.sqlite")
    with SweepProgress(len(jobs), enabled=False) as progress:
        await run_jobs(jobs, handle, {"judge": 4}, store, progress)
    store.close()
    assert len(lanes) == 4


async def test_a_lane_that_fails_ends_the_run_with_its_error_not_a_hang(tmp_path: Path) -> None:
    # 200 jobs, one lane, a queue of 2: a bug on job 7 killed the lane, the queue filled and the
    # producer waited for ever. Now the error ends the run, and what was judged is stored.
    jobs = [FakeJob(str(i), "judge", "d") for i in range(200)]

    async def handle(job: FakeJob) -> Outcome:
        await asyncio.sleep(0)
        if job.key == "7":
            raise RuntimeError("a bug in the judgment")
        return Outcome(key=job.key, status="valid", verdict="A")

    store = Store(tmp_path / "s.sqlite")
    bug = pytest.raises(RuntimeError, match="a bug in the judgment")
    with SweepProgress(len(jobs), enabled=False) as progress, bug:
        await asyncio.wait_for(run_jobs(jobs, handle, {"judge": 1}, store, progress), 10)
    assert store.is_final("0")
    assert not store.is_final("7")
    store.close()
