"""``judgeprobe alttest``: can the judge replace the annotators (the alternative annotator test)?

    judgeprobe alttest runs/logs                         # labels.parquet or the review page's
    judgeprobe alttest runs/default --labels votes.csv --epsilon 0.15
    judgeprobe alttest --humans humans.json --llm-annotations llms.json --llm gpt-4o --out at/

From items labelled by two or more annotators (three or more recommended) and by the judge: each
annotator is left out in turn, and the judge and that annotator are each aligned with the
others' labels (the share equal for categories, −RMSE for scores); a one-sided paired t-test per
annotator with ε as the annotators' penalty, Benjamini–Yekutieli across them. The winning rate ω
is the share of annotators the judge beats; it can replace them at ε when ω ≥ 0.5. The
advantage probability ρ ranks judges. docs/metrics.md, "Alternative annotator test".

In a run (live or logs), the judge's label of an item is its item verdict under the condition
(default Blind); the human labels are RUN/labels.parquet, else ``--labels FILE`` (which
overrides it), else the review store, each with its annotator. Writes RUN/alttest.csv (one row
per judge × ε from 0 to 0.3 and the ε given) and RUN/alttest_annotators.csv; the card shows the
verdict at ε from its next ``judgeprobe card RUN``. With ``--humans`` and ``--llm-annotations``
(the AltTest repository's human_annotations.json and llm_annotations.json) it writes the same
two files into ``--out DIR``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from rich.table import Table

from judgeprobe import JudgeprobeError
from judgeprobe.calibrate.annotations import Case, file_cases
from judgeprobe.calibrate.labels import condition_judgments, find_labels, label_kind
from judgeprobe.conditions import BLIND
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.core.files import atomic_path, staged_dir
from judgeprobe.core.records import INVALID
from judgeprobe.metrics.alttest import (
    ACCURACY,
    ALTTEST_SCHEMA,
    ANNOTATORS_SCHEMA,
    DEFAULT_EPSILON,
    EPSILONS,
    MIN_ITEMS,
    NEG_RMSE,
    SUGGESTED,
    AltTest,
    alt_tests,
    wins,
)
from judgeprobe.metrics.calibrated import MEAN_SCORE, judge_values
from judgeprobe.metrics.observed import item_verdicts
from judgeprobe.metrics.table import table_console
from judgeprobe.runs.rundir import RunDir, check_writable_dir


def _parser() -> argparse.ArgumentParser:
    p = command_parser("alttest", __doc__)
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("run_dir", type=Path, metavar="RUN", nargs="?",
                   help="a run directory (live or logs)")  # fmt: skip
    p.add_argument("--epsilon", type=float, default=DEFAULT_EPSILON, metavar="E",
                   help="the annotators' penalty the verdict reads (default 0.2: experts; 0.15 "
                   "skilled annotators, 0.1 crowd workers)")  # fmt: skip
    p.add_argument(
        "--labels",
        type=Path,
        metavar="FILE",
        help="RUN: human labels with an annotator column (overrides labels.parquet)",
    )
    p.add_argument(
        "--condition",
        default=BLIND,
        help="RUN: the condition whose verdicts are the judge's labels (default Blind)",
    )
    p.add_argument("--humans", type=Path, metavar="HUMANS.json",
                   help="AltTest layout: {annotator: {item: label}}")  # fmt: skip
    p.add_argument("--llm-annotations", type=Path, metavar="LLM.json",
                   help="AltTest layout: {llm: {item: label}} or {item: label}")  # fmt: skip
    p.add_argument("--llm", metavar="NAME", help="the one LLM of --llm-annotations to test")
    p.add_argument("--metric", choices=(ACCURACY, NEG_RMSE),
                   help="alignment: accuracy (categories) or neg_rmse (numbers); default by the "
                   "labels")  # fmt: skip
    p.add_argument("--out", type=Path, metavar="DIR", help="with --humans: where to write")
    return p


def _run_cases(run: RunDir, condition: str, labels_file: Path | None) -> list[Case]:
    """Each judge × protocol of the run against the run's annotators."""
    judgments = condition_judgments(run, condition)
    labels = find_labels(run, judgments, labels_file)
    rows = labels.rows
    if rows.is_empty():
        raise JudgeprobeError(f"{run.path}: no human labels (no labels.parquet, no --labels, "
                              "none in the review store)")  # fmt: skip
    if (rows["annotator"].fill_null("") == "").any():
        raise JudgeprobeError(f"{labels.source}: labels without an annotator; the alt-test needs "
                              "who gave each label (an annotator column)")  # fmt: skip
    if label_kind(labels) == MEAN_SCORE:
        unit = pl.concat_str("item_id", pl.lit("#"), "candidate")
        humans = rows.select(unit.alias("item_id"), "annotator", pl.col("score").alias("label"))
        judged = judge_values(judgments, MEAN_SCORE).select(
            "judge", "protocol", unit.alias("item_id"), pl.col("judge_value").alias("label")
        )
        metric = NEG_RMSE
    else:
        humans = rows.select("item_id", "annotator", "label")
        judged = item_verdicts(judgments).filter(pl.col("verdict") != INVALID)
        judged = judged.select("judge", "protocol", "item_id", pl.col("verdict").alias("label"))
        metric = ACCURACY
    humans = humans.unique(["item_id", "annotator"], keep="first", maintain_order=True)
    repeated = rows.height - humans.height
    note = f"; {repeated} repeated labels of one annotator on one item: the first kept" if (
        repeated) else ""  # fmt: skip
    cases = []
    for (judge, protocol), part in sorted(judged.partition_by("judge", "protocol",
                                                              as_dict=True).items()):  # fmt: skip
        cases.append(Case(str(judge), str(protocol), humans, part.drop("judge", "protocol"),
                          metric, f"{labels.source}{note}"))  # fmt: skip
    if not cases:
        raise JudgeprobeError(f"{run.path}: no valid judge verdict under {condition}")
    return cases


