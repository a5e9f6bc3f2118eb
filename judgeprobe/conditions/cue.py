"""What every condition kind shares: its name and place in a family, the cue it resolves to.

A condition is resolved per item into a ``ResolvedCue`` (the labels, texts and target the
plan shows, in candidate terms); a kind that writes a text (a rewrite, an injected sentence, a
degraded copy) says so by ``generated``, and a reviewer's edit of that text takes its place
(``with_edits``). ``Labelled`` is the base of the kinds that show labels beside the candidates
and name the candidate the cue favours.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, PrivateAttr, field_validator

from judgeprobe import JudgeprobeError
from judgeprobe.core.records import Item, Target
from judgeprobe.core.records import Pressure as PressureKind

Side = Literal["A", "B"]
"""A candidate, in candidate terms."""

Where = Literal["A", "B", "document"]
"""Where a generated text sits: a candidate (candidate terms) or the document."""

_FIELD = re.compile(r"\{(source_1|source_2)\}")


def placeholders_only(value: str) -> str:
    """``value`` when it uses no placeholder but ``{source_1}``/``{source_2}``."""
    leftover = _FIELD.sub("", value)
    if "{" in leftover or "}" in leftover:
        raise ValueError("labels may only use the placeholders {source_1} and {source_2}")
    return value


def filler(item: Item) -> Callable[[str], str]:
    """Fills a label's ``{source_1}``/``{source_2}`` with the item's true provenance."""
    fields = {"source_1": item.source_1, "source_2": item.source_2}
    return lambda text: _FIELD.sub(lambda m: fields[m.group(1)], text)


@dataclass(frozen=True, slots=True)
class ResolvedCue:
    """A condition applied to one item, in candidate terms."""

    label_1: str
    label_2: str
    target: Target
    turn1_target: Target | None
    reveal: tuple[str, str] | None
    text_1: str
    text_2: str
    document: str
    attack: str = ""  # a style attack's name ("" = none)
    attack_on: Side | Literal[""] = ""  # the candidate the style attack rewrote
    reformat: str = ""  # a format condition's form ("" = none)
    reformat_on: Literal["A", "B", "both", ""] = ""  # the candidate(s) shown in that form
    degraded: Target = "none"  # a sensitivity condition: the candidate that is the degraded copy
    change: str = ""  # the one fact the copy changed, e.g. "12 → 24"
    skip: str = ""  # why the item is not judged under this condition ("" = it is)
    pressure: PressureKind | Literal[""] = ""  # a pressure condition's turn 2 ("" = none)


GeneratedKind = Literal["rewrite", "injected", "degraded", "paraphrase"]
"""What wrote a generated text: a style attack, an injected sentence, a one-fact degradation,
or (a text of the items file) a paraphrase."""


@dataclass(frozen=True, slots=True)
class Generated:
    """A text a condition writes for an item, where it sits (candidate terms), and its source."""

    kind: GeneratedKind
    where: Where
    source: str  # what it was written from: the candidate or the document as the item has it
    text: str


def text_at(cue: ResolvedCue, where: Where) -> str:
    """The text a resolved cue shows at ``where``."""
    return {"A": cue.text_1, "B": cue.text_2, "document": cue.document}[where]


def source_at(item: Item, where: Where) -> str:
    """The item's own text at ``where``, before any condition changed it."""
    return {"A": item.candidate_1, "B": item.candidate_2, "document": item.document}[where]


def with_text(cue: ResolvedCue, where: Where, text: str) -> ResolvedCue:
    """The cue with ``text`` shown at ``where``."""
    if where == "document":
        return replace(cue, document=text)
    return replace(cue, text_1=text) if where == "A" else replace(cue, text_2=text)


