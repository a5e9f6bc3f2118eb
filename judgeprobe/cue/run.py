"""``judgeprobe run`` (also ``python -m judgeprobe.run``): run a cue-probe sweep end to end.

config → items → probe judges → plan → engine → store → judgments.parquet → metrics.
With no arguments: the default sweep on the bundled sample against the embedded judge.

Past one machine: ``--ray [ADDRESS]`` runs the requests as Ray Data rounds
(judgeprobe.runs.ray); ``--export-batch`` writes the pending requests as an OpenAI batch file
(``vllm run-batch``, batch APIs) and ``--import-batch`` ingests its answers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.markup import escape

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import Condition, builtin_conditions, parse_conditions
from judgeprobe.conditions.checks import write_attack_checks, write_degrade_checks
from judgeprobe.core.cli import RESUME, command_parser, main_guard
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig, load_config
from judgeprobe.cue.embedded import running_judge
from judgeprobe.cue.items import sweep_items
from judgeprobe.cue.job import Job, run_job
from judgeprobe.cue.judgments import judgment_rows, write_judgments
from judgeprobe.cue.manifest import new_manifest
from judgeprobe.cue.outputs import write_outputs
from judgeprobe.cue.plan import count, cue_jobs, document_of, protocols_for
from judgeprobe.cue.preflight import preflight
from judgeprobe.engine.batch import BatchEndpoint, batch_info, ingest, walk
from judgeprobe.engine.breaker import unreliable
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.ray_rounds import check_cluster
from judgeprobe.engine.runner import RunSummary
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.metrics.flags import invalid_reasons
from judgeprobe.metrics.load import Run
from judgeprobe.runs.config import JUDGE_FLAG, judge_from_flag, with_overrides
from judgeprobe.runs.ray import check_engines, ray_sweep
from judgeprobe.runs.rundir import (
    EXIT_INCOMPLETE,
    EXIT_UNRELIABLE,
    RunDir,
    check_run_dir,
    check_writable_dir,
    open_store,
    resumable_note,
    resume_command,
)
from judgeprobe.runs.sweep import JobType, handler, judges_open, lanes_of, run_sweep


def _parser() -> argparse.ArgumentParser:
    p = command_parser("run", __doc__)
    p.add_argument("--config", type=Path, help="sweep config (TOML); default: the default sweep")
    p.add_argument(
        "--judge", action="append", default=[], metavar=JUDGE_FLAG,
        help="judge endpoint, several URLs for replicas (repeatable); replaces the config's "
        "judges, keeping settings by name",
    )  # fmt: skip
    p.add_argument("--out", type=Path, help="run directory (default: runs/<config name>)")
    p.add_argument(
        "--resume", action="store_true", help="continue the run in --out, reusing results"
    )
    p.add_argument("--limit", type=int, help="only the first N items")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    batch = p.add_mutually_exclusive_group()
    batch.add_argument(
        "--ray", nargs="?", const="", metavar="ADDRESS",
        help="run the requests as Ray Data rounds (no ADDRESS: a local Ray; auto: this cluster)",
    )  # fmt: skip
    batch.add_argument(
        "--export-batch", type=Path, metavar="JSONL",
        help="write the pending requests as an OpenAI batch file; send nothing",
    )  # fmt: skip
    batch.add_argument(
        "--import-batch", type=Path, metavar="JSONL",
        help="ingest a batch output file into the run in --out, then write the tables",
    )  # fmt: skip
    return p


def _apply_flags(cfg: SweepConfig, judge_flags: list[str], limit: int | None) -> SweepConfig:
    update: dict[str, object] = {}
    if judge_flags:
        known = {j.name: j for j in cfg.judges}
        update["judges"] = [judge_from_flag(flag, known) for flag in judge_flags]
    if limit is not None:
        if limit < 0:
            raise JudgeprobeError(f"--limit must be >= 0 (got {limit})")
        update["limit"] = limit
    return with_overrides(cfg, update)


def _conditions(cfg: SweepConfig) -> dict[str, Condition]:
    conditions = {**builtin_conditions(), **parse_conditions(cfg.cues, "config cues")}
    unknown = [c for c in cfg.conditions if c not in conditions]
    if unknown:
        raise JudgeprobeError(
            f"unknown condition {unknown[0]!r} (known: {', '.join(sorted(conditions))}; "
            "define new ones under [cues.NAME] in the config)"
        )
    return conditions


@dataclass(frozen=True, slots=True)
class Mode:
    """What this invocation does besides a plain sweep."""

    export_batch: Path | None = None
    import_batch: Path | None = None
    ray: str | None = None  # "": a local Ray

    @property
    def batch(self) -> bool:
        """Whether the sweep goes through a provider's batch API rather than live requests."""
        return self.export_batch is not None or self.import_batch is not None


