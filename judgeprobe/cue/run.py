"""``judgeprobe run`` (also ``python -m judgeprobe.run``): run a cue-probe sweep end to end.

config → items → probe judges → plan → engine → store → judgments.parquet → metrics.
With no arguments: the default sweep on the bundled sample against the embedded judge.

Past one machine: ``--ray [ADDRESS]`` runs the requests as Ray Data rounds
(judgeprobe.runs.ray); ``--export-batch`` writes the pending requests as an OpenAI batch file
(``vllm run-batch``, batch APIs) and ``--import-batch`` ingests its answers.

Before any of it, ``--plan`` prints the bill (judgeprobe.cue.bill) and writes plan.json,
sending nothing but the start-up probe, the token counts and a short timed probe.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console
from rich.markup import escape

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import Condition
from judgeprobe.conditions.checks import write_attack_checks, write_degrade_checks
from judgeprobe.core.cli import RESUME, command_parser, guarded
from judgeprobe.core.files import write_json
from judgeprobe.core.records import Item
from judgeprobe.cue.bill import Bill, plan_bill, print_bill
from judgeprobe.cue.config import SweepConfig, load_config, sweep_conditions
from judgeprobe.cue.embedded import running_judge
from judgeprobe.cue.item_selection import reviewed, sweep_items
from judgeprobe.cue.job import Job, run_job
from judgeprobe.cue.judgments import judgment_rows, write_judgments
from judgeprobe.cue.manifest import new_manifest
from judgeprobe.cue.outputs import write_outputs
from judgeprobe.cue.own import check_conditions
from judgeprobe.cue.preflight import first_requests
from judgeprobe.cue.rounds import SequentialRounds, pilot_profile, sequential_sweep
from judgeprobe.cue.stream import (
    Counts,
    count,
    cue_jobs,
    document_of,
    protocols_for,
    rejected_count,
)
from judgeprobe.engine.breaker import unreliable
from judgeprobe.engine.checks import PlanChecks
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.context import FirstRequest
from judgeprobe.engine.ray_rounds import check_cluster
from judgeprobe.engine.runner import RunSummary
from judgeprobe.engine.settings import lanes_of
from judgeprobe.engine.store import Store
from judgeprobe.metrics.flags import invalid_reasons
from judgeprobe.metrics.load import LoadedRun
from judgeprobe.metrics.table import table_console
from judgeprobe.protocols import JudgeProtocol
from judgeprobe.runs.batch import batch_sweep
from judgeprobe.runs.config import JUDGE_FLAG, judge_from_flag, with_overrides
from judgeprobe.runs.ray import check_engines, ray_sweep
from judgeprobe.runs.review import Decision, read_decisions, review_state, without_rejected
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
from judgeprobe.runs.spend import earlier_seconds, record_spend, spent
from judgeprobe.runs.sweep import JobType, judges_open, live_sweep


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
    batch.add_argument(
        "--plan", action="store_true",
        help="print the bill (requests, tokens, time, cost) and write plan.json to --out; "
        "send no judgment",
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


def cue_job_type(
    cfg: SweepConfig,
    protocols: dict[str, JudgeProtocol],
    items: list[Item],
    conditions: dict[str, Condition],
    out: Path,
    *,
    prefix_aware: bool = True,
    counts: Counts | None = None,
    review: Mapping[str, Decision] | None = None,
) -> JobType[Job]:
    """The cue sweep as a job type of the shared runner.

    A document's jobs travel together (prefix-aware lanes, one per server slot); rows go to
    ``out/judgments.parquet``. ``protocols`` are ``protocols_for(cfg)``, built once; ``counts``
    the plan's counts when the caller has them already (counting walks the whole plan);
    ``review`` the run's review decisions, whose state the manifest records.
    """
    run_id = f"{cfg.name}-{cfg.digest()[:8]}"
    planned = (counts or count(cfg, protocols, items, conditions)).judgments

    def plan(fingerprints: dict[str, str]) -> Iterable[Job]:
        return cue_jobs(cfg, protocols, items, conditions, fingerprints)

    async def first() -> list[FirstRequest]:
        return await first_requests(cfg, protocols, items, conditions)

    def rows(jobs: Iterable[Job], store: Store, fingerprints: dict[str, str]) -> pl.DataFrame:
        table = judgment_rows(run_id, jobs, store)
        return write_judgments(table, RunDir(out).judgments, fingerprints)

    def manifest(endpoints: dict[str, Endpoint]) -> dict[str, Any]:
        made = new_manifest(run_id, cfg, protocols, endpoints, conditions)
        return {**made, "review": review_state(review)} if review else made

    return JobType(
        plan=plan,
        make=run_job,
        rows=rows,
        manifest=manifest,
        planned=planned,
        lanes=lanes_of(cfg.judges),
        group=document_of if prefix_aware else None,
        checks=PlanChecks(cfg.sampling, cfg.seeds, first),
        texts_only=cfg.texts_only,
    )


def _announce(
    planned: Counts, items: list[Item], conditions: dict[str, Condition], names: list[str],
    out: Path, console: Console, rejected: str = "",
) -> None:  # fmt: skip
    """Attack checks, the request counts and what the review leaves out, before sending."""
    per_protocol = ", ".join(f"{k} {v}" for k, v in planned.requests.items())
    run = RunDir(out)
    for write, path in ((write_attack_checks, run.attack_checks),
                        (write_degrade_checks, run.degrade_checks)):  # fmt: skip
        checked = write(path, items, conditions, names)
        if checked:
            console.print(checked)
    console.print(
        f"{planned.judgments} judgments planned ({sum(planned.requests.values())} "
        f"requests before cache: {per_protocol}) → {out}"
    )
    if rejected:
        console.print(escape(rejected))


async def _sweep(
    p: Prepared, console: Console, *, show_progress: bool, earlier_s: float = 0.0
) -> tuple[RunSummary, bool]:
    """The sweep, its tables and report; and whether a judge's Invalid share is too high.

    What the run spent goes into its manifest before the report is written (``earlier_s``:
    the sweeping seconds of its earlier sessions).
    """
    start = time.monotonic()
    cfg, out = p.cfg, p.out
    planned = count(cfg, p.protocols, p.items, p.conditions)
    rejected = rejected_count(cfg, p.protocols, p.items, p.conditions, p.review)

    def announce() -> None:
        _announce(planned, p.items, p.conditions, cfg.conditions, out, console, rejected)

    kind = cue_job_type(
        cfg, p.protocols, p.items, p.conditions, out, counts=planned, review=p.review
    )
    summary, frame = await _judged(
        p, kind, planned, console, show_progress=show_progress, announce=announce
    )
    if frame is None:  # a batch export, or a sequential pass that judged nothing yet
        return summary, False
    run = RunDir(out)
    store = open_store(out)
    try:
        spend = spent(store, cfg.judges, earlier_s + time.monotonic() - start)
    finally:
        store.close()
    record_spend(run, spend)
    loaded = LoadedRun(run, run.manifest(), without_rejected(frame, p.review))
    n_invalid = write_outputs(loaded, console)
    console.print(
        f"{frame.height} judgments ({frame.height - n_invalid} valid, {n_invalid} invalid); "
        f"sent {summary.sent}, reused {summary.skipped}; wrote {run.judgments}, "
        f"{run.metrics.name}, {run.manifest_file.name}"
    )
    return summary, report_unreliable(frame, cfg, summary, console)


async def _judged(
    p: Prepared, kind: JobType[Job], planned: Counts, console: Console, *,
    show_progress: bool, announce: Callable[[], None],
) -> tuple[RunSummary, pl.DataFrame | None]:  # fmt: skip
    """The judgments by the invocation's mode: sequential rounds, a batch pass, Ray or live.

    ``None`` for the table when nothing is judged yet (an export, or no round imported).
    """
    cfg, out, mode = p.cfg, p.out, p.mode
    if cfg.design == "sequential":
        rounds = SequentialRounds(cfg, p.protocols, p.items, p.conditions)
        made = kind.manifest
        kind = replace(kind, manifest=lambda e: {**made(e), "sequential": rounds.plan.record()})
        seq = await sequential_sweep(
            rounds, kind, out, console, show_progress=show_progress,
            batch=(mode.export_batch, mode.import_batch), ray=mode.ray, opened=announce,
        )  # fmt: skip
        console.print(
            f"sequential design: {seq.rounds} of {len(rounds.plan.looks)} rounds "
            f"({seq.requests} requests planned, the fixed design's {sum(planned.requests.values())}"
            f"); stopped: {seq.stopped}"
        )
        if seq.more:  # a batch pass imported its round; the next round is the next export's
            seq.summary.pending = max(seq.summary.pending, 1)
        return seq.summary, seq.judgments
    if mode.batch:
        return await batch_sweep(
            kind, cfg.judges, cfg.engine, out, console, mode.export_batch, mode.import_batch,
            opened=announce,
        )  # fmt: skip
    if mode.ray is not None:
        swept = await ray_sweep(
            kind, cfg.judges, cfg.engine, out, console, mode.ray or None,
            show_progress=show_progress, opened=announce,
        )  # fmt: skip
        return swept.summary, swept.judgments
    # Everything is validated (checked) before the run directory gets written.
    swept = await live_sweep(
        kind, cfg.judges, cfg.engine, out, console, show_progress=show_progress,
        opened=announce,
    )  # fmt: skip
    return swept.summary, swept.judgments


def check_design(p: Prepared) -> None:
    """What a run refuses of its design, before any request: ``--plan`` and a run call it alike.

    A sequential run whose ``budget_requests`` is below its first round would judge nothing.
    """
    cfg = p.cfg
    if cfg.design != "sequential" or not cfg.budget_requests:
        return
    first = SequentialRounds(cfg, p.protocols, p.items, p.conditions).first_round()
    if first > cfg.budget_requests:
        raise JudgeprobeError(
            f"budget_requests {cfg.budget_requests} is below the first round's {first} "
            f"requests (round = {cfg.round} documents): raise it or lower round"
        )


@dataclass(frozen=True, slots=True)
class RunRequest:
    """What ``judgeprobe run`` was asked, by its flags' names.

    The command and the API's ``judgeprobe.run``/``plan`` build one and take the same path
    (``run_command``).
    """

    config: Path | None = None
    judge: tuple[str, ...] = ()
    out: Path | None = None
    resume: bool = False
    limit: int | None = None
    no_progress: bool = False
    ray: str | None = None
    export_batch: Path | None = None
    import_batch: Path | None = None
    plan: bool = False

    def argv(self) -> list[str]:
        """The same request as the command's flags (for the resume hint a run prints)."""
        flags = [["--config", str(self.config)]] if self.config else []
        flags += [["--judge", j] for j in self.judge]
        flags += [["--out", str(self.out)]] if self.out else []
        flags += [["--limit", str(self.limit)]] if self.limit is not None else []
        flags += [["--ray", self.ray]] if self.ray is not None else []
        return [part for flag in flags for part in flag]


