"""Load what the pipeline starts from: source documents, and candidate items.

Documents (``id``, ``text``, optional ``domain``/``title``) come from the bundled corpus, a
JSONL, CSV or Parquet file, or a folder of ``.txt``/``.md`` files. Candidate items come from the
bundled sample, the bundled Q&A set or a JSONL / Parquet file in any layout of ``core.layouts``
(e.g. a candidate set written by ``judgeprobe.candidates``).
Every problem is one ``JudgeprobeError`` line naming the file and row.
"""

from __future__ import annotations

import csv
import io
from importlib import resources
from pathlib import Path

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.core.files import json_lines
from judgeprobe.core.layouts import item_fields
from judgeprobe.core.records import Item

BUNDLED = {
    "bundled:sample": "sample_items.jsonl",
    # The bundled corpus built by ``judgeprobe.candidates`` with the embedded Gemma 3 270M judge.
    "bundled:candidates": "candidates/embedded.parquet",
    # Questions over the bundled corpus, a correct answer beside a copy wrong in one fact, with
    # gold (built by candidates/qa.py from data/qa/questions.toml).
    "bundled:qa": "qa/items.jsonl",
}
BUNDLED_CORPUS = {"bundled:corpus": "corpus/documents.jsonl"}
TEXT_SUFFIXES = (".txt", ".md")


class Document(BaseModel):
    """One source document to summarise."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    text: str
    domain: str = ""
    title: str = ""


def _utf8(data: bytes, origin: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise JudgeprobeError(f"{origin}: line {line}: not valid UTF-8") from None


def _validated(rows: list[tuple[str, dict[str, object]]], origin: str) -> list[Item]:
    """Each ``(where, row)`` read in its layout (``core.layouts``) and checked as an ``Item``."""
    items: list[Item] = []
    seen: set[tuple[str, str]] = set()
    for where, row in rows:
        try:
            item = Item.model_validate(item_fields(row, f"item-{where.split()[-1]}"))
        except ValidationError as exc:
            raise JudgeprobeError(f"{origin}: {where}: {first_error(exc)}") from None
        except ValueError as exc:
            raise JudgeprobeError(f"{origin}: {where}: {exc}") from None
        ident = (item.subset, item.item_id)
        if ident in seen:
            raise JudgeprobeError(f"{origin}: {where}: duplicate item_id {item.item_id!r}")
        seen.add(ident)
        items.append(item)
    if not items:
        raise JudgeprobeError(f"{origin}: no items")
    return items


def jsonl_rows(data: bytes, origin: str) -> list[dict[str, object]]:
    """Parse a JSONL corpus into rows, with an error naming the line that is not JSON."""
    return [row for _, row in jsonl_lines(data, origin)]


def jsonl_lines(data: bytes, origin: str) -> list[tuple[int, dict[str, object]]]:
    """A JSONL file's rows with their line numbers (blank lines skipped, not counted out)."""
    rows = []
    lines = _utf8(data, origin).splitlines()
    for n, _, row in json_lines(lines, lambda n: f"{origin}: line {n}: not valid JSON"):
        if not isinstance(row, dict):
            raise JudgeprobeError(f"{origin}: line {n}: expected a JSON object")
        rows.append((n, row))
    return rows


def _parquet_rows(path: Path, origin: str) -> list[dict[str, object]]:
    try:
        return pl.read_parquet(path).to_dicts()
    except Exception as exc:  # polars raises several unrelated types for bad files
        raise JudgeprobeError(f"{origin}: cannot read Parquet: {exc}") from None


def load_items(source: str, limit: int = 0) -> list[Item]:
    """Items from a bundled set or a ``.jsonl``/``.parquet`` file, in any ``core.layouts`` layout.

    Bundled: ``bundled:sample``, ``bundled:qa``, ``bundled:candidates``. ``limit`` > 0 keeps the
    first N items.
    """
    items = _validated(item_rows(source), source)
    return items[:limit] if limit else items


def item_rows(source: str) -> list[tuple[str, dict[str, object]]]:
    """The rows of an items file as written, each named by its line (JSONL) or row number.

    Every column is kept (a candidate set's checks too), before any layout maps it to an item.
    """
    data = resources.files("judgeprobe").joinpath("data")
    path = Path(str(data.joinpath(BUNDLED[source]))) if source in BUNDLED else Path(source)
    if not path.is_file():
        raise JudgeprobeError(f"items {source}: no such file")
    origin = f"items {source}"
    if READERS.get(path.suffix) == "jsonl":  # a JSONL row is named by its line
        return [(f"line {n}", row) for n, row in jsonl_lines(path.read_bytes(), origin)]
    return [(f"row {n}", r) for n, r in enumerate(read_rows(path, origin, ("jsonl", "parquet")), 1)]


