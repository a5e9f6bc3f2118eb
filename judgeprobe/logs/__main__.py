"""``judgeprobe logs PATH… --out DIR``: what a judge already said, as a run directory.

    judgeprobe logs model_judgment/gpt-4_pair.jsonl --answers model_answer/ --out runs/mt
    judgeprobe logs annotations.json --labels human.jsonl --out runs/alpaca
    judgeprobe logs new.jsonl --baseline runs/old-judge --out runs/new-judge   # drift

Reads MT-Bench pair and single-answer judgments, AlpacaEval annotations, inspect_ai eval logs
(``.eval``/``.json``, the ``logs`` extra), promptfoo ``results.json`` and any JSONL/CSV with a
column map (``--map verdict=winner,…``; docs/logs.md lists the aliases), detected per file or
named with ``--format``. Calls no judge. Writes judgments.parquet, items.parquet (the texts the
log carries or ``--answers`` supplies), labels.parquet (``--labels``), win_rates.csv (each
model's win rate as the log's own tool counts it), the manifest, metrics, the observed card and
the report, so ``judgeprobe card/report/review/metrics DIR`` work on it, all of it in a staging
directory renamed into place last (a failure leaves ``--out`` absent). A row that cannot be
read is one line naming file and line, counted in the manifest; more than 1 % skipped is exit
4 (unreliable). A file with no usable row among others is a warning; no usable row at all is
an error (exit 2); unreadable verdicts are Invalid judgments, counted, never dropped.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson
import polars as pl
from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.render import summary
from judgeprobe.card.rows import Card
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.core.files import staged_dir, write_atomic
from judgeprobe.core.records import INVALID
from judgeprobe.logs.formats import ReadOptions, format_names, logs_task
from judgeprobe.logs.generic import parse_map
from judgeprobe.logs.labels import unmatched, unmatched_line
from judgeprobe.logs.mtbench import Answers, read_answers
from judgeprobe.logs.read import Read, read_log_files, read_votes
from judgeprobe.logs.rows import VoteRow
from judgeprobe.logs.table import LogTable, label_table, log_table
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.load import load_judgments
from judgeprobe.metrics.table import write_csv
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.metrics.winrates import win_rates
from judgeprobe.report.logs import logs_report
from judgeprobe.runs.rundir import LogsConfig, RunDir, check_writable_dir, skipped_share

SHOWN_BAD = 20
"""Bad rows printed one a line; the rest are in ``bad_rows.txt``."""
ITEMS = "items.parquet"
BAD_ROWS = "bad_rows.txt"


def _parser() -> argparse.ArgumentParser:
    p = command_parser("logs", __doc__)
    p.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="judge log files")
    p.add_argument("--out", type=Path, required=True, help="the run directory to write")
    p.add_argument("--labels", type=Path, help="human labels (MT-Bench human judgments, a log "
                   "in a pair format logs reads, or a table: question_id, generator_1, "
                   "generator_2, turn, preferred)")  # fmt: skip
    p.add_argument(
        "--format", choices=format_names(), help="every file's format (default: detected)"
    )
    p.add_argument("--map", help="generic logs: field=column,… (docs/logs.md)")
    p.add_argument("--answers", type=Path, action="append", default=[], metavar="FOLDER",
                   help="FastChat's model_answer/ folder (MT-Bench; repeatable)")  # fmt: skip
    p.add_argument("--baseline-model", metavar="MODEL",
                   help="Arena-Hard: the baseline every game is played against (default: "
                   "judge_config.yaml beside the judgments)")  # fmt: skip
    p.add_argument("--self", action="append", default=[], metavar="NAME", dest="own",
                   help="a generator that is the judges' own model (repeatable)")  # fmt: skip
    p.add_argument("--baseline", type=Path, metavar="RUN",
                   help="a logs run of an older judge on the same items (drift)")  # fmt: skip
    p.add_argument("--no-report", action="store_true",
                   help="leave the report and metrics_ci.csv out (judgeprobe report RUN "
                   "writes them)")  # fmt: skip
    p.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES)
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    return p


def _report_bad(bad: list[str], out: Path, console: Console) -> None:
    for line in bad[:SHOWN_BAD]:
        console.print(f"skipped {line}", markup=False, highlight=False)
    if len(bad) > SHOWN_BAD:
        console.print(f"… and {len(bad) - SHOWN_BAD} more skipped rows: {out / BAD_ROWS}",
                      markup=False, highlight=False)  # fmt: skip


@dataclass(frozen=True)
class LogsRequest:
    """What ``judgeprobe logs`` was asked, by its flags' names (the API builds one too)."""

    paths: tuple[Path, ...]
    out: Path
    labels: Path | None = None
    format: str | None = None
    map: str | None = None
    answers: tuple[Path, ...] = ()
    baseline_model: str | None = None
    own: tuple[str, ...] = ()
    baseline: Path | None = None
    no_report: bool = False
    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0


