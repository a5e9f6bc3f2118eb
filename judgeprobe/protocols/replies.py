"""Reply schemas: what each protocol stage must return.

Their JSON schemas are sent as the structured-output constraint and hashed into the request key;
pydantic validates replies.

Every free-text field is bounded (``maxLength`` in characters) and every quote list too
(``minItems``/``maxItems``), so a reply's worst-case size follows from its schema and each
stage's token budget can be sized from it (``judgeprobe.protocols.budget``). The bounds are
schema keywords only, not pydantic constraints: llama.cpp's server, vLLM (xgrammar >= 0.1.19,
guidance, outlines) and TGI (outlines-core) enforce them while decoding; where a backend
ignores them the prompt states them in words, and a longer reply is accepted rather than
re-asked (the budget's escalation covers its length).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    create_model,
    field_serializer,
    field_validator,
)

from judgeprobe.prompts.task import CRITERIA

ScreenVerdict = Literal["[1,2]", "[2,1]", "Tie"]
Score = Literal[0, 1, 2, 3, 4, 5]

# Bounds in characters (schema) beside the words the prompts ask for (about 6 characters a
# word with its space, plus slack so a compliant reply is never cut by the grammar).
EXPLANATION_CHARS = 1000  # "2-4 sentences"
NOTE_CHARS = 400  # SCoT: "a short note"
LOCK_NOTE_WORDS, LOCK_NOTE_CHARS = 25, 250  # PBP lock: one note per criterion and summary
QUOTE_WORDS, QUOTE_CHARS = 12, 100  # a quoted span
MAX_QUOTES = 2  # quotes per note
JUSTIFICATION_CHARS = 300  # "one sentence"


def bounded(max_chars: int) -> Any:
    """A text field at most ``max_chars`` long, as a schema keyword only (see above)."""
    return Field(min_length=1, json_schema_extra={"maxLength": max_chars})


Quote = Annotated[str, Field(json_schema_extra={"maxLength": QUOTE_CHARS})]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Criteria(_Reply):
    """A reply part whose fields are the task's criteria, in order (``prompts.task``)."""

    def by_criterion(self) -> dict[str, Any]:
        """Each criterion's part by name, for code that treats criteria alike."""
        return {name: getattr(self, name) for name in type(self).model_fields}


def _squeeze(value: Any) -> Any:
    """Accept "[1, 2]" and "tie" from backends that cannot constrain output."""
    if isinstance(value, str):
        value = value.replace(" ", "")
        return "Tie" if value.lower() == "tie" else value
    return value


class PairwiseReply(_Reply):
    """Baseline and Reveal-After: a verdict and a short explanation."""

    model_config = ConfigDict(title="pairwise_verdict")

    verdict: ScreenVerdict
    explanation: str = bounded(EXPLANATION_CHARS)

    _verdict = field_validator("verdict", mode="before")(_squeeze)


class CriterionAssessment(_Reply):
    """A SCoT judge's notes and scores for both summaries on one criterion."""

    notes: str = Field(json_schema_extra={"maxLength": NOTE_CHARS})
    summary_1: Score
    summary_2: Score


class ScotCriteria(_Criteria):
    """The SCoT reply's criteria, each assessed for both summaries."""

    accuracy: CriterionAssessment
    completeness: CriterionAssessment
    conciseness: CriterionAssessment
    fluency: CriterionAssessment


class ScotReply(_Reply):
    """SCoT: per-criterion notes and scores first, then the verdict."""

    model_config = ConfigDict(title="scot_verdict")

    criteria: ScotCriteria
    verdict: ScreenVerdict
    explanation: str = bounded(EXPLANATION_CHARS)

    _verdict = field_validator("verdict", mode="before")(_squeeze)


class Evidence(_Reply):
    """A PBP lock note on one summary and the quotes that ground it."""

    note: str = Field(json_schema_extra={"maxLength": LOCK_NOTE_CHARS})
    quotes: list[Quote] = Field(json_schema_extra={"minItems": 1, "maxItems": MAX_QUOTES})


class LockedCriterion(_Reply):
    """The locked evidence for both summaries on one criterion."""

    summary_1: Evidence
    summary_2: Evidence


class LockReply(_Criteria):
    """PBP stage 1: notes with quoted spans; no scores, no verdict."""

    model_config = ConfigDict(title="pbp_lock")

    accuracy: LockedCriterion
    completeness: LockedCriterion
    conciseness: LockedCriterion
    fluency: LockedCriterion


class ScorePair(_Reply):
    """The PBP score stage's scores for both summaries on one criterion."""

    summary_1: Score
    summary_2: Score


