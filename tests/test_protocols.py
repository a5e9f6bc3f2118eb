"""Protocols, Reveal-After, attacks and position swap, against the fake judge.

The fake server records every request body, so these tests assert on the exact messages
each stage sent.
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
from judgeprobe.cue.job import SCREEN_TO_CANDIDATE
from judgeprobe.cue.run import main
from judgeprobe.engine.store import Result
from judgeprobe.prompts import load_template
from judgeprobe.prompts.task import CRITERIA
from judgeprobe.protocols import PBP, SCoT
from judgeprobe.protocols.base import Asker, Message, Presentation
from judgeprobe.protocols.budget import size_budget
from judgeprobe.protocols.pbp import LOCK_TEMPLATE, as_text
from judgeprobe.protocols.quotes import nondiscriminating, verify_quote
from judgeprobe.protocols.replies import LockReply, RankReply, ScoreReply, ScotReply
from judgeprobe.protocols.scoring import verdict_from_scores
from judgeprobe.text.attacks import confidence, verbosity
from tests.conftest import make_items, write_config
from tests.fakeserver import FakeJudge


def _sweep(tmp_path: Path, judge: FakeJudge, **top: Any) -> pl.DataFrame:
    items = make_items(tmp_path / "items.jsonl", top.pop("n_items", 2))
    extra = top.pop("protocol_table", "")
    cfg = write_config(tmp_path / "c.toml", judge.url, items, **top)
    if extra:
        cfg.write_text(cfg.read_text() + "\n[protocol]\n" + extra + "\n")
    assert main(["--config", str(cfg), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    return pl.read_parquet(tmp_path / "run" / "judgments.parquet")


def _prompts(judge: FakeJudge) -> list[list[dict[str, str]]]:
    return [b["messages"] for b in judge.bodies]


# --- code-computed verdicts ------------------------------------------------------------------


def test_verdict_from_scores_sums_and_ties() -> None:
    scores = {"accuracy": (5, 3), "completeness": (2, 4), "conciseness": (3, 3), "fluency": (4, 4)}
    assert verdict_from_scores(scores) == "Tie"  # 14 vs 14
    assert verdict_from_scores({**scores, "fluency": (5, 4)}) == "[1,2]"
    assert verdict_from_scores({**scores, "fluency": (4, 5)}) == "[2,1]"
    assert verdict_from_scores({**scores, "fluency": (5, 4)}, tolerance=1.0) == "Tie"
    weights = {"accuracy": 2.0, "completeness": 1.0, "conciseness": 1.0, "fluency": 1.0}
    assert verdict_from_scores(scores, weights) == "[1,2]"  # 19 vs 17


# --- quote verification ---------------------------------------------------------------------

SOURCES = {
    "document": "The committee met on Tuesday and agreed a budget of four million.",
    "summary_1": "A budget was agreed.",
    "summary_2": "The committee met.",
}


def test_exact_quote_matches_its_source() -> None:
    q = verify_quote("agreed a budget of four million", SOURCES)
    assert q == {"quote": "agreed a budget of four million", "source": "document", "match": 1.0,
                 "fabricated": False}  # fmt: skip


def test_near_quote_survives_case_spacing_punctuation_and_a_typo() -> None:
    assert verify_quote("  A BUDGET, was agreed!", SOURCES)["match"] == 1.0
    near = verify_quote("the comittee met on tuesday", SOURCES)
    assert near["source"] == "document"
    assert 0.9 <= near["match"] < 1.0
    assert not near["fabricated"]


def test_fabricated_quote_is_flagged() -> None:
    q = verify_quote("the minister resigned in protest", SOURCES)
    assert q["fabricated"]
    assert q["source"] == ""
    assert q["match"] < 0.9


def _side(*quotes: tuple[str, str]) -> dict[str, Any]:
    return {"note": "n", "quotes": [{"quote": q, "source": src, "match": 1.0,
                                     "fabricated": src == ""} for q, src in quotes]}  # fmt: skip


def test_evidence_that_cannot_discriminate_is_counted_per_criterion() -> None:
    opening = ("The committee met.", "document")
    notes = {
        # the same span for both (even quoted from a summary): cannot tell them apart
        "accuracy": {"A": _side(("It met.", "A")), "B": _side(("it met", "B"))},
        # different spans, but both only the document's: cannot either
        "completeness": {"A": _side(opening), "B": _side(("A budget of four million", "document"))},
        # nothing traced anywhere (fabricated): cannot either
        "conciseness": {"A": _side(("invented", "")), "B": _side(("made up", ""))},
        # each side quotes its own text: can
        "fluency": {"A": _side(("It met.", "A")), "B": _side(opening, ("No meeting.", "B"))},
    }
    assert nondiscriminating(notes) == (4, 3)
    screen = {"accuracy": {"summary_1": _side(("x", "summary_1")),
                           "summary_2": _side(("y", "summary_2"))}}  # fmt: skip
    assert nondiscriminating(screen) == (1, 0)  # screen terms read the same
    assert nondiscriminating({}) == (0, 0)


def test_pbp_credits_a_quote_in_a_summary_and_the_document_to_the_summary() -> None:
    """An extractive summary copies the document: quoting it is still evidence about it."""
    p = Presentation(
        "The committee met on Tuesday.", "The committee met on Tuesday.", "No.", "", ""
    )
    evidence = {"note": "met", "quotes": ["committee met on Tuesday"]}
    notes = {c: {"summary_1": evidence, "summary_2": evidence} for c in CRITERIA}
    scores = {c: {"summary_1": 3, "summary_2": 3} for c in CRITERIA}
    rank = {"verdict": "Tie", "justification": "Even."}
    pbp = asyncio.run(PBP().run(p, _stub({LockReply: notes, ScoreReply: scores, RankReply: rank})))
    assert {q["source"] for c in CRITERIA for side in pbp.details["notes"][c].values()
            for q in side["quotes"]} == {"summary_1"}  # fmt: skip


# --- PBP ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("sees_texts", [True, False])
def test_pbp_stage_isolation_exact_messages(tmp_path: Path, sees_texts: bool) -> None:
    with FakeJudge() as judge:
        j = _sweep(
            tmp_path, judge, n_items=1, protocols=["pbp"], conditions=["True"], order="12",
            protocol_table=f"pbp_score_sees_texts = {'true' if sees_texts else 'false'}",
        )  # fmt: skip
        lock, score, rank = _prompts(judge)
        budgets = [b["max_tokens"] for b in judge.bodies]
    item = orjson.loads((tmp_path / "items.jsonl").read_bytes().splitlines()[0])
    p = Presentation(item["document"], item["candidate_1"], item["candidate_2"], "LLM", "TradML")
    assert lock == [{"role": "user", "content": load_template(LOCK_TEMPLATE).fill(
        {"MATERIALS": p.materials()})}]  # fmt: skip
    # Each stage asks for the budget sized from its schema, as the manifest records it.
    manifest = orjson.loads((tmp_path / "run" / "manifest.json").read_bytes())
    assert manifest["budgets"]["pbp"] == {"lock": budgets[0], "score": budgets[1],
                                          "rank": budgets[2]}  # fmt: skip
    assert budgets == [size_budget(m) for m in (LockReply, ScoreReply, RankReply)]
    # Stage 2 sees the locked notes exactly as stage 1 returned them, and the texts only if allowed.
    notes = orjson.loads(judge_reply(lock))
    want_score = load_template("pbp_score_v1").fill(
        {"MATERIALS": p.materials() if sees_texts else "", "LOCKED_NOTES": as_text(notes)}
    )
    assert score == [{"role": "user", "content": want_score}]
    if not sees_texts:
        for text in (item["document"], item["candidate_1"], item["candidate_2"], "LLM", "TradML"):
            assert text not in score[0]["content"]
    # Stage 3 sees notes and scores only: never the texts or the labels.
    scores = orjson.loads(judge_reply(score))
    assert rank == [{"role": "user", "content": load_template("pbp_rank_v1").fill(
        {"LOCKED_NOTES": as_text(notes), "SCORES": as_text(scores)})}]  # fmt: skip
    for text in (item["document"], item["candidate_1"], "(label = LLM)"):
        assert text not in rank[0]["content"]
    row = j.row(0, named=True)
    pairs = {c: (v["summary_1"], v["summary_2"]) for c, v in scores.items()}
    assert row["raw_verdict"] == verdict_from_scores(pairs)  # the verdict is computed by code
    assert row["score_verdict"] == row["verdict"]
    stated = SCREEN_TO_CANDIDATE["12"][orjson.loads(judge_reply(rank))["verdict"]]
    assert row["stated_verdict"] == stated
    assert row["verdict_score_agree"] == (stated == row["verdict"])
    assert row["n_requests"] == 3
    assert row["n_quotes"] == 8  # 4 criteria × 2 summaries × 1 quote
    details = orjson.loads(row["details"])
    assert set(details["notes"]["accuracy"]) == {"A", "B"}
    assert set(details["scores"]["fluency"]) == {"A", "B"}


def judge_reply(messages: list[dict[str, str]]) -> str:
    """What the fake judge answered to these messages (it is deterministic)."""
    from judgeprobe.engine.cached import schema_of
    from judgeprobe.protocols import replies
    from tests.fakeserver import reply_for

    content = messages[0]["content"]
    model = {
        "pbp_lock": replies.LockReply,
        "pbp_score": replies.ScoreReply,
        "pbp_rank": replies.RankReply,
    }["pbp_lock" if "Do not give scores" in content else
      "pbp_score" if "assign a score" in content else "pbp_rank"]  # fmt: skip
    return reply_for(orjson.dumps(messages[:1]).decode(), schema_of(model))


def test_scot_stores_notes_scores_and_both_verdicts(tmp_path: Path) -> None:
    with FakeJudge() as judge:
        j = _sweep(tmp_path, judge, protocols=["scot"], conditions=["Blind"])
    for row in j.iter_rows(named=True):
        details = orjson.loads(row["details"])
        assert set(details["criteria"]) == {"accuracy", "completeness", "conciseness", "fluency"}
        assert {"notes", "A", "B"} == set(details["criteria"]["accuracy"])
        assert row["stated_verdict"] == row["verdict"]
        assert row["score_verdict"] in {"A", "B", "Tie"}
        assert row["verdict_score_agree"] == (row["score_verdict"] == row["verdict"])


def _stub(replies: dict[type[BaseModel], dict[str, Any]]) -> Asker:
    """An asker that answers each reply model with fixed stored data, as the store keeps it."""

    async def ask(
        messages: Sequence[Message], reply_model: type[BaseModel], max_tokens: int
    ) -> Result:
        data = replies[reply_model]
        raw = orjson.dumps(data).decode()
        return Result(key=reply_model.__name__, status="valid", reply=data, raw=raw)

    return ask


def test_details_hold_the_stored_replies_as_plain_data() -> None:
    """Protocols read typed replies, but the details they store stay the replies' plain data."""
    p = Presentation("The committee met on Tuesday.", "It met.", "No meeting.", "LLM", "")
    criteria = {c: {"notes": f"{c} note", "summary_1": 4, "summary_2": i}
                for i, c in enumerate(CRITERIA)}  # fmt: skip
    scot = asyncio.run(SCoT().run(p, _stub({ScotReply: {
        "criteria": criteria, "verdict": "[2,1]", "explanation": "Because."}})))  # fmt: skip
    assert (scot.verdict, scot.explanation) == ("[2,1]", "Because.")
    assert scot.details == {
        "criteria": criteria,
        "score_verdict": "[1,2]",
        "stated_verdict": "[2,1]",
    }
    evidence = {"note": "met", "quotes": ["committee met"]}
    notes = {c: {"summary_1": evidence, "summary_2": evidence} for c in CRITERIA}
    scores = {c: {"summary_1": 1, "summary_2": 3} for c in CRITERIA}
    rank = {"verdict": "[1,2]", "justification": "Summary 2 invents nothing."}
    pbp = asyncio.run(PBP().run(p, _stub({LockReply: notes, ScoreReply: scores, RankReply: rank})))
    checked = {"note": "met", "quotes": [verify_quote("committee met", {
        "document": p.document, "summary_1": p.text_1, "summary_2": p.text_2})]}  # fmt: skip
    assert (pbp.verdict, pbp.explanation) == ("[2,1]", "Summary 2 invents nothing.")
    assert pbp.details == {
        "notes": {c: {"summary_1": checked, "summary_2": checked} for c in CRITERIA},
        "scores": scores,
        "score_verdict": "[2,1]",
        "stated_verdict": "[1,2]",
    }
    assert orjson.loads(orjson.dumps(pbp.details)) == pbp.details  # stored as JSON unchanged


