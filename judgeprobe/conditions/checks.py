"""The preservation check on every attacked or injected text a sweep judges, per item.

A style attack must keep the summary's content (paper, IV-E). The data set builder checks the
attacks it writes; a sweep may instead apply the deterministic rule (an item without a
prepared attack) or judge items from elsewhere. So the sweep runs the same check as the
builder on the text each attack condition actually shows: all-MiniLM-L6-v2 similarity to the
original at least ``THRESHOLD``, no new number, no new name. The result goes to
``RUN_DIR/attack_checks.csv``, one row per (condition, item); nothing is dropped, so a reader
can set failed items aside. Without the embedding model the similarity is left empty and says
so in ``flag``; numbers and names are still checked, and ``preserved`` is empty unless they
already fail. A sentence injected into a candidate (``inject``, the battery's authority and
distraction cues) is checked too: the summary must stay similar to its original; the numbers
and names the cue sentence adds are listed, not counted against it. A format condition's
reformatted candidate (``reformat``, method ``format``) is checked by its own rule,
``text.format.same_words``: the same words in the same order, or ``preserved`` is false and
``flag`` says where they differ (both candidates under a placebo that reformats both).

A sensitivity condition's degraded copy is checked the same way, by ``text.degrade.verify``
(the copy differs from the original in exactly one fact of its kind), and recorded in
``RUN_DIR/degrade_checks.csv``: one row per (condition, item), judged or not, with the fact
that changed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl

from judgeprobe.conditions import (
    AttackCondition,
    Condition,
    DegradeCondition,
    FormatCondition,
    InjectCondition,
)
from judgeprobe.core.records import Item
from judgeprobe.text import embeddings, preserve
from judgeprobe.text.format import same_words

THRESHOLD = 0.75  # as the builder's default similarity_threshold
FAILED_SHOWN = 3  # failed checks named in the sweep's summary line
SCHEMA = {
    "condition": pl.String,
    "item_id": pl.String,
    "attack": pl.String,
    # "prepared" (the item's attack text), "rule", "inject" (a cue) or "format" (a reformat)
    "method": pl.String,
    "similarity": pl.Float64,
    "new_numbers": pl.String,
    "new_names": pl.String,
    "preserved": pl.Boolean,
    "flag": pl.String,
}


def attack_checks(
    items: Sequence[Item], conditions: dict[str, Condition], names: Sequence[str]
) -> pl.DataFrame:
    """One row per (attack condition, item): how the judged text relates to the original."""
    meta: list[tuple[str, str, str, str]] = []
    pairs: list[tuple[str, str]] = []
    formats: list[dict[str, object]] = []
    for name in names:
        condition = conditions[name]
        if isinstance(condition, FormatCondition):
            formats += [_format_row(name, condition, item) for item in items]
            continue
        if isinstance(condition, AttackCondition):
            side = condition.attack_on
        elif isinstance(condition, InjectCondition) and condition.inject.where != "document":
            side = condition.inject.where
        else:
            continue
        i = 0 if side == "A" else 1
        for item in items:
            cue = condition.resolve(item)
            original = (item.candidate_1, item.candidate_2)[i]
            if not isinstance(condition, AttackCondition):
                method, attack = "inject", "inject"
            else:
                prepared = getattr(item, f"{condition.attack}_{i + 1}", None)
                method, attack = ("prepared" if prepared else "rule"), condition.attack
            meta.append((name, item.item_id, attack, method))
            pairs.append((original, (cue.text_1, cue.text_2)[i]))
    if not pairs:
        return pl.DataFrame(formats, schema=SCHEMA)
    if embeddings.available():
        checks = preserve.check(pairs)
    else:
        checks = [preserve.compare(o, r, math.nan) for o, r in pairs]
    rows = []
    for (name, item_id, attack, method), c in zip(meta, checks, strict=True):
        if method == "inject":  # the cue sentence's own numbers and names are the cue's
            rows.append(_injection_row(name, item_id, c))
            continue
        unmeasured = math.isnan(c.similarity)
        flag = c.problems(THRESHOLD) if not unmeasured else "; ".join(
            [p for p in [c.problems(-1.0)] if p] + ["similarity not checked (no embedding model)"]
        )  # fmt: skip
        rows.append({
            "condition": name, "item_id": item_id, "attack": attack, "method": method,
            "similarity": None if unmeasured else c.similarity,
            "new_numbers": ", ".join(c.new_numbers), "new_names": ", ".join(c.new_entities),
            "preserved": None if unmeasured and not (c.new_numbers or c.new_entities)
            else c.ok(THRESHOLD),
            "flag": flag,
        })  # fmt: skip
    return pl.DataFrame(rows + formats, schema=SCHEMA)


def _format_row(name: str, condition: FormatCondition, item: Item) -> dict[str, object]:
    """A format condition's check on one item: every reformatted candidate keeps its words."""
    shown = condition.reformatted(item)
    problems = [
        f"candidate {i + 1}: {problem}" if condition.reformat_on == "both" else problem
        for i, (original, text) in enumerate(zip((item.candidate_1, item.candidate_2), shown,
                                                  strict=True))
        if (problem := same_words(original, text))
    ]  # fmt: skip
    return {
        "condition": name, "item_id": item.item_id, "attack": "",  # a format is no attack
        "method": "format", "similarity": None, "new_numbers": "", "new_names": "",
        "preserved": not problems, "flag": "; ".join(problems),
    }  # fmt: skip


