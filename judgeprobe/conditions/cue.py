"""Cue conditions as data: the label or badge each candidate wears, and which one it favours.

A condition is a few strings. ``label_1``/``label_2`` are shown next to candidate 1 and 2
(empty means no label); they may use ``{source_1}``/``{source_2}``, the candidates' true
provenance. ``target`` names the candidate the cue favours: ``A``, ``B``, ``none``, or
``label:TEXT`` for whichever candidate wears the label TEXT on that item.

Optional parts: ``reveal_1``/``reveal_2`` make it a Reveal-After condition (a second turn
shows these labels and asks for a final verdict; ``target`` is then resolved against them,
and the first turn's target against the first labels); ``attack`` (``verbosity`` or
``confidence``) rewrites candidate ``attack_on`` with that style attack; ``inject``
(``{where = "A" | "B" | "document", what = "...", at = "end" | "start"}``) places a sentence
*inside* a candidate or the document rather than beside it: a prompt-injection cue;
``family`` names the cue family a condition belongs to (the battery's, ``battery.toml``) and
``placebo`` its matched placebo condition, whose LDS the card subtracts.
``degrade`` (``number``, ``entity``, ``negation`` or ``drop``) makes it a sensitivity
condition: no cue at all, but one candidate beside a copy of itself that is worse in one fact
(``text.degrade``), the copy on a side drawn per item. An item whose candidates offer no such
fact, or whose copy fails the one-fact check, is not judged under it (``ResolvedCue.skip``).
``pressure`` (``challenge``, ``disagree`` or ``reask``) makes it a pressure condition: turn 1
as Blind (no cue), then a second turn that pushes the judge with no new information
(``protocols.pressure``); its target is resolved from turn 1's verdict, so it shows no cue
either.
``reformat`` (``spacing``, ``bullets`` or ``emphasis``, ``text.format``) makes it a format
condition: candidate ``reformat_on`` (``A``, ``B``, or ``both`` for the placebo) shown in
another form with the same words in the same order; its target is the reformatted candidate,
so it reads as an attack does (LDS/TS/OLS against Blind). The rule's draws are seeded by the
item and the candidate, so a candidate has one form in the condition and in its placebo.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.core.records import Item, Target
from judgeprobe.core.records import Pressure as PressureKind
from judgeprobe.text.attacks import ATTACKS
from judgeprobe.text.degrade import Degradation, Kind, degrade, verify
from judgeprobe.text.format import Form, reformat

REPEAT = "BlindRepeat"
"""The condition of Blind judgments sent again under fresh cache keys (``repeat``): how often
the judge changes its own verdict on the identical request is its noise floor."""


NAMED_BLIND: dict[str, str] = {
    "numbers": "BlindNumbers",
    "letters": "BlindLetters",
    "ids": "BlindIds",
}
"""The condition of Blind judged again, in both orders, under a further label scheme (``names``
as a list: ``protocols.names``): the position row of that scheme."""


def scheme_of_condition(condition: str) -> str:
    """The label scheme a ``NAMED_BLIND`` condition judges under ("" for every other)."""
    return next((s for s, c in NAMED_BLIND.items() if c == condition), "")


WORDING = "BlindWording"
"""The conditions of Blind showings judged under another wording of the prompt: wording k ≥ 1
is ``BlindWording{k}`` (``wording_condition``); wording 0, the original, is Blind itself."""


def wording_condition(wording: int) -> str:
    """The condition of Blind judgments under ``wording`` (≥ 1)."""
    return f"{WORDING}{wording}"


def wording_index(condition: str) -> int:
    """The wording a condition judges under: k for ``BlindWording{k}``, else 0 (the original)."""
    k = condition.removeprefix(WORDING)
    return int(k) if k != condition and k.isdigit() else 0


_FIELD = re.compile(r"\{(source_1|source_2)\}")


def _placeholders_only(value: str) -> str:
    leftover = _FIELD.sub("", value)
    if "{" in leftover or "}" in leftover:
        raise ValueError("labels may only use the placeholders {source_1} and {source_2}")
    return value


class Injection(BaseModel):
    """Text placed inside a candidate (``A``/``B``) or the document, at its end or start."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    where: Literal["A", "B", "document"]
    what: str = Field(min_length=1)
    at: Literal["end", "start"] = "end"

    _what = field_validator("what")(_placeholders_only)

    def apply(self, text: str, what: str) -> str:
        """Place the cue text at the start or end of a summary, as the condition says."""
        return f"{text.rstrip()} {what}" if self.at == "end" else f"{what} {text.lstrip()}"


