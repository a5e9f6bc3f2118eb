"""``judgeprobe calibrate RUN``: each model's human-calibrated win rate or mean score.

    judgeprobe calibrate runs/logs                       # labels.parquet or the review page's
    judgeprobe calibrate runs/default --labels votes.csv --halfwidth 0.03
    judgeprobe calibrate runs/default --draw 50          # the next 50 items to label

Combines the judge's verdicts (or scores) on every item of the run under one condition
(default Blind) with human labels on a random subset of them: RUN/labels.parquet, else
``--labels FILE``, which overrides it (a table of item_id with preferred 1/2/tie, label
A/B/Tie or score, optional weight; or MT-Bench human judgments), else the run's review store.
Per judge, protocol and model: the judge-only estimate, the human-only one on the labelled
items, the calibrated estimate with its 95% interval (prediction-powered inference, PPI++),
and the further random labels that would bring the interval to ±H. Written to
RUN/calibrated.json (typed, what the card and report read) and RUN/calibrated.csv (its view for
spreadsheets); the card and the report show it from their next ``judgeprobe card RUN`` /
``judgeprobe report RUN``. ``--draw K`` writes the next K items to label (seeded, labelled ones
skipped) to RUN/annotation/draw.csv, which ``judgeprobe review RUN`` serves first.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from rich.table import Table

from judgeprobe import JudgeprobeError
from judgeprobe.calibrate.draw import draw, write_draw
from judgeprobe.calibrate.labels import (
    Labels,
    condition_judgments,
    find_labels,
    from_review,
    human_values,
    label_kind,
)
from judgeprobe.conditions import BLIND
from judgeprobe.core.cells import literal
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.core.files import write_atomic
from judgeprobe.metrics.calibrated import (
    WIN_RATE,
    CalibratedFile,
    CalibratedRow,
    calibrated_frame,
    calibrated_rows,
    score_bounds,
)
from judgeprobe.metrics.table import table_console, write_csv
from judgeprobe.runs.rundir import RunDir

DEFAULT_HALFWIDTH = 0.05
"""The half-width the label budget aims at by default: 5 points of win rate (5 % of a score's
scale)."""
SAMPLE_NOTE = (
    "Human labels are taken as a uniform random sample of the items{weights}: the calibrated "
    "estimate and its interval hold for that design only."
)


def _parser() -> argparse.ArgumentParser:
    p = command_parser("calibrate", __doc__)
    p.add_argument("run_dir", type=Path, metavar="RUN")
    p.add_argument("--labels", type=Path, metavar="FILE",
                   help="human labels (item_id + preferred/label/score, or MT-Bench human "
                   "judgments); overrides RUN/labels.parquet")  # fmt: skip
    p.add_argument("--halfwidth", type=float, metavar="H",
                   help=f"the interval half-width the label budget aims at (default "
                   f"{DEFAULT_HALFWIDTH} of a win rate, {DEFAULT_HALFWIDTH * 100:g}%% of a score "
                   "scale)")  # fmt: skip
    p.add_argument(
        "--condition",
        default=BLIND,
        help="the condition whose judgments are calibrated (default Blind)",
    )
    p.add_argument(
        "--draw",
        type=int,
        metavar="K",
        help="write the next K items to label (review page serves them first)",
    )
    p.add_argument("--seed", type=int, default=0, help="--draw: the order's seed")
    return p


def _show(table: pl.DataFrame) -> None:
    def num(x: object) -> str:
        return "–" if x is None else f"{x:.3f}"

    view = Table(title="Calibrated estimates", header_style="bold")
    head = ["judge", "protocol", "model", "items", "labels", "judge only", "human only",
            "calibrated [95% CI]", "labels for ±H"]  # fmt: skip
    for column in head:
        view.add_column(column)
    for r in table.iter_rows(named=True):
        ci = "–" if r["calibrated"] is None else (
            f"{num(r['calibrated'])} [{num(r['lo'])}, {num(r['hi'])}]")  # fmt: skip
        budget = r["labels_for_halfwidth"]
        more = "not reachable" if budget is None and r["calibrated"] is not None else (
            "–" if budget is None else f"{budget} more")  # fmt: skip
        view.add_row(*literal([r["judge"], r["protocol"], r["model"], r["n_items"],
                               r["n_labels"], num(r["judge_only"]), num(r["human_only"]), ci,
                               more]))  # fmt: skip
    table_console().print(view)


@dataclass(frozen=True)
class CalibrateRequest:
    """What ``judgeprobe calibrate`` was asked, by its flags' names (the API builds one too)."""

    run_dir: Path
    labels: Path | None = None
    halfwidth: float | None = None
    condition: str = BLIND
    draw: int | None = None
    seed: int = 0


