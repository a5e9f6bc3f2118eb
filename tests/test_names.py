"""Label schemes (``names``): numbers keeps every prompt, schema, key and digest; letters and ids
rename the screen in every built-in prompt and reply schema and read replies back in screen
terms; a list judges Blind again under each further scheme; the self-test recovers a planted
per-scheme position lean exactly."""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ValidationError

from judgeprobe.conditions import NAMED_BLIND, builtin_conditions
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.manifest import label_schemes
from judgeprobe.cue.stream import count, cue_jobs, protocols_for
from judgeprobe.prompts import load_template
from judgeprobe.prompts.task import CRITERIA, DEFAULT, Task
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.names import LETTERS, NUMBERS, SCHEMES, scheme_of, screen_names
from judgeprobe.protocols.pressure import press
from judgeprobe.protocols.replies import (
    LockReply,
    PairwiseReply,
    RankReply,
    ScoreReply,
    ScotReply,
    named,
)
from judgeprobe.protocols.reveal import Recorder, reveal
from judgeprobe.selftest.__main__ import main as selftest_main
from judgeprobe.selftest.server import names_in, read_materials
from tests.conftest import make_items
from tests.test_reveal import Scripted

MODELS: list[type[BaseModel]] = [PairwiseReply, ScotReply, LockReply, ScoreReply, RankReply]
IDS = screen_names("ids", "doc-0001")


def _templates() -> list[str]:
    folder = resources.files("judgeprobe.prompts").joinpath("templates")
    return sorted(p.name.removesuffix(".txt") for p in folder.iterdir() if p.name.endswith(".txt"))


def _items(tmp_path: Path, n: int) -> list[Item]:
    path = make_items(tmp_path / "items.jsonl", n)
    return [Item.model_validate(orjson.loads(line)) for line in path.read_bytes().splitlines()]


def _cfg(**top: Any) -> SweepConfig:
    judges = [{"name": "j", "url": "http://127.0.0.1:9/v1"}]
    return SweepConfig(protocols=["baseline", "scot", "pbp"], judges=judges, **top)


# --- numbers: nothing changes -----------------------------------------------------------


def test_numbers_keeps_every_template_and_schema_byte_for_byte() -> None:
    for name in _templates():
        assert load_template(name, DEFAULT, NUMBERS) == load_template(name)
    for model in MODELS:
        assert named(model, NUMBERS) is model
    assert screen_names("numbers", "any") == ("1", "2")


def test_numbers_keeps_every_key_and_the_digest(tmp_path: Path) -> None:
    items, conditions = _items(tmp_path, 3), builtin_conditions()
    plain = _cfg(conditions=["Blind", "True", "RevealAfter", "Challenge", "FormatBullets"])
    keys = {
        str(names): [(j.key, j.template_hash) for j in
                     cue_jobs(cfg, protocols_for(cfg), items, conditions, {"j": "fp"})]
        for names, cfg in (("unset", plain), ("str", plain.model_copy(update={"names": "numbers"})),
                           ("list", plain.model_copy(update={"names": ["numbers"]})))
    }  # fmt: skip
    assert keys["unset"] == keys["str"] == keys["list"]
    assert plain.digest() == plain.model_copy(update={"names": ["numbers"]}).digest()
    assert plain.digest() != plain.model_copy(update={"names": "letters"}).digest()


# --- the schemes --------------------------------------------------------------------------


def test_ids_are_stable_per_item_distinct_and_drawn() -> None:
    ids = [screen_names("ids", f"doc-{i:04d}") for i in range(200)]
    assert ids == [screen_names("ids", f"doc-{i:04d}") for i in range(200)]
    assert all(a != b and len(a) == len(b) == 3 and a.isupper() for a, b in ids)
    assert len(set(ids)) > 150
    assert all(scheme_of(pair) == "ids" for pair in ids)
    assert (scheme_of(NUMBERS), scheme_of(LETTERS)) == ("numbers", "letters")


@pytest.mark.parametrize("names", [LETTERS, IDS], ids=["letters", "ids"])
def test_every_template_names_the_screen_as_the_scheme(names: tuple[str, str]) -> None:
    a, b = names
    for name in _templates():
        text = load_template(name, DEFAULT, names).text
        for numbered in ("Summary 1", "Summary 2", "summary_1", "summary_2", "[1,2]", "[2,1]"):
            assert numbered not in text, (name, numbered)
        if "[1,2]" in load_template(name).text:
            assert f"[{a},{b}]" in text
            assert f"Summary {a} is better" in text or name == "reveal_v1"  # every wording
    materials = load_template("materials_v1", DEFAULT, names).text
    assert f"Summary {a}{{LABEL_1}}:" in materials
    assert f"Summary {b}{{LABEL_2}}:" in materials


