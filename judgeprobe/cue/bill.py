"""The bill before the first request (``judgeprobe run --plan``): requests, tokens, time and cost.

The sweep's plan is walked as the run would send it (``cue_jobs``), and every judgment is
priced per judge × protocol × condition (and per document, for a design that stops early):

* requests: each judgment's stages, and its second turn's (Reveal-After, pressure), before
  any cache, re-ask, retry or escalation;
* prompt tokens: every request the judgment sends, found by running it as the run does
  against a stand-in judge that answers each request with its schema's shortest reply
  (``_Dry``: nothing is sent), and counted with the judge's own chat template and tokenizer
  where its server has one (``engine.context.count_tokens``: vLLM ``/tokenize``, TGI
  ``/chat_tokenize``, llama-server ``/apply-template`` + ``/tokenize``). A later request (PBP's
  score and rank, a second turn) carries earlier replies where the stand-in's stood: they are
  added at their budgets, an estimate from above. Past ``COUNT_LIMIT`` distinct prompts a
  seeded sample is counted and the rest scaled from the word estimate by the ratio measured
  on it; a server that cannot count leaves the estimate, and the bill says which;
* completion budget: the ``max_tokens`` of every request (``protocols.budget``), the most the
  judge can be made to write;
* wall time: at the speed the judge's timed probe measured (``engine.speed``), from the
  prompts alone (no reply written) to every reply at its budget. It is what the server did
  then: a server that caches a document's prefix across its judgments, or is less loaded
  during the run, is faster;
* cost: ``price`` on the judge (USD per million tokens) over those prompt tokens and the
  completion budget, so a bill errs on the high side.

A sequential design (documents in rounds, rows that stop when settled) is priced from the
same walk: ``Bill.rounds`` splits it by round, ``expected_spend`` takes the per-round costs
and a stopping profile, and ``Bill.price_sequential`` (the hook for ``design =
"sequential"``) puts its worst case and expected spend on the bill.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from judgeprobe.conditions import Condition
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.job import Job, run_job
from judgeprobe.cue.preflight import first_request
from judgeprobe.cue.stream import count, cue_jobs
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.context import COUNT_CONCURRENCY, TEMPLATE_SLACK, count_tokens
from judgeprobe.engine.request import Message, Request
from judgeprobe.engine.settings import JudgeConfig, Price
from judgeprobe.engine.speed import Speed, timed_probe
from judgeprobe.engine.store import Result, Store
from judgeprobe.protocols import JudgeProtocol
from judgeprobe.protocols.budget import least
from judgeprobe.protocols.pointwise import OwnScorer
from judgeprobe.protocols.reveal import reveal_stages
from judgeprobe.text.tokens import APPROXIMATION, approx_tokens

COUNT_LIMIT = 2000  # distinct prompts per judge counted by its server, at most
FRESH_STORE = 1000  # judgments walked dry per in-memory store
#: Tokens a later request's own instructions may add (the longest stage template of
#: prompts/templates is about 200 by the estimate; tests/test_plan.py checks every one).
LATER_INSTRUCTIONS = 256

Cell = tuple[str, str, str]  # judge, protocol, condition
K = TypeVar("K", bound=Hashable)


@dataclass(slots=True)
class Tally:
    """What a set of judgments costs: counts, tokens and USD (floats: an expectation may be)."""

    judgments: float = 0
    requests: float = 0
    prompt_tokens: float = 0
    prompt_carried: float = 0  # of prompt_tokens: earlier replies carried, at their budgets
    completion_budget: float = 0
    cost_usd: float = 0.0

    def add(self, other: Tally, weight: float = 1.0) -> None:
        """Add ``weight`` × ``other`` to this tally."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + weight * getattr(other, f.name))

    def record(self) -> dict[str, float]:
        """The tally as plan.json writes it (whole numbers where they are whole)."""
        out: dict[str, float] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = round(value, 6) if f.name == "cost_usd" else round(value, 1)
            if out[f.name] == int(out[f.name]) and f.name != "cost_usd":
                out[f.name] = int(out[f.name])
        return out


