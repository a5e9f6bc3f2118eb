"""Reply schemas: what each protocol stage must return. Their JSON schemas are sent as the
structured-output constraint and hashed into the request key; pydantic validates replies."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

CRITERIA = ("accuracy", "completeness", "conciseness", "fluency")
ScreenVerdict = Literal["[1,2]", "[2,1]", "Tie"]
Score = Literal[0, 1, 2, 3, 4, 5]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _squeeze(value: Any) -> Any:
    """Accept "[1, 2]" and "tie" from backends that cannot constrain output."""
    if isinstance(value, str):
        value = value.replace(" ", "")
        return "Tie" if value.lower() == "tie" else value
    return value


class PairwiseReply(_Reply):
    """Baseline and Reveal-After: a verdict and a short explanation."""

    model_config = ConfigDict(title="pairwise_verdict")

    verdict: ScreenVerdict
    explanation: str = Field(min_length=1)

    _verdict = field_validator("verdict", mode="before")(_squeeze)


class CriterionAssessment(_Reply):
    notes: str
    summary_1: Score
    summary_2: Score


class ScotCriteria(_Reply):
    accuracy: CriterionAssessment
    completeness: CriterionAssessment
    conciseness: CriterionAssessment
    fluency: CriterionAssessment


class ScotReply(_Reply):
    """SCoT: per-criterion notes and scores first, then the verdict."""

    model_config = ConfigDict(title="scot_verdict")

    criteria: ScotCriteria
    verdict: ScreenVerdict
    explanation: str = Field(min_length=1)

    _verdict = field_validator("verdict", mode="before")(_squeeze)


class Evidence(_Reply):
    note: str
    quotes: list[str] = Field(max_length=3)


class LockedCriterion(_Reply):
    summary_1: Evidence
    summary_2: Evidence


class LockReply(_Reply):
    """PBP stage 1: notes with quoted spans; no scores, no verdict."""

    model_config = ConfigDict(title="pbp_lock")

    accuracy: LockedCriterion
    completeness: LockedCriterion
    conciseness: LockedCriterion
    fluency: LockedCriterion


class ScorePair(_Reply):
    summary_1: Score
    summary_2: Score


class ScoreReply(_Reply):
    """PBP stage 2: 0–5 per criterion and summary, from the locked notes only."""

    model_config = ConfigDict(title="pbp_score")

    accuracy: ScorePair
    completeness: ScorePair
    conciseness: ScorePair
    fluency: ScorePair


class RankReply(_Reply):
    """PBP stage 3: the model's own verdict (checked against the scores) and justification."""

    model_config = ConfigDict(title="pbp_rank")

    verdict: ScreenVerdict
    justification: str = Field(min_length=1)

    _verdict = field_validator("verdict", mode="before")(_squeeze)
