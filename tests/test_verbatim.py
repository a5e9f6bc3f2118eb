"""A judge exactly as its users run it: the start-up probe asks only for what the sweep sends;
its system prompt, messages and placeholder names are sent as written, filled from the screen
slots, item fields and conversation turns they name."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from pydantic import ValidationError

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import builtin_conditions
from judgeprobe.core.layouts import item_fields
from judgeprobe.core.records import Item
from judgeprobe.cue.own import check_conditions, check_items
from judgeprobe.engine.settings import JudgeConfig, ScoreFormat
from judgeprobe.engine.validate import ReplyError, parse_reply
from judgeprobe.prompts import load_prompt_file
from judgeprobe.prompts.judge import addressed_texts
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.own import screen_values
from judgeprobe.protocols.pointwise import derived, score_reply_model
from tests.conftest import make_items, run_cli, write_config
from tests.fakeserver import FakeJudge

PAIR_VERDICT = '{ pattern = \'\\[\\[(A|B|C)\\]\\]\', map = { A = "1", B = "2", C = "tie" } }'
PAIR_PROMPT = "Q: {CONTEXT}\nA: {RESPONSE_1}\nB: {RESPONSE_2}\nEnd with [[A]], [[B]] or [[C]].\n"


def _judge_config(tmp_path: Path, url: str, judge: str, protocols: list[str], **top: Any) -> Path:
    """A sweep of three items and two conditions against one judge given as TOML lines."""
    items = tmp_path / "i.jsonl"
    if not items.exists():
        make_items(items, 3)
    cfg = write_config(tmp_path / "c.toml", url, items, protocols=protocols,
                       conditions=["Blind", "True"], **top)  # fmt: skip
    head = cfg.read_text().split("[[judges]]")[0]
    cfg.write_text(f'{head}[[judges]]\nname = "mine"\nurl = "{url}"\n{judge}')
    return cfg


def _pattern_judge(tmp_path: Path) -> str:
    (tmp_path / "p.txt").write_text(PAIR_PROMPT)
    return f'prompt = "{tmp_path / "p.txt"}"\nverdict = {PAIR_VERDICT}\n'


def test_a_text_judge_on_a_server_without_structured_output_is_audited(tmp_path: Path) -> None:
    """The server drops response_format: a pattern verdict needs none, so the sweep runs."""
    with FakeJudge(ignore_schema=True, free_text="A reads better.\n[[A]]") as judge:
        cfg = _judge_config(tmp_path, judge.url, _pattern_judge(tmp_path), ["own"])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        sent = judge.bodies
    assert proc.returncode in (0, 4), proc.stderr
    assert "structured-output" not in proc.stderr
    frame = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert frame.height == 6
    assert set(frame["raw_verdict"]) == {"[1,2]"}
    assert all("response_format" not in body for body in sent)  # the probe sent none either


def test_a_judge_that_will_be_sent_a_schema_is_still_checked(tmp_path: Path) -> None:
    """The same server is refused in one line once a built-in protocol or a JSON verdict
    would send it a schema it does not enforce; nothing is written."""
    json_verdict = '{ json = "winner", map = { A = "1", B = "2" } }'
    (tmp_path / "p.txt").write_text(PAIR_PROMPT)
    for judge, protocols in (
        (_pattern_judge(tmp_path), ["own", "baseline"]),
        (f'prompt = "{tmp_path / "p.txt"}"\nverdict = {json_verdict}\n', ["own"]),
    ):
        with FakeJudge(ignore_schema=True, free_text='{"winner": "A"}') as fake:
            cfg = _judge_config(tmp_path, fake.url, judge, protocols)
            proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        line = _refused(proc, tmp_path / "run")
        assert "structured-output check" in line
        assert "enforce" in line


def test_a_text_judge_whose_server_gives_no_reply_is_one_line(tmp_path: Path) -> None:
    with FakeJudge(ignore_schema=True, free_text="   ") as judge:
        cfg = _judge_config(tmp_path, judge.url, _pattern_judge(tmp_path), ["own"])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    line = _refused(proc, tmp_path / "run")
    assert "no usable reply" in line
    assert "empty reply" in line


def _refused(proc: subprocess.CompletedProcess[str], out: Path) -> str:
    """The one line a refused sweep said (exit 2, no run directory ``out``)."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert not out.exists()
    return lines[0]


