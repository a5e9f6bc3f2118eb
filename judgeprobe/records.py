"""The record schemas every stage shares: candidate items and judgments.

A judgment's verdict is in *candidate* terms, never screen positions: "A" means candidate 1
is preferred (the paper's [1,2]), "B" candidate 2, whatever order they were shown in.
"""

from __future__ import annotations

from typing import Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

Verdict = Literal["A", "B", "Tie", "Invalid"]
Target = Literal["A", "B", "none"]
Order = Literal["12", "21"]


class Item(BaseModel):
    """One document with the two candidate summaries to compare."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    item_id: str = Field(min_length=1)
    subset: str = "default"
    document: str = Field(min_length=1)
    candidate_1: str = Field(min_length=1)
    candidate_2: str = Field(min_length=1)
    source_1: str = ""
    source_2: str = ""
    domain: str = ""
    title: str = ""
    # Prepared style attacks of candidate 1 (e.g. LLM-written by the data set builder); the
    # Verbosity/Confidence conditions use them, else their deterministic rule.
    verbosity_1: str | None = None
    confidence_1: str | None = None


#: The public contract of judgments.parquet, in column order.
JUDGMENT_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "judge": pl.String(),
    "protocol": pl.String(),
    "condition": pl.String(),
    "item_id": pl.String(),
    "subset": pl.String(),
    "order": pl.String(),
    "seed": pl.Int64(),
    "verdict": pl.String(),
    "target": pl.String(),
    "explanation": pl.String(),
    "invalid_reason": pl.String(),
    "request_key": pl.String(),
    "latency_s": pl.Float64(),
    "prompt_tokens": pl.Int64(),
    "completion_tokens": pl.Int64(),
    "label_1": pl.String(),
    "label_2": pl.String(),
    "source_1": pl.String(),
    "source_2": pl.String(),
    "raw_verdict": pl.String(),
    "attempts": pl.Int64(),
    "reasks": pl.Int64(),
    "model": pl.String(),
    "fingerprint": pl.String(),
    "template_hash": pl.String(),
    "n_requests": pl.Int64(),
    "attack": pl.String(),
    "turn1_verdict": pl.String(),
    "turn1_target": pl.String(),
    "turn1_explanation": pl.String(),
    "score_verdict": pl.String(),
    "stated_verdict": pl.String(),
    "verdict_score_agree": pl.Boolean(),
    "n_quotes": pl.Int64(),
    "n_fabricated": pl.Int64(),
    "details": pl.String(),
}
