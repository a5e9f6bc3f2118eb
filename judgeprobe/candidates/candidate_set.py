"""The candidate set file: a versioned Parquet table the sweep reads as ``items``.

Its first columns are the ``Item`` fields; the rest is provenance (ignored by the sweep):
generators, their parameters (JSON), the author's model fingerprint, the source document's
SHA-256, and for style attacks the attack, how it was made, its target and the preservation
check. Rows whose candidate 1 is the LLM summary carry its preserved LLM-written attacks
(``verbosity_1``, ``confidence_1``), which the sweep's attack conditions use. Rows are
written in a fixed order with fixed compression, so the same inputs give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from judgeprobe.core.files import atomic_path

#: Bumped whenever the columns or their meaning change.
SET_VERSION = "judgeprobe-candidates/2"

CANDIDATE_SCHEMA: dict[str, pl.DataType] = {
    "item_id": pl.String(),
    "subset": pl.String(),
    "document": pl.String(),
    "candidate_1": pl.String(),
    "candidate_2": pl.String(),
    "source_1": pl.String(),
    "source_2": pl.String(),
    "domain": pl.String(),
    "title": pl.String(),
    "verbosity_1": pl.String(),
    "confidence_1": pl.String(),
    "doc_id": pl.String(),
    "generator_1": pl.String(),
    "generator_2": pl.String(),
    "params_1": pl.String(),
    "params_2": pl.String(),
    "model_fingerprint": pl.String(),
    "source_hash": pl.String(),
    "attack": pl.String(),
    "attack_method": pl.String(),
    "attack_target": pl.String(),
    "base_item_id": pl.String(),
    "similarity": pl.Float64(),
    "preserved": pl.Boolean(),
    "flag": pl.String(),
    "set_version": pl.String(),
}


def candidate_frame(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """Rows (any missing column is null) as a frame in the set's schema."""
    columns = {
        name: [row.get(name, SET_VERSION if name == "set_version" else None) for row in rows]
        for name in CANDIDATE_SCHEMA
    }
    return pl.DataFrame(columns, schema=CANDIDATE_SCHEMA)


def write_candidate_set(frame: pl.DataFrame, path: Path) -> None:
    """Write atomically: a reader never sees a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp, compression="zstd", compression_level=3, statistics=True)