def _document(row: dict[str, object], where: str) -> Document:
    """Check one row's fields with a message that says exactly what is wrong."""
    for name in ("id", "text"):
        if name not in row or row[name] is None:
            raise JudgeprobeError(f"{where}: missing field {name!r}")
    fields: dict[str, str] = {}
    for name in ("id", "text", "domain", "title"):
        value = row.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise JudgeprobeError(f"{where}: field {name!r} must be a string")
        fields[name] = value.strip() if name != "text" else value
    if not fields["id"]:
        raise JudgeprobeError(f"{where}: empty id")
    if not fields["text"].strip():
        raise JudgeprobeError(f"{where}: document {fields['id']!r} has empty text")
    return Document(**fields)


def _csv_rows(data: bytes, origin: str) -> list[dict[str, object]]:
    text = _utf8(data, origin).removeprefix("\ufeff")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    for n, row in enumerate(rows, start=1):
        if None in row:
            raise JudgeprobeError(f"{origin}: row {n}: more fields than the header names")
    return [dict(row) for row in rows]


READERS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}


def read_rows(
    path: Path, origin: str, kinds: tuple[str, ...], or_else: str = ""
) -> list[dict[str, object]]:
    """The rows of a JSONL, CSV or Parquet file, by suffix, of the ``kinds`` the caller takes."""
    kind = READERS.get(path.suffix)
    if kind not in kinds:
        names = [f".{k}" for k in kinds]
        listed = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        raise JudgeprobeError(f"{origin}: expected a {listed} file{or_else}")
    if kind == "parquet":
        return _parquet_rows(path, origin)
    data = path.read_bytes()
    return _csv_rows(data, origin) if kind == "csv" else jsonl_rows(data, origin)


def _folder_documents(root: Path, origin: str) -> list[Document]:
    """One document per ``.txt``/``.md`` file: id = path without suffix, domain = subfolder.

    A Markdown file that starts with a ``# heading`` line gets it as its title.
    """
    docs = []
    for path in sorted(p for p in root.rglob("*") if p.suffix in TEXT_SUFFIXES and p.is_file()):
        rel = path.relative_to(root)
        where = f"{origin}: {rel}"
        text = _utf8(path.read_bytes(), where)
        title = ""
        if path.suffix == ".md" and text.startswith("# "):
            first, _, text = text.partition("\n")
            title = first[2:].strip()
        domain = rel.parts[0] if len(rel.parts) > 1 else ""
        row: dict[str, object] = {
            "id": rel.with_suffix("").as_posix(),
            "text": text,
            "domain": domain,
            "title": title,
        }
        docs.append(_document(row, where))
    if not docs:
        raise JudgeprobeError(f"{origin}: no .txt or .md files")
    return docs


def load_documents(source: str, limit: int = 0) -> list[Document]:
    """Documents from ``bundled:corpus``, a ``.jsonl``/``.csv``/``.parquet`` file or a folder.

    ``limit`` > 0 keeps the first N documents.
    """
    origin = f"corpus {source}"
    if source in BUNDLED_CORPUS:
        path = resources.files("judgeprobe").joinpath("data", BUNDLED_CORPUS[source])
        rows = jsonl_rows(path.read_bytes(), origin)
    else:
        path = Path(source)
        if path.is_dir():
            return _unique(_folder_documents(path, origin), origin, limit)
        if not path.is_file():
            raise JudgeprobeError(f"{origin}: no such file or folder")
        kinds = ("jsonl", "csv", "parquet")
        rows = read_rows(path, origin, kinds, " or a folder of .txt/.md")
    docs = [_document(row, f"{origin}: row {n}") for n, row in enumerate(rows, start=1)]
    return _unique(docs, origin, limit)


def _unique(docs: list[Document], origin: str, limit: int) -> list[Document]:
    if not docs:
        raise JudgeprobeError(f"{origin}: no documents")
    seen: set[str] = set()
    for n, doc in enumerate(docs, start=1):
        if doc.id in seen:
            raise JudgeprobeError(f"{origin}: document {n}: duplicate id {doc.id!r}")
        seen.add(doc.id)
    return docs[:limit] if limit else docs
