"""The review server: one page and a JSON API over one run directory (aiohttp).

Everything it serves is either the page (a Jinja template, autoescaped) or JSON, whose
strings the page puts into the document as text: a judge explanation carrying ``<script>``
is data here and stays data there. No route takes a path, so nothing outside the run (nor
inside it, but the page and the API) can be asked for. A write (POST) must be JSON, no
larger than ``MAX_BODY``, from this page's own origin: a browser sends ``Origin`` and
``Sec-Fetch-Site`` with every cross-site POST, and one that names another site gets 403; so
does a request for a host name that is not this server's (DNS rebinding). Every field is
checked, and a bad one is a 400 with ``{"error": …}``.

The review store is shared with ``annotate`` and ``calibrate``, which may hold its write lock
for a moment: every store call runs in a worker thread, one at a time, so a wait for that lock
never stalls another request, and a write that still finds the store busy after
``BUSY_TIMEOUT_S`` is a 503 with ``Retry-After`` (JSON, with the page's headers), never a 500.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import orjson
from aiohttp import web
from jinja2 import TemplateNotFound
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judgeprobe import first_error
from judgeprobe.render.templating import ENVIRONMENT, page, static
from judgeprobe.review.pairs import Sample, load_sample
from judgeprobe.review.texts import RunTexts, decision_json, load_texts, shown
from judgeprobe.runs.review import Decision, ReviewStore, StoreBusy, now
from judgeprobe.runs.rundir import RunDir

TEMPLATE = "review.html.j2"
SCRIPT = "review.js"  # the page's script, a file of its own: no inline script runs
MAX_BODY = 256 * 1024  # an edited summary is a few kB; nothing legitimate comes near this
MAX_TEXT = 100_000  # characters of an edited text
MAX_NOTE = 2_000
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
BUSY_TIMEOUT_S = 1.0  # a write waits this long for another process's lock, then 503
RETRY_AFTER_S = 1
PLACEHOLDER = (
    "<!doctype html><html lang=en><meta charset=utf-8><title>judgeprobe review: {{ run_id }}"
    "</title><h1>judgeprobe review</h1><p>Run {{ run_id }}, reviewer {{ reviewer }}. The page "
    "is not installed; the API is at <code>/api/texts</code> and <code>/api/pairs</code>.</p>"
)
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' "
        "'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
        "base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class DecisionIn(BaseModel):
    """``POST /api/decision``'s body."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1, max_length=2_000)
    action: Literal["accept", "reject", "edit"]
    text: str | None = Field(None, max_length=MAX_TEXT)
    note: str = Field("", max_length=MAX_NOTE)


class LabelIn(BaseModel):
    """``POST /api/label``'s body."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1, max_length=2_000)
    preferred: Literal["1", "2", "tie"]
    note: str = Field("", max_length=MAX_NOTE)


@dataclass
class Review:
    """What the server holds for one run: its texts, its sample, its review store."""

    texts: RunTexts
    sample: Sample
    store: ReviewStore  # writes
    reader: ReviewStore  # reads: in WAL mode they never wait for a writer's lock
    reviewer: str
    hosts: frozenset[str] = field(default=LOOPBACK)
    locks: tuple[threading.Lock, threading.Lock] = field(
        default_factory=lambda: (threading.Lock(), threading.Lock())
    )

    async def use(self, call: Callable[[ReviewStore], _T], *, write: bool = False) -> _T:
        """``call(store)`` in a worker thread, one call per connection at a time.

        The event loop stays free meanwhile, and a read never queues behind a write that waits
        for another process's lock.
        """
        store, lock = (self.store, self.locks[0]) if write else (self.reader, self.locks[1])

        def locked() -> _T:
            with lock:
                return call(store)

        return await asyncio.to_thread(locked)


_T = TypeVar("_T")
KEY = web.AppKey("review", Review)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status, dumps=_dumps)


def _dumps(data: Any) -> str:
    return orjson.dumps(data).decode()


def _json(data: Any) -> web.Response:
    return web.json_response(data, dumps=_dumps)


def _hostname(host: str) -> str:
    """The name part of a Host header: ``[::1]:8765`` is ``::1``, ``localhost:80`` ``localhost``."""
    if host.startswith("["):
        return host[1:].partition("]")[0]
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def cross_origin(request: web.Request) -> str:
    """Why a write does not come from this server's own page ("" when it does)."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        return f"a {site} request may not write (Sec-Fetch-Site)"
    origin = request.headers.get("Origin")
    if origin is not None and origin != f"{request.scheme}://{request.host}":
        return f"origin {origin} may not write here"
    return ""


