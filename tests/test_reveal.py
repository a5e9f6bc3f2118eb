"""Reveal-After under Baseline, SCoT and PBP: turn 2 sees turn 1's materials with the true
labels; under PBP its verdict is computed by code from re-scored criteria.

Two levels: a scripted asker (each stage's reply chosen by the test, so turn 2 can score
differently from turn 1) for the protocol logic, and the fake server for the exact messages
a sweep sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from pydantic import BaseModel

from judgeprobe.conditions import builtin_conditions
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.run import main
from judgeprobe.cue.stream import count, protocols_for
from judgeprobe.engine.store import Result
from judgeprobe.prompts import load_template
from judgeprobe.prompts.task import CRITERIA
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.pbp import as_text
from judgeprobe.protocols.reveal import Recorder, reveal, unsupplied
from judgeprobe.text.lexicons import load_lexicons
from tests.conftest import make_items, write_config
from tests.fakeserver import FakeJudge

FLIP = Presentation("The document.", "Text one.", "Text two.", "TradML", "LLM")
TRUTH = Presentation("The document.", "Text one.", "Text two.", "LLM", "TradML")


def _scores(s1: int, s2: int) -> dict[str, dict[str, int]]:
    return {c: {"summary_1": s1, "summary_2": s2} for c in CRITERIA}


def _lock() -> dict[str, Any]:
    side = {"note": "Covers the point.", "quotes": ["Text one."]}
    return {c: {"summary_1": side, "summary_2": side} for c in CRITERIA}


class Scripted:
    """An asker whose n-th reply of each schema is scripted; records every request."""

    def __init__(self, replies: dict[str, list[dict[str, Any]]]) -> None:
        self.replies = {k: list(v) for k, v in replies.items()}
        self.sent: list[tuple[str, list[dict[str, str]]]] = []

    async def __call__(
        self, messages: Sequence[dict[str, str]], reply_model: type[BaseModel], max_tokens: int
    ) -> Result:
        title = str(reply_model.model_json_schema()["title"])
        reply = self.replies[title].pop(0)
        self.sent.append((title, list(messages)))
        n = len(self.sent)
        return Result(key=str(n), status="valid", reply=reply, raw=orjson.dumps(reply).decode())


def _run(protocol_name: str, replies: dict[str, list[dict[str, Any]]], **options: Any) -> Any:
    cfg = SweepConfig(protocols=[protocol_name], **options)
    protocol = protocols_for(cfg)[protocol_name]
    ask = Scripted(replies)

    async def both() -> Any:
        turn1 = Recorder(ask)
        first = await protocol.run(FLIP, turn1)
        return first, await reveal(protocol, first, turn1, TRUTH, ask)

    first, second = asyncio.run(both())
    return ask.sent, first, second


def test_baseline_turn2_restates_the_materials_with_true_labels() -> None:
    verdicts = [
        {"verdict": "[2,1]", "explanation": "Two."},
        {"verdict": "[1,2]", "explanation": "One."},
    ]
    sent, first, second = _run("baseline", {"pairwise_verdict": verdicts})
    assert (first.verdict, second.verdict) == ("[2,1]", "[1,2]")
    (_, turn1), (_, turn2) = sent
    assert turn2[:2] == [
        *turn1,
        {"role": "assistant", "content": orjson.dumps(verdicts[0]).decode()},
    ]
    assert turn2[2]["content"] == load_template("reveal_v2").fill({"MATERIALS": TRUTH.materials()})
    assert "Summary 1 (label = LLM)" in turn2[2]["content"]
    assert "Summary 1 (label = TradML)" in turn1[0]["content"]


def test_scot_turn2_scores_again_before_its_verdict() -> None:
    def reply(s1: int, s2: int, verdict: str) -> dict[str, Any]:
        criteria = {c: {"notes": "n", **v} for c, v in _scores(s1, s2).items()}
        return {"criteria": criteria, "verdict": verdict, "explanation": "Because."}

    sent, first, second = _run(
        "scot", {"scot_verdict": [reply(2, 4, "[2,1]"), reply(4, 4, "[1,2]")]}
    )
    assert second.verdict == "[1,2]"  # the stated verdict, as SCoT
    assert second.details["score_verdict"] == "Tie"
    assert second.details["stated_verdict"] == "[1,2]"
    assert first.details["score_verdict"] == "[2,1]"
    turn2 = sent[1][1]
    assert turn2[-1]["content"] == load_template("reveal_scot_v1").fill(
        {"MATERIALS": TRUTH.materials()}
    )


@pytest.mark.parametrize("sees_texts", [True, False])
def test_pbp_turn2_rescores_from_the_locked_notes_and_computes_its_verdict(
    sees_texts: bool,
) -> None:
    replies = {
        "pbp_lock": [_lock()],
        "pbp_score": [_scores(2, 4), _scores(4, 3)],  # turn 1 prefers 2; turn 2 prefers 1
        "pbp_rank": [
            {"verdict": "[2,1]", "justification": "Notes favour two."},
            {"verdict": "Tie", "justification": "Now that the labels changed, a tie."},
        ],
    }
    options = {"protocol": {"pbp_score_sees_texts": sees_texts}}
    sent, first, second = _run("pbp", replies, **options)
    assert [t for t, _ in sent] == ["pbp_lock", "pbp_score", "pbp_rank", "pbp_score", "pbp_rank"]
    assert first.verdict == "[2,1]"
    assert second.verdict == "[1,2]"  # computed from the re-scores, not the model's "Tie"
    assert second.details["stated_verdict"] == "Tie"
    assert second.details["scores"] == _scores(4, 3)
    assert second.details["notes"] == first.details["notes"]  # the lock is never redone
    assert second.explanation == "Now that the labels changed, a tie."
    (_, score1), (_, rank1), (_, score2), (_, rank2) = [s for s in sent[1:]]
    # Turn 2's score request continues turn 1's score conversation with the true labels.
    assert score2[:2] == [
        *score1,
        {"role": "assistant", "content": orjson.dumps(_scores(2, 4)).decode()},
    ]
    shown = score2[2]["content"]
    assert "Summary 1 (label = LLM)" in shown
    assert "Summary 2 (label = TradML)" in shown
    assert ("The document." in shown) == sees_texts
    # The rank request continues the rank conversation with the new scores, never the labels.
    assert rank2[:1] == rank1[:1]
    assert rank2[2]["content"] == load_template("reveal_pbp_rank_v1").fill(
        {"SCORES": as_text(_scores(4, 3))}
    )
    assert "LLM" not in rank2[2]["content"]
    assert "Text one." not in rank2[2]["content"]


def test_acknowledgement_counts_only_phrases_the_prompt_did_not_supply() -> None:
    phrases = load_lexicons(None).acknowledgement
    kept = unsupplied(phrases)
    for supplied in ("label", "correction", "true label", "corrected"):
        assert supplied in phrases
        assert supplied not in kept
    for own in ("revealed", "swapped", "mislabel", "now that"):
        assert own in kept


def test_request_count_includes_each_protocols_turn2() -> None:
    cfg = SweepConfig(protocols=["baseline", "scot", "pbp"], conditions=["Flip", "RevealAfter"])
    items = [
        Item(item_id=f"i{k}", document="D.", candidate_1="a", candidate_2="b") for k in range(10)
    ]
    planned = count(cfg, protocols_for(cfg), items, builtin_conditions())
    # per item: Flip + RevealAfter's turn 1 (each the protocol's stages) + turn 2
    assert planned.requests == {"baseline": 10 * (2 + 1), "scot": 10 * (2 + 1), "pbp": 10 * (6 + 2)}


@pytest.mark.parametrize("protocol", ["baseline", "scot", "pbp"])
def test_reveal_after_sweep_on_the_fake_judge(tmp_path: Path, protocol: str) -> None:
    items = make_items(tmp_path / "items.jsonl", 2)
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, protocols=[protocol],
                           conditions=["Flip", "RevealAfter"], order="both")  # fmt: skip
        assert main(["--config", str(cfg), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
        bodies = [b["messages"] for b in judge.bodies]
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    flip = j.filter(pl.col("condition") == "Flip").sort("item_id", "order")
    rev = j.filter(pl.col("condition") == "RevealAfter").sort("item_id", "order")
    assert rev["verdict"].is_in(["A", "B", "Tie"]).all()
    assert rev["turn1_verdict"].to_list() == flip["verdict"].to_list()  # turn 1 is the Flip run
    stages = {"baseline": 1, "scot": 1, "pbp": 3}[protocol]
    extra = {"baseline": 1, "scot": 1, "pbp": 2}[protocol]
    assert (rev["n_requests"] == stages + extra).all()
    continued = [m for m in bodies if len(m) == 3]
    assert len(continued) == 4 * extra
    for messages in continued:  # the true labels, in screen order
        note = messages[2]["content"]
        if "scored again" in note:
            continue  # PBP's rank note shows scores only
        assert "(label = LLM)" in note
        assert "(label = TradML)" in note
        first = note.index("Summary 1 (label = ")
        assert note[first:].startswith(("Summary 1 (label = LLM)", "Summary 1 (label = TradML)"))
    if protocol != "baseline":
        for row in rev.iter_rows(named=True):
            details = orjson.loads(row["details"])
            assert row["score_verdict"] == details["score_verdict"]
            assert "turn1" in details
            assert details["turn1"]["score_verdict"] in {"A", "B", "Tie"}
    if protocol == "pbp":
        assert (rev["verdict"] == rev["score_verdict"]).all()