@dataclass(frozen=True)
class Prepared:
    """A sweep checked before any request is sent: config, items, conditions, protocols."""

    cfg: SweepConfig
    chosen: str  # why the default sweep judges with another embedded judge ("" if not)
    mode: Mode
    out: Path
    review: Mapping[str, Decision]
    items: list[Item]
    conditions: dict[str, Condition]
    protocols: dict[str, JudgeProtocol]


def prepare(req: RunRequest) -> Prepared:
    """Everything that can be wrong with a request, found before anything is sent or written."""
    if req.ray is not None:  # a dead or mistyped cluster is one line, before any planning
        check_cluster(req.ray or None)
    cfg = _apply_flags(load_config(req.config), list(req.judge), req.limit)
    chosen = ""
    if not (req.config or req.judge or req.export_batch or req.import_batch):
        # The default sweep, sent live: on whichever embedded judge is up (judgeprobe.cue.embedded).
        cfg, chosen = running_judge(cfg)
    mode = Mode(export_batch=req.export_batch, import_batch=req.import_batch, ray=req.ray)
    check_engines(cfg.judges, ray=mode.ray is not None)
    out = req.out or Path("runs") / cfg.name
    # A reviewed run (``judgeprobe review``): its edited texts are judged in place of the
    # generated ones; its rejected texts are judged as planned and left out of the metrics.
    review = read_decisions(RunDir(out))
    items, conditions = reviewed(sweep_items(cfg), sweep_conditions(cfg), review)
    for item in items:  # fail on an unresolvable cue before any request is sent
        for name in cfg.conditions:
            conditions[name].resolve(item)
    if "own" in cfg.protocols:  # a cue an own prompt would never show: refused now
        check_conditions(cfg.judges, {n: conditions[n] for n in cfg.conditions}, items)
    protocols = protocols_for(cfg)  # built once: planning, counts and the manifest share them
    check_writable_dir(out, "--out")
    prepared = Prepared(cfg, chosen, mode, out, review, items, conditions, protocols)
    check_design(prepared)  # --plan refuses what a run would
    return prepared