SYSTEM = "You judge two answers. Finish with [[A]], [[B]] or [[C]].\n"
USER = (
    "[Question]\n{question}\n\n[Answer A]\n{answer_a}\n\n[Answer B]\n{answer_b}\n\n"
    "[Reference]\n{ref_answer_1}\n{{not a placeholder}}\n"
)
PLACES = {
    "question": "context",
    "answer_a": "response_1",
    "answer_b": "response_2",
    "ref_answer_1": "reference",
}


def _verbatim(tmp_path: Path, **extra: object) -> JudgeConfig:
    (tmp_path / "system.txt").write_text(SYSTEM)
    (tmp_path / "user.txt").write_text(USER)
    fields: dict[str, object] = {
        "name": "pair", "url": "http://h/v1", "system": str(tmp_path / "system.txt"),
        "prompt": str(tmp_path / "user.txt"), "placeholders": PLACES,
        "verdict": {"pattern": r"\[\[(A|B|C)\]\]", "map": {"A": "1", "B": "2", "C": "tie"}},
    }  # fmt: skip
    return JudgeConfig.model_validate(fields | extra)


def test_a_system_prompt_and_own_placeholder_names_are_sent_as_written(tmp_path: Path) -> None:
    judge = _verbatim(tmp_path)
    prompt = judge.judge_prompt
    assert prompt is not None
    item = Item.model_validate({"item_id": "i", "document": "Q?", "candidate_1": "one",
                                "candidate_2": "two", "reference": "R!"})  # fmt: skip
    shown = Presentation("Q?", "two", "one", "LLM", "", addressed=(("reference", "R!"),))
    sent = prompt.fill(screen_values(prompt, shown))
    assert [m["role"] for m in sent] == ["system", "user"]
    assert sent[0]["content"] == SYSTEM
    assert sent[1]["content"] == (
        "[Question]\nQ?\n\n[Answer A]\n(label = LLM)\ntwo\n\n[Answer B]\none\n\n"
        "[Reference]\nR!\n{not a placeholder}\n"
    )
    assert addressed_texts(prompt.on_screen, item, swap=True) == (("reference", "R!"),)
    # Every text and the mapping are in the judgments' hash; the record names both files.
    record = judge.own_record()
    assert record["system"]["sha256"] == load_prompt_file(str(tmp_path / "system.txt")).sha256
    assert record["template_hash"] == prompt.sha256 != record["sha256"]
    other = _verbatim(tmp_path, placeholders={**PLACES, "ref_answer_1": {"text": "none"}})
    assert other.judge_prompt is not None
    assert other.judge_prompt.sha256 != prompt.sha256


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"placeholders": {k: v for k, v in PLACES.items() if k != "answer_b"}},
         "placeholder {answer_b} is not mapped"),
        ({"placeholders": {**PLACES, "rubric": "rubric"}}, "{rubric} is in no text"),
        ({"placeholders": {**PLACES, "answer_b": "response"}}, "screen slots are context, "),
        ({"placeholders": {**PLACES, "answer_b": "reference"}}, "no placeholder is filled from "
         "response_2"),
        ({"placeholders": {**PLACES, "answer_b": "turn_0.response_2"}}, "K from 1"),
        ({"messages": "m.json", "prompt": ""}, "system goes beside prompt"),
    ],
)  # fmt: skip
def test_a_prompt_that_cannot_be_filled_is_refused(
    tmp_path: Path, extra: dict[str, object], needle: str
) -> None:
    with pytest.raises(ValidationError, match=re.escape(needle)):
        _verbatim(tmp_path, **extra)