class Condition(BaseModel):
    """A cue condition, as written in a TOML table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    label_1: str = ""
    label_2: str = ""
    target: str = "none"
    description: str = ""
    reveal_1: str | None = None
    reveal_2: str | None = None
    attack: Literal["verbosity", "confidence"] | None = None
    attack_on: Literal["A", "B"] = "A"
    inject: Injection | None = None
    family: str = ""
    placebo: str = ""
    degrade: Kind | None = None
    pressure: PressureKind | None = None
    reformat: Form | None = None
    reformat_on: Literal["A", "B", "both"] = "A"
    # A reviewer's edits of the text this condition writes, by item id (``with_edits``): not
    # part of the condition as written, so never in its dump, its equality or a config.
    _edits: dict[str, str] = PrivateAttr(default_factory=dict)

    def with_edits(self, edits: Mapping[str, str]) -> Condition:
        """This condition with reviewed texts in place of the ones it writes, by item id."""
        copy = self.model_copy()
        copy._edits = dict(edits)
        return copy

    def generated(self, item: Item) -> Generated | None:
        """The text this condition writes for ``item`` as written, beside its source.

        None when it writes none (a label cue, pressure), or judges none for the item (a
        sensitivity condition without a checked copy: ``ResolvedCue.skip``).
        """
        cue = self._resolve(item)
        if self.degrade is not None:
            if cue.skip or cue.degraded == "none":
                return None
            found, _ = self.degradation(item)
            assert found is not None
            return Generated("degraded", cue.degraded, found.original, _text_at(cue, cue.degraded))
        if self.attack is not None:
            where: Literal["A", "B", "document"] = self.attack_on
            kind: GeneratedKind = "rewrite"
        elif self.inject is not None:
            where, kind = self.inject.where, "injected"
        elif self.reformat is not None and self.reformat_on != "both":
            where, kind = self.reformat_on, "rewrite"  # a format: one candidate in a new form
        else:
            return None
        source = {"A": item.candidate_1, "B": item.candidate_2, "document": item.document}[where]
        return Generated(kind, where, source, _text_at(cue, where))

    @model_validator(mode="after")
    def _degrade_alone(self) -> Condition:
        """A sensitivity or pressure condition shows no cue (and is not both).

        No label, target, attack, injection or reveal.
        """
        cues = (self.label_1, self.label_2, self.attack, self.inject, self.reveal_1, self.reveal_2)
        for part in ("degrade", "pressure"):
            if getattr(self, part) is not None and (any(cues) or self.target != "none"):
                raise ValueError(f"a {part} condition shows no cue: no label, target, attack, "
                                 "inject or reveal")  # fmt: skip
        if self.degrade is not None and self.pressure is not None:
            raise ValueError("a condition degrades or presses, not both")
        return self

    @model_validator(mode="after")
    def _reformat_alone(self) -> Condition:
        """A format condition changes one form and shows nothing else; it favours that candidate.

        Its target is the reformatted candidate (``A`` or ``B``); the placebo (``both``) names
        the side its condition reformats.
        """
        if self.reformat is None:
            return self
        others = (self.label_1, self.label_2, self.attack, self.inject, self.reveal_1,
                  self.reveal_2, self.degrade, self.pressure)  # fmt: skip
        if any(x for x in others):
            raise ValueError("a format condition shows no other cue: no label, attack, inject, "
                             "reveal, degrade or pressure")  # fmt: skip
        if self.reformat_on != "both" and self.target != self.reformat_on:
            raise ValueError(f"a format condition's target is the candidate it reformats: "
                             f"target = {self.reformat_on!r}")  # fmt: skip
        if self.reformat_on == "both" and self.target not in ("A", "B"):
            raise ValueError("a format placebo (reformat_on = both) names its target: A or B")
        return self

    @field_validator("target")
    @classmethod
    def _target_form(cls, value: str) -> str:
        if value in ("A", "B", "none") or (value.startswith("label:") and len(value) > 6):
            return value
        raise ValueError("target must be A, B, none or label:TEXT")

    @field_validator("label_1", "label_2", "reveal_1", "reveal_2")
    @classmethod
    def _placeholders(cls, value: str | None) -> str | None:
        return value if value is None else _placeholders_only(value)

    def resolve(self, item: Item) -> ResolvedCue:
        """Fill the labels for one item, apply any attack, and find the favoured candidate.

        A reviewer's edit of the text the condition writes (``with_edits``) takes its place.
        """
        cue = self._resolve(item)
        edit = self._edits.get(item.item_id)
        if edit is None or cue.skip:
            return cue
        found = self.generated(item)
        return cue if found is None else _with_text(cue, found.where, edit)

    def _resolve(self, item: Item) -> ResolvedCue:
        if self.degrade is not None:
            return self._degraded(item, self.degrade)
        fields = {"source_1": item.source_1, "source_2": item.source_2}

        def fill(text: str) -> str:
            return _FIELD.sub(lambda m: fields[m.group(1)], text)

        labels = (fill(self.label_1), fill(self.label_2))
        reveal = None
        if self.reveal_1 is not None or self.reveal_2 is not None:
            reveal = (fill(self.reveal_1 or ""), fill(self.reveal_2 or ""))
        texts = [item.candidate_1, item.candidate_2]
        if self.attack is not None:
            i = 0 if self.attack_on == "A" else 1
            prepared = getattr(item, f"{self.attack}_{i + 1}", None)
            texts[i] = prepared or ATTACKS[self.attack](texts[i])
        if self.reformat is not None:
            texts = list(self.reformatted(item))
        document = item.document
        if self.inject is not None:
            what = fill(self.inject.what)
            if self.inject.where == "document":
                document = self.inject.apply(document, what)
            else:
                i = 0 if self.inject.where == "A" else 1
                texts[i] = self.inject.apply(texts[i], what)
        return ResolvedCue(
            label_1=labels[0],
            label_2=labels[1],
            target=self._target(reveal or labels, item),
            turn1_target=self._target(labels, item) if reveal else None,
            reveal=reveal,
            text_1=texts[0],
            text_2=texts[1],
            attack=self.attack or (f"format:{self.reformat}" if self.reformat else ""),
            document=document,
            pressure=self.pressure or "",
        )

    def reformatted(self, item: Item) -> tuple[str, str]:
        """Both candidates as this format condition shows them (the other one unchanged)."""
        assert self.reformat is not None
        out = [item.candidate_1, item.candidate_2]
        for i, side in enumerate(("A", "B")):
            if self.reformat_on in (side, "both"):
                key = f"format:{self.reformat}:{item.item_id}:{i + 1}"
                out[i] = reformat(self.reformat, out[i], key)
        return out[0], out[1]

    def degradation(self, item: Item) -> tuple[Degradation | None, str]:
        """The item's degraded copy (of candidate 1, else 2) and its check ("" = passed).

        An item with gold degrades its gold candidate first: the copy then sits beside the best
        text, not beside a wrong one. None with the reason when neither offers a fact of the kind.
        """
        assert self.degrade is not None
        texts = (item.candidate_1, item.candidate_2)
        for text in texts[::-1] if item.gold == "B" else texts:
            found = degrade(self.degrade, item.document, text, item.item_id)
            if found is not None:
                return found, verify(self.degrade, item.document, found.original, found.degraded)
        return None, f"no {self.degrade} to degrade in either candidate"

    def _degraded(self, item: Item, kind: Kind) -> ResolvedCue:
        """The intact candidate beside its degraded copy, the copy's side drawn per item."""
        found, problem = self.degradation(item)
        digest = hashlib.sha256(f"degrade:{kind}:{item.item_id}".encode()).digest()
        side: Target = "A" if digest[0] % 2 == 0 else "B"
        original = found.original if found else item.candidate_1
        copy = found.degraded if found else original
        texts = (copy, original) if side == "A" else (original, copy)
        return ResolvedCue(
            label_1="", label_2="", target="none", turn1_target=None, reveal=None,
            text_1=texts[0], text_2=texts[1], attack="", document=item.document,
            degraded=side if found and not problem else "none",
            change=found.change if found else "",
            skip=problem,
        )  # fmt: skip

    def _target(self, labels: tuple[str, str], item: Item) -> Target:
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
    attack: str
    document: str
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
    where: Literal["A", "B", "document"]
    source: str  # what it was written from: the candidate or the document as the item has it
    text: str


