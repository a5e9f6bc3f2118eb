"""Cues under protocol ``own``: refused before anything is sent when the prompt cannot show them.

And items a judge's own placeholders cannot fill: a field an item lacks, a conversation turn it
does not have.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import Condition, PressureCondition, RevealCondition
from judgeprobe.core.records import Item
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.prompts.judge import JudgePrompt, missing

LABEL_SLOTS = ("label_1", "label_2")


def _slot_name(prompt: JudgePrompt, slot: str) -> str:
    """How an error names a slot the prompt lacks: its placeholder in judgeprobe's own form."""
    own_names = prompt.parts[0].template.style == "upper"
    return f"{{{slot.upper()}}}" if own_names else f"a placeholder filled from {slot}"


def check_items(judges: Sequence[JudgeConfig], items: Sequence[Item]) -> None:
    """Refuse, in one line before anything is sent, an item a judge's placeholders cannot fill."""
    for judge in judges:
        prompt = judge.judge_prompt
        if prompt is None or not prompt.addressed:
            continue
        for item in items:
            lacking = missing(prompt, item)
            if lacking is None:
                continue
            names = [k for k, v in prompt.mapping if v == lacking or f"{v}_" in lacking]
            what = (
                "a conversation turn it does not have (a conversation item: conversation_a and "
                "conversation_b)"
                if lacking.startswith("turn_")
                else "a field it does not have"
            )
            raise JudgeprobeError(
                f"item {item.item_id} ({item.subset}): judge {judge.name}'s placeholder "
                f"{{{names[0] if names else lacking}}} is filled from {lacking!r}, {what}"
            )


def check_conditions(
    judges: Sequence[JudgeConfig], conditions: Mapping[str, Condition], items: Sequence[Item]
) -> None:
    """Refuse, in one line before anything is sent, a cue an own prompt would never show.

    Labels reach the screen through both label slots or, with neither, above each response; a
    prompt with just one would hide the other. A changed document needs the context slot. A
    prompt that shows conversation turns shows the item's own turns, so a cue that changes a
    response or the document would never reach it. Reveal-After and the pressure conditions
    have no second turn in a judge's own prompt. Items the placeholders cannot fill are refused
    too (``check_items``).
    """
    check_items(judges, items)
    for judge in judges:
        prompt = judge.judge_prompt
        if prompt is None:
            continue  # not judged under protocol own
        found = prompt.targets
        hidden = [s for s in LABEL_SLOTS if s not in found] if found & set(LABEL_SLOTS) else []
        shown_by = judge.prompt or judge.messages
        for name, condition in conditions.items():
            where = f"condition {name} under judge {judge.name}'s own prompt ({shown_by})"
            if isinstance(condition, RevealCondition):
                raise JudgeprobeError(f"{where}: Reveal-After has no second turn under own")
            if isinstance(condition, PressureCondition):
                raise JudgeprobeError(f"{where}: a pressure condition has no second turn under own")
            for item in items:
                cue = condition.resolve(item)
                if cue.skip:
                    continue
                if hidden and (cue.label_1 or cue.label_2):
                    raise JudgeprobeError(
                        f"{where}: its labels would never reach the screen: the prompt has no "
                        f"{_slot_name(prompt, hidden[0])} (give both label slots, or neither)"
                    )
                if "context" not in found and cue.document != item.document:
                    raise JudgeprobeError(
                        f"{where}: it changes the document, which the prompt never shows "
                        f"(no {_slot_name(prompt, 'context')})"
                    )
                changed = (cue.text_1, cue.text_2, cue.document) != (
                    item.candidate_1,
                    item.candidate_2,
                    item.document,
                )
                if prompt.turns and changed:
                    raise JudgeprobeError(
                        f"{where}: it changes a text, and the prompt shows the conversation's "
                        "own turns (turn_K.…): use label cues with a conversation prompt"
                    )
