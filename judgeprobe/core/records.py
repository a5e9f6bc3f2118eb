"""The record schemas every stage shares: candidate items and judgments.

A judgment's verdict is in *candidate* terms, never screen positions: "A" means candidate 1
is preferred (the paper's [1,2]), "B" candidate 2, whatever order they were shown in.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final, Literal

import polars as pl
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from judgeprobe.core.layouts import Gold, Message, field_text

INVALID: Final = "Invalid"
"""The verdict of a judgment that ended without one (its reason says why): never dropped."""

TIE: Final = "Tie"
"""The verdict that prefers neither candidate (the same word in screen terms)."""
VERDICTS: Final = ("A", "B", TIE)
"""The valid verdicts in candidate terms: candidate 1 preferred, candidate 2, neither."""

Verdict = Literal["A", "B", "Tie", "Invalid"]
"""A cue judgment's verdict, in candidate terms."""
RubricVerdict = Literal["satisfied", "violated"]
"""The rubric probe's verdict: does the response meet the criterion."""
NoVerdict = Literal[""]
"""The verdict of a job that judges nothing (a document the candidate builder wrote texts
for): its status says how it ended, and "Invalid" stays the verdict of every invalid job."""
Status = Literal["valid", "invalid"]
"""What a request or a judgment ended as; an invalid one carries its reason."""
Target = Literal["A", "B", "none"]
Pressure = Literal["challenge", "disagree", "reask"]
"""What a pressure condition's second turn says (``protocols.pressure``)."""
Order = Literal["12", "21"]

NOT_RUN = "not run"
"""How the Invalid reason of a judgment that never ran begins (a stopped sweep, a tripped
circuit breaker): not the judge's doing, and ``--resume`` runs it."""
STOPPED = f"{NOT_RUN}: the sweep stopped before this judgment finished; rerun with --resume"
"""The reason of a planned judgment that has no stored outcome."""


def never_ran() -> pl.Expr:
    """Whether a judgments-table row is a judgment that never ran (see ``NOT_RUN``)."""
    return pl.col("invalid_reason").fill_null("").str.starts_with(NOT_RUN)


_NULLABLE = ("document_id", "doc_id", "generator_1", "generator_2")


class Item(BaseModel):
    """A context (a document, a question, a conversation) and the two responses to compare.

    ``document`` holds the context whatever the task (``core.layouts`` reads every layout
    onto these fields); the candidates are the two responses.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    item_id: str = Field(min_length=1)
    subset: str = "default"
    document: str = Field(min_length=1)
    candidate_1: str = Field(min_length=1)
    candidate_2: str = Field(min_length=1)
    source_1: str = ""
    source_2: str = ""
    domain: str = ""
    title: str = ""
    # The source document: the bootstrap's resampling unit (items from one document are not
    # independent). ``doc_id`` is the candidate set's name for it; absent, the text's hash.
    document_id: str = Field("", validation_alias=AliasChoices("document_id", "doc_id"))
    # What wrote each candidate (e.g. ``sumy:textrank``), for per-method tables such as IX.
    generator_1: str = ""
    generator_2: str = ""
    # Prepared style attacks of candidate 1 (e.g. LLM-written by the data set builder); the
    # Verbosity/Confidence conditions use them, else their deterministic rule.
    verbosity_1: str | None = None
    confidence_1: str | None = None
    # The gold preference in candidate terms (an items file's ``preferred``, ``chosen``,
    # ``winner``; ``core.layouts``): the accuracy row and its content-blind baselines.
    gold: Gold | None = None
    # Every other key of the items file's row, as text (a reference answer, a rubric): what a
    # judge's own placeholders may name (``prompts.judge``). In no key, digest or dump.
    fields: tuple[tuple[str, str], ...] = Field(default=(), exclude=True, repr=False)
    # A conversation item (the MT-Bench layout): each response's whole conversation up to the
    # judged turn, whose turns a judge's own placeholders may name (``turn_K.user``, …).
    conversation_1: tuple[Message, ...] = Field(default=(), exclude=True, repr=False)
    conversation_2: tuple[Message, ...] = Field(default=(), exclude=True, repr=False)

    def field(self, name: str) -> str | None:
        """The text of the items file's field ``name`` (None when the item has none)."""
        return dict(self.fields).get(name)

    @model_validator(mode="before")
    @classmethod
    def _other_fields(cls, data: Any) -> Any:
        """The row's keys that no field takes, kept as text under ``fields``."""
        if not isinstance(data, dict) or "fields" in data:
            return data
        known = set(cls.model_fields) | {"doc_id"}
        other = {k: v for k, v in data.items() if k not in known and v is not None}
        if not other:
            return data
        kept = tuple(sorted((str(k), field_text(v)) for k, v in other.items()))
        return {**data, "fields": kept}

    @field_validator(
        "item_id", "document", "candidate_1", "candidate_2", "verbosity_1", "confidence_1"
    )
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        """Whitespace alone is as empty as nothing, and would be judged as a text."""
        if value is not None and not value.strip():
            raise ValueError("is blank (whitespace only)")
        return value

    @model_validator(mode="before")
    @classmethod
    def _document_id(cls, data: Any) -> Any:
        """Fill a missing or empty document id with a hash of the document text.

        A null generator (a table column that is empty for some rows) reads as unknown.
        """
        if not isinstance(data, dict):
            return data
        data = {k: v for k, v in data.items() if v is not None or k not in _NULLABLE}
        document = data.get("document")
        if not (data.get("document_id") or data.get("doc_id")) and isinstance(document, str):
            data.pop("doc_id", None)
            data["document_id"] = document_hash(document)
        return data


