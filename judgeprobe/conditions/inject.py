"""Kind ``inject``: a sentence placed inside a candidate or the document (prompt injection)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgeprobe.conditions.cue import (
    Generated,
    Labelled,
    ResolvedCue,
    filler,
    placeholders_only,
    source_at,
    text_at,
    with_text,
)
from judgeprobe.core.records import Item


class Injection(BaseModel):
    """Text placed inside a candidate (``A``/``B``) or the document, at its end or start."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    where: Literal["A", "B", "document"]
    what: str = Field(min_length=1)
    at: Literal["end", "start"] = "end"

    _what = field_validator("what")(placeholders_only)

    def apply(self, text: str, what: str) -> str:
        """Place the cue text at the start or end of a summary, as the condition says."""
        return f"{text.rstrip()} {what}" if self.at == "end" else f"{what} {text.lstrip()}"


class InjectCondition(Labelled):
    """A cue *inside* a text rather than beside it: ``inject = {where, what, at}``."""

    kind: Literal["inject"] = "inject"
    inject: Injection

    def resolved(self, item: Item) -> ResolvedCue:
        """The labels, and the sentence inside its candidate or the document."""
        cue = super().resolved(item)
        where, what = self.inject.where, filler(item)(self.inject.what)
        return with_text(cue, where, self.inject.apply(source_at(item, where), what))

    def generated(self, item: Item) -> Generated:
        """The text with the sentence in it, beside the text without."""
        where = self.inject.where
        return Generated(
            "injected", where, source_at(item, where), text_at(self.resolved(item), where)
        )