@pytest.mark.parametrize("names", [LETTERS, IDS], ids=["letters", "ids"])
def test_reply_schemas_follow_the_scheme_and_read_back_in_screen_terms(
    names: tuple[str, str],
) -> None:
    a, b = names
    for model in MODELS:
        asked = named(model, names).model_json_schema()
        text = orjson.dumps(asked).decode()
        assert "summary_1" not in text
        assert "[1,2]" not in text
        assert asked["title"] == model.model_json_schema()["title"]  # the stage is its title
        assert names_in(asked) == names  # what the simulated judge reads from it
    pairwise = named(PairwiseReply, names)
    enum = pairwise.model_json_schema()["properties"]["verdict"]["enum"]
    assert enum == [f"[{a},{b}]", f"[{b},{a}]", "Tie"]
    got = pairwise.model_validate({"verdict": f"[{b}, {a}]".lower(), "explanation": "x"})
    assert got.verdict == "[2,1]"  # screen terms: the second-shown summary preferred
    assert got.model_dump(by_alias=True)["verdict"] == f"[{b},{a}]"  # as stored: as asked
    assert pairwise.model_validate(got.model_dump(by_alias=True)) == got
    with pytest.raises(ValidationError):
        pairwise.model_validate({"verdict": "[1,2]", "explanation": "x"})  # numbers: refused
    scot = named(ScotReply, names).model_validate({
        "criteria": {c: {"notes": "n", f"summary_{a}": 4, f"summary_{b}": 2} for c in CRITERIA},
        "verdict": "Tie", "explanation": "x",
    })  # fmt: skip
    assert scot.model_dump()["criteria"]["accuracy"] == {"notes": "n", "summary_1": 4,
                                                         "summary_2": 2}  # fmt: skip
    scores = named(ScoreReply, names)
    with pytest.raises(ValidationError):  # the numbers keys are not the scheme's
        scores.model_validate({c: {"summary_1": 1, "summary_2": 2} for c in CRITERIA})
    assert scores is named(ScoreReply, names)  # one class per scheme


# --- protocols: turn 1, Reveal-After, pressure -------------------------------------------

SHOWN = Presentation("The document.", "Text one.", "Text two.", "LLM", "Human", LETTERS)


def _side(a: int, b: int) -> dict[str, dict[str, int]]:
    return {c: {"summary_A": a, "summary_B": b} for c in CRITERIA}


def test_every_protocol_asks_and_reads_under_letters() -> None:
    lock = {c: {f"summary_{k}": {"note": "Fine.", "quotes": ["Text one."]} for k in "AB"}
            for c in CRITERIA}  # fmt: skip
    replies: dict[str, list[dict[str, Any]]] = {
        "pairwise_verdict": [{"verdict": "[B,A]", "explanation": "B."},
                             {"verdict": "[A,B]", "explanation": "A."}],
        "scot_verdict": [{"criteria": {c: {"notes": "n", **v} for c, v in _side(2, 4).items()},
                          "verdict": "[B,A]", "explanation": "B."}],
        "pbp_lock": [lock],
        "pbp_score": [_side(4, 3), _side(3, 4)],
        "pbp_rank": [{"verdict": "[A,B]", "justification": "a"},
                     {"verdict": "[B,A]", "justification": "b"}],
    }  # fmt: skip
    protocols = protocols_for(_cfg())
    ask = Scripted(replies)

    async def judge() -> list[Any]:
        out = []
        turn1 = Recorder(ask)
        first = await protocols["baseline"].run(SHOWN, turn1)
        out += [first, await press(protocols["baseline"], first, turn1, "disagree", 2, ask,
                                   SHOWN.names)]  # fmt: skip
        out.append(await protocols["scot"].run(SHOWN, Recorder(ask)))
        turn1 = Recorder(ask)
        first = await protocols["pbp"].run(SHOWN, turn1)
        out += [first, await reveal(protocols["pbp"], first, turn1, SHOWN, ask)]
        return out

    base, pushed, scot, pbp, revealed = asyncio.run(judge())
    assert (base.verdict, pushed.verdict, scot.verdict) == ("[2,1]", "[1,2]", "[2,1]")
    assert scot.details["criteria"]["accuracy"]["summary_2"] == 4
    assert (pbp.verdict, revealed.verdict) == ("[1,2]", "[2,1]")  # computed from the scores
    assert set(pbp.details["notes"]["accuracy"]) == {"summary_1", "summary_2"}
    sent = "\n".join(m["content"] for _, messages in ask.sent for m in messages)
    assert "Summary 1" not in sent
    assert "summary_1" not in sent
    assert "[1,2]" not in sent
    assert "I think Summary B is better." in sent  # Disagree names the screen's summary
    assert "Summary A (label = LLM):" in sent
    assert '"summary_A": 4' in sent  # PBP shows its scores to the rank stage as asked
    assert read_materials(ask.sent[0][1][0]["content"], LETTERS) == SHOWN


