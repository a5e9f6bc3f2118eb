"""Verdicts computed by code from criterion scores (PBP's rank stage, SCoT's consistency)."""

from __future__ import annotations

from collections.abc import Mapping

from judgeprobe.prompts.task import CRITERIA
from judgeprobe.protocols.replies import CriterionAssessment, ScorePair, ScreenVerdict


def verdict_from_scores(
    scores: Mapping[str, tuple[int, int]],
    weights: Mapping[str, float] | None = None,
    tolerance: float = 0.0,
) -> ScreenVerdict:
    """``[1,2]``, ``[2,1]`` or ``Tie`` from per-criterion (summary 1, summary 2) scores.

    The weighted sums are compared; a difference within ``tolerance`` is a Tie. Equal
    weights unless given; a criterion missing from ``weights`` weighs 0.
    """
    w = weights if weights is not None else dict.fromkeys(CRITERIA, 1.0)
    total_1 = sum(w.get(c, 0.0) * s1 for c, (s1, _) in scores.items())
    total_2 = sum(w.get(c, 0.0) * s2 for c, (_, s2) in scores.items())
    if abs(total_1 - total_2) <= tolerance:
        return "Tie"
    return "[1,2]" if total_1 > total_2 else "[2,1]"


def score_pairs(
    by_criterion: Mapping[str, CriterionAssessment | ScorePair],
) -> dict[str, tuple[int, int]]:
    """(summary 1, summary 2) scores per criterion, as ``verdict_from_scores`` takes them."""
    return {c: (s.summary_1, s.summary_2) for c, s in by_criterion.items()}