class ScoreReply(_Criteria):
    """PBP stage 2: 0–5 per criterion and summary, from the locked notes only."""

    model_config = ConfigDict(title="pbp_score")

    accuracy: ScorePair
    completeness: ScorePair
    conciseness: ScorePair
    fluency: ScorePair


class RankReply(_Reply):
    """PBP stage 3: the model's own verdict (checked against the scores) and justification."""

    model_config = ConfigDict(title="pbp_rank")

    verdict: ScreenVerdict
    justification: str = bounded(JUSTIFICATION_CHARS)

    _verdict = field_validator("verdict", mode="before")(_squeeze)


SIDES = ("summary_1", "summary_2")
"""The screen positions' keys in scores and notes, as every reply is read back."""

M = TypeVar("M", bound=BaseModel)


@cache
def named(model: type[M], names: tuple[str, str]) -> type[M]:
    """``model`` as a judge is asked for it under screen names ``names`` (``protocols.names``).

    Its schema asks for the scheme's verdicts (``[A,B]``, ``[B,A]``, ``Tie``) and keys
    (``summary_A``); a reply is read back into screen terms (``verdict`` ``[1,2]``, fields
    ``summary_1``), so a protocol handles it as under numbers. ``model_dump(by_alias=True)``
    writes it as the judge was asked (for a later stage's prompt, and the store, which
    validates it again). Under ``("1", "2")`` it is
    ``model`` itself, so the schema and every request key stay what they were.
    """
    if names == ("1", "2"):
        return model
    first, second = names
    tokens = {f"[{first},{second}]": "[1,2]", f"[{second},{first}]": "[2,1]", "Tie": "Tie"}
    back = {screen: token for token, screen in tokens.items()}
    fields: dict[str, Any] = {}
    validators: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        kind = info.annotation
        if name in SIDES:
            alias = f"summary_{names[SIDES.index(name)]}"
            fields[name] = (kind, Field(alias=alias))
        elif name == "verdict":
            fields[name] = (Literal[tuple(tokens)], info)
            validators["_screen"] = field_validator("verdict", mode="after")(
                lambda v: tokens.get(v, v)
            )
            validators["_scheme"] = field_validator("verdict", mode="before")(
                lambda v: v.upper() if isinstance(v, str) and v.lower() != "tie" else v
            )
            validators["_asked"] = field_serializer("verdict", when_used="always")(
                lambda v, info: back.get(v, v) if info.by_alias else v
            )
        elif isinstance(kind, type) and issubclass(kind, BaseModel):
            fields[name] = (named(kind, names), info)
    return create_model(
        f"{model.__name__}_{first}_{second}", __base__=model, __validators__=validators, **fields
    )


@dataclass(frozen=True, slots=True)
class CriteriaReplies:
    """The reply models whose keys are a task's criteria: SCoT's, PBP's lock and score."""

    scot: type[ScotReply]
    lock: type[_Criteria]
    score: type[_Criteria]


def _fields(part: type[BaseModel], criteria: tuple[str, ...]) -> dict[str, Any]:
    return {c: (part, ...) for c in criteria}


@cache
def criteria_replies(criteria: tuple[str, ...] = CRITERIA) -> CriteriaReplies:
    """The reply models for ``criteria``: the classes above for the paper's.

    Other criteria get the same models with these criteria as keys (same names, titles and
    parts, so a schema differs only by its keys; a test holds the paper's criteria built this
    way equal to the classes above).
    """
    if criteria == CRITERIA:
        return CriteriaReplies(ScotReply, LockReply, ScoreReply)
    return build_replies(criteria)


def build_replies(criteria: tuple[str, ...]) -> CriteriaReplies:
    """The criteria-keyed reply models built for ``criteria`` (see ``criteria_replies``)."""
    keyed: Any = create_model  # pydantic's dynamic models: typed by their base classes here
    inner = keyed("ScotCriteria", __base__=_Criteria, __doc__=ScotCriteria.__doc__,
                  **_fields(CriterionAssessment, criteria))  # fmt: skip
    scot = keyed("ScotReply", __base__=ScotReply, __doc__=ScotReply.__doc__,
                 criteria=(inner, ...))  # fmt: skip
    lock = keyed("LockReply", __base__=_Criteria, __doc__=LockReply.__doc__,
                 __config__=None, **_fields(LockedCriterion, criteria))  # fmt: skip
    score = keyed("ScoreReply", __base__=_Criteria, __doc__=ScoreReply.__doc__,
                  **_fields(ScorePair, criteria))  # fmt: skip
    lock.model_config["title"] = "pbp_lock"
    score.model_config["title"] = "pbp_score"
    for model in (lock, score):
        model.model_rebuild(force=True)
    return CriteriaReplies(scot, lock, score)