def _injection_row(name: str, item_id: str, c: preserve.Preservation) -> dict[str, object]:
    """An injected sentence adds its own numbers and names on purpose (a citation, a fact).

    What is checked is that the summary is still itself: similarity to the original at least
    ``THRESHOLD``; what the sentence adds is listed in ``flag``.
    """
    unmeasured = math.isnan(c.similarity)
    added = "; ".join(
        f"the cue adds {what}: {', '.join(found)}"
        for what, found in (("numbers", c.new_numbers), ("names", c.new_entities))
        if found
    )
    flag = "similarity not checked (no embedding model)" if unmeasured else (
        f"similarity {c.similarity:.3f} < {THRESHOLD}" if c.similarity < THRESHOLD else ""
    )  # fmt: skip
    return {
        "condition": name, "item_id": item_id, "attack": "inject", "method": "inject",
        "similarity": None if unmeasured else c.similarity,
        "new_numbers": ", ".join(c.new_numbers), "new_names": ", ".join(c.new_entities),
        "preserved": None if unmeasured else c.similarity >= THRESHOLD,
        "flag": "; ".join(x for x in (flag, added) if x),
    }  # fmt: skip


def write_attack_checks(
    path: Path, items: Sequence[Item], conditions: dict[str, Condition], names: Sequence[str]
) -> str:
    """Write the checks (when the sweep has an attack condition); a one-line summary or ""."""
    return _written(path, attack_checks(items, conditions, names), _attack_summary)


def _attack_summary(table: pl.DataFrame) -> str:
    kept, unknown = int(table["preserved"].sum()), table["preserved"].null_count()
    maybe = f" ({unknown} without a similarity)" if unknown else ""
    failed = table.filter(pl.col("preserved").not_())
    named = "; ".join(f"{r['condition']} {r['item_id']}: {r['flag']}"
                      for r in failed.head(FAILED_SHOWN).iter_rows(named=True))  # fmt: skip
    more = f" and {failed.height - FAILED_SHOWN} more" if failed.height > FAILED_SHOWN else ""
    shown = f" (failed: {named}{more})" if named else ""
    return f"attack preservation: {kept} of {table.height} attacked texts pass{maybe}{shown}"


def _written(path: Path, table: pl.DataFrame, summary: Callable[[pl.DataFrame], str]) -> str:
    """Write a checks table unless it is empty: its summary line with the path, or ""."""
    if table.is_empty():
        return ""
    table.write_csv(path)
    return f"{summary(table)} → {path}"


DEGRADE_SCHEMA = {
    "condition": pl.String,
    "item_id": pl.String,
    "kind": pl.String,
    "candidate": pl.Int64,  # the item's candidate that was degraded (1 or 2; empty if none)
    "degraded": pl.String,  # where the copy sits: A (candidate 1's place) or B; empty if unjudged
    "before": pl.String,  # the fact as the original has it
    "after": pl.String,  # what the copy has instead ("" for a dropped sentence)
    "verified": pl.Boolean,  # differs in exactly that one fact (judged only when true)
    "flag": pl.String,  # why not: nothing to degrade, or what the check found
}


def degrade_checks(
    items: Sequence[Item], conditions: dict[str, Condition], names: Sequence[str]
) -> pl.DataFrame:
    """One row per (sensitivity condition, item): the copy judged and its one-fact check."""
    rows = []
    for name in names:
        condition = conditions[name]
        if not isinstance(condition, DegradeCondition):
            continue
        for item in items:
            found, problem = condition.degradation(item)
            cue = condition.resolve(item)
            rows.append({
                "condition": name, "item_id": item.item_id, "kind": condition.degrade,
                "candidate": None if found is None else
                1 if found.original == item.candidate_1 else 2,
                "degraded": None if cue.skip else cue.degraded,
                "before": found.before if found else None, "after": found.after if found else None,
                "verified": found is not None and not problem, "flag": problem,
            })  # fmt: skip
    return pl.DataFrame(rows, schema=DEGRADE_SCHEMA)


def write_degrade_checks(
    path: Path, items: Sequence[Item], conditions: dict[str, Condition], names: Sequence[str]
) -> str:
    """Write the checks (when the sweep has a sensitivity condition); a one-line summary or ""."""
    return _written(path, degrade_checks(items, conditions, names), _degrade_summary)


def _degrade_summary(table: pl.DataFrame) -> str:
    judged = int(table["verified"].sum())
    return (
        f"sensitivity: {judged} of {table.height} (condition, item) pairs have a degraded copy "
        "that differs in exactly one fact and are judged"
    )
