"""``judgeprobe annotate``: the human check of a run.

    judgeprobe annotate export RUN_DIR --n 100      # sample → RUN_DIR/annotation/
    judgeprobe annotate import RUN_DIR a1.csv a2.csv

``export`` writes ``pairs.csv`` (fill the ``label`` column: 1, 2 or Tie) and ``form.html``
(open it in a browser; it saves ``labels-NAME.csv``) for the annotators, and ``key.csv`` for
``import`` (keep it back: it maps pairs to items). ``import`` takes one file per annotator,
keeps the labels in the run's review store (``review.sqlite``, beside those given on the
``judgeprobe review`` page) and writes, over all of them, ``annotation/agreement.csv``: each
annotator's Tie rate, Cohen's kappa between annotators, and each judge × protocol ×
condition's agreement with the human majority, with 95% intervals over documents (score-type
for the shares, the percentile bootstrap for κ).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from judgeprobe.annotate.agreement import (
    agreement,
    check_annotators,
    read_annotations,
    read_key,
    store_annotations,
)
from judgeprobe.annotate.export import export, read_judgments
from judgeprobe.core.cells import cell, interval_bounds, literal
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.runs.rundir import RunDir


def _parser() -> argparse.ArgumentParser:
    p = command_parser("annotate", __doc__)
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export", help="write a stratified, blind sample of a run's pairs")
    e.add_argument("run_dir", type=Path)
    e.add_argument("--n", type=int, default=100, help="pairs to sample (default 100)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--items", help="the run's items file, when it moved since the run")
    e.add_argument("--force", action="store_true", help="redraw over an existing sample")
    i = sub.add_parser("import", help="read one labels file per annotator; report agreement")
    i.add_argument("run_dir", type=Path)
    i.add_argument("files", type=Path, nargs="+", metavar="FILE")
    i.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    i.add_argument("--seed", type=int, default=0)
    return p


def _print(table: pl.DataFrame, console: Console) -> None:
    out = Table(title="Human check (95% intervals over documents)")
    for name in ("kind", "who", "condition", "metric", "value", "interval", "n"):
        out.add_column(name)
    for r in table.iter_rows(named=True):
        out.add_row(*literal([r["kind"], r["who"], r["condition"], r["metric"], cell(r["value"]),
                              interval_bounds(r["lo"], r["hi"]), cell(r["n"])]))  # fmt: skip
    console.print(out)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe annotate``: export a blind form, or import labels."""
    args = _parser().parse_args(argv)
    console = Console(soft_wrap=True)
    if args.command == "export":
        out, n = export(args.run_dir, args.n, args.seed, args.items, force=args.force)
        console.print(
            f"{n} pairs → {out}/form.html and {out}/pairs.csv for the annotators (no labels, "
            f"no judge output); keep {out}/key.csv back for `annotate import`"
        )
        return 0
    key = read_key(args.run_dir)
    shown_first = dict(zip(key["pair_id"], key["shown_first"], strict=True))
    annotations = [read_annotations(path, shown_first) for path in args.files]
    check_annotators(annotations)
    stored = store_annotations(args.run_dir, key, annotations, [p.name for p in args.files])
    table = agreement(key, stored, read_judgments(args.run_dir), args.resamples, args.seed)
    path = RunDir(args.run_dir).agreement
    table.write_csv(path)
    for a in annotations:
        if a.unanswered:
            console.print(f"{a.annotator}: {a.unanswered} pairs unanswered (left out)")
    others = sorted({a.annotator for a in stored} - {a.annotator for a in annotations})
    if others:
        console.print(f"also counted, from {RunDir(args.run_dir).review.name}: the labels of "
                      f"{', '.join(others)}")  # fmt: skip
    _print(table, console)
    console.print(f"wrote {path}")
    return 0


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