@dataclass(frozen=True)
class Result:
    """One judge × protocol's tests at every ε of the table."""

    case: Case
    tests: list[AltTest]


def _test(case: Case, epsilons: list[float]) -> Result:
    """One judge's tests; an error names the judge when the file or run holds several."""
    try:
        return Result(case, alt_tests(wins(case.humans, case.judge_labels, case.metric), epsilons))
    except JudgeprobeError as exc:
        raise JudgeprobeError(f"{case.judge}: {exc}") from None


def _epsilons(chosen: float) -> list[float]:
    return sorted({*EPSILONS, chosen})


def _tables(results: list[Result], chosen: float) -> tuple[pl.DataFrame, pl.DataFrame]:
    rows, people = [], []
    for r in results:
        key = {"judge": r.case.judge, "protocol": r.case.protocol}
        for t in r.tests:
            rows.append({**key, "epsilon": t.epsilon, "winning_rate": t.winning_rate,
                         "advantage_probability": t.advantage_probability,
                         "replaces": t.replaces, "chosen": t.epsilon == chosen,
                         "annotators": t.tested, "untested": len(t.annotators) - t.tested,
                         "items": t.items})  # fmt: skip
            people += [{**key, "epsilon": t.epsilon, "annotator": a.annotator, "items": a.items,
                        "tested": a.tested, "judge_wins": a.judge_wins,
                        "annotator_wins": a.annotator_wins, "p": a.p, "rejected": a.rejected}
                       for a in t.annotators]  # fmt: skip
    return (pl.DataFrame(rows, schema=ALTTEST_SCHEMA, orient="row"),
            pl.DataFrame(people, schema=ANNOTATORS_SCHEMA, orient="row"))  # fmt: skip


def _write(tables: tuple[pl.DataFrame, pl.DataFrame], paths: tuple[Path, Path]) -> None:
    """Both files or neither (each written beside itself, then renamed)."""
    with ExitStack() as stack:
        for table, path in zip(tables, paths, strict=True):
            table.write_csv(stack.enter_context(atomic_path(path)), float_precision=6)


def _write_out(tables: tuple[pl.DataFrame, pl.DataFrame], out: Path) -> tuple[Path, Path]:
    """Into a staging directory beside ``out``, renamed into place when whole."""
    with staged_dir(out) as staging:
        _write(tables, (staging / "alttest.csv", staging / "alttest_annotators.csv"))
    return out / "alttest.csv", out / "alttest_annotators.csv"


