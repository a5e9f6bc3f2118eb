"""judgeprobe from Python: a sweep, a judge's logs, the card, a calibration, the self-test.

Each function is the path its command takes (``judgeprobe run``, ``logs``, ``card``,
``calibrate``, ``selftest``, ``run --plan``) after the command has read its flags: the same
checks, files and exit codes, with typed results instead of a process's exit status. Every name
here is also ``judgeprobe.NAME``.

Every blocking function works in a plain script and inside a running event loop (a notebook
cell): there its work runs on a worker thread with an event loop of its own. Code that already
runs in a loop can await the ``a``-twin instead (``arun``, ``aread_logs`` …). Errors a user can
act on are ``JudgeprobeError`` (or a subclass), carrying the line the command prints.

Stability: the names in ``__all__`` follow semantic versioning; a name to be removed warns with
a ``DeprecationWarning`` for one minor version first (docs/api.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import html
import os
from collections.abc import Callable, Coroutine, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, TypeVar

import polars as pl

from judgeprobe import JudgeUnreliable, RunIncomplete
from judgeprobe.calibrate.__main__ import CalibrateRequest, calibrate_run
from judgeprobe.card.from_run import checked_card
from judgeprobe.card.gate import Gate, verdict_counts
from judgeprobe.card.gate import read_card as read_published
from judgeprobe.card.published import PublishedCard
from judgeprobe.card.record import CardRow
from judgeprobe.card.render import notebook_html
from judgeprobe.card.rows import Card as MadeCard
from judgeprobe.card.thresholds import LoadedThresholds
from judgeprobe.cue.bill import Bill
from judgeprobe.cue.run import RunRequest, plan_of, prepare, run_command
from judgeprobe.engine.progress import PROGRESS_LISTENER, ProgressUpdate
from judgeprobe.logs.__main__ import LogsRequest, logs_run
from judgeprobe.metrics.calibrated import CalibratedRow
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.runs.rundir import EXIT_INCOMPLETE, EXIT_UNRELIABLE, Manifest, RunDir
from judgeprobe.runs.spend import Spend
from judgeprobe.selftest.__main__ import selftest_args, selftest_out, selftest_run

__all__ = [
    "Bill", "CalibratedRow", "Card", "ProgressUpdate", "Run", "SelftestResult",
    "acalibrate", "acard", "aplan", "aread_logs", "arun", "aselftest", "calibrate", "card",
    "plan", "read_card", "read_logs", "run", "selftest",
]  # fmt: skip

T = TypeVar("T")
PathLike = str | os.PathLike[str]
Progress = bool | Callable[[ProgressUpdate], None]
"""``True``: the progress bar (rich: a live widget in a notebook, a bar in a terminal);
``False``: none; a function: called with each ``ProgressUpdate`` instead of a bar."""


def _in_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _blocking(work: Callable[[], T]) -> T:
    """``work()`` here, or on a worker thread when this thread runs an event loop (a notebook).

    A command's own ``asyncio.run`` cannot start inside a running loop; a thread has none.
    """
    if not _in_loop():
        return work()
    with ThreadPoolExecutor(1, thread_name_prefix="judgeprobe") as pool:
        return pool.submit(work).result()


def _await(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """The coroutine ``make()`` run to its end from blocking code, in a loop or not."""
    return _blocking(lambda: asyncio.run(make()))


@contextlib.contextmanager
def _progress(progress: Progress) -> Iterator[bool]:
    """The listener set for this context; yields whether the bar is shown."""
    listener = progress if callable(progress) else None
    token = PROGRESS_LISTENER.set(listener)
    try:
        yield progress is True
    finally:
        PROGRESS_LISTENER.reset(token)


def _path(value: PathLike | Run) -> Path:
    return value.path if isinstance(value, Run) else Path(value)


@dataclass(frozen=True)
class Run:
    """A run directory: what made it (its manifest), what it spent, and how it ended.

    ``exit_code`` is the command's: 0 finished, 3 judgments left for a later pass, 4 a judge
    unreliable; for a logs run, its card's (0, 5 to 8).
    """

    path: Path
    exit_code: int = 0

    @cached_property
    def manifest(self) -> Manifest:
        """What made the run (``manifest.json``, checked)."""
        return RunDir(self.path).manifest()

    @property
    def spend(self) -> Spend | None:
        """Requests, tokens, seconds and cost the run spent (None: no judge was called)."""
        found = self.manifest.spend
        return None if found is None else Spend.model_validate(found)

    def check(self) -> Run:
        """The run itself when it finished; else the error its command's exit code means."""
        if self.exit_code == EXIT_INCOMPLETE:
            raise RunIncomplete(f"{self.path}: judgments are left; run again with resume=True")
        if self.exit_code == EXIT_UNRELIABLE:
            raise JudgeUnreliable(f"{self.path}: a judge's Invalid share is above its limit")
        return self

    def _facts(self) -> list[tuple[str, str]]:
        m = self.manifest
        judges = ", ".join(str(j.get("name", "?")) for j in m.judges) or "–"
        spend = self.spend
        return [
            ("run", m.run_id), ("kind", m.kind), ("created", m.created_at), ("judges", judges),
            ("conditions", ", ".join(m.conditions) or "–"), ("exit code", str(self.exit_code)),
            ("spend", "no judge called" if spend is None else spend.sentence()),
        ]  # fmt: skip

    def __repr__(self) -> str:
        m, spend = self.manifest, self.spend
        spent = "no judge called" if spend is None else f"{spend.requests} requests"
        return (
            f"Run({str(self.path)!r}, run_id={m.run_id!r}, kind={m.kind!r}, "
            f"exit_code={self.exit_code}, spend={spent!r})"
        )

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in self._facts()
        )
        return f"<table><caption>{html.escape(str(self.path))}</caption>{rows}</table>"