def test_a_bad_messages_file_is_one_line(tmp_path: Path) -> None:
    for text, needle in (
        ("[]", "non-empty list"),
        ('[{"role": "user"}]', "message 1: content"),
        ('[{"role": "user", "content": "{x}"}, {"role": "assistant", "content": "ok"}]',
         "the last message must be the user's"),
        ('[{"role": "user", "content": "{x!r}"}]', "not a plain name"),
    ):  # fmt: skip
        path = tmp_path / f"m{len(text)}.json"  # prompt files are read once per path
        path.write_text(text)
        with pytest.raises(ValidationError, match=re.escape(needle)):
            _verbatim(tmp_path, prompt="", system="", messages=str(path),
                      placeholders={"x": "response_1"})  # fmt: skip


TURNS = [
    {"role": "system", "content": "Judge the two conversations."},
    {"role": "user", "content": "Q1: {question_1}\nA: {answer_a_1}\nB: {answer_b_1}"},
    {"role": "assistant", "content": "Noted."},
    {"role": "user", "content": "Q2: {question_2}\nA: {answer_a_2}\nB: {answer_b_2}\n"
                                "Answer [[A]], [[B]] or [[C]]."},
]  # fmt: skip
TURN_PLACES = {"question_1": "turn_1.user", "answer_a_1": "turn_1.response_1",
               "answer_b_1": "turn_1.response_2", "question_2": "turn_2.user",
               "answer_a_2": "turn_2.response_1", "answer_b_2": "turn_2.response_2"}  # fmt: skip


def _conversation(replies: tuple[str, str]) -> list[dict[str, str]]:
    turns = [("user", "q1"), ("assistant", replies[0]), ("user", "q2"), ("assistant", replies[1])]
    return [{"role": role, "content": content} for role, content in turns]


def test_a_multi_turn_judge_addresses_each_turn_in_screen_order(tmp_path: Path) -> None:
    """MT-Bench's human judgments (conversation_a/_b): each turn by name, the responses in the
    order shown, the label above each response's first turn; a text cue is refused."""
    (tmp_path / "m.json").write_bytes(orjson.dumps(TURNS))
    judge = _verbatim(tmp_path, prompt="", system="", messages=str(tmp_path / "m.json"),
                      placeholders=TURN_PLACES)  # fmt: skip
    prompt = judge.judge_prompt
    assert prompt is not None
    row = {"question_id": 7, "winner": "model_a", "model_a": "LLM", "model_b": "Human",
           "conversation_a": _conversation(("a1", "a2")),
           "conversation_b": _conversation(("b1", "b2"))}  # fmt: skip
    item = Item.model_validate(item_fields(row, "r"))
    addressed = addressed_texts(prompt.on_screen, item, swap=True)
    shown = Presentation(item.document, item.candidate_2, item.candidate_1, "Human", "LLM",
                         addressed=addressed)  # fmt: skip
    sent = prompt.fill(screen_values(prompt, shown))
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "Q1: q1\nA: (label = Human)\nb1\nB: (label = LLM)\na1"
    assert sent[3]["content"].startswith("Q2: q2\nA: b2\nB: a2\n")
    conditions = builtin_conditions()
    check_conditions([judge], {"True": conditions["True"]}, [item])
    with pytest.raises(JudgeprobeError, match="shows the conversation's own turns"):
        check_conditions([judge], {"Verbosity": conditions["Verbosity"]}, [item])
    one_turn = Item.model_validate(item_fields({**row, "turn": 1}, "r1"))
    with pytest.raises(JudgeprobeError, match=r"\{answer_a_2\} is filled from 'turn_2.response_1'"):
        check_items([judge], [one_turn])


def test_an_item_without_a_mapped_field_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    (tmp_path / "system.txt").write_text(SYSTEM)
    (tmp_path / "user.txt").write_text(USER)
    places = ", ".join(f'{k} = "{v}"' for k, v in PLACES.items())
    judge = (f'system = "{tmp_path / "system.txt"}"\nprompt = "{tmp_path / "user.txt"}"\n'
             f"placeholders = {{ {places} }}\nverdict = {PAIR_VERDICT}\n")  # fmt: skip
    with FakeJudge(free_text="[[A]]") as fake:
        cfg = _judge_config(tmp_path, fake.url, judge, ["own"])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        sent = fake.chat_requests
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert "item doc-0000 (synthetic): judge mine's placeholder {ref_answer_1}" in lines[0]
    assert "'reference', a field it does not have" in lines[0]
    assert sent == 0
    assert not (tmp_path / "run").exists()