@dataclass(frozen=True, slots=True)
class _Priced:
    """One judgment as the walk sees it, before its prompts are counted."""

    judge: str
    protocol: str
    condition: str
    document: str
    asked: tuple[tuple[bytes, int], ...]  # each request: its messages' hash, word estimate
    carried: int  # tokens its requests carry from earlier replies, at most (their budgets)
    completion_budget: int
    walked: bool  # False: bounded from its first request (it could not be walked dry)

    @property
    def requests(self) -> int:
        """Requests the judgment sends (before any cache, re-ask, retry or escalation)."""
        return len(self.asked)


@dataclass
class JudgeBill:
    """One judge's part of the bill: how its tokens were counted, its speed, its total."""

    judge: JudgeConfig
    backend: str
    model: str
    tokens: str  # how its prompt tokens were counted
    speed: Speed | None
    total: Tally = field(default_factory=Tally)

    @property
    def lanes(self) -> int:
        """Requests in flight at once: concurrency × replicas."""
        return self.judge.concurrency * len(self.judge.replicas)

    @property
    def wall_s(self) -> float | None:
        """Seconds for its requests, every reply at its budget; None when untimed."""
        return self._wall(round(self.total.completion_budget))

    @property
    def wall_floor_s(self) -> float | None:
        """Seconds for its requests' prompts alone, no reply written; None when untimed."""
        return self._wall(0)

    def _wall(self, completion_tokens: int) -> float | None:
        if self.speed is None or not self.speed.timed:
            return None
        requests = round(self.total.requests)
        return self.speed.wall_s(requests, completion_tokens, self.lanes, self.judge.rate_limit)


@dataclass
class Bill:
    """The bill of a sweep: per judge, per cell, per document and in all."""

    config: str
    digest: str
    items: int
    documents: list[str]  # in the items' order
    judges: list[JudgeBill]
    cells: dict[Cell, Tally]
    by_document: dict[tuple[str, Cell], Tally]  # (document, cell)
    notes: list[str]
    sequential: dict[str, Any] | None = None  # set by ``price_sequential``

    @property
    def total(self) -> Tally:
        """Every judge's requests, tokens and cost together."""
        out = Tally()
        for judge in self.judges:
            out.add(judge.total)
        return out

    @property
    def unpriced(self) -> list[str]:
        """The judges without a price (their cost is left out of every total)."""
        return [j.judge.name for j in self.judges if j.judge.price is None]

    @property
    def wall_s(self) -> float | None:
        """The sweep's seconds, replies at their budgets: the slowest judge's (side by side)."""
        return _slowest([j.wall_s for j in self.judges])

    @property
    def wall_floor_s(self) -> float | None:
        """The sweep's seconds for the prompts alone: the slowest judge's."""
        return _slowest([j.wall_floor_s for j in self.judges])

    def rounds(self, documents: Sequence[Sequence[str]]) -> list[dict[Cell, Tally]]:
        """Per round (its documents), what each cell costs when every row is open.

        For a sequential design: ``expected_spend`` takes these with a stopping profile.
        """
        of: dict[str, list[tuple[Cell, Tally]]] = defaultdict(list)
        for (doc, cell), tally in self.by_document.items():
            of[doc].append((cell, tally))
        out: list[dict[Cell, Tally]] = []
        for docs in documents:
            found: dict[Cell, Tally] = defaultdict(Tally)
            for doc in docs:
                for cell, tally in of.get(doc, []):
                    found[cell].add(tally)
            out.append(dict(found))
        return out

    def price_sequential(
        self, documents: Sequence[Sequence[str]], open_at: Mapping[Cell, Sequence[float]]
    ) -> tuple[Tally, Tally]:
        """Price a sequential design into this bill: its worst case and expected spend.

        The hook ``run --plan`` calls for ``design = "sequential"``: ``documents`` are the
        rounds' documents in the design's seeded order (the last round may be short, the
        maximum is every round), ``open_at`` each cell's chance of still being planned in each
        round (``expected_spend``), from the effects of a pilot round under the design's
        stopping rule. ``record`` and ``print_bill`` then show both beside the fixed design;
        the wall time scales the fixed design's by the requests.
        """
        worst, expected = expected_spend(self.rounds(documents), open_at)
        wall = self.wall_s
        share = expected.requests / worst.requests if worst.requests else 0.0
        self.sequential = {
            "rounds": len(documents),
            "worst": worst.record(),
            "expected": expected.record(),
            "expected_wall_s": None if wall is None else round(wall * share, 1),
        }
        return worst, expected

    def record(self) -> dict[str, Any]:
        """plan.json: the bill in machine-readable form."""
        return {
            "config": self.config,
            "config_digest": self.digest,
            "items": self.items,
            "documents": len(self.documents),
            "judges": [_judge_record(j) for j in self.judges],
            "cells": [
                {"judge": j, "protocol": p, "condition": c, **t.record()}
                for (j, p, c), t in self.cells.items()
            ],
            "total": {**self.total.record(), "priced": not self.unpriced},
            "wall_s": _rounded(self.wall_s),
            "wall_floor_s": _rounded(self.wall_floor_s),
            "sequential": self.sequential,
            "notes": self.notes,
        }


