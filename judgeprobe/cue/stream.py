"""Expand a sweep into judgments: items × seeds × orders × judges × protocols × conditions.

Blind is judged again under each further wording of the prompt (``wordings_for``: condition
``BlindWording{k}``), in Blind's orders, right after its Blind twin.

The stream is deterministic, regenerated identically on resume and when the
judgments table is written, so it never has to be held in memory. Jobs for one document
come out together, so a server's prompt cache sees the shared prefix back to back (the
scheduler keeps them together: ``document_of`` is its grouping key).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from itertools import product

import orjson

from judgeprobe.conditions import (
    BLIND,
    NAMED_BLIND,
    REPEAT,
    Condition,
    DegradeCondition,
    ResolvedCue,
    wording_condition,
)
from judgeprobe.core.files import content_hash
from judgeprobe.core.records import Item, Order
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.job import Job
from judgeprobe.prompts.judge import addressed_texts
from judgeprobe.prompts.task import Task
from judgeprobe.protocols import PBP, Baseline, JudgeProtocol, SCoT, templates_hash
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.names import NUMBERS, Names, screen_names
from judgeprobe.protocols.own import Own, OwnJudge
from judgeprobe.protocols.pointwise import OwnScorer
from judgeprobe.protocols.pressure import pressure_templates
from judgeprobe.protocols.registry import ProtocolSetup, build_protocol
from judgeprobe.protocols.reveal import reveal_stages, reveal_templates
from judgeprobe.protocols.wording import worded
from judgeprobe.runs.review import ITEM_TEXT, Decision, rejected


def protocols_for(cfg: SweepConfig) -> dict[str, JudgeProtocol]:
    """The configured protocol objects, by name, each with its stages' token budgets."""
    setup = ProtocolSetup(cfg.protocol, cfg.task, cfg.judges)
    return {name: build_protocol(name, setup) for name in cfg.protocols}


Worded = dict[tuple[str, str], list[tuple[JudgeProtocol, str]]]
"""Per (judge, protocol name): each further wording's protocol and template hash, wording 1 on."""


def wordings_for(cfg: SweepConfig, protocols: Mapping[str, JudgeProtocol]) -> Worded:
    """The protocols Blind is judged under besides its own, per judge and protocol.

    A built-in protocol under its first ``cfg.wordings`` − 1 paraphrases (``protocols.wording``),
    protocol own under each paraphrase its judge lists (``[[judges]] wordings``).
    """
    out: Worded = {}
    for judge in cfg.judges:
        for name, protocol in protocols.items():
            if isinstance(protocol, Own):
                mine = [
                    protocol.for_judge(judge.name, k) for k in range(1, len(judge.wordings) + 1)
                ]
                out[judge.name, name] = [(p, p.prompt_sha256) for p in mine]
            elif isinstance(protocol, Baseline | SCoT | PBP):
                builtin = [worded(protocol, k) for k in range(1, cfg.wordings)]
                hashed: list[tuple[JudgeProtocol, str]] = [
                    (p, templates_hash(p.templates, cfg.task)) for p in builtin
                ]
                out[judge.name, name] = hashed
            else:
                out[judge.name, name] = []  # a protocol that ships no further wording
    return out


def orders_for(mode: str, item_id: str, seed: int) -> tuple[Order, ...]:
    """Presentation orders of an item under one seed.

    ``random`` draws one per (item, seed), the same in every condition, so conditions differ only by
    their cue, never by position.
    """
    if mode == "both":
        return ("12", "21")
    if mode in ("12", "21"):
        return (mode,)  # type: ignore[return-value]
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return ("12",) if digest[0] % 2 == 0 else ("21",)


@dataclass(frozen=True, slots=True)
class Counts:
    """What a sweep will cost before it starts: judgments and requests per protocol."""

    judgments: int
    requests: dict[str, int]  # per protocol


def _drawn(what: str, item_id: str, seed: int, share: float) -> bool:
    """A seeded draw of ``share`` of the (item, seed)s, independent for each ``what``."""
    if share <= 0:
        return False
    digest = hashlib.sha256(f"{what}:{seed}:{item_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") < share * 2**64


def repeated(item_id: str, seed: int, share: float) -> bool:
    """Whether this (item, seed)'s Blind judgments are re-sent: a seeded share of them."""
    return _drawn("repeat", item_id, seed, share)


