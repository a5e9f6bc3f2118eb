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

from judgeprobe.core.records import INVALID

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


_CODE = {"A": 0, "B": 1, "Tie": 2, INVALID: 3}
"""Verdicts as small integers, so a line's two calls reduce to their min and max."""
_CELL = ["judge", "protocol", "generator_1", "generator_2"]


def _in_files(files: Collection[str]) -> pl.Expr:
    """Whether a judgment's request key (``FILE:LINE``) is a line of one of ``files``."""
    return pl.any_horizontal(
        pl.lit(False), *(pl.col("request_key").str.starts_with(f"{f}:") for f in files)
    )


def _lines(judgments: pl.LazyFrame) -> pl.LazyFrame:
    """FastChat pair lines as results, counted per pair and verdict (``count``).

    A line's calls share its request key; grouped by the key's hash with integer verdicts (a
    million lines in seconds), a line is Invalid when either call is, the verdict both calls
    give when they agree, else Tie.
    """
    coded = judgments.select(
        *_CELL, line=pl.col("request_key").hash(),
        code=pl.col("verdict").replace_strict(_CODE, default=3, return_dtype=pl.Int8),
        cell=pl.struct(_CELL).hash(),
    )  # fmt: skip
    per_line = coded.group_by("line").agg(
        lo=pl.col("code").min(), hi=pl.col("code").max(), cell=pl.col("cell").first()
    )
    counted = per_line.group_by("cell", "lo", "hi").agg(count=pl.len().cast(pl.Int64))
    names = coded.select(*_CELL, "cell").unique("cell")
    verdict = (
        pl.when(pl.col("hi") == 3).then(pl.lit(INVALID))
        .when(pl.col("lo") != pl.col("hi")).then(pl.lit("Tie"))
        .otherwise(pl.col("lo").replace_strict({v: k for k, v in _CODE.items()},
                                               return_dtype=pl.String))
    )  # fmt: skip
    return counted.join(names, on="cell").select(
        *_CELL, verdict=verdict, p_b=pl.lit(None, pl.Float64), count="count"
    )


def _results(judgments: pl.LazyFrame, line_files: Collection[str]) -> pl.LazyFrame:
    """Results with their pair, verdict, P(B) if soft, and how many there are (``count``)."""
    in_lines = _in_files(line_files)
    single = judgments.filter(~in_lines).select(
        *_CELL, "verdict", p_b=pl.col("details").str.extract(_P_B, 1).cast(pl.Float64),
        count=pl.lit(1, pl.Int64),
    )  # fmt: skip
    if not line_files:
        return single
    return pl.concat([single, _lines(judgments.filter(in_lines))], how="vertical_relaxed")


def win_rates(judgments: pl.LazyFrame, line_files: Collection[str] = ()) -> pl.DataFrame:
    """The win-rate table (``COLUMNS``), one row per judge × protocol × model.

    ``line_files``: the log files read as MT-Bench pair lines (their two calls are one result).
    """
    results = _results(judgments.select(READS), line_files)
    verdict, count = pl.col("verdict"), pl.col("count")
    sides = []
    for model, won, lost, p_won in (
        ("generator_1", "A", "B", 1 - pl.col("p_b")),
        ("generator_2", "B", "A", pl.col("p_b")),
    ):
        value = (
            pl.when(verdict == INVALID).then(None)
            .when(pl.col("p_b").is_not_null()).then(p_won)
            .when(verdict == won).then(1.0).when(verdict == lost).then(0.0).otherwise(0.5)
        )  # fmt: skip
        side = results.select(
            "judge", "protocol", model=pl.col(model), count=count,
            win=(verdict == won) * count, tie=(verdict == "Tie") * count,
            loss=(verdict == lost) * count, invalid=(verdict == INVALID) * count,
            value=value.cast(pl.Float64) * count,
        )  # fmt: skip
        sides.append(side)
    table = (
        pl.concat(sides)
        .group_by("judge", "protocol", "model")
        .agg(
            n=pl.col("count").sum(),
            wins=pl.col("win").sum(),
            ties=pl.col("tie").sum(),
            losses=pl.col("loss").sum(),
            invalid=pl.col("invalid").sum(),
            total=pl.col("value").sum(),
        )
        .with_columns(pl.col("n", "wins", "ties", "losses", "invalid").cast(pl.Int64))
        .with_columns(
            win_rate=pl.when(pl.col("n") > pl.col("invalid")).then(
                pl.col("total") / (pl.col("n") - pl.col("invalid"))
            )
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
