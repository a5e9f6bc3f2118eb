"""Reading a judgments table a user names, or a whole run: one line when it is not one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.metrics.estimates import REQUIRED
from judgeprobe.runs.review import reviewed_judgments
from judgeprobe.runs.rundir import Manifest, RunDir


@dataclass(frozen=True, slots=True)
class LoadedRun:
    """A judged run as every stage after the sweep reads it: each part read and checked once.

    The sweep builds one from the table it holds; ``load_run`` from a directory on disk.
    """

    dir: RunDir
    manifest: Manifest
    judgments: pl.DataFrame


def judgments_file(path: Path) -> Path:
    """``path``, or a run directory's judgments table when ``path`` is the run's folder."""
    if not path.is_dir():
        return path
    inside = RunDir(path).judgments
    if not inside.is_file():
        raise JudgeprobeError(f"{path}: a folder without {inside.name} (not a run directory)")
    return inside


def load_judgments(path: Path, columns: list[str] | None = None) -> pl.DataFrame:
    """A judgments table from a file, with a one-line error when it is not one.

    ``columns``: only these (a reader that needs few of a large table's columns).
    """
    if not path.is_file():
        raise JudgeprobeError(f"{path}: no such file")
    try:
        frame = pl.read_parquet(path, columns=columns)
    except Exception as exc:  # polars raises several unrelated types for bad files
        raise JudgeprobeError(
            f"{path}: not a readable Parquet file ({type(exc).__name__})"
        ) from None
    missing = (REQUIRED if columns is None else REQUIRED & set(columns)) - set(frame.columns)
    if missing:
        raise JudgeprobeError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    return frame


def counted_judgments(path: Path, columns: list[str] | None = None) -> pl.DataFrame:
    """The judgments of a file that count: a run's own table without its rejected texts' rows.

    Every reader that computes from a run (metrics, card, report, agreement) reads it so; the
    file itself keeps every judgment, so a later accept brings them back.
    """
    frame = load_judgments(path, columns)
    run = RunDir(path.parent)
    return reviewed_judgments(run, frame) if run.judgments == path else frame


def load_run(path: Path) -> LoadedRun:
    """The run in ``path``: its manifest and judgments, one error line when either is amiss."""
    run = RunDir(path)
    for part in (run.judgments, run.manifest_file):
        if not part.is_file():
            raise JudgeprobeError(f"{path}: no {part.name} (is this a run directory?)")
    judgments = counted_judgments(run.judgments)  # the table first: a corrupt one is named
    return LoadedRun(run, run.manifest(), judgments)
