"""``--ray [ADDRESS]``: a sweep's jobs as rounds of Ray Data pipelines, until none is pending.

The driver probes every served judge as a live run does (so requests are keyed alike and
share the cache with live runs), opens the run's store — the only record — and walks the
plan: what the store answers completes, what it lacks is collected as batch lines; a round
sends them through Ray and stores each answer as it arrives (that loop, ``RoundLoop``, is in
``judgeprobe.engine.ray_rounds``); the next walk validates them with the live engine's
``converse`` and collects what follows (re-asks, later stages). A killed driver resumes
with ``--resume`` and sends only what the store lacks. The user sees what a live run shows:
the progress bar across rounds, the sweep deadline, the circuit breaker and the same exit
codes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.engine.breaker import Breaker, guarded
from judgeprobe.engine.checks import PlanChecks
from judgeprobe.engine.client import ServerInfo, close_all
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.ray_rounds import RoundEndpoint, RoundLoop, cluster_info, connect
from judgeprobe.engine.runner import J
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.runs.rundir import RunDir, open_store
from judgeprobe.runs.sweep import JobType, Swept, judges_open


def check_engines(judges: Sequence[JudgeConfig], *, ray: bool) -> None:
    """An in-cluster judge runs only under ``--ray``: one line otherwise.

    Under ``--ray`` it is refused when its verdict is read from log-probabilities: the
    in-cluster engine's replies carry none (every judgment would end Invalid).
    """
    if ray:
        for judge in judges:
            if judge.cluster is not None and judge.reads_logprobs:
                raise JudgeprobeError(
                    f"judge {judge.name}: a verdict read from log-probabilities is not read from "
                    "an in-cluster engine yet; serve the judge (vLLM, TGI, llama-server) and "
                    "give its url"
                )
        return
    for judge in judges:
        if judge.cluster is not None and not judge.url:
            raise JudgeprobeError(
                f"judge {judge.name} runs in the cluster ([judges.cluster]) and has no url: "
                "run the sweep with --ray"
            )


async def _identify(
    judges: Sequence[JudgeConfig], engine: EngineConfig, console: Console,
    checks: PlanChecks | None, texts_only: frozenset[str] = frozenset(),
) -> dict[str, ServerInfo]:  # fmt: skip
    """Every judge's identity: served ones probed as live, in-cluster ones declared.

    The plan is checked against every judge while the served ones are open.
    """
    served = [j for j in judges if j.cluster is None]
    async with judges_open(
        served, engine, console, checks, judges, texts_only=texts_only
    ) as probed:
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


async def ray_sweep(
    kind: JobType[J],
    judges: Sequence[JudgeConfig],
    engine: EngineConfig,
    out: Path,
    console: Console,
    address: str | None,
    *,
    show_progress: bool = True,
    opened: Callable[[], None] | None = None,
) -> Swept:
    """The sweep of ``kind`` in rounds on the Ray cluster at ``address`` (None: a local one).

    The plan is checked (``kind.checks``) before anything is written; ``opened`` runs once
    the run directory and its manifest exist.
    """
    infos = await _identify(judges, engine, console, kind.checks, kind.texts_only)
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
        fingerprints = {name: ep.info.fingerprint for name, ep in endpoints.items()}
        label, unit = kind.progress
        with SweepProgress(
            kind.planned, console, enabled=show_progress, label=label, unit=unit
        ) as progress:
            breaker = Breaker(engine.breaker_after, unit=unit)
            handle = guarded(kind.make, dict(endpoints), store, breaker)
            rounds = RoundLoop(
                lambda: kind.plan(fingerprints), handle, endpoints, store, engine, progress
            )
            summary = await rounds.run()
        summary.tripped = breaker.tripped
        if summary.deadline_hit:
            console.print(
                f"[yellow]sweep deadline ({engine.sweep_deadline_s:g}s) reached: no further "
                "round was sent[/]"
            )
        store.flush()
        frame = kind.rows(kind.plan(fingerprints), store, fingerprints)
    finally:
        await close_all(endpoints)
        store.close()
    return Swept(frame, summary)