def _slowest(found: list[float | None]) -> float | None:
    """The longest time, or None when any judge is untimed."""
    timed = [w for w in found if w is not None]
    return max(timed) if timed and len(timed) == len(found) else None


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 1)


def _judge_record(j: JudgeBill) -> dict[str, Any]:
    speed = j.speed
    timed = None
    if speed is not None:
        timed = {
            "request_s": round(speed.request_s, 4),
            "token_s": round(speed.token_s, 6),
            "lanes_timed": speed.lanes,
            "prompt_tokens": speed.prompt_tokens,
            "requests_sent": speed.sent,
            "note": speed.note,
        }
    return {
        "name": j.judge.name,
        "model": j.model,
        "backend": j.backend,
        "lanes": j.lanes,
        "price": None if j.judge.price is None else j.judge.price.model_dump(),
        "prompt_tokens_by": j.tokens,
        "speed": timed,
        "wall_s": _rounded(j.wall_s),
        "wall_floor_s": _rounded(j.wall_floor_s),
        **j.total.record(),
    }


def expected_spend(
    rounds: Sequence[Mapping[K, Tally]], open_at: Mapping[K, Sequence[float]]
) -> tuple[Tally, Tally]:
    """The worst case and the expected spend of a sequential design.

    ``rounds[r][key]``: what round r's documents cost in ``key`` (a cell, or whatever unit the
    caller sums by) when every row is open (``Bill.rounds`` for the design's seeded document
    order). ``open_at[key][r]``: the chance that ``key`` is still planned in round r, from the
    effects a pilot round measured (1 in round 0; Blind and the controls stay while any row
    pairing with them is open); a key it does not name stays open, and a profile shorter than
    the rounds keeps its last chance. The worst case judges every round: the fixed design over
    the maximum. Returns (worst, expected).
    """
    worst, expected = Tally(), Tally()
    for r, costs in enumerate(rounds):
        for key, tally in costs.items():
            worst.add(tally)
            chance = open_at.get(key)
            p = 1.0 if not chance else chance[r] if r < len(chance) else chance[-1]
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{key}: open chance {p} in round {r} is not in [0, 1]")
            expected.add(tally, p)
    return worst, expected


def later_budgets(protocol: JudgeProtocol, *, second_turn: bool) -> list[int]:
    """The ``max_tokens`` of a judgment's requests after its first, in the order they go.

    ``protocol`` is the judgment's own (a judge's ``OwnJudge``/``OwnScorer`` under own). The
    bill's fallback where a judgment cannot be walked dry.
    """
    b = protocol.budgets
    if isinstance(protocol, OwnScorer):
        turn1 = [b["score"]] * (protocol.stages - 1)
    elif protocol.name == "pbp":
        turn1 = [b["score"], b["rank"]]
    else:
        turn1 = []
    if not second_turn:
        return turn1
    if protocol.name == "pbp":
        return [*turn1, b["score"], b["rank"]]
    return [*turn1, *[b.get("reveal", b["verdict"])] * reveal_stages(protocol.name)]


