"""``judgeprobe rubric``: the rubric probe end to end.

items → judge the original pairs and their counterfactuals (engine, cached, resumable) →
rubric-only classifiers on the judge's labels → transition table → report.
With ``--labels-only`` the classifiers run on the ``judge_label`` column of the file, with no
judge at all.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import polars as pl
from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.core.cells import cell, interval
from judgeprobe.core.cli import RESUME, command_parser, guarded
from judgeprobe.core.records import INVALID
from judgeprobe.metrics.load import load_run
from judgeprobe.report.rubric import write_rubric_report
from judgeprobe.report.run import run_report
from judgeprobe.rubric.config import RubricConfig, load_rubric_config
from judgeprobe.rubric.data import load_rubric_items
from judgeprobe.rubric.sweep import (
    analyse,
    check_provided,
    judge_all,
    labels_from,
    labels_from_items,
    manifest,
)
from judgeprobe.runs.config import JUDGE_FLAG, judge_from_flag, with_overrides
from judgeprobe.runs.rundir import EXIT_INCOMPLETE, RunDir, check_run_dir
from judgeprobe.text.lexicons import load_lexicons


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _parser() -> argparse.ArgumentParser:
    p = command_parser("rubric", __doc__)
    p.add_argument("--config", type=Path, help="rubric config (TOML); default: the defaults")
    p.add_argument("--items", help="bundled:rubric (default) or a .jsonl / .csv file")
    p.add_argument(
        "--judge",
        action="append",
        default=[],
        metavar=JUDGE_FLAG,
        help="judge endpoint, several URLs for replicas (repeatable); replaces the config's "
        "judges, keeping settings by name",
    )
    p.add_argument("--limit", type=int, help="only the first N rubric items")
    p.add_argument("--preset", choices=["deterministic", "paper"], help="decoding preset")
    p.add_argument("--seeds", help="comma-separated seeds, e.g. 0,1,2")
    p.add_argument("--perturb", help="response,criterion (default both) or none")
    p.add_argument("--reversal", choices=["provided", "llm"], help="reversed-response source")
    p.add_argument("--negation", choices=["provided", "llm", "rule"], help="negation source")
    p.add_argument("--classifiers", help="comma-separated: tfidf, embedding, transformer")
    p.add_argument("--transformer", metavar="DIR", help="local model directory to fine-tune")
    p.add_argument("--resamples", type=int, help="bootstrap resamples (default 10000)")
    p.add_argument(
        "--labels-only",
        action="store_true",
        help="no judging: classify the file's judge_label column",
    )
    p.add_argument("--out", type=Path, help="run directory (default: runs/<config name>)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _changes(cfg: RubricConfig, args: argparse.Namespace) -> dict[str, object]:
    """The config fields the flags set (``with_overrides`` puts them over ``cfg``)."""
    update: dict[str, object] = {}
    for flag, name in (
        ("items", "items"),
        ("limit", "limit"),
        ("preset", "preset"),
        ("reversal", "reversal"),
        ("negation", "negation"),
        ("resamples", "resamples"),
        ("transformer", "transformer_dir"),
    ):
        if getattr(args, flag) is not None:
            update[name] = getattr(args, flag)
    if args.seeds is not None:
        try:
            update["seeds"] = [int(s) for s in _csv(args.seeds)]
        except ValueError:
            raise JudgeprobeError(f"--seeds {args.seeds!r}: expected integers like 0,1,2") from None
    if args.perturb is not None:
        update["perturbations"] = [] if args.perturb == "none" else _csv(args.perturb)
    if args.classifiers is not None:
        update["classifiers"] = _csv(args.classifiers)
    if args.judge:  # a known judge keeps its settings, with the new URLs
        known = {j.name: j for j in cfg.judges}
        update["judges"] = [judge_from_flag(flag, known) for flag in args.judge]
    return update


def _check_classifiers(cfg: RubricConfig) -> None:
    """Fail before any request on a classifier that cannot run here."""
    if "transformer" in cfg.classifiers and not cfg.transformer_dir:
        raise JudgeprobeError("the transformer classifier needs --transformer DIR")
    if cfg.transformer_dir and not Path(cfg.transformer_dir).is_dir():
        raise JudgeprobeError(f"--transformer {cfg.transformer_dir}: no such directory")
    if "embedding" in cfg.classifiers and find_spec("sentence_transformers") is None:
        raise JudgeprobeError(
            "the embedding classifier needs the embeddings extra "
            "(pip install -e '.[embeddings]'); or choose --classifiers tfidf"
        )


def _report(run: RunDir) -> Path:
    """The combined report when the run also holds a cue run, else the rubric report alone."""
    if run.is_run():
        return run_report(load_run(run.path), load_lexicons(None))
    return write_rubric_report(run)


def _summary(tables: dict[str, pl.DataFrame], console: Console) -> None:
    """The headline figures: held-out accuracy against the majority class, and transitions."""
    metrics = tables.get("classifier_metrics", pl.DataFrame())
    if not metrics.is_empty():
        wide = metrics.pivot(on="metric", index=["judge", "classifier", "cohort"], values="value")
        for r in wide.iter_rows(named=True):
            console.print(
                f"{r['judge']} {r['classifier']} {r['cohort']}: accuracy {r['accuracy']:.3f} "
                f"(majority {r['majority_accuracy']:.3f}), balanced accuracy "
                f"{cell(r['balanced_accuracy'])}, F1 {cell(r['f1'])}"
            )
    transitions = tables.get("transitions", pl.DataFrame())
    for r in transitions.iter_rows(named=True):
        share = interval(r["percent"], r["lo"], r["hi"], decimals=1, unit="%")
        console.print(
            f"{r['judge']} {r['perturbation']}: {r['transition']} {r['count']}/{r['valid_pairs']} "
            f"= {share} {r['detail']}".rstrip()
        )


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe rubric``: the rubric probe from items to report."""
    args = _parser().parse_args(argv)
    base = load_rubric_config(args.config)
    cfg = with_overrides(base, _changes(base, args))
    items = load_rubric_items(cfg.items, cfg.limit)
    _check_classifiers(cfg)
    out = args.out or Path("runs") / cfg.name
    run = RunDir(out)
    folder = run.rubric.path
    console = Console(stderr=True, soft_wrap=True)
    start = time.monotonic()
    incomplete = False
    if args.labels_only:
        labels = labels_from_items(items)
        if labels.is_empty():
            raise JudgeprobeError(f"{cfg.items}: --labels-only needs a judge_label on the items")
        check_run_dir(folder, resume=args.resume, digest=cfg.digest(), what="rubric run")
        folder.mkdir(parents=True, exist_ok=True)
        run.rubric.write_manifest(manifest(cfg, items, {}))
        tables = analyse(folder, None, labels, cfg, [])
    else:
        notes = check_provided(cfg, items)
        check_run_dir(folder, resume=args.resume, digest=cfg.digest(), what="rubric run")
        judgments, summary = asyncio.run(
            judge_all(cfg, items, folder, console, progress=not args.no_progress)
        )
        incomplete = summary.deadline_hit
        invalid = int((judgments["verdict"] == INVALID).sum())
        console.print(
            f"{judgments.height} rubric judgments ({invalid} invalid); sent "
            f"{summary.sent}, reused {summary.skipped}"
        )
        tables = analyse(folder, judgments, labels_from(judgments), cfg, notes)
    _summary(tables, console)
    for note in run.rubric.notes.read_text(encoding="utf-8").splitlines():
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"report: {_report(run)}; done in {time.monotonic() - start:.1f}s")
    if incomplete:
        console.print("[yellow]sweep deadline reached: rerun with --resume[/]")
        return EXIT_INCOMPLETE
    return 0


cli = guarded(main, RESUME)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
