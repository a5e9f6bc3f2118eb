"""Load candidate items: the bundled sample, or a user's JSONL / Parquet candidate set."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import orjson
import polars as pl
from pydantic import ValidationError

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.records import Item

BUNDLED = {"bundled:sample": "sample_items.jsonl"}


def _validated(rows: list[dict[str, object]], origin: str) -> list[Item]:
    items: list[Item] = []
    seen: set[tuple[str, str]] = set()
    for n, row in enumerate(rows, start=1):
        try:
            item = Item.model_validate(row)
        except ValidationError as exc:
            raise JudgeprobeError(f"{origin}: row {n}: {first_error(exc)}") from None
        ident = (item.subset, item.item_id)
        if ident in seen:
            raise JudgeprobeError(f"{origin}: row {n}: duplicate item_id {item.item_id!r}")
        seen.add(ident)
        items.append(item)
    if not items:
        raise JudgeprobeError(f"{origin}: no items")
    return items


def _jsonl_rows(data: bytes, origin: str) -> list[dict[str, object]]:
    rows = []
    for n, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise JudgeprobeError(f"{origin}: line {n}: not valid JSON") from None
        if not isinstance(row, dict):
            raise JudgeprobeError(f"{origin}: line {n}: expected a JSON object")
        rows.append(row)
    return rows


def load_items(source: str, limit: int = 0) -> list[Item]:
    """Items from ``bundled:sample`` or a ``.jsonl``/``.parquet`` file.

    ``limit`` > 0 keeps the first N items.
    """
    if source in BUNDLED:
        data = resources.files("judgeprobe").joinpath("data", BUNDLED[source]).read_bytes()
        rows = _jsonl_rows(data, source)
    else:
        path = Path(source)
        if not path.is_file():
            raise JudgeprobeError(f"items {source}: no such file")
        if path.suffix == ".parquet":
            try:
                rows = pl.read_parquet(path).to_dicts()
            except Exception as exc:  # polars raises several unrelated types for bad files
                raise JudgeprobeError(f"items {source}: cannot read Parquet: {exc}") from None
        elif path.suffix in (".jsonl", ".json"):
            rows = _jsonl_rows(path.read_bytes(), source)
        else:
            raise JudgeprobeError(f"items {source}: expected a .jsonl or .parquet file")
    items = _validated(rows, source)
    return items[:limit] if limit else items
