"""Expand a sweep into judge requests: items × judges × protocols × conditions × orders × seeds.

The plan is a deterministic stream, regenerated identically on resume and when the
judgments table is written, so it never has to be held in memory. Requests for one document
come out together, so a server's prompt cache sees the shared prefix back to back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from judgeprobe.conditions import Condition
from judgeprobe.config import SweepConfig
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.request import Request
from judgeprobe.prompts import baseline, load_template
from judgeprobe.records import Item, Order, Target


@dataclass(frozen=True, slots=True)
class Planned:
    """One judgment to be made: where it sits in the sweep, and the request that makes it."""

    judge: str
    protocol: str
    condition: str
    item_id: str
    subset: str
    order: Order
    seed: int
    target: Target
    label_1: str
    label_2: str
    template_hash: str
    request: Request


def orders_for(mode: str, item_id: str, seed: int) -> tuple[Order, ...]:
    """Presentation orders. ``random`` draws one per (item, seed), the same in every
    condition, so conditions differ only by their cue, never by position."""
    if mode == "both":
        return ("12", "21")
    if mode in ("12", "21"):
        return (mode,)  # type: ignore[return-value]
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return ("12",) if digest[0] % 2 == 0 else ("21",)


def count(cfg: SweepConfig, n_items: int) -> int:
    orders = 2 if cfg.order == "both" else 1
    return (
        n_items
        * len(cfg.judges)
        * len(cfg.protocols)
        * len(cfg.conditions)
        * orders
        * len(cfg.seeds)
    )


def plan(
    cfg: SweepConfig,
    items: Sequence[Item],
    conditions: dict[str, Condition],
    endpoints: dict[str, Endpoint],
) -> Iterator[Planned]:
    """Yield every planned judgment, grouped by document."""
    template = load_template(baseline.TEMPLATE_NAME)
    schema = baseline.reply_schema()
    for item in items:
        for seed in cfg.seeds:
            for order in orders_for(cfg.order, item.item_id, seed):
                for judge in cfg.judges:
                    endpoint = endpoints[judge.name]
                    for protocol in cfg.protocols:
                        for name in cfg.conditions:
                            cue = conditions[name].resolve(item)
                            if order == "12":
                                shown = (item.candidate_1, item.candidate_2)
                                labels = (cue.label_1, cue.label_2)
                            else:
                                shown = (item.candidate_2, item.candidate_1)
                                labels = (cue.label_2, cue.label_1)
                            prompt = baseline.render(item.document, *shown, *labels)
                            request = Request(
                                endpoint=judge.name,
                                messages=({"role": "user", "content": prompt},),
                                schema_name="pairwise_verdict",
                                schema=schema,
                                reply_model=baseline.PairwiseReply,
                                sampling=cfg.sampling,
                                seed=seed,
                                fingerprint=endpoint.info.fingerprint,
                            )
                            yield Planned(
                                judge=judge.name,
                                protocol=protocol,
                                condition=name,
                                item_id=item.item_id,
                                subset=item.subset,
                                order=order,
                                seed=seed,
                                target=cue.target,
                                label_1=cue.label_1,
                                label_2=cue.label_2,
                                template_hash=template.sha256,
                                request=request,
                            )