def blind_orders(cfg: SweepConfig, item_id: str, seed: int) -> tuple[Order, ...]:
    """The orders Blind judges an item in: its orders, and the other one for a ``swap`` share.

    The other conditions keep the item's own orders (``orders_for``), so every probe still has
    its Blind twin in the same order; the extra order gives the item a position pair.
    """
    orders = orders_for(cfg.order, item_id, seed)
    if len(orders) == 1 and _drawn("swap", item_id, seed, cfg.swaps):
        return orders_for("both", item_id, seed)
    return orders


def pointwise(protocol: JudgeProtocol, judge: str) -> bool:
    """Whether ``judge`` is judged under ``protocol`` one response at a time (``OwnScorer``).

    Each response is scored alone, so the order a pair is shown in never reaches the judge: a
    pointwise judge is planned in candidate order ("12") only, with no swap share, and its
    position is not measured (no item judged in both orders; docs/configs.md).
    """
    return isinstance(protocol, Own) and isinstance(protocol.for_judge(judge), OwnScorer)


def count(
    cfg: SweepConfig,
    protocols: Mapping[str, JudgeProtocol],
    items: Sequence[Item],
    conditions: dict[str, Condition],
) -> Counts:
    """How many judgments and requests the sweep plans (before any cache is used).

    ``protocols`` are ``protocols_for(cfg)``, built once by the caller.
    """
    # Per judge, pairwise: item orders, their judgments, Blind's extra orders and Blind
    # repeats; a pointwise judge: one order per item and seed (``pointwise``).
    shown = judged = blind = again = 0
    judged_1 = again_1 = 0
    has_blind = BLIND in cfg.conditions
    degrading = [c for c in cfg.conditions if isinstance(conditions[c], DegradeCondition)]
    for item in items:
        # A sensitivity condition leaves out an item with nothing to degrade or a failed check.
        cells = len(cfg.conditions) - sum(bool(conditions[c].resolve(item).skip) for c in degrading)
        for seed in cfg.seeds:
            orders = len(orders_for(cfg.order, item.item_id, seed))
            both = len(blind_orders(cfg, item.item_id, seed))
            shown, judged, blind = shown + orders, judged + orders * cells, blind + both - orders
            judged_1 += cells
            if has_blind and repeated(item.item_id, seed, cfg.repeat):
                again, again_1 = again + both, again_1 + 1
            again += 2 * (len(cfg.schemes) - 1)  # Blind in both orders under each further scheme
    # a second turn (Reveal-After, pressure) of as many stages
    n_reveal = sum(conditions[c].second_turn for c in cfg.conditions)
    requests = dict.fromkeys(protocols, 0)
    judgments = 0
    wordings = wordings_for(cfg, protocols)
    for judge in cfg.judges:
        for name, p in protocols.items():
            # each further wording judges every Blind showing again (one request set each)
            others = len(wordings.get((judge.name, name), ())) * has_blind
            if isinstance(p, Own) and isinstance(scorer := p.for_judge(judge.name), OwnScorer):
                made = judged_1 + again_1 + others * len(items) * len(cfg.seeds)
                requests[name] += made * scorer.stages
            else:
                made = judged + blind + again + others * (shown + blind)
                requests[name] += made * p.stages + shown * n_reveal * reveal_stages(name)
            judgments += made
    return Counts(judgments, requests)


def rejected_count(
    cfg: SweepConfig,
    protocols: Mapping[str, JudgeProtocol],
    items: Sequence[Item],
    conditions: dict[str, Condition],
    review: Mapping[str, Decision],
) -> str:
    """How many planned judgments show a text the review rejected, and why ("" for none).

    They are judged as planned (a later accept brings them back) and left out of the metrics.
    """
    found = [d for d in rejected(review) if d.condition in ("", *cfg.conditions)]
    by_id = {item.item_id: item for item in items}
    n = 0
    for d in found:
        item = by_id.get(d.item_id)
        if item is None:
            continue
        one = (
            cfg
            if d.condition == ITEM_TEXT
            else cfg.model_copy(update={"conditions": [d.condition]})
        )
        n += count(one, protocols, [item], conditions).judgments
    if not found:
        return ""
    why = Counter(d.note.strip() or "no reason given" for d in found).most_common(3)
    reasons = "; ".join(f"{k}× {note}" for note, k in why)
    return (
        f"{n} of them show a text the review rejected ({len(found)} "
        f"text{'' if len(found) == 1 else 's'}): judged, and left "
        f"out of the metrics, card and report (most often: {reasons})"
    )