@dataclass(frozen=True)
class Card:
    """A judge card as card.json publishes it: typed rows, verdict counts, the exit code.

    ``document`` is the published model (``card.published.PublishedCard``, docs/card.schema.json).
    """

    document: PublishedCard
    path: Path
    _made: MadeCard | None = field(default=None, repr=False, compare=False)

    @property
    def rows(self) -> list[CardRow]:
        """Every row, in the card's order."""
        return list(self.document.rows)

    @property
    def exit_code(self) -> int:
        """``judgeprobe card``'s exit code (0 clear; 5, 8, 7, 6: the first verdict that applies).

        5 BIASED or UNSTABLE, 8 DOES-NOT-REPLACE, 7 INSENSITIVE, 6 UNDERPOWERED.
        """
        return self.document.exit_code

    @property
    def verdict_counts(self) -> dict[str, int]:
        """How many rows got each verdict."""
        return verdict_counts(self.document)

    def find(self, judge: str, protocol: str, row: str) -> CardRow | None:
        """The row named ``row`` of a judge × protocol; None when the card has none."""
        wanted = (judge, protocol, row)
        return next((r for r in self.rows if (r.judge, r.protocol, r.row) == wanted), None)

    def gate(self, *, strict: bool = False) -> Gate:
        """The card judged by the CI gate's rule (``card.gate.OUTCOMES``)."""
        return Gate(self.document, strict)

    def to_json(self) -> str:
        """card.json's text."""
        return self.document.model_dump_json(indent=2)

    def __repr__(self) -> str:
        return f"Card({self.document.run_id!r}: {self.document.summary})"

    def _repr_html_(self) -> str:
        made = self._made or MadeCard(
            records=tuple(self.document.rows), silent_items=pl.DataFrame(),
            thresholds=LoadedThresholds(self.document.thresholds.values,
                                        self.document.thresholds.origin,
                                        self.document.thresholds.sha256),
            method=self.document.intervals.method, calibrated=tuple(self.document.calibrated),
        )  # fmt: skip
        return notebook_html(made, self.document.title)