@cache
def _stand_in(model: type[BaseModel]) -> tuple[dict[str, Any], str]:
    """``model``'s shortest reply, as stored and as raw text (once per model)."""
    reply = model.model_validate(least(model.model_json_schema(by_alias=True)))
    shown = reply.model_dump(by_alias=True)
    return shown, orjson.dumps(shown).decode()


class _Dry(Endpoint):
    """A judge that answers every request with its schema's shortest reply, and notes each.

    Running a judgment against it (``run_job``, as the run does) gives every request it would
    send, later stages and second turns included, with stand-in replies where the real ones
    go; nothing leaves the process.
    """

    live = False

    def __init__(self, probed: Endpoint) -> None:  # no connections: nothing is sent
        self.judge, self.engine, self.info = probed.judge, probed.engine, probed.info
        self.asked: list[tuple[list[Message], int]] = []
        self.kept = False  # whether a prompt of this judge is kept for counting yet

    async def execute_once(self, req: Request) -> Result:
        """The shortest reply ``req``'s reply model takes (kept retryable: asked every time)."""
        self.asked.append((list(req.messages), req.sampling.max_tokens))
        shown, raw = _stand_in(req.reply_model)
        return Result(key=req.key, status="valid", reply=shown, raw=raw, retryable=True)

    async def close(self) -> None:
        """Nothing to close."""


def _text(messages: Sequence[Message]) -> str:
    return " ".join(m["content"] for m in messages)


async def _walked(job: Job, dry: _Dry, store: Store) -> list[tuple[list[Message], int]] | None:
    """Every request of ``job`` (messages, max_tokens), walked dry; None when it cannot be."""
    dry.asked = []
    try:
        outcome = await run_job(job, dry, store)
    except (ValueError, KeyError, TypeError):  # a reply model the stand-in cannot satisfy
        return None
    return dry.asked if outcome.status == "valid" and dry.asked else None


async def _priced(
    job: Job, dry: _Dry, store: Store, keep: dict[bytes, list[Message]], share: float
) -> _Priced:
    """A judgment's requests and budgets; each request kept for counting if sampled.

    A later request's stand-in replies are short, so what the real ones add is bounded by
    the budgets of the requests before it (``carried``). A judgment that cannot be walked dry
    is bounded from its first request (``later_budgets``, ``LATER_INSTRUCTIONS``).
    """
    asked = await _walked(job, dry, store)
    walked, instructions = asked is not None, 0
    if asked is None:
        first = await first_request(job)
        later = later_budgets(
            job.protocol, second_turn=job.reveal is not None or job.pressure is not None
        )
        asked = [(first.messages, first.max_tokens), *((first.messages, b) for b in later)]
        instructions = LATER_INSTRUCTIONS * len(later)
    hashed: list[tuple[bytes, int]] = []
    for messages, _ in asked:
        digest = hashlib.blake2b(orjson.dumps(messages), digest_size=16).digest()
        drawn = int.from_bytes(digest[:8], "big") < share * 2**64
        if digest not in keep and (drawn or not dry.kept):
            keep[digest] = messages  # the sample, and every judge's first prompt
            dry.kept = True
        hashed.append((digest, approx_tokens(_text(messages))))
    budgets = [b for _, b in asked]
    # Each request may carry every reply before it; a pointwise judge's two scorings carry
    # none (each shows its one response alone).
    alone = isinstance(job.protocol, OwnScorer)
    carried = 0 if alone else sum(sum(budgets[:k]) for k in range(len(budgets))) + instructions
    return _Priced(
        judge=job.judge, protocol=job.protocol.name, condition=job.condition,
        document=job.document_id or job.item_id, asked=tuple(hashed), carried=carried,
        completion_budget=sum(budgets), walked=walked,
    )  # fmt: skip


async def _count(
    endpoint: Endpoint, keep: Mapping[bytes, list[Message]], used: set[bytes]
) -> dict[bytes, int] | None:
    """The judge's own counts of its sampled prompts; None when its server cannot."""
    mine = [h for h in keep if h in used]
    if not mine or await count_tokens(endpoint, keep[mine[0]]) is None:
        return None
    slots = asyncio.Semaphore(COUNT_CONCURRENCY)

    async def one(h: bytes) -> tuple[bytes, int | None]:
        async with slots:
            return h, await count_tokens(endpoint, keep[h])

    found = await asyncio.gather(*(one(h) for h in mine))
    return {h: n for h, n in found if n is not None}


