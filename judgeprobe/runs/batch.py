"""A batch pass: a sweep's pending requests exported as a batch file, or its answers ingested.

The same job type as a live sweep, through ``BatchEndpoint``s (``judgeprobe.engine.batch``):
no server is asked, so each judge's identity is the backend and model its config declares.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl
from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.engine.batch import BatchEndpoint, Walk, batch_info, ingest, walk
from judgeprobe.engine.breaker import guarded
from judgeprobe.engine.runner import J, RunSummary
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.runs.rundir import RunDir, open_store
from judgeprobe.runs.sweep import JobType


def _exported(found: Walk, path: Path, console: Console) -> RunSummary:
    """Say what an export wrote; nothing was sent."""
    console.print(
        f"exported {found.lines} requests for {found.pending} pending judgments to "
        f"{path} ({found.already + found.finished} already answered)"
    )
    return RunSummary(sent=found.lines, skipped=found.already)


def _imported(
    found: Walk, path: Path, offered: set[int], used: int, console: Console
) -> RunSummary:
    """Say what an import completed; refuse a file that answers nothing of this run."""
    if offered and not used:
        raise JudgeprobeError(
            f"--import-batch {path}: no answer matches a request of this run "
            "(exported from another config or run?)"
        )
    console.print(
        f"imported {used} of {len(offered)} answers: {found.finished} judgments completed, "
        f"{found.pending} still pending" + ("; export again" if found.pending else "")
    )
    return RunSummary(sent=used, skipped=found.already, pending=found.pending)


async def batch_sweep(
    kind: JobType[J],
    judges: Sequence[JudgeConfig],
    engine: EngineConfig,
    out: Path,
    console: Console,
    export: Path | None,
    imported: Path | None,
    opened: Callable[[], None] | None = None,
) -> tuple[RunSummary, pl.DataFrame | None]:
    """Export ``kind``'s pending requests to ``export``, or ingest the answers in ``imported``.

    The judgments table comes back after an import (None after an export); ``opened`` runs
    once the run directory and its manifest exist.
    """
    for judge in judges:  # validate before anything is written
        batch_info(judge)
    store = open_store(out)
    try:
        endpoints = {
            j.name: BatchEndpoint(j, engine, store, importing=imported is not None) for j in judges
        }
        RunDir(out).write_manifest(kind.manifest(dict(endpoints)))
        if opened is not None:
            opened()
        fingerprints = {name: ep.info.fingerprint for name, ep in endpoints.items()}
        jobs = kind.plan(fingerprints)
        handle = guarded(kind.make, endpoints, store, None)
        if export is not None:  # every pending request to ``export`` (atomically); none sent
            tmp = export.with_name(export.name + ".tmp")
            with tmp.open("wb") as file:
                found = await walk(jobs, handle, store, file)
            os.replace(tmp, export)
            return _exported(found, export, console), None
        assert imported is not None  # keep the answers, then complete every judgment they answer
        offered = ingest(imported, store)
        found = await walk(jobs, handle, store)
        used = len(offered & set().union(*(ep.matched for ep in endpoints.values())))
        summary = _imported(found, imported, offered, used, console)
        store.flush()
        return summary, kind.rows(kind.plan(fingerprints), store, fingerprints)
    finally:
        store.close()
