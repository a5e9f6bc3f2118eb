"""card.json: the judge card as a published document, versioned, with a JSON Schema.

A CI job or a model release carries it beside (or instead of) the pages: which judge was
audited (its model and the server's fingerprint), with which prompts (their hashes) and
protocols, under which thresholds, each row with its effect, interval, test, MDE, verdict and
documents, the exit code, and what the run spent. Its schema is generated from these models
(``schema_text``) and committed as ``docs/card.schema.json``; a test holds the two equal, so a
change to a field is a change to the published schema, and a new ``SCHEMA_VERSION`` when it
breaks a reader. ``python -m judgeprobe.card.published`` prints the schema.
"""

from __future__ import annotations

import sys
from typing import Literal

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from judgeprobe import __version__
from judgeprobe.card.record import CalibratedEstimate, CardRow
from judgeprobe.card.rows import Card
from judgeprobe.card.thresholds import Thresholds
from judgeprobe.core import files
from judgeprobe.metrics.uncertainty import Method, method_sentence
from judgeprobe.metrics.winrates import WinRate

SCHEMA_VERSION = 2
"""card.json's version: raised when a field a reader relies on changes or goes (2: each row
holds only its kind's fields, told apart by ``kind``; docs/card.md, "What changed in v2")."""

_MODEL = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class Judge(BaseModel):
    """Who was audited: a judge as the sweep named it, and what its server said it was."""

    model_config = _MODEL

    judge: str
    """The judge's name in the sweep config."""
    models: list[str]
    """The model names its replies carried (one, unless the server changed mid-run)."""
    fingerprints: list[str]
    """The server fingerprints its replies carried (the backend's own, or judgeprobe's hash
    of what the server said of itself)."""


class Prompt(BaseModel):
    """The prompts one judge × protocol was asked with, by the hash of their text."""

    model_config = _MODEL

    judge: str
    """The judge."""
    protocol: str
    """The protocol."""
    template_hashes: list[str]
    """SHA-256 of each prompt template as sent (every wording of it, where there are several)."""


class Spend(BaseModel):
    """What one judge × protocol cost the run: requests, tokens and time."""

    model_config = _MODEL

    judge: str
    """The judge."""
    protocol: str
    """The protocol."""
    judgments: int
    """Judgments in the run's table (valid or Invalid; rejected texts' too: they were paid)."""
    requests: int
    """Requests sent, re-asks, escalations and transport retries included."""
    prompt_tokens: int
    """Prompt tokens the server counted."""
    completion_tokens: int
    """Completion tokens the server counted."""
    request_seconds: float
    """The judgments' latencies summed: request time, not wall-clock (requests overlap)."""


class Intervals(BaseModel):
    """How every interval on the card was computed."""

    model_config = _MODEL

    method: Method
    """``score`` (score-type bounds from the documents' sums) or ``percentile`` (bootstrap)."""
    sentence: str
    """The method in the card's words, as its rule prints it."""


class PublishedThresholds(BaseModel):
    """The thresholds file the verdicts read, and where it came from."""

    model_config = _MODEL

    origin: str
    """The file (``builtin thresholds_v4.toml`` or a user's path)."""
    sha256: str
    """SHA-256 of the file's bytes."""
    values: Thresholds
    """Its keys (``card.thresholds``)."""


class PublishedCard(BaseModel):
    """The judge card of one run (``card.json``)."""

    model_config = _MODEL

    schema_version: Literal[2]
    """This document's version (``SCHEMA_VERSION``)."""
    judgeprobe: str
    """The judgeprobe version that wrote it."""
    run_id: str
    """The run the card is of."""
    title: str
    """The card's title."""
    judges: list[Judge]
    """Every judge audited."""
    protocols: list[str]
    """Every protocol the judges were asked under."""
    prompts: list[Prompt]
    """The prompts, by hash, per judge × protocol."""
    thresholds: PublishedThresholds
    """What the verdicts read against."""
    intervals: Intervals
    """How the intervals were computed."""
    exit_code: int
    """``judgeprobe card``'s exit code: 0 all clear (or nothing to gate on: no row that can set
    one), 5 BIASED or UNSTABLE, 8 DOES-NOT-REPLACE (under thresholds that gate on the alt-test),
    7 INSENSITIVE, 6 UNDERPOWERED."""
    summary: str
    """The verdicts counted, and what the exit code means, in one line."""
    rows: list[CardRow]
    """Every row, in the card's order: each of one kind (``kind``) with its own fields."""
    calibrated: list[CalibratedEstimate]
    """Figures corrected by a calibration, where the run has one."""
    spend: list[Spend]
    """What the run spent, per judge × protocol."""
    win_rates: list[WinRate] = Field(default_factory=list)
    """A logs run's win rates per judge × protocol × model, as the log's own tool counts them
    (AlpacaEval's leaderboard figure ÷ 100, FastChat's ``win_rate_adjusted``); [] otherwise."""