# --- the plan -------------------------------------------------------------------------------


def test_a_list_judges_blind_again_in_both_orders_under_each_further_scheme(
    tmp_path: Path,
) -> None:
    items, conditions = _items(tmp_path, 3), builtin_conditions()
    cfg = _cfg(conditions=["Blind", "True"], names=["letters", "ids", "numbers"], order="12",
               swap=0.0)  # fmt: skip
    protocols = protocols_for(cfg)
    jobs = list(cue_jobs(cfg, protocols, items, conditions, {"j": "fp"}))
    keys = [j.key for j in jobs]
    assert len(set(keys)) == len(keys)
    first = [j for j in jobs if j.condition in ("Blind", "True")]
    assert {j.presentation.names for j in first} == {LETTERS}  # the sweep's own scheme
    assert {j.order for j in first} == {"12"}
    for scheme in ("ids", "numbers"):
        extra = [j for j in jobs if j.condition == NAMED_BLIND[scheme]]
        assert len(extra) == len(items) * 2 * 3  # both orders, three protocols
        assert {j.order for j in extra} == {"12", "21"}
        assert {scheme_of(j.presentation.names) for j in extra} == {scheme}
        assert {j.target for j in extra} == {"none"}
    assert count(cfg, protocols, items, conditions).judgments == len(jobs)
    hashes = {j.template_hash for j in jobs if j.protocol.name == "baseline"}
    assert len(hashes) == 2 + len(items)  # letters, numbers, and each item's own IDs


def test_bad_names_are_one_line_errors() -> None:
    with pytest.raises(ValidationError, match="each scheme once"):
        _cfg(names=["letters", "letters"])
    with pytest.raises(ValidationError, match="add Blind"):
        _cfg(names=["numbers", "letters"], conditions=["True"])
    with pytest.raises(ValidationError, match="names"):
        _cfg(names="roman")
    with pytest.raises(ValidationError, match="protocol own"):
        SweepConfig(protocols=["own"], names="letters",
                    judges=[{"name": "j", "url": "http://127.0.0.1:9/v1", "prompt": str(
                        Path(__file__).resolve().parents[1] / "judgeprobe" / "selftest" /
                        "own_prompt.txt"), "verdict": {"pattern": r"\[\[(A|B|C)\]\]",
                        "map": {"A": "1", "B": "2", "C": "tie"}}}])  # fmt: skip
    assert SCHEMES == ("numbers", "letters", "ids")


# --- end to end: the planted lean per scheme -----------------------------------------------


def test_selftest_recovers_a_position_lean_per_scheme_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = selftest_main(["--out", str(tmp_path / "run"), "--items", "8",
                          "--position-letters", "0.7", "--position-ids", "0.0"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    for scheme, rate in (("letters", "0.700"), ("ids", "0.000")):
        lines = [line for line in out.splitlines() if line.split()[1:3] == [scheme, "position"]]
        assert len(lines) == 3, out  # one per protocol
        assert all(line.startswith("PASS") and f"planted {rate}" in line for line in lines)
    card = (tmp_path / "run" / "card.md").read_text()
    assert "position (letters)" in card
    assert "position (ids)" in card


def test_the_manifest_records_what_each_scheme_asked_with() -> None:
    cfg = _cfg(names=["numbers", "letters", "ids"])
    got = label_schemes(cfg, protocols_for(cfg))
    assert list(got) == ["numbers", "letters", "ids"]
    assert got["numbers"]["names"] == ["1", "2"]
    assert got["letters"]["names"] == ["A", "B"]
    assert got["numbers"]["protocol_templates"] != got["letters"]["protocol_templates"]
    assert got["numbers"]["schemas"]["pairwise_verdict"] != got["letters"]["schemas"][
        "pairwise_verdict"]  # fmt: skip
    assert "per item" in got["ids"]["names"]


def test_a_scheme_and_a_task_compose() -> None:
    text = load_template("baseline_v1", Task.model_validate("qa"), LETTERS).text
    assert '"[A,B]" means Answer A is better' in text
    assert "Summary" not in text
