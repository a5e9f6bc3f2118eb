"""Hand-made judgments tables and run directories for the report tests (no server)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from judgeprobe.core.records import JUDGMENT_SCHEMA

TARGETS = {"Blind": "none", "True": "A", "Flip": "B", "Placebo": "A"}
LABELS = {
    "Blind": ("", ""),
    "True": ("LLM", "TradML"),
    "Flip": ("TradML", "LLM"),
    "Placebo": ("Editor's pick", ""),
}


def rows(
    verdicts: Iterable[str],
    condition: str = "Blind",
    judge: str = "j",
    protocol: str = "baseline",
    order: str = "12",
    **extra: Any,
) -> list[dict[str, Any]]:
    """One judgment per verdict, item i for the i-th verdict (items doc-00, doc-01, …)."""
    label_1, label_2 = LABELS.get(condition, ("", ""))
    return [
        {
            "run_id": "test-0",
            "judge": judge,
            "protocol": protocol,
            "condition": condition,
            "item_id": f"doc-{i:02d}",
            "subset": "s",
            "order": order,
            "seed": 0,
            "verdict": v,
            "target": TARGETS.get(condition, "none"),
            "explanation": f"{condition} explanation of item {i}: verdict {v}.",
            "invalid_reason": "no verdict in reply" if v == "Invalid" else "",
            "label_1": label_1,
            "label_2": label_2,
            "source_1": "LLM",
            "source_2": "TradML",
            "attack": "",
            "n_requests": 1,
            "latency_s": 1.0,
            "prompt_tokens": 200,
            "completion_tokens": 30,
            **extra,
        }
        for i, v in enumerate(verdicts)
    ]


def table(*parts: list[dict[str, Any]]) -> pl.DataFrame:
    """The rows as a judgments table with the public schema."""
    data = [r for part in parts for r in part]
    frame = pl.DataFrame(data, infer_schema_length=None)
    return frame.select(
        pl.col(c).cast(JUDGMENT_SCHEMA[c]) if c in frame.columns else pl.lit(None, t).alias(c)
        for c, t in JUDGMENT_SCHEMA.items()
    )


def run_dir(path: Path, judgments: pl.DataFrame) -> Path:
    """A run directory the report can be built from."""
    path.mkdir(parents=True, exist_ok=True)
    judgments.write_parquet(path / "judgments.parquet")
    manifest = {
        "run_id": "test-0",
        "created_at": "2026-01-01T00:00:00Z",
        "judges": [
            {"name": n, "model": "m", "backend": "fake"} for n in judgments["judge"].unique()
        ],
        "seeds": [0],
        "determinism": "greedy",
    }
    (path / "manifest.json").write_bytes(orjson.dumps(manifest))
    return path