def _calibrated(
    judgments: pl.DataFrame, labels: Labels, args: CalibrateRequest
) -> tuple[list[CalibratedRow], pl.DataFrame, str, float]:
    """The calibrated rows and table, the kind and the half-width; every refusal before writing."""
    kind = label_kind(labels)
    human = human_values(labels.rows)
    halfwidth = args.halfwidth
    if halfwidth is None:
        low, high = (0.0, 1.0) if kind == WIN_RATE else score_bounds(judgments, human)
        halfwidth = DEFAULT_HALFWIDTH * (high - low)
    rows = calibrated_rows(judgments, human, kind, halfwidth)
    table = calibrated_frame(rows)  # calibrated.csv: for people; the card reads the JSON
    if table.is_empty() or table["n_labels"].sum() == 0:
        raise JudgeprobeError(
            f"{labels.source}: no label falls on an item the judge judged under "
            f"{args.condition} (with two different models)"
        )
    return rows, table, kind, halfwidth


def _draw(run: RunDir, judgments: pl.DataFrame, labels: Labels, k: int, seed: int) -> None:
    """``--draw K``: the next K items to label, labelled ones skipped."""
    labelled = set(labels.rows["item_id"].to_list())
    labelled |= set(from_review(run).rows["item_id"].to_list())
    drawn = draw(judgments["item_id"].to_list(), labelled, k, seed)
    write_draw(run, drawn)
    print(f"drew {len(drawn)} items to label (seed {seed}, {len(labelled)} labelled "
          f"ones skipped): {run.label_draw}; `judgeprobe review {run.path}` serves them "
          "first")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe calibrate``."""
    calibrate_run(CalibrateRequest(**vars(_parser().parse_args(argv))))
    return 0


def calibrate_run(args: CalibrateRequest) -> list[CalibratedRow] | None:
    """The command's path: its rows (None: drawn only); every input checked before writing."""
    if args.halfwidth is not None and not 0 < args.halfwidth < math.inf:
        raise JudgeprobeError("--halfwidth must be a finite number above 0")
    if args.draw is not None and args.draw < 1:
        raise JudgeprobeError("--draw must be at least 1")
    run = RunDir(args.run_dir)
    judgments = condition_judgments(run, args.condition)
    labels = find_labels(run, judgments, args.labels)
    found = None if labels.rows.is_empty() else _calibrated(judgments, labels, args)
    if args.draw is not None:
        _draw(run, judgments, labels, args.draw, args.seed)
    if found is None:
        if args.draw is not None:
            return None
        raise JudgeprobeError(
            f"{run.path}: no human labels (no labels.parquet, no --labels, none in the review "
            "store); draw items to label with --draw K and label them in `judgeprobe review`"
        )
    rows, table, kind, halfwidth = found
    write_csv(table, run.calibrated)
    write_atomic(run.calibrated_json, CalibratedFile(rows=rows).model_dump_json(indent=2).encode())
    _show(table)
    weights = labels.rows["weight"].is_not_null().any()
    unmatched = f"; {labels.unmatched} rows match no item of the run" if labels.unmatched else ""
    print(f"labels: {labels.source}, {labels.rows['item_id'].n_unique()} items{unmatched}")
    print(SAMPLE_NOTE.format(weights=" (weighted by their inverse inclusion probabilities)"
                             if weights else ""))  # fmt: skip
    print(f"{kind}s under {args.condition}; labels for ±H: further random labels for a 95% "
          f"interval of half-width {halfwidth:g}")  # fmt: skip
    print(f"wrote {run.calibrated}; `judgeprobe card {run.path}` and `judgeprobe report "
          f"{run.path}` show it")  # fmt: skip
    return rows


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
