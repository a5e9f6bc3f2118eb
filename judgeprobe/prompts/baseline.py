"""The Baseline protocol: a direct verdict with a brief post-hoc explanation (paper, V-C)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgeprobe.prompts import load_template

TEMPLATE_NAME = "baseline_v1"


class PairwiseReply(BaseModel):
    """What the judge must return; its JSON schema is sent as the structured-output schema."""

    model_config = ConfigDict(extra="forbid", title="pairwise_verdict")

    verdict: Literal["[1,2]", "[2,1]", "Tie"]
    explanation: str = Field(min_length=1)

    @field_validator("verdict", mode="before")
    @classmethod
    def _squeeze(cls, value: Any) -> Any:
        # "[1, 2]" and "tie" mean the same thing; accept them from unconstrained backends.
        if isinstance(value, str):
            value = value.replace(" ", "")
            return "Tie" if value.lower() == "tie" else value
        return value


def reply_schema() -> dict[str, Any]:
    """The JSON schema sent to the server (and hashed into the request key)."""
    return PairwiseReply.model_json_schema()


def render(document: str, shown_1: str, shown_2: str, label_1: str, label_2: str) -> str:
    """Fill the template for one presentation: ``shown_1`` is the text in screen position 1."""
    template = load_template(TEMPLATE_NAME)
    return template.fill(
        {
            "DOC_TEXT": document,
            "SUM1": shown_1,
            "SUM2": shown_2,
            "LABEL_1": f" (label = {label_1})" if label_1 else "",
            "LABEL_2": f" (label = {label_2})" if label_2 else "",
        }
    )


SCREEN_TO_CANDIDATE: dict[str, dict[str, Literal["A", "B", "Tie"]]] = {
    "12": {"[1,2]": "A", "[2,1]": "B", "Tie": "Tie"},
    "21": {"[1,2]": "B", "[2,1]": "A", "Tie": "Tie"},
}
"""Map a screen-position verdict back to candidate identity, per presentation order."""