def _first_tokens(
    jobs: Sequence[_Priced], keep: Mapping[bytes, list[Message]], counted: dict[bytes, int] | None,
    backend: str,
) -> tuple[dict[bytes, float], str]:  # fmt: skip
    """Each distinct prompt's tokens, and how they were had."""
    distinct = {h: a for p in jobs for h, a in p.asked}
    if counted is None:
        how = f"estimated ({APPROXIMATION}; {backend} has no tokenizer endpoint the probe reaches)"
        return {h: a + TEMPLATE_SLACK for h, a in distinct.items()}, how
    if len(counted) == len(distinct):
        return dict(counted), "counted by the judge's tokenizer (chat template applied)"
    ratio = sum(counted.values()) / max(1, sum(distinct[h] for h in counted))
    tokens = {h: counted.get(h, a * ratio) for h, a in distinct.items()}
    how = (
        f"{len(counted)} of {len(distinct)} distinct prompts counted by the judge's "
        f"tokenizer; the rest scaled from the estimate by the ratio measured on them ({ratio:.3f})"
    )
    return tokens, how


async def plan_bill(
    cfg: SweepConfig,
    protocols: Mapping[str, JudgeProtocol],
    items: Sequence[Item],
    conditions: dict[str, Condition],
    endpoints: Mapping[str, Endpoint],
    *,
    timed: bool = True,
) -> Bill:
    """The bill of the sweep on its probed ``endpoints`` (token counts and the timed probe)."""
    planned = count(cfg, protocols, items, conditions)
    share = min(1.0, COUNT_LIMIT * len(cfg.judges) / max(1, sum(planned.requests.values())))
    keep: dict[bytes, list[Message]] = {}
    fingerprints = {name: e.info.fingerprint for name, e in endpoints.items()}
    dry = {name: _Dry(e) for name, e in endpoints.items()}
    jobs: list[_Priced] = []
    store = Store(Path(":memory:"))
    try:
        for k, job in enumerate(cue_jobs(cfg, protocols, items, conditions, fingerprints)):
            if k and k % FRESH_STORE == 0:  # the stand-in results of earlier judgments go
                store.close()
                store = Store(Path(":memory:"))
            jobs.append(await _priced(job, dry[job.judge], store, keep, share))
    finally:
        store.close()
    judges: list[JudgeBill] = []
    cells: dict[Cell, Tally] = {}
    by_document: dict[tuple[str, Cell], Tally] = defaultdict(Tally)
    for judge in cfg.judges:
        endpoint = endpoints[judge.name]
        mine = [p for p in jobs if p.judge == judge.name]
        counted = await _count(endpoint, keep, {h for p in mine for h, _ in p.asked})
        tokens, how = _first_tokens(mine, keep, counted, endpoint.info.backend)
        bill = JudgeBill(judge, endpoint.info.backend, endpoint.info.model, how, None)
        for p in mine:
            prompt = sum(tokens[h] for h, _ in p.asked) + p.carried
            one = Tally(1, p.requests, prompt, p.carried, p.completion_budget,
                        _cost(judge.price, prompt, p.completion_budget))  # fmt: skip
            cell = (judge.name, p.protocol, p.condition)
            cells.setdefault(cell, Tally()).add(one)
            by_document[p.document, cell].add(one)
            bill.total.add(one)
        if timed and mine:
            firsts = [tokens[p.asked[0][0]] for p in mine]
            bill.speed = await timed_probe(endpoint, round(sum(firsts) / len(firsts)))
        judges.append(bill)
    documents = list(dict.fromkeys(i.document_id or i.item_id for i in items))
    return Bill(cfg.name, cfg.digest(), len(items), documents, judges, cells,
                dict(by_document), _notes(jobs, judges))  # fmt: skip