def report_unreliable(
    frame: pl.DataFrame, cfg: SweepConfig, summary: RunSummary, console: Console
) -> bool:
    """Say which judges tripped their breaker or have too many Invalid judgments.

    Names the most frequent reasons; True when a judge's Invalid share is above the limit.
    """
    for judge, why in summary.tripped.items():
        console.print(f"[red]judge {judge}: circuit breaker: {escape(why)}; its other "
                      "judgments were not sent[/]")  # fmt: skip
    limit = cfg.engine.fail_invalid_rate
    bad = unreliable(frame, limit)
    if bad.height == 0:
        return False
    reasons = invalid_reasons(frame.filter(pl.col("judge").is_in(bad["judge"].implode())))
    for row in bad.iter_rows(named=True):
        top = reasons.filter(pl.col("judge") == row["judge"])
        rows = top.iter_rows(named=True)
        listed = escape("; ".join(f"{r['n']}× {r['protocol']}: {r['reason']}" for r in rows))
        console.print(
            f"[red]judge {row['judge']}: {row['invalid']} of {row['ran']} judgments that ran "
            f"are Invalid ({row['rate']:.0%}, above \\[engine] fail_invalid_rate {limit}); "
            f"most frequent reasons: {listed}[/]"
        )
    return True


async def _run_batch(
    mode: Mode, jobs: Iterable[Job], handle: Callable[[Job], Awaitable[Outcome]],
    store: Store, endpoints: dict[str, Endpoint], console: Console,
) -> RunSummary:  # fmt: skip
    """One batch pass: export the pending requests, or ingest a batch's answers."""
    if mode.export_batch is not None:
        tmp = mode.export_batch.with_name(mode.export_batch.name + ".tmp")
        with tmp.open("wb") as out:
            found = await walk(jobs, handle, store, out)
        os.replace(tmp, mode.export_batch)
        console.print(
            f"exported {found.lines} requests for {found.pending} pending judgments to "
            f"{mode.export_batch} ({found.already + found.finished} already answered)"
        )
        return RunSummary(sent=found.lines, skipped=found.already)
    assert mode.import_batch is not None
    offered = ingest(mode.import_batch, store)
    found = await walk(jobs, handle, store)
    matched = set().union(
        *(ep.matched for ep in endpoints.values() if isinstance(ep, BatchEndpoint))
    )
    used = len(offered & matched)
    if offered and not used:
        raise JudgeprobeError(
            f"--import-batch {mode.import_batch}: no answer matches a request of this run "
            "(exported from another config or run?)"
        )
    console.print(
        f"imported {used} of {len(offered)} answers: {found.finished} judgments completed, "
        f"{found.pending} still pending" + ("; export again" if found.pending else "")
    )
    return RunSummary(sent=used, skipped=found.already, pending=found.pending)