def _job_key(protocol: JudgeProtocol, presentation: Presentation, order: Order, reveal: object,
             template_hash: str, cfg: SweepConfig, seed: int, fingerprint: str) -> str:  # fmt: skip
    """A judgment's key: what is on the screen, and which candidate sits where.

    The stored outcome holds the verdict in candidate terms, so two judgments that show the same
    screen with the candidates the other way round (an identical pair in both orders, a Blind
    text pair that another item shows reversed) must not share one: the order is in the key.
    Their requests still share keys (``CachedAsker``), so such a screen is asked once.
    """
    # The presentation in its fields' order (orjson keeps a dataclass's), without ``names``
    # under numbers: the keys from before label schemes existed.
    fields = [f.name for f in dataclasses.fields(presentation)]
    if presentation.names == NUMBERS:
        fields.remove("names")
    if not presentation.addressed:  # keys from before own prompts named item fields
        fields.remove("addressed")
    shown = orjson.Fragment(orjson.dumps({k: getattr(presentation, k) for k in fields}))
    body = {
        "protocol": repr(protocol),
        "order": order,
        "templates": template_hash,
        "presentation": shown,
        "reveal": reveal,
        "sampling": cfg.sampling.model_dump(),
        "seed": seed,
        "fingerprint": fingerprint,
    }
    return content_hash(body)


def _job(
    item: Item,
    seed: int,
    order: Order,
    judge: str,
    fingerprint: str,
    protocol: JudgeProtocol,
    condition: str,
    cue: ResolvedCue,
    template_hash: str,
    cfg: SweepConfig,
    names: Names = NUMBERS,
) -> Job:
    """One judgment: the cue applied, the texts put in screen order, named as ``names``."""
    swap = order == "21"
    texts = (cue.text_2, cue.text_1) if swap else (cue.text_1, cue.text_2)
    labels = (cue.label_2, cue.label_1) if swap else (cue.label_1, cue.label_2)
    reveal = (cue.reveal[1], cue.reveal[0]) if swap and cue.reveal else cue.reveal
    addressed = (
        addressed_texts(protocol.prompt.on_screen, item, swap=swap)
        if isinstance(protocol, OwnJudge | OwnScorer)
        else ()
    )
    presentation = Presentation(cue.document, *texts, *labels, names=names, addressed=addressed)
    second = {"pressure": cue.pressure} if cue.pressure else reveal  # what turn 2 adds
    key = _job_key(protocol, presentation, order, second, template_hash, cfg, seed, fingerprint)
    return Job(
        key=key,
        judge=judge,
        protocol=protocol,
        condition=condition,
        item_id=item.item_id,
        subset=item.subset,
        document_id=item.document_id,
        domain=item.domain,
        generators=(item.generator_1, item.generator_2),
        order=order,
        seed=seed,
        target=cue.target,
        turn1_target="none" if cue.pressure else cue.turn1_target,  # pressure: turn 1 is Blind
        label_1=cue.label_1,
        label_2=cue.label_2,
        source_1=item.source_1,
        source_2=item.source_2,
        attack=cue.attack,
        attack_on=cue.attack_on,
        reformat=cue.reformat,
        reformat_on=cue.reformat_on,
        degraded=cue.degraded,
        presentation=presentation,
        reveal=reveal,
        template_hash=template_hash,
        pressure=cue.pressure or None,
        sampling=cfg.sampling,
        # A degraded pair shows a copy in place of a response: the item's gold is not its.
        gold=item.gold if cue.degraded == "none" else None,
    )


