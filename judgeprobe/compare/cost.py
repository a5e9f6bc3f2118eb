"""What each compared run cost per judgment, and what each judge is worth in human labels."""

from __future__ import annotations

import polars as pl
from pydantic import ValidationError

from judgeprobe.card.kinds.base import SettledRow
from judgeprobe.card.rows import INTERVALS, make_card
from judgeprobe.card.sequential import replay, sequential_card, sequential_of
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.compare.pairing import Loaded
from judgeprobe.compare.published import Cost, Multiplier
from judgeprobe.conditions import BLIND
from judgeprobe.metrics.calibrated import label_multipliers
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.runs.spend import Spend
from judgeprobe.text.lexicons import Lexicons

LOGS = "a logs run called no judge: it has no spend record"


def _per(total: float | None, n: int) -> float | None:
    return None if total is None or n == 0 else total / n


def settled_rows(run: Loaded, lex: Lexicons) -> int | None:
    """A sequential run's settled card rows, its looks replayed; None for a fixed design."""
    plan = sequential_of(run.manifest)
    if plan is None:
        return None
    limits, task = load_thresholds(None), run.manifest.task
    j = run.judgments
    tidy = compute_metrics(j, lex, None, 0, 0, differences=False, method=INTERVALS)
    card = sequential_card(make_card(j, tidy, lex, limits, 0, 0, task),
                           replay(j, plan, lex, limits, task)[0])  # fmt: skip
    return sum(isinstance(r, SettledRow) and r.settled_at is not None for r in card.records)


def cost(run: Loaded, lex: Lexicons) -> Cost:
    """The run's spend per judgment (and per settled row of a sequential design)."""
    n = run.judgments.height
    if run.logs:
        return Cost(judgments=n, note=LOGS)
    if run.manifest.spend is None:
        return Cost(judgments=n, note="no spend record in its manifest (a run from before it)")
    try:
        spend = Spend.model_validate(run.manifest.spend)
    except ValidationError:
        return Cost(judgments=n, note="its manifest's spend record cannot be read")
    settled = settled_rows(run, lex)
    tokens = spend.prompt_tokens + spend.completion_tokens
    return Cost(
        judgments=n,
        requests_per_judgment=_per(spend.requests, n),
        tokens_per_judgment=_per(tokens, n),
        seconds_per_judgment=_per(spend.seconds, n),
        usd_per_judgment=_per(spend.cost_usd, n),
        settled_rows=settled,
        usd_per_settled_row=None if settled is None else _per(spend.cost_usd, settled),
        note="" if spend.cost_usd is not None else "no price set: tokens and seconds only",
    )


def multipliers(run: Loaded, human: pl.DataFrame | None) -> list[Multiplier]:
    """Each judge × protocol × model's label multiplier on the run's Blind verdicts."""
    if human is None or human.is_empty():
        return []
    blind = run.judgments.filter(pl.col("condition") == BLIND)
    table = label_multipliers(blind, human)
    return [
        Multiplier(judge=r["judge"], protocol=r["protocol"], model=r["model"],
                   labels=r["n_labels"], halfwidth=r["halfwidth"],
                   equivalent_labels=r["equivalent_labels"], multiplier=r["multiplier"])
        for r in table.iter_rows(named=True)
    ]  # fmt: skip
