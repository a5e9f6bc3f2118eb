"""Read judge logs: each file's format found (or named), its rows read, its bad rows named.

A row that cannot be read is one line ``FILE:LINE: why`` in the result's ``bad`` list, and
the file goes on; a file with no usable row is one line in ``unusable`` and the next file goes
on (its rows are skipped rows all the same); when no file has a usable row it is an error
(exit 2). Unreadable verdicts are rows, never bad rows: they become Invalid judgments.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.logs import alpaca, inspect, mtbench, promptfoo
from judgeprobe.logs.generic import Columns, generic_rows
from judgeprobe.logs.rows import CALLS, BadRow, PairRow, Row, ScoreRow, VoteRow, Where, calls_frame
from judgeprobe.logs.source import Record, first_record, json_document, records

Format = Literal["mtbench-pair", "mtbench-single", "alpaca", "inspect", "promptfoo", "generic"]
FORMATS: tuple[str, ...] = get_args(Format)
RecordReader = Callable[[Where, Record], Iterator[Row]]


def detect(path: Path) -> Format:
    """A file's format, from its name and its first record's keys."""
    if path.suffix == ".eval":
        return "inspect"
    if path.suffix == ".json":
        from judgeprobe.logs.source import is_jsonl

        if not is_jsonl(path):
            document = json_document(path)
            if inspect.is_eval_json(document):
                return "inspect"
            if promptfoo.is_promptfoo(document):
                return "promptfoo"
    first = first_record(path)
    if first is None:
        raise JudgeprobeError(f"{path}: no record in it")
    keys = set(first)
    if keys >= mtbench.PAIR_KEYS:
        return "mtbench-pair"
    if keys >= mtbench.SINGLE_KEYS and "judge" in keys:
        return "mtbench-single"
    if keys >= alpaca.KEYS:
        return "alpaca"
    return "generic"


@dataclass
class Read:
    """Every judging call and score read from the logs, the bad rows named, each file's format."""

    calls: list[pl.LazyFrame] = field(default_factory=list)  # rows.CALLS, a plan a file
    scores: list[ScoreRow] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    unusable: list[str] = field(default_factory=list)  # "FILE: no usable row as FMT (…)"
    rows: int = 0  # usable rows read one by one (the files ``fast`` holds not counted)
    fast: list[Path] = field(default_factory=list)  # read whole by a clean fast path

    def all_calls(self) -> pl.LazyFrame:
        """Every file's judging calls as one plan."""
        return pl.concat(self.calls) if self.calls else pl.LazyFrame(schema=CALLS)

    def read_rows(self) -> int:
        """Every row the files hold, usable or skipped (a fast file's: its lines)."""
        return self.rows + len(self.bad) + sum(mtbench.line_count(p) for p in self.fast)


def _record_reader(fmt: Format, columns: Columns) -> RecordReader:
    if fmt == "mtbench-pair":
        return mtbench.pair_rows
    if fmt == "mtbench-single":
        return mtbench.single_rows
    if fmt == "alpaca":
        return alpaca.alpaca_rows
    if fmt == "promptfoo":
        return promptfoo.promptfoo_rows
    return lambda where, record: generic_rows(where, record, columns)


def _file_rows(path: Path, fmt: Format, columns: Columns, bad: list[str]) -> Iterator[Row]:
    if fmt == "inspect":
        for row in inspect.eval_rows(path):
            if isinstance(row, BadRow):
                bad.append(str(row))
            else:
                yield row
        return
    reader = _record_reader(fmt, columns)
    found = promptfoo.results(path) if fmt == "promptfoo" else records(path)
    mapped = set(columns.mapped.values()) if fmt == "generic" else set()
    for where, record in found:
        if mapped and not isinstance(record, BadRow):
            mapped -= record.keys()
        try:
            if isinstance(record, BadRow):
                raise record
            yield from list(reader(where, record))
        except BadRow as exc:
            bad.append(f"{where}: {exc}")
    if mapped:  # a column --map names that no record of the file has: the map is wrong
        names = ", ".join(f"{f}={c}" for f, c in columns.mapped.items() if c in mapped)
        raise JudgeprobeError(
            f"{path}: --map {names}: no such column in the file (no record has a value there)"
        )


def _read_file(path: Path, fmt: Format, columns: Columns, out: Read) -> int:
    """One file's rows into ``out``; how many were usable."""
    if fmt == "mtbench-pair":
        fast = mtbench.pair_calls_fast(path)
        if fast is not None:
            out.calls.append(fast)
            out.fast.append(path)
            return 1  # checked clean and not empty
    pairs: list[PairRow] = []
    n = 0
    for row in _file_rows(path, fmt, columns, out.bad):
        n += 1
        if isinstance(row, PairRow):
            pairs.append(row)
        else:
            out.scores.append(row)
    if pairs:
        out.calls.append(calls_frame(pairs))
    out.rows += n
    return n


def read_logs(
    paths: list[Path], fmt: Format | None = None, mapping: dict[str, str] | None = None
) -> Read:
    """Every row of the logs; an error line for a missing file, or when no file has a row.

    A file without a usable row among others that have one is a line in ``unusable``.
    """
    out = Read()
    columns = Columns(mapping or {})
    for path in paths:
        if not path.is_file():
            raise JudgeprobeError(f"{path}: no such file")
    for path in paths:
        found = fmt or detect(path)
        out.formats[str(path)] = found
        bad_before = len(out.bad)
        if _read_file(path, found, columns, out) == 0:
            why = out.bad[bad_before] if len(out.bad) > bad_before else "no record"
            out.unusable.append(f"{path}: no usable row as {found} (first: {why})")
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