# --- Reveal-After ------------------------------------------------------------------------------


def test_reveal_after_is_flip_then_reveal_in_one_conversation(tmp_path: Path) -> None:
    with FakeJudge() as judge:
        j = _sweep(tmp_path, judge, protocols=["baseline"], conditions=["Flip", "RevealAfter"],
                   order="12")  # fmt: skip
        prompts = _prompts(judge)
    flip = j.filter(pl.col("condition") == "Flip").sort("item_id")
    reveal = j.filter(pl.col("condition") == "RevealAfter").sort("item_id")
    # Turn 1 is exactly the Flip judgment (same cached request), linked on the same row.
    assert reveal["turn1_verdict"].to_list() == flip["verdict"].to_list()
    assert (reveal["turn1_target"] == "B").all()
    assert (reveal["target"] == "A").all()
    assert (reveal["n_requests"] == 2).all()
    two_turn = [m for m in prompts if len(m) == 3]
    assert len(two_turn) == 2  # one turn-2 request per item; turn 1 was reused from Flip
    first, answer, reveal_note = two_turn[0]
    assert "(label = TradML)" in first["content"].split("Summary 2")[0]  # flipped labels
    assert answer["role"] == "assistant"
    assert orjson.loads(answer["content"])["verdict"]
    # Turn 2 shows the same materials with the true labels (tests/test_reveal.py: all protocols).
    truth = first["content"].replace("(label = TradML)", "(label = X)").replace(
        "(label = LLM)", "(label = TradML)").replace("(label = X)", "(label = LLM)")  # fmt: skip
    assert reveal_note["role"] == "user"
    assert "Correction:" in reveal_note["content"]
    assert truth.split("Document:", 1)[1].split("Output:")[0] in reveal_note["content"]