def cue_jobs(
    cfg: SweepConfig,
    protocols: Mapping[str, JudgeProtocol],
    items: Sequence[Item],
    conditions: dict[str, Condition],
    fingerprints: dict[str, str],
) -> Iterator[Job]:
    """Yield every planned judgment, grouped by document; ``fingerprints`` by judge name.

    ``protocols`` are ``protocols_for(cfg)``, built once by the caller (not once per pass). Under
    a further label scheme (``names`` as a list) Blind comes again in both orders
    (``NAMED_BLIND``), after the item's other judgments of the seed.
    """
    wordings = wordings_for(cfg, protocols)
    for item in items:
        resolved = {name: conditions[name].resolve(item) for name in cfg.conditions}
        cues = {name: cue for name, cue in resolved.items() if not cue.skip}
        schemes = [(s, screen_names(s, item.item_id)) for s in cfg.schemes]
        names = schemes[0][1]
        for seed in cfg.seeds:
            again = repeated(item.item_id, seed, cfg.repeat)
            shown = orders_for(cfg.order, item.item_id, seed)
            orders = blind_orders(cfg, item.item_id, seed)
            for order in (*orders, *(("12",) if "12" not in orders else ())):
                cells = product(cfg.judges, protocols.items(), cues.items())
                for judge, (pname, protocol), (cname, cue) in cells:
                    if pointwise(protocol, judge.name):
                        if order != "12":
                            continue  # scored one response at a time: candidate order only
                    elif order not in orders or (order not in shown and cname != BLIND):
                        continue  # the swap share: Blind alone in the other order
                    fingerprint = fingerprints[judge.name]
                    template_hash = _templates(pname, protocol, cue, cfg.task, names)
                    if isinstance(protocol, Own):  # each judge under its own prompt
                        protocol = protocol.for_judge(judge.name)
                        template_hash = protocol.prompt_sha256
                    job = _job(item, seed, order, judge.name, fingerprint, protocol, cname, cue,
                               template_hash, cfg, names)  # fmt: skip
                    yield job
                    if cname == BLIND:
                        yield from _blind_twins(job, wordings[judge.name, pname], item, cue,
                                                fingerprint, cfg, names, again=again)  # fmt: skip
            if BLIND not in cues:
                continue
            for (scheme, other), order, judge, (pname, protocol) in product(
                schemes[1:], BOTH, cfg.judges, protocols.items()
            ):
                template_hash = _templates(pname, protocol, cues[BLIND], cfg.task, other)
                yield _job(item, seed, order, judge.name, fingerprints[judge.name], protocol,
                           NAMED_BLIND[scheme], cues[BLIND], template_hash, cfg,
                           other)  # fmt: skip


BOTH: tuple[Order, Order] = ("12", "21")


@cache
def _templates_of(templates: tuple[str, ...], task: Task, names: Names) -> str:
    return templates_hash(templates, task, names)


def _templates(pname: str, protocol: JudgeProtocol, cue: ResolvedCue, task: Task,
               names: Names) -> str:  # fmt: skip
    """The hash of the templates a judgment is asked with, in the task's words and names."""
    extra: tuple[str, ...] = ()
    if cue.pressure:  # its second turn's templates
        extra = pressure_templates(pname, cue.pressure)
    elif cue.reveal is not None:
        extra = reveal_templates(pname)
    return _templates_of(protocol.templates + extra, task, names)


def _blind_twins(
    job: Job,
    others: list[tuple[JudgeProtocol, str]],
    item: Item,
    cue: ResolvedCue,
    fingerprint: str,
    cfg: SweepConfig,
    names: Names = NUMBERS,
    *,
    again: bool,
) -> Iterator[Job]:
    """What a Blind judgment brings along: its re-send, then its showing under each wording.

    The re-send is ``repeat``'s; the wordings are the further ones of ``wordings_for``, shown
    under the sweep's own screen names (``names``).
    """
    if again:
        yield repeat_of(job)
    for k, (other, other_hash) in enumerate(others, 1):
        yield _job(item, job.seed, job.order, job.judge, fingerprint, other, wording_condition(k),
                   cue, other_hash, cfg, names)  # fmt: skip


def repeat_of(job: Job) -> Job:
    """The same Blind judgment again, under its own judgment and request keys."""
    key = hashlib.sha256(f"{job.key}:repeat:1".encode()).hexdigest()
    return replace(job, key=key, condition=REPEAT, repeat=1)


def document_of(job: Job) -> str:
    """The prefix-sharing group of a job: its document (the long part every prompt shares)."""
    return job.presentation.document