async def run_command(req: RunRequest, argv: list[str]) -> tuple[int, Path]:
    """``judgeprobe run``'s whole path after its flags are read: the bill, or the sweep.

    ``argv``: the flags as given, for the resume command a stopped run prints. Returns the
    exit code and the run directory.
    """
    p = prepare(req)
    if req.plan:
        print_bill(await plan_of(p), table_console())
        return 0, p.out
    mode, out = p.mode, p.out
    if mode.export_batch is not None:
        check_writable_dir(mode.export_batch.parent, "--export-batch")
        if mode.export_batch.is_dir():
            raise JudgeprobeError(f"--export-batch {mode.export_batch}: is a directory")
    if mode.import_batch is not None and not RunDir(out).store.exists():
        raise JudgeprobeError(f"{out} holds no run: export a batch into it first")
    check_run_dir(out, resume=req.resume or mode.batch, digest=p.cfg.digest())
    console = Console(stderr=True, soft_wrap=True)
    if p.chosen:
        console.print(f"[yellow]{escape(p.chosen)}[/]")
    start = time.monotonic()
    summary, failing = await _sweep(
        p, console, show_progress=not req.no_progress, earlier_s=earlier_seconds(RunDir(out))
    )
    console.print(f"done in {time.monotonic() - start:.1f}s")
    if mode.export_batch is not None:
        return 0, out
    return exit_code(summary, failing=failing, argv=argv, console=console), out


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe run``: the cue sweep from config to report."""
    args = _parser().parse_args(argv)
    fields = {k: v for k, v in vars(args).items()}
    req = RunRequest(**{**fields, "judge": tuple(fields["judge"])})
    code, _ = asyncio.run(run_command(req, sys.argv[1:] if argv is None else argv))
    return code


async def plan_of(p: Prepared) -> Bill:
    """``--plan``: probe the judges, check the plan as a run would, price it, write plan.json."""
    cfg, protocols, items, conditions, out = p.cfg, p.protocols, p.items, p.conditions, p.out
    console = Console(stderr=True, soft_wrap=True)
    if p.chosen:
        console.print(f"[yellow]{escape(p.chosen)}[/]")

    async def first() -> list[FirstRequest]:
        return await first_requests(cfg, protocols, items, conditions)

    checks = PlanChecks(cfg.sampling, cfg.seeds, first)
    async with judges_open(
        cfg.judges, cfg.engine, console, checks, texts_only=cfg.texts_only
    ) as endpoints:
        bill = await plan_bill(cfg, protocols, items, conditions, endpoints)
    if cfg.design == "sequential":  # the worst case, and the spend a pilot's effects predict
        rounds = SequentialRounds(cfg, protocols, items, conditions)
        documents = [sorted({i.document_id for i in r}) for r in rounds.by_round]
        cells = {cell for _, cell in bill.by_document}
        profile, piloted = pilot_profile(rounds, out, cells)
        bill.price_sequential(documents, profile)
        bill.notes.append(
            f"sequential: the expected spend is from the {piloted} round(s) already judged in "
            f"{out} (rows they settled are planned no further; every other row to the end)"
            if piloted
            else "sequential: no pilot round judged yet, so the expected spend is the worst "
            "case; run one round (budget_requests at the first round's requests), then --plan "
            "again for the spend its effects predict"
        )
    path = RunDir(out).plan
    out.mkdir(parents=True, exist_ok=True)
    write_json(path, bill.record())
    console.print(f"wrote {path}")
    return bill


def exit_code(summary: RunSummary, *, failing: bool, argv: list[str], console: Console) -> int:
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


cli = guarded(main, RESUME)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
