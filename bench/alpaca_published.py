"""Checked against published figures: judgeprobe's AlpacaEval win rates beside the leaderboard's.

    python bench/alpaca_published.py ALPACA_EVAL_DIR [--pair MODEL:ANNOTATOR …] [--out DIR]

``ALPACA_EVAL_DIR`` is a local copy of https://github.com/tatsu-lab/alpaca_eval (a clone, or
``git archive`` of ``results/`` and ``src/alpaca_eval/leaderboards/``). For each model ×
annotator it runs ``judgeprobe logs`` on ``results/<model>/<annotator>/annotations.json``
(805 records) and prints, as a Markdown table, the model's ``win_rate`` from
``win_rates.csv`` beside the annotator's leaderboard ``win_rate`` ÷ 100 (and whether they
agree to four decimals), and the card's ``position (randomized)`` row where the annotator kept
enough to recover the shown order. Then one run per annotator on all its files together: the
pooled randomized position figure. Nothing is downloaded; docs/logs.md holds the output.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from pathlib import Path

import polars as pl

from judgeprobe.logs.__main__ import main as logs_main
from judgeprobe.runs.rundir import RunDir

PAIRS = [
    ("alpaca-7b", "alpaca_eval_gpt4"), ("claude-2", "alpaca_eval_gpt4"),
    ("gpt-3.5-turbo-0301", "alpaca_eval_gpt4"),
    ("alpaca-7b", "weighted_alpaca_eval_gpt4_turbo"),
    ("claude-2", "weighted_alpaca_eval_gpt4_turbo"),
    ("gpt-3.5-turbo-0301", "weighted_alpaca_eval_gpt4_turbo"),
    ("cohere", "alpaca_eval_gpt4_turbo_fn"), ("gemini-pro", "alpaca_eval_gpt4_turbo_fn"),
    ("Mistral-7B-Instruct-v0.2", "alpaca_eval_gpt4_turbo_fn"),
]  # fmt: skip
"""The default rows: three models under each of AlpacaEval 1's and 2's annotators and _fn."""


def leaderboard(root: Path, annotator: str) -> dict[str, float]:
    """The annotator's leaderboard ``win_rate`` (a percentage) by model."""
    for version in ("data_AlpacaEval_2", "data_AlpacaEval"):
        path = root / "src/alpaca_eval/leaderboards" / version / f"{annotator}_leaderboard.csv"
        if path.is_file():
            with path.open(newline="") as f:
                return {r[""]: float(r["win_rate"]) for r in csv.DictReader(f)}
    raise SystemExit(f"{root}: no leaderboard CSV for {annotator}")


Row = dict[str, object]


def judged(paths: list[Path], out: Path) -> tuple[pl.DataFrame, dict[str, Row]]:
    """``judgeprobe logs`` on the files: its win rates, its position (randomized) rows by judge."""
    logs_main([*map(str, paths), "--out", str(out), "--no-report", "--resamples", "0"])
    card = json.loads((out / "card.json").read_text())
    rows = {r["judge"]: r for r in card["rows"] if r["kind"] == "observed-position-randomized"}
    return pl.read_csv(RunDir(out).win_rates), rows


def position(row: Row | None) -> str:
    """The randomized position row in one cell."""
    if row is None:
        return "– (order not recovered)"
    e = row["effect"]
    assert isinstance(e, dict)
    return (f"{e['value']:+.3f} [{e['lo']:+.3f}, {e['hi']:+.3f}], p = {row['p']:.2g}, "
            f"n = {row['n']}, {row['verdict']}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Print the table (Markdown) of every pair, then the pooled position per annotator."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("root", type=Path, help="a local copy of tatsu-lab/alpaca_eval")
    p.add_argument("--pair", action="append", default=[], metavar="MODEL:ANNOTATOR")
    p.add_argument("--out", type=Path, default=None, help="where the runs go (default: temp)")
    args = p.parse_args(argv)
    pairs = [tuple(x.split(":", 1)) for x in args.pair] or PAIRS
    out = args.out or Path(tempfile.mkdtemp(prefix="alpaca-published-"))
    print(
        "| model | folder | annotator (as the file records it) | leaderboard win_rate ÷ 100 | "
        "judgeprobe win_rate | equal to 4 decimals | n (Invalid) | position (randomized) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    by_annotator: dict[str, list[Path]] = {}
    for model, annotator in pairs:
        path = args.root / "results" / model / annotator / "annotations.json"
        rates, rows = judged([path], out / f"{model}__{annotator}")
        mine = rates.filter(pl.col("model") == model).row(0, named=True)
        judge = str(mine["judge"])  # a folder may hold another annotator's records
        by_annotator.setdefault(judge, []).append(path)
        theirs = leaderboard(args.root, judge)[model] / 100
        same = abs(mine["win_rate"] - theirs) < 5e-5
        print(
            f"| {model} | {annotator} | {judge} | {theirs:.4f} | {mine['win_rate']:.4f} | "
            f"{'yes' if same else 'NO'} | {mine['n']} ({mine['invalid']}) | "
            f"{position(rows.get(judge))} |"
        )
    print("\n| annotator | files | position (randomized), its files together |")
    print("|---|---|---|")
    for judge, paths in by_annotator.items():
        _, rows = judged(paths, out / f"all__{judge}")
        print(f"| {judge} | {len(paths)} | {position(rows.get(judge))} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
