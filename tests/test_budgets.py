"""Token budgets sized from the reply schemas, bounded evidence, and unreadable-cell flags."""

from __future__ import annotations

import re
from typing import Any

import orjson
import polars as pl
import pytest
from pydantic import BaseModel

from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.stream import protocols_for
from judgeprobe.metrics.flags import Readability, invalid_reasons, with_flags
from judgeprobe.prompts import load_template
from judgeprobe.prompts.task import CRITERIA
from judgeprobe.protocols import replies
from judgeprobe.protocols.budget import size_budget, stage_budgets
from judgeprobe.protocols.pbp import LOCK_TEMPLATE
from judgeprobe.text.tokens import CHARS_PER_TOKEN

MODELS = [
    replies.PairwiseReply,
    replies.ScotReply,
    replies.LockReply,
    replies.ScoreReply,
    replies.RankReply,
]


def _worst(node: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The largest value ``node`` allows: every text at its maxLength, every list full."""
    if "$ref" in node:
        return _worst(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    if "enum" in node:
        return max(node["enum"], key=lambda v: len(orjson.dumps(v)))
    kind = node["type"]
    if kind == "object":
        return {k: _worst(v, defs) for k, v in node["properties"].items()}
    if kind == "array":
        return [_worst(node["items"], defs)] * node["maxItems"]
    assert kind == "string", f"an unbounded field: {node}"
    assert "maxLength" in node, f"an unbounded field: {node}"
    return "x" * node["maxLength"]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_the_largest_reply_a_schema_allows_fits_its_budget(model: type[BaseModel]) -> None:
    schema = model.model_json_schema()
    largest = _worst(schema, schema.get("$defs", {}))
    text = orjson.dumps(largest, option=orjson.OPT_INDENT_2).decode()  # whitespace included
    model.model_validate_json(text)
    assert len(text) / CHARS_PER_TOKEN <= size_budget(model)
    assert size_budget(model, CHARS_PER_TOKEN * 2) < size_budget(model)  # terser judge, less


def test_lock_schema_bounds_the_evidence_and_the_prompt_says_so() -> None:
    schema = replies.LockReply.model_json_schema()
    evidence = schema["$defs"]["Evidence"]["properties"]
    assert evidence["quotes"]["maxItems"] == replies.MAX_QUOTES == 2
    assert evidence["quotes"]["minItems"] == 1
    assert evidence["quotes"]["items"]["maxLength"] == replies.QUOTE_CHARS
    assert evidence["note"]["maxLength"] == replies.LOCK_NOTE_CHARS
    prompt = load_template(LOCK_TEMPLATE).text
    assert f"at most {replies.LOCK_NOTE_WORDS} words" in prompt
    assert f"at most {replies.QUOTE_WORDS} words" in prompt
    assert "one or two quotes" in prompt
    # the character bounds leave room for the words the prompt asks for
    assert replies.QUOTE_CHARS >= 7 * replies.QUOTE_WORDS
    assert replies.LOCK_NOTE_CHARS >= 7 * replies.LOCK_NOTE_WORDS
    assert load_template("pbp_lock_v1").text != prompt  # v1 stays as it was


def test_a_backend_that_ignores_the_bounds_is_not_re_asked() -> None:
    note = {"note": "n" * 900, "quotes": ["q" * 400] * 4}
    side = {"summary_1": note, "summary_2": note}
    reply = replies.LockReply.model_validate(dict.fromkeys(CRITERIA, side))
    assert len(reply.accuracy.summary_1.quotes) == 4


def _config(**protocol: Any) -> SweepConfig:
    return SweepConfig.model_validate(
        {"protocols": ["baseline", "scot", "pbp"], "protocol": protocol}
    )


def test_budgets_are_sized_per_stage_and_overrides_win() -> None:
    sized = protocols_for(_config())
    assert dict(sized["pbp"].budgets) == {
        "lock": size_budget(replies.LockReply),
        "score": size_budget(replies.ScoreReply),
        "rank": size_budget(replies.RankReply),
    }
    assert sized["baseline"].budgets["verdict"] == size_budget(replies.PairwiseReply)
    assert sized["scot"].budgets["verdict"] == size_budget(replies.ScotReply)
    tuned = protocols_for(_config(pbp_lock_max_tokens=700, chars_per_token=4.0))
    assert tuned["pbp"].budgets["lock"] == 700
    assert tuned["pbp"].budgets["score"] == size_budget(replies.ScoreReply, 4.0)
    assert tuned["scot"].budgets["verdict"] < sized["scot"].budgets["verdict"]
    assert stage_budgets({"x": replies.RankReply}, overrides={"x": None}) == {
        "x": size_budget(replies.RankReply)
    }


def _cells(rows: list[dict[str, Any]]) -> pl.DataFrame:
    base = {"judge": "j", "protocol": "pbp", "n": 20, "n_valid": 20, "n_paired": 20}
    return pl.DataFrame([{**base, "invalid_rate": 0.0, **r} for r in rows])


def test_thin_and_invalid_heavy_cells_are_flagged() -> None:
    table = _cells(
        [
            {"condition": "Blind"},
            {"condition": "Blind", "judge": "k", "n_valid": 4, "invalid_rate": 0.8},
            {"condition": "True", "n_paired": 1},
            {"condition": "Flip", "invalid_rate": 0.25},
            {"condition": "Placebo", "n_paired": 0},  # a cue cell with no Blind twin
            # A sensitivity cell has no twin at all (n_paired null): read by its valid n.
            {"condition": "DegradedNumber", "n_paired": None, "n_valid": 4},
        ]
    )
    flags = with_flags(table)["flag"].to_list()
    assert flags == ["", "80% Invalid; n valid 4 < 10", "n paired 1 < 10", "25% Invalid",
                     "n paired 0 < 10", "n valid 4 < 10"]  # fmt: skip
    loose = with_flags(table, Readability(max_invalid_rate=0.3, min_n=1))["flag"].to_list()
    assert loose == ["", "80% Invalid", "", "", "n paired 0 < 1", ""]


def test_invalid_reasons_are_counted_per_protocol_with_numbers_folded() -> None:
    reasons = [
        "lock: truncated JSON (hit max_tokens) at 1632 tokens, after one escalation",
        "lock: truncated JSON (hit max_tokens) at 3264 tokens, after one escalation",
        "score: schema: reply.accuracy: field required",
        "",
    ]
    j = pl.DataFrame(
        {
            "judge": ["j"] * 5,
            "protocol": ["pbp"] * 4 + ["baseline"],
            "verdict": ["Invalid"] * 3 + ["A", "Invalid"],
            "invalid_reason": [*reasons, "transport: timeout after 6 attempt(s)"],
        }
    )
    top = invalid_reasons(j, top=1)
    assert top.select("protocol", "n", "share").rows() == [("baseline", 1, 1.0), ("pbp", 2, 0.5)]
    reason = top.filter(pl.col("protocol") == "pbp")["reason"].item()
    assert reason == "lock: truncated JSON (hit max_tokens) at N tokens, after one escalation"
    assert not re.search(r"\d", top["reason"].str.join("").item())
