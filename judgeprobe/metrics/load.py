"""Reading a judgments table a user names: one line when the file is not one."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.metrics.estimates import REQUIRED


def load_judgments(path: Path) -> pl.DataFrame:
    """A judgments table from a file, with a one-line error when it is not one."""
    if not path.is_file():
        raise JudgeprobeError(f"{path}: no such file")
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # polars raises several unrelated types for bad files
        raise JudgeprobeError(
            f"{path}: not a readable Parquet file ({type(exc).__name__})"
        ) from None
    missing = REQUIRED - set(frame.columns)
    if missing:
        raise JudgeprobeError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    return frame