def _text_at(cue: ResolvedCue, where: Literal["A", "B", "document"]) -> str:
    return {"A": cue.text_1, "B": cue.text_2, "document": cue.document}[where]


def _with_text(cue: ResolvedCue, where: Literal["A", "B", "document"], text: str) -> ResolvedCue:
    if where == "document":
        return replace(cue, document=text)
    return replace(cue, text_1=text) if where == "A" else replace(cue, text_2=text)


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


def parse_conditions(tables: dict[str, Any], origin: str) -> dict[str, Condition]:
    """Turn ``{name: {label_1:…, …}}`` TOML tables into conditions, one clear error per problem."""
    out: dict[str, Condition] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise JudgeprobeError(f"{origin}: condition {name} must be a table")
        try:
            out[name] = Condition(name=name, **table)
        except ValidationError as exc:
            raise JudgeprobeError(f"{origin}: condition {name}: {first_error(exc)}") from None
    return out


BUNDLED = ("builtin.toml", "battery.toml", "selfpref.toml")
"""The packaged condition files: the paper's cues, the cue battery, the self-preference arms."""


@cache
def _bundled() -> dict[str, Condition]:
    out: dict[str, Condition] = {}
    for name in BUNDLED:
        text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
        out |= parse_conditions(tomllib.loads(text), f"bundled conditions {name}")
    for condition in out.values():
        if condition.placebo and condition.placebo not in out:
            raise JudgeprobeError(
                f"bundled condition {condition.name}: no placebo {condition.placebo}"
            )
    return out


def builtin_conditions() -> dict[str, Condition]:
    """The bundled cue conditions: the paper's (``builtin.toml``) and the battery's."""
    return dict(_bundled())


def family_of(condition: str) -> str:
    """The cue family of a bundled condition; "" for the paper's cues and unknown names."""
    found = _bundled().get(condition)
    return found.family if found else ""


def family_members(family: str) -> list[str]:
    """The bundled conditions of a cue family, in file order."""
    return [name for name, c in _bundled().items() if family and c.family == family]


def is_placebo(condition: str) -> bool:
    """Whether a condition is a placebo: ``Placebo``, or one a bundled condition names."""
    return condition == "Placebo" or any(c.placebo == condition for c in _bundled().values())


def placebo_of(condition: str, default: str = "Placebo") -> str:
    """The placebo a bundled condition is compared with (``default`` when it names none)."""
    found = _bundled().get(condition)
    return found.placebo if found and found.placebo else default
