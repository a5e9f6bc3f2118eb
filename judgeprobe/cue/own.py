"""Cues under protocol ``own``: refused before anything is sent when the prompt cannot show them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import Condition, PressureCondition, RevealCondition
from judgeprobe.core.records import Item
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.protocols.own import LABELS


def check_conditions(
    judges: Sequence[JudgeConfig], conditions: Mapping[str, Condition], items: Sequence[Item]
) -> None:
    """Refuse, in one line before anything is sent, a cue an own prompt would never show.

    Labels reach the screen through both label placeholders or, with neither, above each
    response; a prompt with just one would hide the other. A changed document needs
    ``{CONTEXT}``. Reveal-After and the pressure conditions have no second turn in a judge's own
    prompt.
    """
    for judge in judges:
        if judge.own_prompt is None:
            continue  # not judged under protocol own
        found = judge.own_prompt.placeholders
        hidden = [p for p in LABELS if p not in found] if found & set(LABELS) else []
        for name, condition in conditions.items():
            where = f"condition {name} under judge {judge.name}'s own prompt ({judge.prompt})"
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
                        f"{{{hidden[0]}}} (give both label placeholders, or neither)"
                    )
                if "CONTEXT" not in found and cue.document != item.document:
                    raise JudgeprobeError(
                        f"{where}: it changes the document, which the prompt never shows "
                        "(no {CONTEXT})"
                    )