def document_hash(text: str) -> str:
    """A document's id when its source gives none: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


#: The public contract of judgments.parquet, in column order.
JUDGMENT_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "judge": pl.String(),
    "protocol": pl.String(),
    "condition": pl.String(),
    "item_id": pl.String(),
    "subset": pl.String(),
    "document_id": pl.String(),
    "domain": pl.String(),
    "generator_1": pl.String(),
    "generator_2": pl.String(),
    "order": pl.String(),
    "seed": pl.Int64(),
    "verdict": pl.String(),
    "target": pl.String(),
    "explanation": pl.String(),
    "invalid_reason": pl.String(),
    "request_key": pl.String(),
    "latency_s": pl.Float64(),
    "prompt_tokens": pl.Int64(),
    "completion_tokens": pl.Int64(),
    "label_1": pl.String(),
    "label_2": pl.String(),
    "source_1": pl.String(),
    "source_2": pl.String(),
    "raw_verdict": pl.String(),
    "attempts": pl.Int64(),
    "reasks": pl.Int64(),
    "escalations": pl.Int64(),
    "model": pl.String(),
    "fingerprint": pl.String(),
    "template_hash": pl.String(),
    "n_requests": pl.Int64(),
    # A style attack's name, and the candidate it rewrote; a format condition's form, and the
    # candidate(s) shown in it (A, B or both); "" where the condition has none.
    "attack": pl.String(),
    "attack_on": pl.String(),
    "reformat": pl.String(),
    "reformat_on": pl.String(),
    "degraded": pl.String(),
    "turn1_verdict": pl.String(),
    "turn1_target": pl.String(),
    "turn1_explanation": pl.String(),
    "score_verdict": pl.String(),
    "stated_verdict": pl.String(),
    "verdict_score_agree": pl.Boolean(),
    "n_quotes": pl.Int64(),
    "n_fabricated": pl.Int64(),
    "n_criteria": pl.Int64(),
    "n_nondiscriminating": pl.Int64(),
    "details": pl.String(),
    # Gold (an item's ``preferred``; "" where it has none or the condition changed its texts)
    # and each candidate's length in characters as shown: the accuracy row and its
    # content-blind baselines (metrics.gold).
    "gold": pl.String(),
    "length_1": pl.Int64(),
    "length_2": pl.Int64(),
    # A pointwise judge (``kind = "score"``): each candidate's own score (candidate terms, like
    # label_1/label_2) and the scale it was asked on; null for every pairwise judgment.
    "score_1": pl.Float64(),
    "score_2": pl.Float64(),
    "score_min": pl.Float64(),
    "score_max": pl.Float64(),
    # A verdict read from log-probabilities (``protocols.logprobs``): P(candidate 1 wins),
    # P(candidate 2 wins) and P(Tie) (null without a tie token); null for every other judgment.
    "prob_1": pl.Float64(),
    "prob_2": pl.Float64(),
    "prob_tie": pl.Float64(),
}

#: Human labels of a run's items (``labels.parquet``): one row per human vote, in candidate
#: terms. ``label`` is "A", "B" or "Tie" for a pairwise item (null for a score); ``score`` a
#: pointwise item's human score (null for a preference); ``weight`` the inverse inclusion
#: probability of the item in the labelled sample (null = uniform random sample).
LABEL_SCHEMA: dict[str, pl.DataType] = {
    "item_id": pl.String(),
    "label": pl.String(),
    "score": pl.Float64(),
    "weight": pl.Float64(),
    "annotator": pl.String(),
}
