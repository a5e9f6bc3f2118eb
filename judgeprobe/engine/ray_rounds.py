"""Batch rounds on Ray: a sweep's pending requests answered by Ray Data pipelines.

A round is the batch path's export → answers → import, with Ray Data in the middle: the
pending requests (batch lines, ``custom_id`` + chat body) become a dataset, one pipeline per
judge answers them, and each answer comes back to the driver as a batch output line that
the store keeps (``Store.put_answers``) as soon as its block arrives. The driver then walks
the plan again through ``RoundEndpoint``s, so every answer goes through the same ``converse``
as a live reply (same parsing, re-asks, escalations and Invalid reasons); what is still
pending (a re-ask, PBP's next stage, Reveal-After's second turn) is the next round.
``RoundLoop`` is that loop; the sweep above hands it its plan and its guarded ``handle``.

Two ways to reach a judge:

- *served* (a URL): ``ServedJudge``, an actor per replica URL that posts the bodies with the
  live engine's own transport (``Endpoint``: replica balancing, 408/429/5xx and connection
  retries with backoff, outage waits); a 4xx or exhausted retries is a failed line whose
  status and message become the Invalid reason.
- *in-cluster* (``[judges.cluster]``, ``engine = "vllm"``): Ray Data's vLLM processor;
  ``vllm_row`` maps a chat body onto its row (messages; temperature, top_p, seed,
  max_tokens and the JSON schema as vLLM sampling and structured outputs) and
  ``vllm_answer`` maps its output back to a chat completion.

Ray retries a failed task or a lost actor, so a request may reach a server twice, but the
store keeps one answer per ``custom_id`` and one outcome per judgment.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType
from typing import Any, Generic
from urllib.parse import urlsplit

import orjson

from judgeprobe import JudgeprobeError
from judgeprobe.engine.batch import Answer, BatchEndpoint, J, walk
from judgeprobe.engine.client import (
    PREFIX_CHARS,
    Completion,
    Deferred,
    Endpoint,
    SendFailed,
    ServerInfo,
    send_with_retries,
)
from judgeprobe.engine.probe import server_info
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.retry import describe, status_of
from judgeprobe.engine.runner import RunSummary
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.engine.wire import declared

RAY_MISSING = "--ray needs the ray extra: pip install 'judgeprobe[ray]'"
#: How long the start-up check waits for a Ray address to accept a connection.
REACH_TIMEOUT_S = 3.0
#: The Ray Client server's port when a ``ray://`` address names none.
RAY_CLIENT_PORT = 10001
#: The local Ray's object store (bytes): the rounds hold request bodies, never weights.
LOCAL_OBJECT_STORE = 128 * 1024**2
#: vLLM SamplingParams fields a chat body's sampling may carry (same names on vLLM's API).
VLLM_SAMPLING = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "seed")


def require_ray() -> ModuleType:
    """The ``ray`` module, or one line saying how to install it."""
    try:
        return import_module("ray")
    except ImportError:
        raise JudgeprobeError(RAY_MISSING) from None


def cluster_endpoint(address: str) -> tuple[str, int]:
    """The host and port of a ``--ray`` address: ``HOST:PORT`` (the GCS) or ``ray://HOST[:PORT]``.

    Anything else is one line: Ray itself would log and retry a malformed address.
    """
    client = address.startswith("ray://")
    where = urlsplit(address if client else f"//{address}")
    try:
        port = where.port or (RAY_CLIENT_PORT if client else None)
    except ValueError:  # a port that is not a number, or out of range
        port = None
    if not where.hostname or port is None or where.path or where.query or where.fragment:
        raise JudgeprobeError(
            f"--ray {address}: not a Ray address (HOST:PORT of the cluster's GCS, "
            "ray://HOST[:PORT], auto, or none for a local Ray)"
        )
    return where.hostname, port


def check_cluster(address: str | None) -> None:
    """Fail in seconds when no Ray answers at ``address``, before anything is planned.

    ``ray.init`` on a dead address retries its GCS connection for minutes, logging as it
    goes; a TCP connect with a short timeout tells a mistyped or stopped cluster at once.
    None (a local Ray) and ``auto`` (the cluster this runs in, found by Ray) are not checked.
    """
    if find_spec("ray") is None:  # ray is imported only once the run is planned
        raise JudgeprobeError(RAY_MISSING)
    if address is None or address == "auto":
        return
    host, port = cluster_endpoint(address)
    try:
        socket.create_connection((host, port), timeout=REACH_TIMEOUT_S).close()
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        shown = f"[{host}]" if ":" in host else host  # an IPv6 address
        raise JudgeprobeError(
            f"--ray {address}: no Ray cluster answers at {shown}:{port} ({why}); start it "
            "(ray start --head) or give its GCS address"
        ) from None


def connect(address: str | None) -> None:
    """Join the Ray cluster at ``address`` (``auto``: the one this runs in), or start a local one.

    A local Ray has no dashboard and a small object store; Ray Data's own progress bars are
    off (the sweep shows its own).
    """
    ray = require_ray()
    if not ray.is_initialized():
        local: dict[str, Any] = {}
        if address is None:
            local = {"object_store_memory": LOCAL_OBJECT_STORE, "num_cpus": os.cpu_count()}
        try:
            ray.init(
                address=address, include_dashboard=False, log_to_driver=False,
                logging_level="ERROR", **local,
            )  # fmt: skip
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise JudgeprobeError(
                f"--ray {address or ''}: cannot start or join Ray ({exc})"
            ) from None
    context = import_module("ray.data").DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    for name in ("ray", "ray.data"):  # Ray Data's per-dataset lines: the sweep says its own
        logging.getLogger(name).setLevel(logging.ERROR)


def cluster_info(judge: JudgeConfig) -> ServerInfo:
    """An in-cluster judge's identity: its engine, model and engine arguments (never probed)."""
    assert judge.cluster is not None
    source = judge.cluster.model_source or judge.model
    details = {
        "served_by": f"ray-{judge.cluster.engine}",
        "model_source": source,
        "engine_kwargs": judge.cluster.engine_kwargs,
        **declared(batch_invariant=judge.batch_invariant),
    }
    return server_info(judge.cluster.engine, judge.model or source, details)


