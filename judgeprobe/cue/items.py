"""The items a sweep judges: its config's subsets and limit, each small enough to send."""

from __future__ import annotations

from judgeprobe import JudgeprobeError
from judgeprobe.core.corpus import load_items
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.text.tokens import approx_tokens


def sweep_items(cfg: SweepConfig) -> list[Item]:
    """The config's items: only its ``subsets`` (when given), then the first ``limit``."""
    items = [i for i in load_items(cfg.items) if not cfg.subsets or i.subset in cfg.subsets]
    if not items:
        raise JudgeprobeError(f"items {cfg.items}: no item in subsets {', '.join(cfg.subsets)}")
    items = items[: cfg.limit] if cfg.limit else items
    cap = cfg.engine.max_item_tokens
    sizes = [(item_tokens(item), item) for item in items]
    over = [(n, item) for n, item in sizes if n > cap]
    if over:  # never sent blind, whatever context the server reports (or not)
        n, item = max(over, key=lambda found: found[0])
        raise JudgeprobeError(
            f"items {cfg.items}: {len(over)} item(s) over [engine] max_item_tokens {cap}; "
            f"the longest, {item.item_id!r}, is about {n} tokens (document and candidates); "
            "leave them out (subsets, limit), shorten them, or raise the limit"
        )
    return items


def item_tokens(item: Item) -> int:
    """An item's texts in tokens, estimated (its longest attack text counted too)."""
    texts = [item.document, item.candidate_1, item.candidate_2]
    texts.append(max(item.verbosity_1 or "", item.confidence_1 or "", key=len))
    return sum(approx_tokens(t) for t in texts)
