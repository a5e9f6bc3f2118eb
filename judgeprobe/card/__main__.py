"""``python -m judgeprobe.card RUN_DIR [--thresholds FILE]``: the judge card of a run.

Writes card.md, card.html, card.csv and card_silent.csv into RUN_DIR, prints the verdicts,
and exits 0 when every row is CLEAR, 5 when any row is BIASED, 6 when none is BIASED but
some are UNDERPOWERED (2: bad input).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson
from rich.table import Table

from judgeprobe import JudgeprobeError
from judgeprobe.card.render import display, summary, write_card
from judgeprobe.card.rows import Card, make_card
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.cli import main_guard
from judgeprobe.metrics.__main__ import load_judgments
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.lexicons import load_lexicons
from judgeprobe.metrics.table import table_console
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES

TERMINAL = ["judge", "protocol", "row", "n (docs)", "effect of", "effect", "silent-cue", "q",
            "MDE", "verdict"]  # fmt: skip


def card_for_run(
    run_dir: Path,
    thresholds: Path | None = None,
    lexicons: Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Card:
    """The card of the run in ``run_dir``, written there."""
    judgments = load_judgments(run_dir / "judgments.parquet")
    limits = load_thresholds(thresholds)
    lex = load_lexicons(lexicons)
    tidy = compute_metrics(judgments, lex, None, resamples, seed, differences=False)
    card = make_card(judgments, tidy, lex, limits, resamples, seed)
    if card.rows.is_empty():
        raise JudgeprobeError(
            f"{run_dir}: nothing to put on a card (no cue condition paired with Blind, "
            "and no Blind item judged in both orders)"
        )
    try:
        run_id = orjson.loads((run_dir / "manifest.json").read_bytes())["run_id"]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        run_id = run_dir.name
    write_card(card, run_dir, f"Judge card — {run_id}")
    return card


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m judgeprobe.card``; the exit code says if the judge is biased."""
    parser = argparse.ArgumentParser(prog="python -m judgeprobe.card", description=__doc__)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--thresholds", type=Path, help="thresholds TOML (default: builtin v1)")
    parser.add_argument("--lexicons", type=Path, help="override the explanation lexicons (TOML)")
    parser.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    args = parser.parse_args(argv)
    if not (args.run_dir / "judgments.parquet").is_file():
        raise JudgeprobeError(f"{args.run_dir}: no judgments.parquet (is this a run directory?)")
    if args.resamples < 0:
        raise JudgeprobeError("--resamples must be >= 0")
    card = card_for_run(args.run_dir, args.thresholds, args.lexicons, args.resamples, args.seed)
    shown = display(card).select(TERMINAL)
    view = Table(title="Judge card", header_style="bold")
    for column in shown.columns:
        view.add_column(column)
    for row in shown.iter_rows():
        view.add_row(*row)
    table_console().print(view)
    print(summary(card))
    print(f"wrote {args.run_dir / 'card.md'} and {args.run_dir / 'card.html'}")
    return card.exit_code


if __name__ == "__main__":
    sys.exit(main_guard(main))
