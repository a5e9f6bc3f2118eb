"""Win rates as the log's own tool counts them.

Definitions: docs/metrics.md, "Win rates as the log's own tool counts them".

Per judge × protocol × model: n, wins, ties, losses, Invalid and the win rate, a share in
[0, 1] with ties ½, over the log's verdicts that involve the model. Three rules, one table:

- a verdict that keeps a soft preference (AlpacaEval's weighted annotator: P(B) in the
  judgment's ``details``) counts that probability, so the win rate is AlpacaEval's own mean of
  ``preference`` − 1 (its leaderboard's ``win_rate`` ÷ 100); its win/tie/loss counts are the
  discrete verdicts, as AlpacaEval's ``n_wins``/``n_draws`` are;
- an MT-Bench pair line (two calls of one line, FastChat's g1 and g2) is one result, as
  FastChat's ``show_result.py`` counts it: a win when both calls name the same model, a tie when
  they disagree or both say tie, left out (Invalid) when either is an error; its win rate is
  FastChat's ``win_rate_adjusted``;
- any other verdict is a win, tie or loss: (wins + ½ ties) / (wins + ties + losses).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import polars as pl
from pydantic import BaseModel, ConfigDict

COLUMNS = ["judge", "protocol", "model", "n", "wins", "ties", "losses", "invalid", "win_rate"]
READS = ["judge", "protocol", "generator_1", "generator_2", "verdict", "details", "request_key"]
"""The judgments-table columns the win rates read."""
_P_B = r'"P\(B\)":\s*([-+0-9.eE]+)'


class WinRate(BaseModel):
    """One model's win rate under one judge × protocol, as the log's own tool counts it."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judge: str
    """The judge (AlpacaEval's annotator, MT-Bench's judging model …)."""
    protocol: str
    """The protocol (MT-Bench's prompt name, ``alpaca_eval`` …)."""
    model: str
    """The generator whose answers were judged."""
    n: int
    """Results involving the model (verdicts; MT-Bench pair lines), Invalid ones included."""
    wins: int
    """Results the model won."""
    ties: int
    """Results that were a draw (AlpacaEval's preference 0 or 1.5; FastChat's tie or split)."""
    losses: int
    """Results the model lost."""
    invalid: int
    """Results left out: the verdict did not parse (or, MT-Bench, either call was an error)."""
    win_rate: float | None
    """Share in [0, 1], ties ½ (a soft preference counts its probability); None: no valid
    result."""


def _file(request_key: pl.Expr) -> pl.Expr:
    """The log file of a judgment's request key (``FILE:LINE``)."""
    return request_key.str.replace(r":\d+$", "")


def _results(judgments: pl.LazyFrame, line_files: Collection[str]) -> pl.LazyFrame:
    """One result a verdict (or a FastChat pair line): its pair, verdict and P(B) if soft."""
    keep = ["judge", "protocol", "generator_1", "generator_2", "verdict"]
    in_lines = _file(pl.col("request_key")).is_in(list(line_files))
    single = judgments.filter(~in_lines).select(
        *keep, p_b=pl.col("details").str.extract(_P_B, 1).cast(pl.Float64)
    )
    valid = pl.col("verdict") != "Invalid"
    lines = (
        judgments.filter(in_lines)
        .group_by("judge", "protocol", "request_key")
        .agg(
            pl.col("generator_1", "generator_2").first(),
            invalid=(~valid).any(),
            kinds=pl.col("verdict").n_unique(),
            only=pl.col("verdict").first(),
        )
        .select(
            "judge", "protocol", "generator_1", "generator_2",
            verdict=pl.when("invalid").then(pl.lit("Invalid"))
            .when(pl.col("kinds") > 1).then(pl.lit("Tie")).otherwise("only"),
            p_b=pl.lit(None, pl.Float64),
        )
    )  # fmt: skip
    return pl.concat([single, lines], how="vertical_relaxed")


def win_rates(judgments: pl.LazyFrame, line_files: Collection[str] = ()) -> pl.DataFrame:
    """The win-rate table (``COLUMNS``), one row per judge × protocol × model.

    ``line_files``: the log files read as MT-Bench pair lines (their two calls are one result).
    """
    results = _results(judgments.select(READS), line_files)
    verdict = pl.col("verdict")
    sides = []
    for model, won, lost, p_won in (
        ("generator_1", "A", "B", 1 - pl.col("p_b")),
        ("generator_2", "B", "A", pl.col("p_b")),
    ):
        value = (
            pl.when(verdict == "Invalid").then(None)
            .when(pl.col("p_b").is_not_null()).then(p_won)
            .when(verdict == won).then(1.0).when(verdict == lost).then(0.0).otherwise(0.5)
        )  # fmt: skip
        side = results.select(
            "judge", "protocol", model=pl.col(model),
            win=verdict == won, tie=verdict == "Tie", loss=verdict == lost,
            invalid=verdict == "Invalid", value=value.cast(pl.Float64),
        )  # fmt: skip
        sides.append(side)
    table = (
        pl.concat(sides)
        .group_by("judge", "protocol", "model")
        .agg(
            n=pl.len().cast(pl.Int64),
            wins=pl.col("win").sum().cast(pl.Int64),
            ties=pl.col("tie").sum().cast(pl.Int64),
            losses=pl.col("loss").sum().cast(pl.Int64),
            invalid=pl.col("invalid").sum().cast(pl.Int64),
            win_rate=pl.col("value").mean(),
        )
        .sort("judge", "protocol", "model")
    )
    return table.collect().select(COLUMNS)


def read_win_rates(path: Path) -> tuple[WinRate, ...]:
    """A run's win rates (``RunDir.win_rates``), none where the run has no such file."""
    if not path.is_file():
        return ()
    frame = pl.read_csv(path, schema_overrides={"judge": pl.String, "protocol": pl.String,
                                                "model": pl.String})  # fmt: skip
    return tuple(WinRate.model_validate(r) for r in frame.select(COLUMNS).iter_rows(named=True))
