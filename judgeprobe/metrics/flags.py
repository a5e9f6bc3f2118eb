"""Cells that cannot be read: too many Invalid judgments, or too few items to pair.

A metric computed from one valid item of twenty is a number, not a finding. Every row of the
estimates table gets a ``flag`` saying why it cannot be read ('' when it can): its Invalid share
is above ``max_invalid_rate``, or its usable n (paired items for a cue cell; valid judgments
for Blind and for a sensitivity cell, which has no Blind twin) is below ``min_n``. Flagged
cells stay in the tables, marked, and out of any headline. ``invalid_reasons`` says what went
wrong, per judge and protocol.
"""

from __future__ import annotations

import argparse

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.conditions import BLIND
from judgeprobe.core.records import INVALID
from judgeprobe.runs.rundir import Manifest

NONDISCRIMINATING_FLAG = 0.5
"""A cell whose quoted evidence cannot tell the candidates apart in at least this share of its
criteria (``nondiscriminating_rate``) is flagged in the report and on the card: its fabrication
rate, however low, says nothing about whether the evidence separates the texts."""


class Readability(BaseModel):
    """When a cell is flagged (``[report]`` in a sweep config)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_invalid_rate: float = Field(default=0.2, ge=0.0, le=1.0)
    min_n: int = Field(default=10, ge=1)  # paired items (cue cells) or valid judgments (Blind)


def run_limits(manifest: Manifest | None) -> Readability:
    """The limits a run was configured with (its manifest's ``[report]``), else the defaults."""
    config = manifest.config if manifest is not None else {}
    return Readability.model_validate(config.get("report") or {})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--max-invalid`` and ``--min-n`` for the commands that flag cells."""
    parser.add_argument(
        "--max-invalid", type=float, metavar="RATE",
        help="flag a cell with a larger Invalid share (default: the run's [report], else 0.2)",
    )  # fmt: skip
    parser.add_argument(
        "--min-n", type=int, metavar="N",
        help="flag a cell with fewer usable items (default: the run's [report], else 10)",
    )  # fmt: skip


def from_arguments(args: argparse.Namespace, base: Readability | None = None) -> Readability:
    """``base`` (or the defaults) with the flags given; one error line when out of range."""
    given = {"max_invalid_rate": args.max_invalid, "min_n": args.min_n}
    update = {k: v for k, v in given.items() if v is not None}
    try:
        return Readability.model_validate({**(base or Readability()).model_dump(), **update})
    except ValidationError as exc:
        raise JudgeprobeError(first_error(exc, "flag")) from None


def with_flags(table: pl.DataFrame, limits: Readability | None = None) -> pl.DataFrame:
    """The estimates table with a ``flag`` column: why each cell cannot be read, or ''."""
    limits = limits or Readability()
    # n_paired is null for a cell that is not paired with Blind (Blind, sensitivity cells).
    unpaired = (pl.col("condition") == BLIND) | pl.col("n_paired").is_null()
    usable = pl.when(unpaired).then(pl.col("n_valid")).otherwise(pl.col("n_paired")).fill_null(0)
    rate = pl.col("invalid_rate").fill_null(0.0)
    too_invalid = pl.when(rate > limits.max_invalid_rate).then(
        pl.format("{}% Invalid", (rate * 100).round(0).cast(pl.Int64))
    )
    label = pl.when(unpaired).then(pl.lit("valid")).otherwise(pl.lit("paired"))
    too_thin = pl.when(usable < limits.min_n).then(
        pl.format("n {} {} < {}", label, usable, pl.lit(limits.min_n))
    )
    flag = pl.concat_str([too_invalid, too_thin], separator="; ", ignore_nulls=True)
    return table.with_columns(flag=flag.fill_null(""))


def readable(table: pl.DataFrame) -> pl.DataFrame:
    """The rows of a flagged table that may be headlined."""
    return table.filter(pl.col("flag") == "")


def invalid_reasons(judgments: pl.DataFrame, top: int = 3) -> pl.DataFrame:
    """The most frequent Invalid reasons per judge × protocol, with their share of its judgments.

    Numbers in a reason (token counts, attempts) are written N, so one cause is counted once.
    """
    if "invalid_reason" not in judgments.columns:
        judgments = judgments.with_columns(invalid_reason=pl.lit(""))
    total = judgments.group_by("judge", "protocol").agg(judgments=pl.len())
    reason = (
        pl.col("invalid_reason")
        .fill_null("")
        .str.replace_all(r"\d+(\.\d+)?", "N")
        .str.slice(0, 120)
    )
    counts = (
        judgments.filter(pl.col("verdict") == INVALID)
        .group_by("judge", "protocol", reason.alias("reason"))
        .agg(n=pl.len())
        .join(total, on=["judge", "protocol"])
        .with_columns(share=pl.col("n") / pl.col("judgments"))
        .sort(["judge", "protocol", "n", "reason"], descending=[False, False, True, False])
    )
    return counts.group_by("judge", "protocol", maintain_order=True).head(top)