class RoundEndpoint(BatchEndpoint):
    """A judge's endpoint between rounds: answers are batch lines the rounds stored.

    A failed line answered in this run ends its request (Invalid, retryable: a resume sends
    it again); one left from an earlier run is sent again now.
    """

    def __init__(
        self, judge: JudgeConfig, engine: EngineConfig, store: Store, info: ServerInfo,
        fresh: set[str],
    ) -> None:  # fmt: skip
        super().__init__(judge, engine, store, importing=True, info=info)
        self.fresh = fresh  # custom_ids answered in this run (shared by the run's endpoints)

    def usable(self, cid: str, answer: Answer) -> bool:
        """A good answer always; a failed one only when this run's round gave it."""
        return not isinstance(answer, Exception) or cid in self.fresh


def answer_line(cid: str, completion: Completion) -> bytes:
    """A batch output line holding one chat completion."""
    choice = {"message": {"role": "assistant", "content": completion.text},
              "finish_reason": completion.finish_reason}  # fmt: skip
    usage = {"prompt_tokens": completion.prompt_tokens,
             "completion_tokens": completion.completion_tokens}  # fmt: skip
    body = {"choices": [choice], "usage": usage}
    return orjson.dumps({"custom_id": cid, "response": {"status_code": 200, "body": body}})


def failed_line(cid: str, status: int, message: str) -> bytes:
    """A batch output line for a request that failed (its status: 0 when none came)."""
    record = {"custom_id": cid, "response": {"status_code": status, "body": None},
              "error": {"message": message}}  # fmt: skip
    return orjson.dumps(record)


class ServedJudge:
    """Ray Data actor: posts one judge's chat bodies as the live engine does.

    Retries 408/429/5xx and connection failures with backoff (``send_with_retries``), waits
    out an outage within the request deadline; anything else is a failed line.
    """

    def __init__(
        self,
        judge: JudgeConfig,
        engine: EngineConfig,
        info: ServerInfo,
        auth: Mapping[str, Mapping[str, str]],
    ) -> None:
        self.args = (judge, engine, info, auth)
        self.endpoint: Endpoint | None = None  # made on the actor's event loop

    async def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        """One block of ``custom_id``/``body`` rows → their ``answer`` lines."""
        if self.endpoint is None:
            judge, engine, info, auth = self.args
            self.endpoint = Endpoint(judge, engine, info, auth=auth)
        ids = [str(c) for c in batch["custom_id"]]
        lines = await asyncio.gather(
            *(self._one(cid, str(body)) for cid, body in zip(ids, batch["body"], strict=True))
        )
        return {"custom_id": ids, "answer": [line.decode() for line in lines]}

    async def _one(self, cid: str, body: str) -> bytes:
        assert self.endpoint is not None
        engine = self.endpoint.engine
        messages = orjson.loads(body)["messages"]
        prefix = hash(messages[0]["content"][:PREFIX_CHARS]) if messages else 0
        deadline = time.monotonic() + engine.request_deadline_s
        call = partial(self.endpoint._post, body.encode(), prefix, deadline)
        try:
            completion, _ = await send_with_retries(call, engine, deadline)
        except SendFailed as failed:
            return failed_line(cid, status_of(failed.cause) or 0, describe(failed.cause))
        return answer_line(cid, completion)


