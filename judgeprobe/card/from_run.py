"""The card of a run directory: its judgments read, its metrics computed, the card written."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.card.alttest import alttest_rows
from judgeprobe.card.calibrated import calibrated_estimates
from judgeprobe.card.observed import observed_card
from judgeprobe.card.published import PUBLISHED_COLUMNS
from judgeprobe.card.render import write_card
from judgeprobe.card.rows import INTERVALS, Card, make_card
from judgeprobe.card.sequential import replay, sequential_card, sequential_of
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.metrics import observed
from judgeprobe.metrics.agreement import human_kappa
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.load import counted_judgments, load_judgments
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.metrics.winrates import read_win_rates
from judgeprobe.prompts.task import DEFAULT
from judgeprobe.runs.review import is_rejected, read_decisions, review_sentences
from judgeprobe.runs.rundir import RunDir, skipped_share
from judgeprobe.text.lexicons import load_lexicons


def checked_card(
    run_dir: Path,
    *,
    thresholds: Path | None = None,
    lexicons: Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Card:
    """``judgeprobe card``'s path: the input checked (one line when it is wrong), then the card."""
    judgments = RunDir(run_dir).judgments
    if not judgments.is_file():
        raise JudgeprobeError(f"{run_dir}: no {judgments.name} (is this a run directory?)")
    if resamples < 0:
        raise JudgeprobeError("--resamples must be >= 0")
    return card_for_run(run_dir, thresholds, lexicons, resamples, seed)


def card_for_run(
    run_dir: Path,
    thresholds: Path | None = None,
    lexicons: Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Card:
    """The card of the run in ``run_dir``, written there."""
    run = RunDir(run_dir)
    manifest = run.manifest_or_none()
    logs = manifest is not None and manifest.kind == "logs"  # what the judge already said
    judgments = counted_judgments(run.judgments, observed.COLUMNS if logs else None)
    limits = load_thresholds(thresholds)
    lex = load_lexicons(lexicons)
    task = manifest.task if manifest is not None else DEFAULT
    if logs:
        card = observed_card(run, judgments, limits, resamples, seed, task)
        card = replace(card, win_rates=read_win_rates(run.win_rates))
    else:
        tidy = compute_metrics(
            judgments, lex, None, resamples, seed, differences=False, method=INTERVALS
        )
        card = make_card(judgments, tidy, lex, limits, resamples, seed, task)
    plan = sequential_of(manifest)
    if plan is not None:  # a sequential run: its looks again, and the verdicts they settled
        card = sequential_card(card, replay(judgments, plan, lex, limits, task)[0])
    if not card.records:
        raise JudgeprobeError(
            f"{run_dir}: nothing to put on a card (no cue condition paired with Blind, "
            "and no Blind item judged in both orders)"
        )
    card = replace(card, calibrated=calibrated_estimates(run))  # calibrate's, when it ran
    card = replace(card, records=card.records + alttest_rows(run, limits.values))  # alttest's
    found = manifest.logs if manifest is not None else None
    if found is not None and found.skipped:  # a logs run whose readers skipped rows
        card = replace(card, skipped=found.skipped, log_rows=found.rows)
    decisions = read_decisions(run)
    if decisions:  # the judgments of rejected texts, which the card leaves out
        gone = load_judgments(run.judgments).filter(is_rejected(decisions)).height
        card = replace(card, review=tuple(review_sentences(decisions, gone)))
    kappa, pairs, _ = human_kappa(run, judgments, resamples, seed)
    if pairs:
        card = replace(card, human=kappa)
    run_id = manifest.run_id if manifest is not None else run_dir.name
    present = set(pl.read_parquet_schema(run.judgments))
    wanted = [c for c in PUBLISHED_COLUMNS if c in present]  # an older table may lack some
    whole = load_judgments(run.judgments, wanted)  # what the run spent, rejected texts' too
    title = f"Judge card — {run_id}"
    if card.skipped:  # said on the card's first line, before any row
        title += f" ({skipped_share(card.skipped, card.log_rows)})"
    write_card(card, run, title, judgments=whole, run_id=run_id)
    return card