@web.middleware
async def guard(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Host and origin checks before any handler; security headers on every answer."""
    review = request.app[KEY]
    if _hostname(request.host).lower() not in review.hosts:
        response: web.StreamResponse = _error(403, f"unknown host {request.host!r}")
    elif request.method not in ("GET", "HEAD") and (why := cross_origin(request)):
        response = _error(403, why)
    else:
        try:
            response = await handler(request)
        except web.HTTPException as exc:  # no such route, wrong method: said as JSON
            response = _error(exc.status, exc.reason)
        except _Bad as bad:  # a request this server refuses, said by the handler
            response = _error(bad.status, bad.message)
        except StoreBusy:  # another process holds the store's write lock: try again shortly
            response = _error(503, "the review store is busy (another process is writing it); "
                              "nothing was saved: try again")  # fmt: skip
            response.headers["Retry-After"] = str(RETRY_AFTER_S)
    response.headers.update(HEADERS)
    return response


async def _body(request: web.Request, model: type[DecisionIn] | type[LabelIn]) -> Any:
    """The request's JSON body as ``model``, or a 400/413 with the first problem."""
    if request.content_type != "application/json":
        raise _Bad(400, "the body must be JSON (Content-Type: application/json)")
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise _Bad(413, f"the body is over {MAX_BODY} bytes") from None
    try:
        return model.model_validate(orjson.loads(raw))
    except orjson.JSONDecodeError:
        raise _Bad(400, "the body is not valid JSON") from None
    except ValidationError as exc:
        raise _Bad(400, first_error(exc)) from None


class _Bad(Exception):
    """A refused request: ``guard`` answers it with its status and message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def index(request: web.Request) -> web.Response:
    """The review page."""
    review = request.app[KEY]
    context = {"run_id": review.texts.run_id, "reviewer": review.reviewer}
    try:
        html = page(TEMPLATE, **context)
    except TemplateNotFound:
        html = ENVIRONMENT.from_string(PLACEHOLDER).render(**context)
    return web.Response(text=html, content_type="text/html", charset="utf-8")


async def script(_: web.Request) -> web.Response:
    """The review page's script (``render/static/review.js``)."""
    return web.Response(text=static(SCRIPT), content_type="text/javascript", charset="utf-8")


async def texts(request: web.Request) -> web.Response:
    """Every generated text with its source, diff, check, verdicts and decision."""
    review = request.app[KEY]
    decisions = await review.use(lambda store: store.decisions())
    verdicts = review.texts.verdicts()
    listed = [shown(t, decisions.get(t.id), verdicts[t.id]) for t in review.texts.texts]
    return _json({
        "run_id": review.texts.run_id, "reviewer": review.reviewer,
        "progress": {"reviewed": sum(t["decision"] is not None for t in listed),
                     "total": len(listed)},
        "texts": listed,
    })  # fmt: skip


async def decide(request: web.Request) -> web.Response:
    """Accept, reject or edit one generated text."""
    review = request.app[KEY]
    body: DecisionIn = await _body(request, DecisionIn)
    text = review.texts.by_id().get(body.id)
    if text is None:
        raise _Bad(404, f"no generated text {body.id!r} in this run")
    if body.action == "edit":
        if body.text is None or not body.text.strip():
            raise _Bad(400, "an edit needs its text (not blank)")
        if body.text == text.text:
            raise _Bad(400, "the edit is the text as generated: accept it instead")
    elif body.text is not None:
        raise _Bad(400, f"text is for an edit, not for {body.action}")
    made = Decision(
        id=text.id,
        condition=text.condition,
        item_id=text.item_id,
        action=body.action,
        text=body.text if body.action == "edit" else None,
        note=body.note,
        who=review.reviewer,
        when=now(),
    )
    decision = await review.use(lambda store: store.decide(made), write=True)
    return _json({"ok": True, "decision": decision_json(decision)})


async def pairs(request: web.Request) -> web.Response:
    """The blind sample, each pair in its drawn order, with this reviewer's label."""
    review = request.app[KEY]
    samples = review.sample.samples

    def read(store: ReviewStore) -> dict[tuple[str, str], Any]:
        return {(x.sample, x.pair_id): x for s in samples for x in store.labels(s)
                if x.who == review.reviewer}  # fmt: skip

    mine = await review.use(read)
    listed = []
    for pair in review.sample.pairs.values():
        label = mine.get((pair.sample, pair.id))
        listed.append({
            "id": pair.id, "context": pair.context, "response_1": pair.response_1,
            "response_2": pair.response_2,
            "label": None if label is None else pair.shown_label(label),
        })  # fmt: skip
    done = sum(p["label"] is not None for p in listed)
    return _json({"progress": {"labelled": done, "total": len(listed)}, "pairs": listed})


async def label(request: web.Request) -> web.Response:
    """Label one pair: 1, 2 or tie as shown, with a note."""
    review = request.app[KEY]
    body: LabelIn = await _body(request, LabelIn)
    pair = review.sample.pairs.get(body.id)
    if pair is None:
        raise _Bad(404, f"no pair {body.id!r} in this run's sample")
    given = pair.label(body.preferred, body.note, review.reviewer)
    stored = await review.use(lambda store: store.label(given), write=True)
    return _json({"ok": True, "label": pair.shown_label(stored)})


def make_app(
    run_dir: Path, reviewer: str, pairs_n: int = 30, seed: int = 0, host: str = "127.0.0.1",
    items: str | None = None,
) -> web.Application:  # fmt: skip
    """The review application over ``run_dir`` (read now: a bad run is one error line).

    ``items``: the run's items file, when it moved since the run.
    """
    run_texts = load_texts(run_dir, items)
    sample = load_sample(run_dir, pairs_n, seed, items)
    path = RunDir(run_dir).review
    store = ReviewStore(path, BUSY_TIMEOUT_S, threads=True)
    reader = ReviewStore(path, BUSY_TIMEOUT_S, threads=True)
    app = web.Application(middlewares=[guard], client_max_size=MAX_BODY)
    app[KEY] = Review(run_texts, sample, store, reader, reviewer, LOOPBACK | {host.lower()})
    app.router.add_get("/", index)
    app.router.add_get(f"/{SCRIPT}", script)
    app.router.add_get("/api/texts", texts)
    app.router.add_post("/api/decision", decide)
    app.router.add_get("/api/pairs", pairs)
    app.router.add_post("/api/label", label)

    async def close(app: web.Application) -> None:
        app[KEY].store.close()
        app[KEY].reader.close()

    app.on_cleanup.append(close)
    return app
