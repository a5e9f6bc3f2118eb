"""The items a sweep judges: its config's subsets and limit, each small enough to send."""

from __future__ import annotations

from collections.abc import Mapping

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import Condition, item_with_edit
from judgeprobe.core.corpus import load_items
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.runs.review import ITEM_TEXT, Decision, edits
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


def reviewed(
    items: list[Item], conditions: dict[str, Condition], decisions: Mapping[str, Decision]
) -> tuple[list[Item], dict[str, Condition]]:
    """The items and conditions with the review's edits in place of the texts they generate.

    An edited text is then in its judgments' presentation, so in their keys: a resume judges it
    anew, and the text as generated keeps its stored judgments (a later accept brings them back).
    """
    edited = edits(decisions)
    by_condition: dict[str, dict[str, str]] = {}
    for (condition, item_id), text in edited.items():
        if condition != ITEM_TEXT:
            by_condition.setdefault(condition, {})[item_id] = text
    items = [
        item_with_edit(i, edited[(ITEM_TEXT, i.item_id)]) if (ITEM_TEXT, i.item_id) in edited
        else i
        for i in items
    ]  # fmt: skip
    return items, {
        name: c.with_edits(by_condition[name]) if name in by_condition else c
        for name, c in conditions.items()
    }
