"""A sweep's protocol options (its ``[protocol]`` table): the knobs the built-in protocols read."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.prompts.task import CRITERIA
from judgeprobe.protocols.budget import MARGIN
from judgeprobe.text.tokens import CHARS_PER_TOKEN


class ProtocolOptions(BaseModel):
    """Knobs of the SCoT and PBP protocols (the paper's defaults)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: dict[str, float] = Field(default_factory=lambda: dict.fromkeys(CRITERIA, 1.0))
    tie_tolerance: float = Field(default=0.0, ge=0.0)  # |weighted sum 1 − sum 2| ≤ this → Tie
    pbp_score_sees_texts: bool = True  # PBP stage 2 sees document and summaries again
    # Token budgets: each stage's is sized from its reply schema at the judge's measured
    # characters per token (judgeprobe.protocols.budget); a value here replaces a stage's.
    chars_per_token: float = Field(default=CHARS_PER_TOKEN, gt=0.0)
    budget_margin: float = Field(default=MARGIN, ge=1.0)
    baseline_max_tokens: int | None = Field(default=None, ge=16)
    scot_max_tokens: int | None = Field(default=None, ge=16)
    pbp_lock_max_tokens: int | None = Field(default=None, ge=16)
    pbp_score_max_tokens: int | None = Field(default=None, ge=16)
    pbp_rank_max_tokens: int | None = Field(default=None, ge=16)
