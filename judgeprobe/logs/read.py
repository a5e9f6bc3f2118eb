"""Read judge logs: each file's format found (or named), its rows read, its bad rows named.

A row that cannot be read is one line ``FILE:LINE: why`` in the result's ``bad`` list, and
the file goes on; a file with no usable row is one line in ``unusable`` and the next file goes
on (its rows are skipped rows all the same); when no file has a usable row it is an error
(exit 2). Unreadable verdicts are rows, never bad rows: they become Invalid judgments.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.logs.formats import FALLBACK, LogFormat, ReadOptions, detect, get_format
from judgeprobe.logs.generic import Columns
from judgeprobe.logs.rows import CALLS, BadRow, PairRow, ScoreRow, Skipped, VoteRow, calls_frame
from judgeprobe.logs.source import line_count, records
from judgeprobe.runs.rundir import RandomizedOrder


@dataclass
class Read:
    """Every judging call and score read from the logs, the bad rows named, each file's format."""

    calls: list[pl.LazyFrame] = field(default_factory=list)  # rows.CALLS, a plan a file
    scores: list[ScoreRow] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    unusable: list[str] = field(default_factory=list)  # "FILE: no usable row as FMT (…)"
    rows: int = 0  # usable rows read one by one (the files ``fast`` holds not counted)
    fast: list[Path] = field(default_factory=list)  # read whole by a clean fast reader
    # rows a judge × protocol had by ``PairRow.randomized`` (a fast reader's rows have none)
    randomized: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)

    def all_calls(self) -> pl.LazyFrame:
        """Every file's judging calls as one plan."""
        return pl.concat(self.calls) if self.calls else pl.LazyFrame(schema=CALLS)

    def read_rows(self) -> int:
        """Every row the files hold, usable or skipped (a fast file's: its lines)."""
        return self.rows + len(self.bad) + sum(line_count(p) for p in self.fast)

    def randomized_cells(self) -> list[RandomizedOrder]:
        """Each judge × protocol whose shown order the log's tool shuffled, and its recovery.

        From ``PairRow.randomized``: how many rows had the order recovered as listed (kept),
        reversed (switched), or not (undetermined). For the manifest and the printed summary.
        """
        return [
            RandomizedOrder(judge=judge, protocol=protocol, kept=c["kept"],
                            switched=c["switched"], undetermined=c["undetermined"])
            for (judge, protocol), c in sorted(self.randomized.items())
        ]  # fmt: skip


def _read_file(path: Path, fmt: LogFormat, options: ReadOptions, out: Read) -> int:
    """One file's rows into ``out``; how many were usable."""
    if fmt.fast is not None:
        fast = fmt.fast(path, options)
        if fast is not None:
            out.calls.append(fast)
            out.fast.append(path)
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
            if row.randomized is not None:
                cell = out.randomized.setdefault((row.judge, row.protocol), Counter())
                cell[row.randomized] += 1
        else:
            out.scores.append(row)
    if pairs:
        out.calls.append(calls_frame(pairs))
    out.rows += n
    return n


def read_log_files(
    paths: list[Path], fmt: str | None = None, options: ReadOptions | None = None
) -> Read:
    """Every row of the logs; an error line for a missing file, or when no file has a row.

    A file without a usable row among others that have one is a line in ``unusable``.
    """
    out = Read()
    options = options or ReadOptions()
    named = get_format(fmt) if fmt is not None else None
    for path in paths:
        if not path.is_file():
            raise JudgeprobeError(f"{path}: no such file")
    for path in paths:
        found = named or detect(path)
        out.formats[str(path)] = found.name
        bad_before = len(out.bad)
        if _read_file(path, found, options, out) == 0:
            why = out.bad[bad_before] if len(out.bad) > bad_before else "no record"
            out.unusable.append(f"{path}: no usable row as {found.name} (first: {why})")
    if len(out.unusable) == len(paths):
        raise JudgeprobeError(
            out.unusable[0]
            if len(paths) == 1
            else f"no usable row in any of the {len(paths)} files (first: {out.unusable[0]})"
        )
    return out


def read_votes(
    path: Path, mapping: dict[str, str] | None = None
) -> tuple[list[VoteRow], list[str]]:
    """Human votes: a log in a pair format ``logs`` reads, MT-Bench's, or a key table.

    A log in any format ``logs`` detects gives its verdicts as votes on their items
    (``labels.log_votes``). A table's columns: the question (``question_id`` or its aliases),
    ``generator_1`` and ``generator_2`` (or aliases), ``turn`` (default 1), ``preferred`` (1, 2
    or tie, or any verdict value the generic reader reads) or ``score``, optional ``weight``
    and ``annotator``. A vote that cannot be read is one line of the second list.
    """
    from judgeprobe.logs.labels import log_votes, vote

    if not path.is_file():
        raise JudgeprobeError(f"--labels {path}: no such file")
    fmt = detect(path)
    if fmt.name != FALLBACK:
        votes, bad = log_votes(fmt.read(path, ReadOptions(mapping=mapping or {})))
    else:
        votes, bad = [], []
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