def _lines(results: list[Result], chosen: float) -> Iterator[str]:
    """What the table does not show: untested annotators, the verdict, the suggested ε."""
    for r in results:
        at = next(t for t in r.tests if t.epsilon == chosen)
        who = f"{r.case.judge} ({r.case.protocol})" if r.case.protocol else r.case.judge
        for a in at.annotators:
            if not a.tested:
                yield (f"{who}: annotator {a.annotator} has {a.items} counted items "
                       f"(< {MIN_ITEMS}): not tested, still in the others' reference "
                       "sets")  # fmt: skip
        constant = r.case.judge_labels["label"].drop_nulls().unique()
        if constant.len() == 1:
            yield (f"{who}: note: the judge gave every item the same label ({constant[0]}); "
                   "a constant answer can beat noisy annotators where one label dominates, "
                   "so the alt-test does not show that it reads (the card's reading rows "
                   "do)")  # fmt: skip
        verdict = "can replace" if at.replaces else "cannot replace"
        yield (f"{who}: at ε = {chosen:g} the judge {verdict} the annotators (ω = "
               f"{at.winning_rate:.2f}: {sum(a.rejected for a in at.annotators)} of {at.tested} "
               f"tested beaten; ρ = {at.advantage_probability:.2f}) over {at.items} counted "
               f"items, {r.case.metric}; labels: {r.case.source}")  # fmt: skip
    suggested = ", ".join(f"{e:g} for {who}" for who, e in SUGGESTED.items())
    yield f"the paper's suggested ε: {suggested}"


def _show(table: pl.DataFrame) -> None:
    view = Table(title="Alternative annotator test", header_style="bold")
    for column in ("judge", "protocol", "ε", "winning rate ω", "advantage ρ", "replaces"):
        view.add_column(column)
    for r in table.iter_rows(named=True):
        mark = " ←" if r["chosen"] else ""
        view.add_row(r["judge"], r["protocol"], f"{r['epsilon']:g}{mark}",
                     f"{r['winning_rate']:.2f}", f"{r['advantage_probability']:.2f}",
                     "yes" if r["replaces"] else "no")  # fmt: skip
    table_console().print(view)


def _cases(args: argparse.Namespace) -> tuple[list[Case], RunDir | None]:
    files = args.humans is not None or args.llm_annotations is not None
    if files:
        if args.run_dir is not None:
            raise JudgeprobeError("give RUN or --humans/--llm-annotations, not both")
        if args.humans is None or args.llm_annotations is None or args.out is None:
            raise JudgeprobeError("--humans, --llm-annotations and --out go together")
        _check_out(args.out)
        return file_cases(args.humans, args.llm_annotations, args.llm, args.metric), None
    if args.run_dir is None:
        raise JudgeprobeError("give a run directory, or --humans, --llm-annotations and --out")
    for flag in ("llm", "metric", "out"):
        if getattr(args, flag) is not None:
            raise JudgeprobeError(f"--{flag} goes with --humans and --llm-annotations, not RUN")
    run = RunDir(args.run_dir)
    return _run_cases(run, args.condition, args.labels), run


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise JudgeprobeError(f"--out {out}: not an empty directory; choose another")
    check_writable_dir(out, "--out")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe alttest``."""
    args = _parser().parse_args(argv)
    if not 0 <= args.epsilon < 1:
        raise JudgeprobeError(f"--epsilon {args.epsilon:g}: must lie in [0, 1)")
    cases, run = _cases(args)
    epsilons = _epsilons(args.epsilon)
    results = [_test(c, epsilons) for c in cases]
    tables = _tables(results, args.epsilon)
    if run is not None:
        paths = (run.alttest, run.alttest_annotators)
        _write(tables, paths)
    else:
        paths = _write_out(tables, args.out)
    _show(tables[0])
    for line in _lines(results, args.epsilon):
        print(line)
    after = f"; `judgeprobe card {run.path}` shows the verdict" if run is not None else ""
    print(f"wrote {paths[0]} and {paths[1]}{after}")
    return 0


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