class ConditionBase(BaseModel):
    """A cue condition, as written in a TOML table: the fields every kind has."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    family: str = ""  # the cue family it belongs to (the battery's, ``battery.toml``)
    placebo: str = ""  # its matched placebo condition, whose effect the card subtracts
    # A reviewer's edits of the text this condition writes, by item id (``with_edits``): not
    # part of the condition as written, so never in its dump, its equality or a config.
    _edits: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def second_turn(self) -> bool:
        """Whether a judgment of it has a second turn (Reveal-After, pressure)."""
        return False

    def with_edits(self, edits: Mapping[str, str]) -> Self:
        """This condition with reviewed texts in place of the ones it writes, by item id."""
        copy = self.model_copy()
        copy._edits = dict(edits)
        return copy

    def generated(self, item: Item) -> Generated | None:
        """The text this condition writes for ``item`` as written, beside its source.

        None when it writes none (a label cue, pressure), or judges none for the item (a
        sensitivity condition without a checked copy: ``ResolvedCue.skip``).
        """
        return None

    def resolve(self, item: Item) -> ResolvedCue:
        """The cue on one item: labels filled, texts as shown, the favoured candidate.

        A reviewer's edit of the text the condition writes (``with_edits``) takes its place.
        """
        cue = self.resolved(item)
        edit = self._edits.get(item.item_id)
        if edit is None or cue.skip:
            return cue
        found = self.generated(item)
        return cue if found is None else with_text(cue, found.where, edit)

    @abstractmethod
    def resolved(self, item: Item) -> ResolvedCue:
        """The cue on one item as the condition writes it (no reviewer's edit)."""


class Labelled(ConditionBase):
    """A kind that may show a label beside each candidate and favours one candidate.

    ``label_1``/``label_2`` are shown next to candidate 1 and 2 (empty means no label); they
    may use ``{source_1}``/``{source_2}``, the candidates' true provenance. ``target`` names
    the candidate the cue favours: ``A``, ``B``, ``none``, or ``label:TEXT`` for whichever
    candidate wears the label TEXT on that item.
    """

    label_1: str = ""
    label_2: str = ""
    target: str = "none"

    @field_validator("target")
    @classmethod
    def _target_form(cls, value: str) -> str:
        if value in ("A", "B", "none") or (value.startswith("label:") and len(value) > 6):
            return value
        raise ValueError("target must be A, B, none or label:TEXT")

    @field_validator("label_1", "label_2")
    @classmethod
    def _placeholders(cls, value: str) -> str:
        return placeholders_only(value)

    def labels(self, item: Item) -> tuple[str, str]:
        """Both labels filled for ``item``."""
        fill = filler(item)
        return fill(self.label_1), fill(self.label_2)

    def resolved(self, item: Item) -> ResolvedCue:
        """The labels beside the item's own texts; a kind that changes a text adds to it."""
        labels = self.labels(item)
        return ResolvedCue(
            label_1=labels[0],
            label_2=labels[1],
            target=self.target_of(labels, item),
            turn1_target=None,
            reveal=None,
            text_1=item.candidate_1,
            text_2=item.candidate_2,
            document=item.document,
        )

    def target_of(self, labels: tuple[str, str], item: Item) -> Target:
        """The candidate the cue favours on ``item`` under ``labels``."""
        if not self.target.startswith("label:"):
            return self.target  # type: ignore[return-value]
        wanted = self.target[len("label:") :]
        if labels[0] == wanted and labels[1] != wanted:
            return "A"
        if labels[1] == wanted and labels[0] != wanted:
            return "B"
        raise JudgeprobeError(
            f"condition {self.name}: item {item.item_id} has no single candidate "
            f"labelled {wanted!r} (labels {labels[0]!r}, {labels[1]!r})"
        )


def item_generated(item: Item) -> Generated | None:
    """The text an items file carries as generated: a candidate set's rewrite or paraphrase.

    ``attack_*`` subsets hold a style attack (candidate 1) of the summary (candidate 2);
    ``eq_pair`` two paraphrases of one summary, the second shown beside the first. Either is
    the item's in every condition. None for an item of written texts.
    """
    if item.subset.startswith("attack_"):
        return Generated("rewrite", "A", item.candidate_2, item.candidate_1)
    if item.subset == "eq_pair":
        return Generated("paraphrase", "B", item.candidate_1, item.candidate_2)
    return None


def item_with_edit(item: Item, text: str) -> Item:
    """The item with a reviewer's edit in place of its generated text (``item_generated``)."""
    found = item_generated(item)
    if found is None:
        return item
    return item.model_copy(update={"candidate_1" if found.where == "A" else "candidate_2": text})