# --- position swap and attacks -----------------------------------------------------------------


def test_swap_maps_back_to_candidate_identity(tmp_path: Path) -> None:
    with FakeJudge() as judge:
        j = _sweep(tmp_path, judge, protocols=["baseline"], conditions=["True"], order="both")
        prompts = _prompts(judge)
    assert sorted(j["order"].to_list()) == ["12", "12", "21", "21"]
    for row in j.iter_rows(named=True):
        assert row["verdict"] == SCREEN_TO_CANDIDATE[row["order"]][row["raw_verdict"]]
        assert (row["label_1"], row["label_2"]) == ("LLM", "TradML")  # candidate terms
    swapped = [m[0]["content"] for m in prompts if "Summary 1 (label = TradML)" in m[0]["content"]]
    assert len(swapped) == 2  # in order 21, candidate 2 (TradML) is shown first
    assert all("Summary two of document" in p.split("Summary 2")[0] for p in swapped)


def test_attack_conditions_rewrite_the_target_only(tmp_path: Path) -> None:
    with FakeJudge() as judge:
        j = _sweep(tmp_path, judge, n_items=1, protocols=["baseline"], order="12",
                   conditions=["Blind", "Verbosity", "Confidence"])  # fmt: skip
        prompts = {b["messages"][0]["content"] for b in judge.bodies}
    item = orjson.loads((tmp_path / "items.jsonl").read_bytes().splitlines()[0])
    assert any(verbosity(item["candidate_1"]) in p for p in prompts)
    assert any(confidence(item["candidate_1"]) in p for p in prompts)
    assert all(item["candidate_2"] in p for p in prompts)
    attacked = j.filter(pl.col("attack") != "")
    assert sorted(attacked["attack"].to_list()) == ["confidence", "verbosity"]
    assert (attacked["target"] == "A").all()


def test_attack_conditions_prefer_a_prepared_attack() -> None:
    item = Item(item_id="d", document="Doc.", candidate_1="Plain.", candidate_2="Other.",
                verbosity_1="Plain, said at length.")  # fmt: skip
    conditions = builtin_conditions()
    assert conditions["Verbosity"].resolve(item).text_1 == "Plain, said at length."
    assert conditions["Confidence"].resolve(item).text_1 == confidence("Plain.")  # none prepared
    assert conditions["Verbosity"].resolve(item).text_2 == "Other."


def test_attacks_are_deterministic_and_add_no_facts() -> None:
    import re

    text = "Perhaps the firm grew 12% in 2023. It arguably hired 40 engineers."
    for attack in (verbosity, confidence):
        out = attack(text)
        assert out == attack(text)
        assert set(re.findall(r"\d+", out)) == set(re.findall(r"\d+", text))
    assert "erhaps" not in confidence(text)
    assert "arguably" not in confidence(text)
    assert len(verbosity(text)) > len(text)
