"""A log file's records, each with where it was read: JSON Lines, a JSON array, or CSV.

A line that is not JSON, or a record that is not an object, is a ``BadRow`` at its line; the
reader that asked goes on with the next.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from judgeprobe import JudgeprobeError
from judgeprobe.logs.rows import BadRow, Where

Record = dict[str, Any]
BOM = b"\xef\xbb\xbf"
"""UTF-8's byte-order mark, which spreadsheet programs write before a CSV's first column name:
every reader here drops it, so that name and a JSON file's first line read as written."""


def read_bytes(path: Path) -> bytes:
    """The file's bytes, one error line when it cannot be read."""
    try:
        return path.read_bytes().removeprefix(BOM)
    except OSError as exc:
        raise JudgeprobeError(f"{path}: cannot read it ({exc.strerror})") from None


def json_document(path: Path) -> Any:
    """A whole JSON file, one error line when it is not JSON."""
    try:
        return orjson.loads(read_bytes(path))
    except orjson.JSONDecodeError as exc:
        raise JudgeprobeError(f"{path}: not JSON ({exc})") from None


def is_jsonl(path: Path) -> bool:
    """JSON Lines by name, or a .json file whose first line is a whole object."""
    if path.suffix in (".jsonl", ".ndjson"):
        return True
    if path.suffix != ".json":
        return False
    with path.open("rb") as f:
        first, second = f.readline().removeprefix(BOM).strip(), f.readline().strip()
    try:
        return isinstance(orjson.loads(first), dict) and bool(second)
    except orjson.JSONDecodeError:
        return False


def records(path: Path) -> Iterator[tuple[Where, Record | BadRow]]:
    """Each record of a JSONL, JSON (an array or one object) or CSV file, with its place."""
    name = str(path)
    if path.suffix == ".csv":
        yield from _csv(path)
        return
    if is_jsonl(path):
        with path.open("rb") as f:
            for number, line in enumerate(f, start=1):
                line = line.removeprefix(BOM) if number == 1 else line
                if not line.strip():
                    continue
                where = Where(name, number)
                try:
                    got = orjson.loads(line)
                except orjson.JSONDecodeError:
                    yield where, BadRow("not a JSON line")
                    continue
                yield where, got if isinstance(got, dict) else BadRow("not a JSON object")
        return
    document = json_document(path)
    found = document if isinstance(document, list) else [document]
    for number, got in enumerate(found, start=1):
        yield Where(name, number), got if isinstance(got, dict) else BadRow("not a JSON object")


def _csv(path: Path) -> Iterator[tuple[Where, Record | BadRow]]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.DictReader(f)
            line = reader.line_num + 1
            for row in reader:
                where = Where(str(path), line)
                line = reader.line_num + 1
                if None in row:
                    yield where, BadRow("more fields than the header names")
                    continue
                yield where, {k: v for k, v in row.items() if v != ""}
    except UnicodeDecodeError:
        raise JudgeprobeError(f"{path}: not UTF-8 text") from None


def line_count(path: Path) -> int:
    """A file's lines (a JSON Lines log's rows)."""
    with path.open("rb") as f:
        return sum(1 for _ in f)


def first_record(path: Path) -> Record | None:
    """The first readable record of a file (format detection), None when there is none."""
    for _, got in records(path):
        if isinstance(got, dict):
            return got
    return None


def text(value: Any) -> str | None:
    """A text field: a string as it is, a number as text, nothing as None."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise BadRow(f"expected a text, got {type(value).__name__}")


def need(record: Record, key: str) -> Any:
    """A field the format requires."""
    if key not in record or record[key] is None:
        raise BadRow(f"no {key!r}")
    return record[key]


def turn_of(record: Record, key: str = "turn") -> int:
    """A record's turn (1 when the format has none), a positive integer."""
    value = record.get(key, 1)
    try:
        turn = int(value)
    except (TypeError, ValueError):
        raise BadRow(f"{key} {value!r} is not a number") from None
    if turn < 1:
        raise BadRow(f"{key} {turn} is not a positive number")
    return turn
