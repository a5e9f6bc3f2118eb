"""``--ray [ADDRESS]``: a sweep's jobs as rounds of Ray Data pipelines, until none is pending.

The driver probes every served judge as a live run does (so requests are keyed alike and
share the cache with live runs), opens the run's store — the only record — and walks the
plan: what the store answers completes, what it lacks is collected as batch lines; a round
sends them through Ray (``judgeprobe.engine.ray_rounds``) and stores each answer as it
arrives; the next walk validates them with the live engine's ``converse`` and collects
what follows (re-asks, later stages). A killed driver resumes with ``--resume`` and sends
only what the store lacks. The user sees what a live run shows: the progress bar across
rounds, the sweep deadline, the circuit breaker and the same exit codes.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.engine.batch import walk
from judgeprobe.engine.breaker import Breaker, guarded
from judgeprobe.engine.checks import PlanChecks
from judgeprobe.engine.client import Deferred, ServerInfo
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.ray_rounds import RoundEndpoint, cluster_info, connect, run_round
from judgeprobe.engine.runner import J, RunSummary
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.runs.rundir import RunDir, open_store
from judgeprobe.runs.sweep import JobType, Swept, judges_open

#: Most requests one round sends (the driver holds a round's bodies); the rest wait a round.
ROUND_LINES = 20_000


def check_engines(judges: Sequence[JudgeConfig], ray: bool) -> None:
    """An in-cluster judge runs only under ``--ray``: one line otherwise."""
    if ray:
        return
    for judge in judges:
        if judge.cluster is not None and not judge.url:
            raise JudgeprobeError(
                f"judge {judge.name} runs in the cluster ([judges.cluster]) and has no url: "
                "run the sweep with --ray"
            )


async def _identify(
    judges: Sequence[JudgeConfig], engine: EngineConfig, console: Console,
    checks: PlanChecks | None,
) -> dict[str, ServerInfo]:  # fmt: skip
    """Every judge's identity: served ones probed as live, in-cluster ones declared.

    The plan is checked against every judge while the served ones are open.
    """
    served = [j for j in judges if j.cluster is None]
    async with judges_open(served, engine, console, checks, sweep=judges) as probed:
        infos = {name: ep.info for name, ep in probed.items()}
    for judge in judges:
        if judge.cluster is not None:
            info = infos[judge.name] = cluster_info(judge)
            console.print(
                f"judge [bold]{judge.name}[/]: in-cluster {judge.cluster.engine}, "
                f"{judge.cluster.replicas} × {judge.cluster.gpus_per_replica} GPU: {info.model} "
                f"(fingerprint {info.fingerprint})"
            )
    return infos


class Rounds:
    """The round loop of one sweep: walk, send what is pending through Ray, store, repeat."""

    def __init__(
        self, kind: JobType[J], endpoints: dict[str, RoundEndpoint], store: Store,
        engine: EngineConfig, progress: SweepProgress, console: Console,
    ) -> None:  # fmt: skip
        self.kind = kind
        self.endpoints = endpoints
        self.fresh = next(iter(endpoints.values())).fresh  # shared by every endpoint
        self.store = store
        self.engine = engine
        self.progress = progress
        self.console = console
        self.summary = RunSummary()
        self.breaker = Breaker(engine.breaker_after, unit=kind.progress[1])
        self.handle = guarded(kind.make, dict(endpoints), store, self.breaker)
        limit = engine.sweep_deadline_s
        self.deadline = time.monotonic() + limit if limit else float("inf")
        self.timings: list[tuple[int, float]] = []  # (requests, seconds) per round
        # Judgments that ended in this run: a later walk passes them by, so one that ended
        # Invalid for a reason a resume clears is neither sent again nor counted twice.
        self.ended: set[int] = set()

    def _done(self, outcome: Outcome) -> None:
        self.ended.add(hash(outcome.key))
        self.summary.sent += 1
        self.summary.record(outcome)
        self.progress.finished(outcome)

    async def _walk(self) -> dict[str, list[tuple[str, bytes]]]:
        """One pass over the plan; the pending requests by judge (at most ``ROUND_LINES``)."""
        pending: dict[str, list[tuple[str, bytes]]] = defaultdict(list)
        taken = 0

        def collect(job: J, deferred: Deferred) -> None:
            nonlocal taken
            if taken < ROUND_LINES:
                taken += 1
                body = orjson.dumps(orjson.loads(deferred.line)["body"])
                pending[job.judge].append((deferred.custom_id, body))

        fingerprints = {name: ep.info.fingerprint for name, ep in self.endpoints.items()}
        jobs = (job for job in self.kind.plan(fingerprints) if hash(job.key) not in self.ended)
        found = await walk(jobs, self.handle, self.store, collect=collect, done=self._done)
        if not self.timings:  # the first walk: what earlier runs finished
            self.summary.skipped = found.already
            self.progress.skipped(found.already)
        return pending

    def _send(self, pending: dict[str, list[tuple[str, bytes]]]) -> bool:
        """One round through Ray; False when the sweep deadline stopped it."""
        start = time.monotonic()
        judges = {name: ep.judge for name, ep in self.endpoints.items()}
        infos = {name: ep.info for name, ep in self.endpoints.items()}
        asked = sum(len(lines) for lines in pending.values())
        answered = 0
        for block in run_round(pending, judges, self.engine, infos):
            self.store.put_answers(block)
            self.fresh.update(cid for cid, _ in block)
            answered += len(block)
            if time.monotonic() >= self.deadline:
                return False
        if answered < asked:
            raise JudgeprobeError(f"a Ray round answered {answered} of {asked} requests")
        self.timings.append((asked, time.monotonic() - start))
        return True

    async def run(self) -> RunSummary:
        """Rounds until nothing is pending (or the sweep deadline)."""
        while pending := await self._walk():
            if time.monotonic() >= self.deadline or not self._send(pending):
                self.summary.deadline_hit = True
                break
            asked, took = self.timings[-1]
            self.progress.note(f"round {len(self.timings)}: {asked} requests in {took:.1f}s")
        self.summary.tripped = self.breaker.tripped
        return self.summary


async def ray_sweep(
    kind: JobType[J],
    judges: Sequence[JudgeConfig],
    engine: EngineConfig,
    out: Path,
    console: Console,
    address: str | None,
    show_progress: bool = True,
    opened: Callable[[], None] | None = None,
) -> Swept:
    """The sweep of ``kind`` in rounds on the Ray cluster at ``address`` (None: a local one).

    The plan is checked (``kind.checks``) before anything is written; ``opened`` runs once
    the run directory and its manifest exist.
    """
    infos = await _identify(judges, engine, console, kind.checks)
    start = time.monotonic()
    connect(address)
    console.print(f"Ray ({address or 'local'}) ready in {time.monotonic() - start:.1f}s")
    store = open_store(out)
    fresh: set[str] = set()  # custom_ids answered in this run, shared by every judge
    endpoints = {j.name: RoundEndpoint(j, engine, store, infos[j.name], fresh) for j in judges}
    try:
        manifest = {**kind.manifest(dict(endpoints)), "ray": True}
        RunDir(out).write_manifest(manifest)
        if opened is not None:
            opened()
        label, unit = kind.progress
        with SweepProgress(kind.planned, console, show_progress, label, unit) as progress:
            summary = await Rounds(kind, endpoints, store, engine, progress, console).run()
        if summary.deadline_hit:
            console.print(
                f"[yellow]sweep deadline ({engine.sweep_deadline_s:g}s) reached: no further "
                "round was sent[/]"
            )
        store.flush()
        fingerprints = {name: info.fingerprint for name, info in infos.items()}
        frame = kind.rows(kind.plan(fingerprints), store, fingerprints)
    finally:
        for endpoint in endpoints.values():
            await endpoint.close()
        store.close()
    return Swept(frame, summary)
