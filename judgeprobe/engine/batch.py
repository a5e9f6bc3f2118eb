"""Batch export and import: the sweep's pending requests as an OpenAI batch JSONL file.

``vllm run-batch`` and the hosted batch APIs take one line per request,
``{"custom_id", "method", "url", "body"}``, and write one line per answer,
``{"custom_id", "response": {"status_code", "body"}, "error"}``. Export walks the plan with
``BatchEndpoint``s: every request neither in the store nor answered is written out (once, by
content key) and its judgment waits. Import keeps the output lines in the store and walks the
plan again: each answer goes through the same ``converse`` as a live reply (same parsing,
same Invalid reasons) and lands in the same store. A reply that does not conform calls for a
re-ask, which the next export writes as ``KEY.reaskN``; a multi-stage protocol's next stage
is exported the same way, round after round, until nothing is pending.

No server is asked: the request key uses a fingerprint of the configured backend and model
(not a probed build), so batch answers never mix with live ones in the cache.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

import orjson

from judgeprobe import JudgeprobeError
from judgeprobe.core.files import json_lines
from judgeprobe.engine.client import (
    Completion,
    Deferred,
    Endpoint,
    ServerInfo,
    chat_body,
    converse,
    parse_completion,
)
from judgeprobe.engine.probe import server_info
from judgeprobe.engine.request import Message, Request
from judgeprobe.engine.retry import BadResponse, HTTPStatusError
from judgeprobe.engine.runner import Routable
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.engine.store import Outcome, Result, Store
from judgeprobe.engine.wire import declared

CHAT_URL = "/v1/chat/completions"

Answer = Completion | HTTPStatusError | BadResponse


def batch_info(judge: JudgeConfig) -> ServerInfo:
    """A judge's identity for batch runs: the configured backend and model, never probed."""
    if not judge.model or judge.backend == "auto":
        raise JudgeprobeError(
            f"judge {judge.name}: batch mode asks no server, so set model= and backend= "
            '(e.g. backend = "vllm") for it in the config'
        )
    details = {"served_by": "batch", **declared(batch_invariant=judge.batch_invariant)}
    return server_info(judge.backend, judge.model, details)


def custom_id(key: str, round_: int, escalated_to: int | None = None) -> str:
    """The batch line id of a request's first ask (its key) or its Nth re-ask.

    ``.maxN`` is added when it is asked again with an escalated budget of N tokens.
    """
    cid = key if round_ == 0 else f"{key}.reask{round_}"
    return cid if escalated_to is None else f"{cid}.max{escalated_to}"


class BatchEndpoint(Endpoint):
    """An endpoint whose answers are batch output lines kept in the store.

    Exporting, a failed answer line counts as no answer (the request is exported again);
    importing, it ends the request Invalid (retryable) like a live transport failure.
    """

    live = False  # no server is asked, so no credentials are needed

    def __init__(
        self,
        judge: JudgeConfig,
        engine: EngineConfig,
        store: Store,
        *,
        importing: bool,
        info: ServerInfo | None = None,
    ) -> None:
        super().__init__(judge, engine, info or batch_info(judge))
        self.store = store
        self.importing = importing
        self.matched: set[int] = set()  # hashes of the custom_ids answered in this pass
        # One batch line is one attempt: a failed line is Invalid (retryable) until re-exported.
        self._batch_engine = engine.model_copy(update={"max_attempts": 1})

    async def execute(self, req: Request) -> Result:
        """Answer a request from imported batch results, or record it for the next batch export."""

        async def send(messages: list[Message], round_: int, max_tokens: int) -> Completion:
            escalated_to = None if max_tokens == req.sampling.max_tokens else max_tokens
            cid = custom_id(req.key, round_, escalated_to)
            record = self.store.get_answer(cid)
            answer = None if record is None else _answer(orjson.loads(record))
            if answer is None or not self.usable(cid, answer):
                body = chat_body(req, messages, self.info, self.judge, max_tokens)
                line = {"custom_id": cid, "method": "POST", "url": CHAT_URL, "body": body}
                raise Deferred(cid, orjson.dumps(line) + b"\n")
            self.matched.add(hash(cid))
            if isinstance(answer, Exception):
                raise answer
            return answer

        return await converse(req, send, self._batch_engine, self.info.model, self.judge.name)

    def usable(self, cid: str, answer: Answer) -> bool:
        """Whether a stored answer ends its request now (else the request is exported again).

        Exporting, a failed line counts as no answer; importing, it ends the request.
        """
        return self.importing or not isinstance(answer, Exception)


@dataclass(slots=True)
class Walk:
    """What one pass over the plan found."""

    finished: int = 0  # judgments whose every request is answered (outcome stored now)
    already: int = 0  # judgments final in the store before this pass
    pending: int = 0  # judgments waiting for an answer
    lines: int = 0  # requests written to the batch file (export)


J = TypeVar("J", bound=Routable)


async def walk(
    jobs: Iterable[J],
    handle: Callable[[J], Awaitable[Outcome]],
    store: Store,
    out: IO[bytes] | None = None,
    collect: Callable[[J, Deferred], None] | None = None,
    done: Callable[[Outcome], None] | None = None,
) -> Walk:
    """Run every judgment as far as the store and the answers allow; write what is pending.

    ``handle`` makes one judgment through ``BatchEndpoint``s. Each pending request is
    written to ``out`` and handed to ``collect`` once (with the job that waits on it), however
    many judgments wait on it; ``done`` sees every outcome stored. Memory: one int per
    pending request, never the plan.
    """
    found = Walk()
    written: set[int] = set()
    for job in jobs:
        if store.is_final(job.key):
            found.already += 1
            continue
        try:
            outcome = await handle(job)
        except Deferred as deferred:
            found.pending += 1
            if hash(deferred.custom_id) not in written:
                written.add(hash(deferred.custom_id))
                if out is not None:
                    out.write(deferred.line)
                if collect is not None:
                    collect(job, deferred)
                found.lines += 1
            continue
        store.put_outcome(outcome)
        if done is not None:
            done(outcome)
        found.finished += 1
    return found


def _answer(record: dict[str, Any]) -> Answer:
    """One output line as the engine sees a live answer: a completion or a transport error."""
    response = record.get("response")
    response = response if isinstance(response, dict) else {}
    error, body = record.get("error"), response.get("body")
    status = response.get("status_code")
    if error or status != 200:
        message = error.get("message", "") if isinstance(error, dict) else str(error or body)
        code = status if isinstance(status, int) and status >= 300 else 500
        return HTTPStatusError(code, f"batch line failed: {message}"[:200])
    try:
        return parse_completion(body)
    except BadResponse as exc:
        return exc


def read_answers(path: Path) -> Iterator[tuple[str, bytes]]:
    """A batch output file's lines by custom_id; one clear line on a malformed file."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise JudgeprobeError(f"--import-batch {path}: {exc.strerror}") from None
    with handle:
        for number, line, record in json_lines(handle, lambda n: f"{path}:{n}: not a JSON line"):
            cid = record.get("custom_id") if isinstance(record, dict) else None
            if not isinstance(cid, str):
                raise JudgeprobeError(f"{path}:{number}: no custom_id (not a batch output file?)")
            yield cid, line


def ingest(path: Path, store: Store) -> set[int]:
    """Keep a batch output file's answers in the store; the hashes of its custom_ids."""
    ids: set[int] = set()

    def lines() -> Iterator[tuple[str, bytes]]:
        for cid, line in read_answers(path):
            ids.add(hash(cid))
            yield cid, line

    store.put_answers(lines())
    return ids