def _distinct(frame: pl.DataFrame, column: str) -> pl.Expr:
    """The column's distinct non-empty values, sorted ([] where the table lacks it)."""
    if column not in frame.columns:
        return pl.lit([], dtype=pl.List(pl.String)).alias(column)
    values = pl.col(column).cast(pl.String)
    return values.filter(values.is_not_null() & (values != "")).unique().sort().alias(column)


def _total(frame: pl.DataFrame, column: str, dtype: type[pl.DataType]) -> pl.Expr:
    if column not in frame.columns:
        return pl.lit(0, dtype=dtype).alias(column)
    return pl.col(column).fill_null(0).sum().cast(dtype).alias(column)


def _judges(j: pl.DataFrame) -> list[Judge]:
    found = j.group_by("judge").agg(_distinct(j, "model"), _distinct(j, "fingerprint"))
    return [
        Judge(judge=str(r["judge"]), models=r["model"], fingerprints=r["fingerprint"])
        for r in found.sort("judge").iter_rows(named=True)
    ]


def _prompts(j: pl.DataFrame) -> list[Prompt]:
    found = j.group_by("judge", "protocol").agg(_distinct(j, "template_hash"))
    return [
        Prompt(
            judge=str(r["judge"]), protocol=str(r["protocol"]), template_hashes=r["template_hash"]
        )
        for r in found.sort("judge", "protocol").iter_rows(named=True)
    ]


def _spend(j: pl.DataFrame) -> list[Spend]:
    requests = "attempts" if "attempts" in j.columns else "n_requests"
    found = j.group_by("judge", "protocol").agg(
        pl.len().alias("judgments"),
        _total(j, requests, pl.Int64).alias("requests"),
        _total(j, "prompt_tokens", pl.Int64),
        _total(j, "completion_tokens", pl.Int64),
        _total(j, "latency_s", pl.Float64).alias("request_seconds"),
    )
    return [
        Spend(**{k: (str(v) if k in ("judge", "protocol") else v) for k, v in r.items()})
        for r in found.sort("judge", "protocol").iter_rows(named=True)
    ]


PUBLISHED_COLUMNS = (
    "judge", "protocol", "model", "fingerprint", "template_hash", "attempts", "n_requests",
    "prompt_tokens", "completion_tokens", "latency_s",
)  # fmt: skip
"""What card.json reads of the judgments table: a million-row run need not load its texts."""


def published(
    card: Card, judgments: pl.DataFrame, *, run_id: str, title: str, summary: str
) -> PublishedCard:
    """The card as card.json holds it.

    ``judgments``: the run's whole table (what it spent, rejected texts' judgments too);
    ``summary``: the card's verdict line (``card.render.summary``).
    """
    t = card.thresholds
    return PublishedCard(
        schema_version=SCHEMA_VERSION,
        judgeprobe=__version__,
        run_id=run_id,
        title=title,
        judges=_judges(judgments),
        protocols=sorted({str(p) for p in judgments["protocol"].unique().to_list()}),
        prompts=_prompts(judgments),
        thresholds=PublishedThresholds(origin=t.origin, sha256=t.sha256, values=t.values),
        intervals=Intervals(method=card.method, sentence=method_sentence(card.method)),
        exit_code=card.exit_code,
        summary=summary,
        rows=list(card.records),
        calibrated=list(card.calibrated),
        spend=_spend(judgments),
        win_rates=list(card.win_rates),
    )


def schema_text() -> str:
    """The schema as ``docs/card.schema.json`` holds it."""
    return files.schema_text(PublishedCard, "card", SCHEMA_VERSION)


if __name__ == "__main__":
    sys.stdout.write(schema_text())