def cue_job_type(
    cfg: SweepConfig,
    items: list[Item],
    conditions: dict[str, Condition],
    out: Path,
    prefix_aware: bool = True,
) -> JobType[Job]:
    """The cue sweep as a job type of the shared runner.

    A document's jobs travel together (prefix-aware lanes, one per server slot); rows go to
    ``out/judgments.parquet``.
    """
    run_id = f"{cfg.name}-{cfg.digest()[:8]}"

    async def make(job: Job, endpoint: Endpoint, store: Store) -> Outcome:
        return await run_job(job, endpoint, store, cfg.sampling)

    def rows(jobs: Iterable[Job], store: Store, fingerprints: dict[str, str]) -> pl.DataFrame:
        table = judgment_rows(run_id, jobs, store)
        return write_judgments(table, RunDir(out).judgments, fingerprints)

    return JobType(
        plan=lambda fingerprints: cue_jobs(cfg, items, conditions, fingerprints),
        make=make,
        rows=rows,
        manifest=lambda endpoints: new_manifest(run_id, cfg, endpoints, conditions),
        planned=count(cfg, items, conditions).judgments,
        lanes=lanes_of(cfg.judges),
        group=document_of if prefix_aware else None,
    )


def _announce(
    cfg: SweepConfig, items: list[Item], conditions: dict[str, Condition], out: Path,
    mode: Mode, console: Console,
) -> None:  # fmt: skip
    """Attack checks and the request counts, before anything is sent."""
    run = RunDir(out)
    for write, path in ((write_attack_checks, run.attack_checks),
                        (write_degrade_checks, run.degrade_checks)):  # fmt: skip
        checked = write(path, items, conditions, cfg.conditions)
        if checked:
            console.print(checked)
    planned = count(cfg, items, conditions)
    per_protocol = ", ".join(f"{k} {v}" for k, v in planned.requests.items())
    console.print(
        f"{planned.judgments} judgments planned ({sum(planned.requests.values())} "
        f"requests before cache: {per_protocol}) → {out}"
    )


async def _batch_pass(
    cfg: SweepConfig, kind: JobType[Job], out: Path, console: Console, mode: Mode,
    announce: Callable[[], None],
) -> tuple[RunSummary, pl.DataFrame | None]:  # fmt: skip
    """A batch export or import through the same job type; no server is asked."""
    for judge in cfg.judges:  # validate before anything is written
        batch_info(judge)
    store = open_store(out)
    try:
        importing = mode.import_batch is not None
        endpoints: dict[str, Endpoint] = {
            j.name: BatchEndpoint(j, cfg.engine, store, importing) for j in cfg.judges
        }
        RunDir(out).write_manifest(kind.manifest(endpoints))
        announce()
        fingerprints = {name: ep.info.fingerprint for name, ep in endpoints.items()}
        handle = handler(kind, endpoints, store, None)
        jobs = kind.plan(fingerprints)
        summary = await _run_batch(mode, jobs, handle, store, endpoints, console)
        if mode.export_batch is not None:
            return summary, None
        store.flush()
        return summary, kind.rows(kind.plan(fingerprints), store, fingerprints)
    finally:
        store.close()


