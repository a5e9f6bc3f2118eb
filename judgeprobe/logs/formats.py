"""The log formats ``judgeprobe logs`` reads: one entry each, how to recognise it and read it.

A format is a ``LogFormat``: its name (``--format NAME``), a detector that recognises a file
from its name and first record (or whole JSON document), a reader that yields the file's typed
rows (``rows.PairRow``/``rows.ScoreRow``, or ``rows.Skipped`` for a row it cannot use) and,
optionally, a fast reader that returns the file's judging calls as one lazy table of
``rows.CALLS`` (or None to fall back to the row reader, which names each bad line). Each format
module registers itself with ``register_format``; the built-in modules are imported here, in
the first time the registry is asked. Detectors do not overlap: a file two of them claim is
an error naming both (``--format`` then chooses); a file none claims is read as ``FALLBACK``
(any JSONL/JSON/CSV with a column map).
docs/development.md, "Adding a log format", says how to add one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.logs.rows import BadRow, Row, Skipped, Where
from judgeprobe.logs.source import Record, is_jsonl, json_document, records
from judgeprobe.prompts.task import LOGS, Task

BUILTIN = ("inspect", "promptfoo", "mtbench", "alpaca", "arena_hard", "generic")
"""The modules of ``judgeprobe.logs`` that register the built-in formats."""
FALLBACK = "generic"
"""The format of a file no detector claims."""


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What the user told ``logs`` about the files: a column map, a baseline model."""

    mapping: Mapping[str, str] = field(default_factory=dict)  # --map field=column
    baseline_model: str | None = None  # --baseline-model (pair logs against one baseline)


class Sniff:
    """What a detector sees of a file: its path, its first record, its whole JSON document.

    Each is read once, when a detector first asks; a file that is neither JSON nor CSV has no
    first record (None, the reason kept in ``error``), so detectors of records never raise.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: JudgeprobeError | None = None

    @cached_property
    def document(self) -> Any:
        """A ``.json`` file that is not JSON Lines, parsed whole; None for any other file."""
        if self.path.suffix != ".json" or is_jsonl(self.path):
            return None
        return json_document(self.path)

    @cached_property
    def first(self) -> Record | None:
        """The file's first readable record (JSONL, JSON or CSV), None when it has none."""
        try:
            for _, got in records(self.path):
                if isinstance(got, dict):
                    return got
        except JudgeprobeError as exc:  # not JSON, not UTF-8 text, unreadable
            self.error = exc
        return None

    @property
    def keys(self) -> set[str]:
        """The first record's keys (empty when there is none)."""
        return set(self.first or {})


Detector = Callable[[Sniff], bool]
FileReader = Callable[[Path, ReadOptions], Iterator[Row | Skipped]]
FastReader = Callable[[Path, ReadOptions], pl.LazyFrame | None]
RecordReader = Callable[[Where, Record], Iterator[Row]]


@dataclass(frozen=True, slots=True)
class LogFormat:
    """One log format: its ``--format`` name, its detector, its readers and a line of help."""

    name: str
    detect: Detector | None  # None: read only when named (or as the fallback)
    read: FileReader
    fast: FastReader | None = None
    help: str = ""
    task: Task = LOGS  # whose nouns a run of these logs speaks (questions and answers, …)


_REGISTRY: dict[str, LogFormat] = {}


def register_format(fmt: LogFormat) -> None:
    """Make ``fmt`` a format ``logs`` detects and ``--format`` names; a name is registered once."""
    if fmt.name in _REGISTRY:
        raise ValueError(f"log format {fmt.name} is registered already")
    _REGISTRY[fmt.name] = fmt


def _formats() -> dict[str, LogFormat]:
    for module in BUILTIN:  # each registers its formats on first import
        importlib.import_module(f"judgeprobe.logs.{module}")
    return _REGISTRY


def format_names() -> tuple[str, ...]:
    """Every registered format by name, the fallback last."""
    return tuple(sorted(_formats(), key=lambda name: (name == FALLBACK, name)))


def logs_task(names: Iterable[str]) -> Task:
    """The task of a run read from files of formats ``names``: theirs when they agree.

    Formats that disagree: ``prompts.task.LOGS`` (responses to a question).
    """
    found = {get_format(name).task for name in names}
    return found.pop() if len(found) == 1 else LOGS


def get_format(name: str) -> LogFormat:
    """Format ``name``; a JudgeprobeError names the known ones."""
    found = _formats().get(name)
    if found is None:
        raise JudgeprobeError(f"--format {name} is not one of {', '.join(_formats())}")
    return found


def detect(path: Path) -> LogFormat:
    """A file's format: the one whose detector claims it, else the fallback."""
    sniff = Sniff(path)
    claims = [f for f in _formats().values() if f.detect is not None and f.detect(sniff)]
    if len(claims) > 1:
        names = " and ".join(f.name for f in claims)
        raise JudgeprobeError(f"{path}: reads as {names}; name one with --format")
    if claims:
        return claims[0]
    if sniff.first is None:
        raise sniff.error or JudgeprobeError(f"{path}: no record in it")
    return get_format(FALLBACK)


def per_record(read: RecordReader) -> FileReader:
    """A file reader from a reader of one record: each record of ``source.records`` in turn."""

    def file_rows(path: Path, options: ReadOptions) -> Iterator[Row | Skipped]:
        del options  # a per-record format needs none
        return record_rows(records(path), read)

    return file_rows


def record_rows(
    found: Iterator[tuple[Where, Record | BadRow]], read: RecordReader
) -> Iterator[Row | Skipped]:
    """Each record's rows; a record the reader refuses (``BadRow``) one ``Skipped``."""
    for where, record in found:
        try:
            if isinstance(record, BadRow):
                raise record
            yield from list(read(where, record))
        except BadRow as exc:
            yield Skipped(where, str(exc))