@dataclass(frozen=True)
class SelftestResult:
    """A self-test: the run it wrote and whether every planted effect came back."""

    run: Run
    passed: bool


# --- the sweep --------------------------------------------------------------------------------


def _request(
    config: PathLike | None, out: PathLike | None, judges: Sequence[str], limit: int | None,
    **rest: Any,
) -> RunRequest:  # fmt: skip
    return RunRequest(
        config=None if config is None else Path(config), judge=tuple(judges),
        out=None if out is None else Path(out), limit=limit, **rest,
    )  # fmt: skip


async def arun(
    config: PathLike | None = None,
    *,
    out: PathLike | None = None,
    judges: Sequence[str] = (),
    resume: bool = False,
    limit: int | None = None,
    progress: Progress = True,
    ray: str | None = None,
) -> Run:
    """``judgeprobe run``: a cue sweep from config to report (awaitable).

    ``config`` None: the default sweep on the embedded judge. ``judges``: ``--judge`` flags
    (``NAME=URL``), replacing the config's. ``out``: the run directory (default
    ``runs/<config name>``). The run's ``exit_code`` says whether it finished (``Run.check``).
    """
    with _progress(progress) as bar:
        req = _request(config, out, judges, limit, resume=resume, no_progress=not bar, ray=ray)
        code, where = await run_command(req, req.argv())
    return Run(where, code)


def run(
    config: PathLike | None = None,
    *,
    out: PathLike | None = None,
    judges: Sequence[str] = (),
    resume: bool = False,
    limit: int | None = None,
    progress: Progress = True,
    ray: str | None = None,
) -> Run:
    """``judgeprobe run``: a cue sweep from config to report (see ``arun``)."""
    return _await(lambda: arun(config, out=out, judges=judges, resume=resume, limit=limit,
                               progress=progress, ray=ray))  # fmt: skip


async def aplan(
    config: PathLike | None = None,
    *,
    out: PathLike | None = None,
    judges: Sequence[str] = (),
    limit: int | None = None,
) -> Bill:
    """``judgeprobe run --plan``: the bill before the first judgment, written to plan.json.

    Sends only the start-up probe, the token counts and a short timed probe.
    """
    return await plan_of(prepare(_request(config, out, judges, limit, plan=True)))


def plan(
    config: PathLike | None = None,
    *,
    out: PathLike | None = None,
    judges: Sequence[str] = (),
    limit: int | None = None,
) -> Bill:
    """``judgeprobe run --plan``: the bill (see ``aplan``)."""
    return _await(lambda: aplan(config, out=out, judges=judges, limit=limit))


# --- what a judge already said ----------------------------------------------------------------