def vllm_row(cid: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """A chat body as a row of Ray Data's vLLM processor.

    Sampling, seed and budget go to vLLM's ``SamplingParams``; the JSON schema of the body's
    ``response_format`` to its structured outputs. ``max_tokens`` is kept beside the row, as
    the engine reports no finish reason (a reply that used the whole budget was cut).
    """
    params = {k: body[k] for k in VLLM_SAMPLING if body.get(k) is not None}
    params["max_tokens"] = int(body["max_tokens"])
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") if isinstance(fmt, dict) else None
    if schema is not None:
        params["structured_outputs"] = {"json": schema}
    return {
        "custom_id": cid,
        "messages": [dict(m) for m in body["messages"]],
        "sampling_params": params,
        "max_tokens": params["max_tokens"],
    }


def vllm_answer(row: Mapping[str, Any]) -> dict[str, str]:
    """A row the vLLM processor answered, back as a batch output line (``answer``)."""
    cid = str(row["custom_id"])
    error = row.get("__inference_error__")
    if error:
        return {"custom_id": cid, "answer": failed_line(cid, 500, str(error)[:200]).decode()}
    used = int(row.get("num_generated_tokens") or 0)
    completion = Completion(
        text=str(row.get("generated_text") or ""),
        finish_reason="length" if used >= int(row["max_tokens"]) else "stop",
        prompt_tokens=int(row.get("num_input_tokens") or 0),
        completion_tokens=used,
    )
    return {"custom_id": cid, "answer": answer_line(cid, completion).decode()}


def vllm_config(judge: JudgeConfig) -> Any:
    """The ``vLLMEngineProcessorConfig`` of an in-cluster judge (built without a GPU)."""
    assert judge.cluster is not None
    cluster = judge.cluster
    llm = import_module("ray.data.llm")
    engine_kwargs = {"tensor_parallel_size": cluster.gpus_per_replica, **cluster.engine_kwargs}
    chat = {"chat_template_kwargs": {"enable_thinking": False}} if judge.disable_thinking else True
    return llm.vLLMEngineProcessorConfig(
        model_source=cluster.model_source or judge.model,
        engine_kwargs=engine_kwargs,
        concurrency=cluster.replicas,
        batch_size=cluster.batch_size,
        accelerator_type=cluster.accelerator_type or None,
        chat_template_stage=chat,
        should_continue_on_error=True,  # a failed row is a failed line, not a lost round
    )


def _body_row(row: dict[str, Any]) -> dict[str, Any]:
    return vllm_row(str(row["custom_id"]), orjson.loads(row["body"]))


def pipeline(dataset: Any, judge: JudgeConfig, engine: EngineConfig, info: ServerInfo) -> Any:
    """One judge's rows (``custom_id``, ``body``) → rows (``custom_id``, ``answer``)."""
    if judge.cluster is not None:
        llm = import_module("ray.data.llm")
        processor = llm.build_processor(
            vllm_config(judge), preprocess=_body_row, postprocess=vllm_answer
        )
        return processor(dataset)
    auth = {url: judge.auth_headers(url) for url in judge.replicas}
    actors = len(judge.replicas)  # each balances over every replica: the slots are shared out
    share = judge.model_copy(update={"concurrency": -(-judge.concurrency // actors)})
    return dataset.map_batches(
        ServedJudge,
        fn_constructor_kwargs={"judge": share, "engine": engine, "info": info, "auth": auth},
        batch_size=2 * judge.concurrency,
        compute=import_module("ray.data").ActorPoolStrategy(size=actors),
        num_cpus=0.25,  # waits on the judge's server, not on this CPU
    )


#: Most requests one round sends (the driver holds a round's bodies); the rest wait a round.
ROUND_LINES = 20_000


def run_round(
    lines: Mapping[str, Sequence[tuple[str, bytes]]],
    judges: Mapping[str, JudgeConfig],
    engine: EngineConfig,
    infos: Mapping[str, ServerInfo],
) -> Iterator[list[tuple[str, bytes]]]:
    """One round: each judge's pending ``(custom_id, body)`` through its pipeline.

    Yields the answers block by block as they arrive, for the store.
    """
    ray = require_ray()
    parts = []
    for name, todo in lines.items():
        rows = [{"custom_id": cid, "body": body.decode()} for cid, body in todo]
        if rows:
            parts.append(pipeline(ray.data.from_items(rows), judges[name], engine, infos[name]))
    if not parts:
        return
    dataset = parts[0].union(*parts[1:]) if len(parts) > 1 else parts[0]
    for block in dataset.iter_batches(batch_format="pandas", batch_size=None):
        ids, answers = block["custom_id"].tolist(), block["answer"].tolist()
        yield [(str(c), str(a).encode()) for c, a in zip(ids, answers, strict=True)]


class RoundLoop(Generic[J]):
    """The round loop of one sweep: walk, send what is pending through Ray, store, repeat.

    ``plan`` gives the sweep's jobs (the same on every call); ``handle`` makes one through
    the ``RoundEndpoint``s, guarded by the sweep's circuit breaker.
    """

    def __init__(
        self, plan: Callable[[], Iterable[J]], handle: Callable[[J], Awaitable[Outcome]],
        endpoints: dict[str, RoundEndpoint], store: Store, engine: EngineConfig,
        progress: SweepProgress,
    ) -> None:  # fmt: skip
        self.plan = plan
        self.handle = handle
        self.endpoints = endpoints
        self.fresh = next(iter(endpoints.values())).fresh  # shared by every endpoint
        self.store = store
        self.engine = engine
        self.progress = progress
        self.summary = RunSummary()
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

        jobs = (job for job in self.plan() if hash(job.key) not in self.ended)
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
        return self.summary
