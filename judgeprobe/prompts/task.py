"""The task a pairwise judge judges: its nouns and criteria, the one table every text uses.

The built-in prompts were written for the paper's task (two summaries of a document, judged on
accuracy, completeness, conciseness and fluency). A config's ``task`` names a preset or sets
the nouns and criteria itself (docs/configs.md, "The task"); ``Task.reword`` rewrites a
template's wording for it. The default task rewords nothing, so the default prompts, their
hashes, the judgment keys and config digests are byte for byte what they were.

What is reworded: ``summary``/``summaries`` (any capitalisation the templates use), ``document``,
the verb of "Two summaries describe the same document", and the criteria wherever the templates
list them (in prose, in quotes, and as the keys of a JSON example). The reply's screen keys
(``summary_1``/``summary_2``) and verdict tokens (``[1,2]``) are the schema's and stay.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

CRITERIA = ("accuracy", "completeness", "conciseness", "fluency")
"""The paper's SCoT and PBP criteria: the default task's."""

Preset = Literal["summarization", "qa", "dialogue", "instruction"]

PRESETS: dict[str, dict[str, Any]] = {
    "summarization": {"context": "document", "response": "summary", "responses": "summaries",
                      "relation": "describe", "criteria": CRITERIA},
    "qa": {"context": "question", "response": "answer", "responses": "answers",
           "relation": "respond to", "criteria": ("correctness", "completeness", "relevance",
                                              "clarity")},
    "dialogue": {"context": "conversation", "response": "response", "responses": "responses",
                 "relation": "continue", "criteria": ("helpfulness", "correctness", "relevance",
                                                      "clarity")},
    "instruction": {"context": "instruction", "response": "response", "responses": "responses",
                    "relation": "follow", "criteria": ("adherence", "correctness",
                                                       "helpfulness", "clarity")},
}  # fmt: skip
"""Each preset's nouns, verb and criteria (docs/configs.md lists them)."""

_NOUN = re.compile(r"^[a-z][a-z -]*[a-z]$")
_CRITERION = re.compile(r"^[a-z][a-z0-9_]*$")


def _word(text: str, word: str, new: str) -> str:
    """Every whole ``word`` (lower and capitalised; not inside a key such as summary_1).

    "a summary" becomes "an answer" where the new word starts with a vowel.
    """
    article = "an" if new[:1] in "aeiou" else "a"
    for a in ("a", "A"):
        text = re.sub(rf"\b{a} {word}\b", f"{a}{article[1:]} {new}", text)
    for old, replacement in ((word, new), (word.capitalize(), new.capitalize())):
        text = re.sub(rf"\b{old}\b", replacement, text)
    return text


def _listed(items: tuple[str, ...], quote: str = "", last: str = ", ") -> str:
    quoted = [f"{quote}{c}{quote}" for c in items]
    return ", ".join(quoted[:-1]) + last + quoted[-1] if len(quoted) > 1 else quoted[0]


class Task(BaseModel):
    """A pairwise task's nouns and criteria (``task`` in a sweep config)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    preset: Preset = "summarization"
    context: str = ""  # what the judge reads first: a document, a question, a conversation
    response: str = ""  # one of the two texts compared
    responses: str = ""  # its plural
    relation: str = ""  # how the responses stand to the context: "Two answers answer ..."
    criteria: tuple[str, ...] = Field(default=(), max_length=8)

    @model_validator(mode="before")
    @classmethod
    def _named(cls, data: Any) -> Any:
        """``task = "qa"`` is the preset with its own nouns."""
        return {"preset": data} if isinstance(data, str) else data

    @model_validator(mode="after")
    def _filled(self) -> Task:
        """Every field the config leaves out takes the preset's."""
        for name, value in PRESETS[self.preset].items():
            if not getattr(self, name):
                object.__setattr__(self, name, value)
        return self

    @field_validator("context", "response", "responses", "relation")
    @classmethod
    def _noun(cls, value: str) -> str:
        if value and not _NOUN.match(value):
            raise ValueError(f"{value!r}: lower-case words only (e.g. 'answer')")
        return value

    @field_validator("criteria")
    @classmethod
    def _criteria(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [c for c in value if not _CRITERION.match(c) or c.startswith("summary_")]
        if bad:
            raise ValueError(f"criterion {bad[0]!r}: a lower-case name such as 'correctness'")
        if len(set(value)) != len(value):
            raise ValueError("criteria must be distinct")
        return value

    @property
    def is_default(self) -> bool:
        """The paper's task: the built-in prompts as written."""
        return self == DEFAULT

    def nouns(self, text: str) -> str:
        """Report and card prose in this task's nouns: a summary becomes its response.

        Only the response nouns move: "document" there is the resampling unit, whatever the task.
        """
        text = _word(text, "summaries", self.responses)
        return _word(text, "summary", self.response)

    def reword(self, text: str) -> str:
        """A built-in template's text in this task's words (the text itself for the default)."""
        if self.is_default:
            return text
        text = text.replace("describe the same document", f"{self.relation} the same document")
        text = _word(text, "summaries", self.responses)
        text = _word(text, "summary", self.response)
        text = _word(text, "document", self.context)
        old, new = CRITERIA, self.criteria
        text = text.replace(_listed(old, last=" and "), _listed(new, last=" and "))
        text = text.replace(_listed(old), _listed(new))
        text = text.replace(_listed(old, '"', " and "), _listed(new, '"', " and "))
        first = rf'"{old[0]}": (\{{[^{{}}]*\}}), ' + ", ".join(
            rf'"{c}": \{{\.\.\.\}}' for c in old[1:]
        )
        rest = "".join(f', "{c}": {{...}}' for c in new[1:])
        return re.sub(first, lambda m: f'"{new[0]}": {m.group(1)}{rest}', text)


DEFAULT = Task()
"""The paper's task: summaries of a document, judged on ``CRITERIA``."""
LOGS = Task(preset="qa", response="response", responses="responses")
"""A judge log's task where its format names none: responses to a question."""
