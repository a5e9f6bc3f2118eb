"""Read judge logs: each file's format found (or named), its rows read, its bad rows named.

A row that cannot be read is one line ``FILE:LINE: why`` in the result's ``bad`` list, and
the file goes on; a file with no usable row is an error (exit 2). Unreadable verdicts are
rows, never bad rows: they become Invalid judgments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.logs.formats import LogFormat, ReadOptions, detect, get_format
from judgeprobe.logs.generic import Columns
from judgeprobe.logs.rows import CALLS, BadRow, PairRow, ScoreRow, Skipped, VoteRow, calls_frame
from judgeprobe.logs.source import records


@dataclass
class Read:
    """Every judging call and score read from the logs, the bad rows named, each file's format."""

    calls: list[pl.LazyFrame] = field(default_factory=list)  # rows.CALLS, a plan a file
    scores: list[ScoreRow] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)

    def all_calls(self) -> pl.LazyFrame:
        """Every file's judging calls as one plan."""
        return pl.concat(self.calls) if self.calls else pl.LazyFrame(schema=CALLS)


def _read_file(path: Path, fmt: LogFormat, options: ReadOptions, out: Read) -> int:
    """One file's rows into ``out``; how many were usable."""
    if fmt.fast is not None:
        fast = fmt.fast(path, options)
        if fast is not None:
            out.calls.append(fast)
            return 1  # checked clean and not empty
    pairs: list[PairRow] = []
    n = 0
    for row in fmt.read(path, options):
        if isinstance(row, Skipped):
            out.bad.append(str(row))
            continue
        n += 1
        if isinstance(row, PairRow):
            pairs.append(row)
        else:
            out.scores.append(row)
    if pairs:
        out.calls.append(calls_frame(pairs))
    return n


def read_logs(
    paths: list[Path], fmt: str | None = None, options: ReadOptions | None = None
) -> Read:
    """Every row of the logs; an error line for a missing file or one with no usable row."""
    out = Read()
    options = options or ReadOptions()
    named = get_format(fmt) if fmt is not None else None
    for path in paths:
        if not path.is_file():
            raise JudgeprobeError(f"{path}: no such file")
        found = named or detect(path)
        out.formats[str(path)] = found.name
        bad_before = len(out.bad)
        if _read_file(path, found, options, out) == 0:
            why = out.bad[bad_before] if len(out.bad) > bad_before else "no record"
            raise JudgeprobeError(f"{path}: no usable row as {found.name} (first: {why})")
    return out


def read_votes(
    path: Path, mapping: dict[str, str] | None = None
) -> tuple[list[VoteRow], list[str]]:
    """Human votes: MT-Bench human judgments, or a table keyed by question, pair and turn.

    The table's columns: the question (``question_id`` or its aliases), ``generator_1`` and
    ``generator_2`` (or aliases), ``turn`` (default 1), ``preferred`` (1, 2 or tie, or any
    verdict value the generic reader reads) or ``score``, optional ``weight`` and
    ``annotator``. A vote that cannot be read is one line of the second list.
    """
    from judgeprobe.logs.labels import vote

    if not path.is_file():
        raise JudgeprobeError(f"--labels {path}: no such file")
    votes: list[VoteRow] = []
    bad: list[str] = []
    columns = Columns(mapping or {})
    for where, record in records(path):
        try:
            if isinstance(record, BadRow):
                raise record
            votes.append(vote(where, record, columns))
        except BadRow as exc:
            bad.append(f"{where}: {exc}")
    if not votes:
        raise JudgeprobeError(
            f"--labels {path}: no usable label (first: {bad[0] if bad else 'no record'})"
        )
    return votes, bad