def read_logs(
    paths: PathLike | Sequence[PathLike],
    *,
    out: PathLike,
    labels: PathLike | None = None,
    log_format: str | None = None,
    mapping: str | None = None,
    answers: PathLike | Sequence[PathLike] = (),
    baseline_model: str | None = None,
    own_models: Sequence[str] = (),
    baseline: PathLike | Run | None = None,
    report: bool = True,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Run:
    """``judgeprobe logs``: a judge's logs read into a run directory, its card written.

    ``paths``: files or globs (``"logs/*.eval"``). ``log_format``: every file's format
    (``--format``; default: detected per file); ``mapping``: a generic log's ``field=column,…``
    (``--map``); ``answers``: FastChat's ``model_answer/`` folders; ``baseline_model``:
    Arena-Hard's baseline; ``own_models``: ``--self``. The run's ``exit_code`` is its card's.
    """
    given = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    files = [m for p in map(str, given) for m in (sorted(glob.glob(p)) or [p])]
    req = LogsRequest(
        paths=tuple(Path(p) for p in files), out=Path(out),
        labels=None if labels is None else Path(labels), format=log_format, map=mapping,
        answers=tuple(map(Path, [answers] if isinstance(answers, str | os.PathLike) else answers)),
        baseline_model=baseline_model, own=tuple(own_models),
        baseline=None if baseline is None else _path(baseline), no_report=not report,
        resamples=resamples, seed=seed,
    )  # fmt: skip
    return Run(req.out, _blocking(lambda: logs_run(req)))


async def aread_logs(paths: PathLike | Sequence[PathLike], **options: Any) -> Run:
    """``read_logs`` for code in an event loop (on a worker thread)."""
    return await asyncio.to_thread(read_logs, paths, **options)


# --- the card and the calibration -------------------------------------------------------------


def card(
    run: PathLike | Run,
    *,
    thresholds: PathLike | None = None,
    lexicons: PathLike | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Card:
    """``judgeprobe card``: the judge card of a run, written into it (card.md/html/json/csv)."""
    where = _path(run)
    made = _blocking(lambda: checked_card(
        where, thresholds=None if thresholds is None else Path(thresholds),
        lexicons=None if lexicons is None else Path(lexicons), resamples=resamples, seed=seed,
    ))  # fmt: skip
    return Card(read_published(RunDir(where).card_json), where, made)


async def acard(run: PathLike | Run, **options: Any) -> Card:
    """``card`` for code in an event loop (on a worker thread)."""
    return await asyncio.to_thread(card, run, **options)


def read_card(path: PathLike | Run) -> Card:
    """A card already written: a run directory's card.json (or the file), read and checked."""
    where = _path(path)
    return Card(read_published(where), where if where.is_dir() else where.parent)


def calibrate(
    run: PathLike | Run,
    *,
    labels: PathLike | None = None,
    halfwidth: float | None = None,
    condition: str = "Blind",
    draw: int | None = None,
    seed: int = 0,
) -> list[CalibratedRow]:
    """``judgeprobe calibrate``: each model's human-calibrated win rate or mean score.

    Labels from the run (labels.parquet, the review store) or ``labels``; ``halfwidth``: the
    interval the label budget aims at (default 5% of the scale). Written to calibrated.json
    and calibrated.csv; returns the typed rows ([] when ``draw`` only drew items to label).
    """
    req = CalibrateRequest(
        run_dir=_path(run), labels=None if labels is None else Path(labels),
        halfwidth=halfwidth, condition=condition, draw=draw, seed=seed,
    )  # fmt: skip
    return _blocking(lambda: calibrate_run(req)) or []


async def acalibrate(run: PathLike | Run, **options: Any) -> list[CalibratedRow]:
    """``calibrate`` for code in an event loop (on a worker thread)."""
    return await asyncio.to_thread(calibrate, run, **options)


# --- the self-test ----------------------------------------------------------------------------

Design = Literal["default", "battery", "calibrate", "logs"]


def selftest(
    out: PathLike | None = None,
    *,
    design: Design = "default",
    items: int = 200,
    seed: int = 0,
    **planted: float | str | None,
) -> SelftestResult:
    """``judgeprobe selftest``: a simulated judge with planted biases, and the check.

    Nothing to install or serve: the simulated judge answers on loopback for the run's length.
    ``design``: the default sweep, the battery, ``calibrate`` (a simulated run with human labels
    for ``calibrate``) or ``logs`` (every log format read back). ``planted``: the command's
    planted rates by name (``anchoring=0.3``, ``position=0``, ``blind="first"`` …).
    """
    args = selftest_args(
        out=None if out is None else Path(out), items=items, seed=seed,
        battery=design == "battery", calibrate=design == "calibrate", logs=design == "logs",
        **planted,
    )  # fmt: skip
    code = _blocking(lambda: selftest_run(args))
    return SelftestResult(Run(selftest_out(args)), passed=code == 0)


async def aselftest(out: PathLike | None = None, **options: Any) -> SelftestResult:
    """``selftest`` for code in an event loop (on a worker thread)."""
    return await asyncio.to_thread(selftest, out, **options)