def _notes(jobs: Sequence[_Priced], judges: Sequence[JudgeBill]) -> list[str]:
    """What the bill's figures leave out or overstate, for the reader of its totals."""
    notes = [
        "requests before any cache, re-ask, retry or escalation",
        "cost with every reply at its budget (max_tokens): an upper estimate",
        "a later request (PBP score and rank, a second turn) is counted with what it carries "
        "from earlier replies at their budgets: an upper estimate",
    ]
    bounded = sum(not p.walked for p in jobs)
    if bounded:
        notes.append(
            f"{bounded} judgments could not be walked dry: each later request of theirs is "
            f"bounded by its first prompt and {LATER_INSTRUCTIONS} tokens of instructions"
        )
    unpriced = [j.judge.name for j in judges if j.judge.price is None]
    if unpriced:
        notes.append(f"no price for {', '.join(unpriced)}: its cost is left out (set price)")
    return notes


def _cost(price: Price | None, prompt: float, completion: float) -> float:
    return 0.0 if price is None else price.cost(prompt, completion)


def _money(value: float, *, priced: bool) -> str:
    return f"${value:,.2f}" if priced else "–"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "not timed"
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def _span(low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return "not timed"
    return f"{_duration(low)} – {_duration(high)}"


def print_bill(bill: Bill, console: Console) -> None:
    """The bill as tables: per judge × protocol × condition, then per judge and in all."""
    view = Table(title=f"The bill of {bill.config} ({bill.items} items, "
                 f"{len(bill.documents)} documents)", header_style="bold")  # fmt: skip
    for name in ("judge", "protocol", "condition", "judgments", "requests", "prompt tokens",
                 "completion budget", "cost"):  # fmt: skip
        view.add_column(name, justify="left" if name in ("judge", "protocol", "condition")
                        else "right")  # fmt: skip
    priced = {j.judge.name: j.judge.price is not None for j in bill.judges}
    for (judge, protocol, condition), t in bill.cells.items():
        view.add_row(judge, protocol, condition, f"{t.judgments:,.0f}", f"{t.requests:,.0f}",
                     f"{t.prompt_tokens:,.0f}", f"{t.completion_budget:,.0f}",
                     _money(t.cost_usd, priced=priced[judge]))  # fmt: skip
    console.print(view)
    per = Table(title="Per judge", header_style="bold")
    for name in ("judge", "model", "requests", "prompt tokens", "completion budget", "cost",
                 "wall time", "prompt tokens by"):  # fmt: skip
        per.add_column(name)
    for j in bill.judges:
        t = j.total
        per.add_row(j.judge.name, f"{j.model} ({j.backend})", f"{t.requests:,.0f}",
                    f"{t.prompt_tokens:,.0f}", f"{t.completion_budget:,.0f}",
                    _money(t.cost_usd, priced=priced[j.judge.name]),
                    _span(j.wall_floor_s, j.wall_s), j.tokens)  # fmt: skip
    console.print(per)
    t = bill.total
    every = len(bill.unpriced) == len(bill.judges)
    cost = "no price set" if every else _money(t.cost_usd, priced=True)
    cost += " (priced judges only)" if bill.unpriced and not every else ""
    console.print(
        f"[bold]In all:[/] {t.requests:,.0f} requests, {t.prompt_tokens:,.0f} prompt tokens, "
        f"{t.completion_budget:,.0f} completion tokens at most, {cost}, about "
        f"{_span(bill.wall_floor_s, bill.wall_s)} with the judges side by side (from the "
        "prompts alone to every reply at its budget)",
        highlight=False,
    )
    if bill.sequential is not None:
        worst, expected = bill.sequential["worst"], bill.sequential["expected"]
        wall = bill.sequential["expected_wall_s"]
        all_priced = not bill.unpriced
        console.print(
            f"[bold]Sequential ({bill.sequential['rounds']} rounds):[/] at most "
            f"{worst['requests']:,} requests ({_money(worst['cost_usd'], priced=all_priced)}); "
            f"expected {expected['requests']:,.0f} "
            f"({_money(expected['cost_usd'], priced=all_priced)}, about {_duration(wall)})",
            highlight=False,
        )
    for note in bill.notes:
        console.print(f"- {note}", markup=False, highlight=False)
