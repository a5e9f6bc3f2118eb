"""Small file and hashing helpers every stage shares.

Files are written atomically (a temporary file beside the target, renamed over it), so a
killed run never leaves a half-written table, manifest or report for the next reader.
Content hashes are SHA-256 of canonical JSON, so the same data gives the same key on every
machine and Python version.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, AnyStr

import orjson
from pydantic import BaseModel

from judgeprobe import JudgeprobeError


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path``, renamed over it when the block ends without error."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def staged_dir(out: Path) -> Iterator[Path]:
    """A fresh folder beside ``out``, renamed to ``out`` when the block ends without error.

    On any error it is removed, so nothing half-written ever stands at ``out`` (absent or empty
    before: the callers refuse a non-empty one first).
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name or 'run'}.", dir=out.parent))
    try:
        yield staging
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write bytes (or UTF-8 text) so that a reader sees the old file or the new one."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def write_json(path: Path, data: Any) -> None:
    """Atomic, indented JSON with sorted keys (diff-friendly manifests)."""
    write_atomic(path, orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))


def content_hash(data: Any, length: int | None = None) -> str:
    """SHA-256 hex of ``data`` as canonical JSON (sorted keys); ``length`` shortens it."""
    digest = hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return digest[:length] if length else digest


def bytes_hash(data: bytes | str, length: int | None = None) -> str:
    """SHA-256 hex of raw bytes (text as UTF-8); ``length`` shortens it."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    digest = hashlib.sha256(raw).hexdigest()
    return digest[:length] if length else digest


def schema_text(model: type[BaseModel], document: str, version: int) -> str:
    """The JSON Schema of a published document, generated from its model, as docs/ holds it."""
    found = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"judgeprobe-{document}-v{version}",
        **model.model_json_schema(),
    }
    return json.dumps(found, indent=2, ensure_ascii=False) + "\n"


def json_lines(
    lines: Iterable[AnyStr], bad: Callable[[int], str]
) -> Iterator[tuple[int, AnyStr, object]]:
    """A JSON-lines file's non-blank lines: each one's number (from 1), text (stripped), value.

    Blank lines are skipped but counted, so a number points at the file's own line; a line that
    is not JSON stops the read with the one-line error ``bad(number)``.
    """
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise JudgeprobeError(bad(number)) from None
        yield number, text, value