async def _sweep(
    cfg: SweepConfig,
    items: list[Item],
    conditions: dict[str, Condition],
    out: Path,
    console: Console,
    show_progress: bool,
    mode: Mode,
) -> tuple[RunSummary, bool]:
    """The sweep, its tables and report; and whether a judge's Invalid share is too high."""
    kind = cue_job_type(cfg, items, conditions, out)

    def announce() -> None:
        _announce(cfg, items, conditions, out, mode, console)

    if mode.batch:
        summary, found = await _batch_pass(cfg, kind, out, console, mode, announce)
        if found is None:
            return summary, False
        frame = found
    elif mode.ray is not None:
        swept = await ray_sweep(
            kind, cfg.judges, cfg.engine, out, console, mode.ray or None, show_progress,
            checked=lambda eps: preflight(cfg, items, conditions, eps), opened=announce,
        )  # fmt: skip
        summary, frame = swept.summary, swept.judgments
    else:
        async with judges_open(cfg.judges, cfg.engine, console) as endpoints:
            await preflight(cfg, items, conditions, endpoints)
            # Everything is validated: only now does the run directory get written.
            swept = await run_sweep(
                kind, endpoints, cfg.engine, out, console, show_progress, opened=announce
            )  # fmt: skip
        summary, frame = swept.summary, swept.judgments
    run = RunDir(out)
    n_invalid = write_outputs(Run(run, run.manifest(), frame), console)
    console.print(
        f"{frame.height} judgments ({frame.height - n_invalid} valid, {n_invalid} invalid); "
        f"sent {summary.sent}, reused {summary.skipped}; wrote {run.judgments}, "
        f"{run.metrics.name}, {run.manifest_file.name}"
    )
    return summary, report_unreliable(frame, cfg, summary, console)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe run``: the cue sweep from config to report."""
    args = _parser().parse_args(argv)
    if args.ray is not None:  # a dead or mistyped cluster is one line, before any planning
        check_cluster(args.ray or None)
    cfg = _apply_flags(load_config(args.config), args.judge, args.limit)
    chosen = ""
    if not (args.config or args.judge or args.export_batch or args.import_batch):
        # The default sweep, sent live: on whichever embedded judge is up (judgeprobe.cue.embedded).
        cfg, chosen = running_judge(cfg)
    mode = Mode(
        export_batch=args.export_batch,
        import_batch=args.import_batch,
        ray=args.ray,
    )
    check_engines(cfg.judges, ray=mode.ray is not None)
    conditions = _conditions(cfg)
    items = sweep_items(cfg)
    for item in items:  # fail on an unresolvable cue before any request is sent
        for name in cfg.conditions:
            conditions[name].resolve(item)
    protocols_for(cfg)
    out = args.out or Path("runs") / cfg.name
    check_writable_dir(out, "--out")
    if mode.export_batch is not None:
        check_writable_dir(mode.export_batch.parent, "--export-batch")
        if mode.export_batch.is_dir():
            raise JudgeprobeError(f"--export-batch {mode.export_batch}: is a directory")
    if mode.import_batch is not None and not RunDir(out).store.exists():
        raise JudgeprobeError(f"{out} holds no run: export a batch into it first")
    check_run_dir(out, args.resume or mode.batch, cfg.digest())
    console = Console(stderr=True, soft_wrap=True)
    if chosen:
        console.print(f"[yellow]{escape(chosen)}[/]")
    start = time.monotonic()
    summary, failing = asyncio.run(
        _sweep(cfg, items, conditions, out, console, not args.no_progress, mode)
    )
    console.print(f"done in {time.monotonic() - start:.1f}s")
    if mode.export_batch is not None:
        return 0
    return exit_code(summary, failing, sys.argv[1:] if argv is None else argv, console)


def exit_code(summary: RunSummary, failing: bool, argv: list[str], console: Console) -> int:
    """4 when a judge is unreliable; else 3 when anything is left for a later pass; else 0.

    A later pass is an import (batch answers pending), a resume after the sweep deadline, or
    a resume for judgments that failed for a reason it may clear (said with the command).
    """
    code = 0
    if summary.pending:
        console.print("[yellow]some judgments still wait for batch answers: they are "
                      "Invalid (not run) until imported; export again[/]")  # fmt: skip
        code = EXIT_INCOMPLETE
    elif summary.deadline_hit:
        console.print("[yellow]sweep deadline reached: unfinished requests are Invalid "
                      "(not run); rerun with --resume[/]")  # fmt: skip
        code = EXIT_INCOMPLETE
    elif summary.resumable:
        command = resume_command("run", argv)
        console.print(f"[yellow]{escape(resumable_note(summary.resumable, command))}[/]")
        code = EXIT_INCOMPLETE
    return EXIT_UNRELIABLE if failing else code


def cli(argv: list[str] | None = None) -> int:
    """The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""
    return main_guard(lambda: main(argv), RESUME)


if __name__ == "__main__":
    sys.exit(cli())