def _check(args: LogsRequest) -> None:
    """Every refusal that needs no log read: before anything is read or written."""
    if args.format is not None and args.format not in format_names():
        raise JudgeprobeError(f"format {args.format!r}: not one of {', '.join(format_names())}")
    out: Path = args.out
    if RunDir(out).manifest_file.exists() or (out.is_dir() and any(out.iterdir())):
        raise JudgeprobeError(f"--out {out}: not empty; choose another directory")
    check_writable_dir(out, "--out")
    if args.resamples < 0:
        raise JudgeprobeError("--resamples must be >= 0")
    if args.baseline is not None:
        if not RunDir(args.baseline).is_run():
            raise JudgeprobeError(f"--baseline {args.baseline}: not a run directory (make one "
                                  "with judgeprobe logs)")  # fmt: skip
        try:  # its judgments read now: a corrupt table is refused before the run is written
            load_judgments(RunDir(args.baseline).judgments, ["item_id"])
        except JudgeprobeError as exc:
            raise JudgeprobeError(f"--baseline {args.baseline}: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe logs``: read the logs, write the run, print the card."""
    args = vars(_parser().parse_args(argv))
    many = {k: tuple(args[k]) for k in ("paths", "own", "answers")}
    return logs_run(LogsRequest(**{**args, **many}))


def logs_run(args: LogsRequest) -> int:
    """The command's path after its flags are read: the run written, its card's exit code."""
    out: Path = args.out
    _check(args)
    mapping = parse_map(args.map)
    bad: list[str] = []
    answers = read_answers(list(args.answers), bad) if args.answers else Answers()
    options = ReadOptions(mapping=mapping, baseline_model=args.baseline_model)
    found = read_log_files(list(args.paths), args.format, options)
    bad = found.bad + bad
    votes, bad_votes = read_votes(args.labels, mapping) if args.labels else ([], [])
    bad += bad_votes
    console = Console(stderr=True, soft_wrap=True)
    for line in found.unusable:
        console.print(f"warning: {line}", markup=False, highlight=False)
    read = Counted(skipped=len(found.bad), rows=found.read_rows(), files=len(found.formats),
                   unusable=len(found.unusable))  # fmt: skip
    table = log_table(found.all_calls(), found.scores, out.name or "logs", answers)
    with staged_dir(out) as staging:  # the whole run is written there, then renamed into place
        counts = _write(staging, out, args, found, table, votes, bad, read)
        unpaired = table.unpaired_scores
        notes = _notes(found, table, counts["unmatched_labels"], len(votes), args.labels)
        del found, table  # what follows reads the run back, as every later command does
        card, report = _finish(staging, out, args)
    _report_bad(bad, out, console)
    print(
        f"read {counts['judgments'] + unpaired} verdicts and scores from {read.files} file(s)"
        f"{f' ({read.unusable} with no usable row)' if read.unusable else ''}: "
        f"{counts['judgments']} judgments ({counts['invalid']} Invalid), {counts['items']} "
        f"items, {_with_texts(RunDir(out))} with texts; {len(votes)} human labels; "
        f"{skipped_share(read.skipped, read.rows)}"
    )
    for line in notes:
        print(line)
    if args.answers:
        _answers_unmatched(answers, RunDir(out), console)
    for note in card.notes:
        print(note)
    print(f"card: {summary(card)} -> {RunDir(out).card_md}; report: {report}")
    return card.exit_code


@dataclass(frozen=True, slots=True)
class Counted:
    """What the read came to: rows skipped of all the logs' rows, files read, files unusable."""

    skipped: int
    rows: int
    files: int
    unusable: int


def _finish(staging: Path, out: Path, args: LogsRequest) -> tuple[Card, str]:
    """Metrics, report and card of the run in ``staging``; then its manifest names ``out``."""
    run = RunDir(staging)
    write_csv(estimates_table(pl.scan_parquet(run.judgments)), run.metrics)
    card = card_for_run(staging, resamples=args.resamples, seed=args.seed)
    if args.no_report:
        report = f"none (--no-report: judgeprobe report {out} writes it and metrics_ci.csv)"
    else:
        written = logs_report(staging, args.resamples, args.seed, card=card)
        report = str(out / written.relative_to(staging))
    manifest = orjson.loads(run.manifest_file.read_bytes())
    if manifest["config"].get("items"):  # read from staging until now; the run's from here on
        manifest["config"]["items"] = str((out / ITEMS).resolve())
        run.write_manifest(manifest)
    return card, report


def _notes(
    found: Read, table: LogTable, unmatched_labels: int, votes: int, labels: Path | None
) -> list[str]:
    """What the summary adds: unpaired scores, recovered shown order, unmatched labels.

    One line for scores alone on their question, when there are any; one per judge whose log's
    tool shuffled the shown order; one for labels that match no item, when there are any.
    """
    out = []
    if table.unpaired_scores:
        out.append(f"{table.unpaired_scores} scores alone on their question (no pair): not "
                   "judgments")  # fmt: skip
    for c in found.randomized_cells():
        kept, switched, left = c.kept, c.switched, c.undetermined
        out.append(
            f"{c.judge}: the log's tool shuffled the shown order; recovered for "
            f"{kept + switched} of {kept + switched + left} rows ({switched} switched, {kept} "
            f"not), {left} could not be told (no position claim on those)"
        )
    if unmatched_labels:
        out.append(unmatched_line(unmatched_labels, votes, str(labels)))
    return out


def _answers_unmatched(answers: Answers, run: RunDir, console: Console) -> None:
    """Say which of the log's models no ``--answers`` file is named after (FastChat's key)."""
    sides = pl.scan_parquet(run.judgments).select(
        pl.concat([pl.col("generator_1"), pl.col("generator_2")]).unique()
    )
    models = set(sides.collect().to_series().drop_nulls().to_list())
    missing = sorted(models - {model for model, _, _ in answers.answers})
    if missing:
        console.print(
            f"warning: --answers has no MODEL.jsonl for {len(missing)} of the log's "
            f"{len(models)} models ({', '.join(missing[:5])}{', …' if len(missing) > 5 else ''}): "
            "FastChat names a model by its answer file, not by its model_id",
            markup=False, highlight=False,
        )  # fmt: skip


def _with_texts(run: RunDir) -> int:
    """How many items the run kept texts of (its items file's rows)."""
    path = run.path / ITEMS
    return pl.scan_parquet(path).select(pl.len()).collect().item() if path.is_file() else 0


def _write(
    staging: Path, out: Path, args: LogsRequest, found: Read,
    table: LogTable, votes: list[VoteRow], bad: list[str], read: Counted,
) -> dict[str, int]:  # fmt: skip
    """The run's files, written into ``staging`` (renamed to ``out`` when all are there).

    Returns how many judgments, Invalid ones and items were written.
    """
    run = RunDir(staging)
    table.judgments.sink_parquet(run.judgments)  # streamed from the logs, never whole
    lines = [f for f, fmt in found.formats.items() if fmt == "mtbench-pair"]  # one result a line
    write_csv(win_rates(pl.scan_parquet(run.judgments), lines), run.win_rates)
    table.texts.sink_parquet(staging / ITEMS)  # streamed: a copy of each text, not per call
    items = None
    if _with_texts(RunDir(staging)):
        items = str((staging / ITEMS).resolve())  # ``_finish`` names ``out`` once written
    else:
        (staging / ITEMS).unlink()
    unmatched_labels = 0
    if votes:
        labels = label_table(votes)
        labels.write_parquet(run.labels)
        unmatched_labels = unmatched(labels, pl.scan_parquet(run.judgments))
    config = LogsConfig(
        sources=[str(p.resolve()) for p in args.paths], formats=found.formats,
        self=list(args.own), map=args.map or "", items=items, skipped=read.skipped,
        rows=read.rows,
        labels=str(args.labels.resolve()) if votes and args.labels is not None else None,
        baseline=None if args.baseline is None else str(args.baseline.resolve()),
        randomized_order=found.randomized_cells(), unmatched_labels=unmatched_labels,
        task=logs_task(found.formats.values()),  # the nouns its pages speak
    )  # fmt: skip
    if bad:
        write_atomic(staging / BAD_ROWS, "\n".join(bad) + "\n")
    written = pl.scan_parquet(run.judgments)
    counts = written.select(
        judgments=pl.len(), invalid=(pl.col("verdict") == INVALID).sum(),
        items=pl.col("item_id").n_unique(),
    ).collect().row(0, named=True)  # fmt: skip
    judges = sorted(written.select(pl.col("judge").unique()).collect()["judge"].to_list())
    run.write_manifest({
        "run_id": out.name or "logs", "created_at": datetime.now(UTC).isoformat(),
        "kind": "logs", "config": config.model_dump(), "seeds": [0],
        "judges": [{"name": j, "model": j, "backend": "log"} for j in judges],
    })  # fmt: skip
    if counts["judgments"] == 0:
        raise JudgeprobeError(
            f"no pair to judge: {table.unpaired_scores} scores, each alone on its question "
            "(a score log needs two or more generators scored on the same question)"
        )
    return {**{k: int(v) for k, v in counts.items()}, "unmatched_labels": unmatched_labels}


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