def test_a_verbatim_judge_runs_end_to_end_with_its_item_fields(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 3)
    rows = [orjson.loads(line) for line in items.read_text().splitlines()]
    items.write_bytes(b"".join(orjson.dumps({**r, "reference": f"ref {r['item_id']}"}) + b"\n"
                               for r in rows))  # fmt: skip
    (tmp_path / "system.txt").write_text(SYSTEM)
    (tmp_path / "user.txt").write_text(USER)
    places = ", ".join(f'{k} = "{v}"' for k, v in PLACES.items())
    judge = (f'system = "{tmp_path / "system.txt"}"\nprompt = "{tmp_path / "user.txt"}"\n'
             f"placeholders = {{ {places} }}\nverdict = {PAIR_VERDICT}\n")  # fmt: skip
    with FakeJudge(ignore_schema=True, free_text="B is closer.\n[[B]]") as fake:
        cfg = _judge_config(tmp_path, fake.url, judge, ["own"], order="both")
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        sent = [b["messages"] for b in fake.bodies]
    assert proc.returncode in (0, 4), proc.stderr
    frame = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert frame.height == 12
    assert set(frame["raw_verdict"]) == {"[2,1]"}
    assert all(m[0] == {"role": "system", "content": SYSTEM} for m in sent)
    assert {m[1]["content"].split("[Reference]\n")[1] for m in sent} == {
        f"ref doc-000{i}\n{{not a placeholder}}\n" for i in range(3)
    }
    manifest = orjson.loads((tmp_path / "run" / "manifest.json").read_bytes())
    record = manifest["own_prompts"]["mine"]
    assert set(frame["template_hash"]) == {record["template_hash"]}
    assert record["placeholders"]["ref_answer_1"] == "reference"


GRADED = {"pattern": r"GRADE:\s*(\w)", "map": {"C": 1, "P": 0.5, "I": 0}}


def test_a_graded_score_reads_each_category_on_a_scale_from_its_map() -> None:
    fmt = ScoreFormat.model_validate(GRADED)
    assert (fmt.min, fmt.max) == (0.0, 1.0)
    model = score_reply_model(fmt, "p")
    read = parse_reply("Partly right.\nGRADE: P", model, "stop")
    assert read.model_dump() == {"score": 0.5, "explanation": "Partly right."}
    with pytest.raises(ReplyError, match="grade 'X' is not one of 'C', 'I', 'P'"):
        parse_reply("GRADE: X", model, "stop")
    with pytest.raises(ReplyError, match="ambiguous score: C, I"):
        parse_reply("GRADE: C ... GRADE: I", model, "stop")
    sent = score_reply_model(ScoreFormat.model_validate({**GRADED, "pattern": "", "json": "g"}),
                             "p").schema_sent  # fmt: skip
    assert sent is not None
    assert sent["properties"]["g"] == {"type": "string", "enum": ["C", "I", "P"]}
    assert derived(1.0, 0.5) == "[1,2]"


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"max": 2}, "min and max of a graded score come from its map"),
        ({"map": {"C": 1, "I": 1}}, "at least two different values"),
        ({"map": {"C": "yes", "I": 0}}, "map.C"),
    ],
)
def test_a_bad_graded_score_is_refused(extra: dict[str, object], needle: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(needle)):
        ScoreFormat.model_validate({**GRADED, **extra})


def test_a_numeric_score_keeps_its_dump_and_repr() -> None:
    """Request keys, job keys and config digests of existing pointwise judges do not move."""
    fmt = ScoreFormat.model_validate({"pattern": r"(\d+)", "min": 1, "max": 10})
    assert "map" not in fmt.model_dump(by_alias=True)
    assert "map" not in repr(fmt)
    assert "map" in ScoreFormat.model_validate(GRADED).model_dump()
