"""Protocol ``own``: a judge's own prompt file and verdict format, read and refused exactly."""

from __future__ import annotations

from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import LabelCondition, builtin_conditions
from judgeprobe.core.records import Item
from judgeprobe.cue.own import check_conditions
from judgeprobe.engine.cached import schema_of
from judgeprobe.engine.client import ServerInfo, chat_body
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.settings import JudgeConfig, VerdictFormat
from judgeprobe.engine.validate import ReplyError, parse_reply
from judgeprobe.prompts import load_prompt_file
from judgeprobe.prompts.judge import judge_prompt
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.own import own_judge, own_reply_model, screen_values
from tests.conftest import make_items, run_cli, write_config
from tests.fakeserver import FakeJudge

PATTERN = r"\[\[(A|B|C)\]\]"
MAP = {"A": "1", "B": "2", "C": "tie"}
PROMPT = (
    "Question: {CONTEXT}\n[A]{LABEL_1}: {RESPONSE_1}\n[B]{LABEL_2}: {RESPONSE_2}\n"
    'Explain, then answer "[[A]]", "[[B]]" or "[[C]]".\n'
)
JUDGE_TOML = """
[[judges]]
name = "mine"
url = "{url}"
prompt = "{prompt}"
verdict = {verdict}
"""
VERDICT = '{ pattern = \'\\[\\[(A|B|C)\\]\\]\', map = { A = "1", B = "2", C = "tie" } }'


def _pattern(**extra: object) -> VerdictFormat:
    return VerdictFormat.model_validate({"pattern": PATTERN, "map": MAP, **extra})


@pytest.mark.parametrize(
    ("reply", "verdict", "explanation"),
    [
        ("A is right.\n[[A]]", "[1,2]", "A is right."),
        ("[[B]] ... so, finally: [[B]]", "[2,1]", "... so, finally:"),
        ("Both equal. [[C]]", "Tie", "Both equal."),
    ],
)
def test_pattern_reads_the_last_match(reply: str, verdict: str, explanation: str) -> None:
    parsed = parse_reply(reply, own_reply_model(_pattern()), "stop")
    assert parsed.model_dump() == {"verdict": verdict, "explanation": explanation}


@pytest.mark.parametrize(
    ("reply", "reason", "truncated"),
    [
        ("First [[A]], then [[B]].", "ambiguous verdict: A, B", False),
        ("I cannot decide.", "no verdict matching", False),
        ("Response A is", "hit max_tokens", True),
    ],
)
def test_pattern_refuses(reply: str, reason: str, truncated: bool) -> None:
    finish = "length" if truncated else "stop"
    with pytest.raises(ReplyError, match=reason.replace("[", r"\[")) as caught:
        parse_reply(reply, own_reply_model(_pattern()), finish)
    assert caught.value.truncated is truncated


def test_json_form_reads_its_keys_under_a_schema_from_the_map() -> None:
    fmt = VerdictFormat.model_validate(
        {"json": "winner", "map": {"x": "1", "y": "2"}, "explanation": "why"}
    )
    model = own_reply_model(fmt)
    parsed = parse_reply('{"why": "x reads better", "winner": "y"}', model, "stop")
    assert parsed.model_dump() == {"verdict": "[2,1]", "explanation": "x reads better"}
    with pytest.raises(ReplyError, match="'z' is not one of"):
        parse_reply('{"why": "", "winner": "z"}', model, "stop")
    sent = model.schema_sent
    assert sent is not None
    assert sent["properties"]["winner"] == {"type": "string", "enum": ["x", "y"]}
    assert sent["required"] == ["why", "winner"]
    bare = own_reply_model(VerdictFormat.model_validate({"json": "winner", "map": MAP}))
    rest = parse_reply('{"winner": "A", "notes": "n"}', bare, "stop")
    assert rest.model_dump() == {"verdict": "[1,2]", "explanation": '{"notes":"n"}'}


def test_free_text_sends_no_schema_and_a_json_verdict_sends_its_own() -> None:
    info = ServerInfo(backend="vllm", model="m", fingerprint="f")
    judge = JudgeConfig(name="j", url="http://127.0.0.1:1/v1")

    def body(fmt: VerdictFormat) -> dict[str, object]:
        model = own_reply_model(fmt)
        req = Request("j", ({"role": "user", "content": "x"},), "own_verdict",
                      schema_of(model), model, Sampling(), 0, "f")  # fmt: skip
        return chat_body(req, [{"role": "user", "content": "x"}], info, judge)

    assert "response_format" not in body(_pattern())
    sent = body(VerdictFormat.model_validate({"json": "winner", "map": MAP}))["response_format"]
    assert sent["json_schema"]["schema"]["properties"]["winner"]["enum"] == ["A", "B", "C"]  # type: ignore[index]
    # The reading rule is in the request key: another map is another request.
    other = own_reply_model(_pattern(map={"A": "2", "B": "1"}))
    assert schema_of(own_reply_model(_pattern())) != schema_of(other)


def test_labels_without_placeholders_sit_above_each_response(tmp_path: Path) -> None:
    prompt = tmp_path / "p.txt"
    prompt.write_text("{CONTEXT}\n1: {RESPONSE_1}\n2: {RESPONSE_2}\n")
    own = judge_prompt(load_prompt_file(str(prompt)), None, (), {}, pointwise=False)
    shown = screen_values(own, Presentation("doc", "t1", "t2", "LLM", ""))
    assert shown["response_1"] == "(label = LLM)\nt1"
    assert shown["response_2"] == "t2"


def _item() -> Item:
    return Item(item_id="d", subset="s", document="doc", candidate_1="a", candidate_2="b",
                source_1="LLM", source_2="TradML")  # fmt: skip


def test_a_label_the_prompt_never_shows_is_refused(tmp_path: Path) -> None:
    prompt = tmp_path / "p.txt"
    prompt.write_text("{CONTEXT} {LABEL_1} {RESPONSE_1} {RESPONSE_2}\n")
    judge = JudgeConfig(name="j", url="http://h/v1", prompt=str(prompt), verdict=_pattern())
    blind = LabelCondition(name="Blind")
    check_conditions([judge], {"Blind": blind}, [_item()])  # no label: nothing hidden
    true = LabelCondition(
        name="True", label_1="{source_1}", label_2="{source_2}", target="label:LLM"
    )
    with pytest.raises(Exception, match=r"never reach the screen.*LABEL_2"):
        check_conditions([judge], {"True": true}, [_item()])


@pytest.mark.parametrize("name", ["RevealAfter", "Challenge", "Disagree", "Reask"])
def test_a_second_turn_is_refused_under_an_own_prompt(tmp_path: Path, name: str) -> None:
    """An own prompt has no second turn: Reveal-After and the pressure conditions are refused."""
    prompt = tmp_path / "p.txt"
    prompt.write_text("{CONTEXT} {RESPONSE_1} {RESPONSE_2}\n")
    judge = JudgeConfig(name="j", url="http://h/v1", prompt=str(prompt), verdict=_pattern())
    with pytest.raises(JudgeprobeError, match="has no second turn under own"):
        check_conditions([judge], {name: builtin_conditions()[name]}, [_item()])


def _own_config(tmp_path: Path, url: str, verdict: str = VERDICT, prompt: str = "") -> Path:
    items = make_items(tmp_path / "i.jsonl", 3)
    if not prompt:
        (tmp_path / "p.txt").write_text(PROMPT)
        prompt = str(tmp_path / "p.txt")
    cfg = write_config(tmp_path / "c.toml", url, items, protocols=["own"])
    text = cfg.read_text().split("[[judges]]")[0]
    cfg.write_text(text + JUDGE_TOML.format(url=url, prompt=prompt, verdict=verdict))
    return cfg


@pytest.mark.parametrize(
    ("verdict", "prompt", "needle"),
    [
        ('{ pattern = \'[[(A\', map = { A = "1", B = "2" } }', "", "not a regular expression"),
        ('{ pattern = \'x\', map = { A = "1", B = "first" } }', "", "'1', '2' or 'tie'"),
        (VERDICT, "nowhere/p.txt", "no such file"),
        ("{ json = 'w', pattern = 'x', map = { A = \"1\", B = \"2\" } }", "", "either pattern"),
    ],
)
def test_bad_own_judge_is_one_line(tmp_path: Path, verdict: str, prompt: str, needle: str) -> None:
    cfg = _own_config(tmp_path, "http://127.0.0.1:9/v1", verdict, prompt)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    assert needle in lines[0], lines


@pytest.mark.parametrize(
    ("grade", "needle"),
    [('"half"', "map.P = 'half': not a number"), ("nan", "map.P = nan: not a finite number"),
     ("inf", "map.P = inf: not a finite number")],
)  # fmt: skip
def test_a_graded_score_map_that_is_not_numbers_is_one_line_naming_it(
    tmp_path: Path, grade: str, needle: str
) -> None:
    """Named as the map's grade at load, before any manifest or store (issue 42)."""
    cfg = _own_config(tmp_path, "http://127.0.0.1:9/v1")
    graded = f"{{ pattern = 'GRADE: (\\w)', map = {{ C = 1, P = {grade}, I = 0 }} }}"
    cfg.write_text(cfg.read_text().replace("verdict = " + VERDICT, "score = " + graded))
    for plan in ([], ["--plan"]):
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"), *plan)
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        assert proc.returncode == 2, proc.stderr
        assert len(lines) == 1, lines
        assert "score" in lines[0]
        assert needle in lines[0], lines
        assert "Field required" not in lines[0]
        assert not (tmp_path / "run").exists()


def test_own_without_a_prompt_is_one_line(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    cfg = write_config(tmp_path / "c.toml", "http://127.0.0.1:9/v1", items, protocols=["own"])
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ")
    assert "judge fake has none" in proc.stderr


def test_own_runs_end_to_end_on_the_fake_judge(tmp_path: Path) -> None:
    with FakeJudge(free_text="Response A is more faithful.\n\n[[A]]") as judge:
        cfg = _own_config(tmp_path, judge.url)
        out = tmp_path / "run"
        proc = run_cli("--config", str(cfg), "--out", str(out))
        sent = [b["messages"][0]["content"] for b in judge.bodies]
    assert proc.returncode in (0, 4), proc.stderr  # a constant judge may be flagged, not broken
    frame = pl.read_parquet(out / "judgments.parquet")
    assert set(frame["protocol"]) == {"own"}
    assert set(frame["verdict"]) <= {"A", "B"}  # none Invalid
    assert set(frame["template_hash"]) == {load_prompt_file(str(tmp_path / "p.txt")).sha256}
    assert set(frame["raw_verdict"]) == {"[1,2]"}
    assert set(frame["explanation"]) == {"Response A is more faithful."}
    assert any(("[A] (label" not in s and "[A]LLM:" in s) or "[A]TradML:" in s for s in sent)
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    record = manifest["own_prompts"]["mine"]
    assert record["sha256"] == load_prompt_file(str(tmp_path / "p.txt")).sha256


def test_the_own_judge_experiment_runs_on_a_fake_judge(tmp_path: Path) -> None:
    """experiments/own-judge.toml, its judge moved by --judge onto a judge that says [[B]]."""
    with FakeJudge(free_text="Answer B keeps the figures.\n[[B]]") as judge:
        out = tmp_path / "run"
        proc = run_cli("--config", "experiments/own-judge.toml", "--out", str(out),
                       "--judge", f"qwen2.5-coder-0.5b={judge.url}")  # fmt: skip
        sent = [b["messages"][0]["content"] for b in judge.bodies]
    assert proc.returncode in (0, 4), proc.stderr
    frame = pl.read_parquet(out / "judgments.parquet")
    assert set(frame["raw_verdict"]) == {"[2,1]"}
    assert set(frame["condition"]) == {"Blind", "Placebo", "DegradedNumber"}
    assert all("[[A]]" in s and "[User Question]" in s for s in sent)
    blind = frame.filter(pl.col("condition") == "Blind")
    assert set(blind["gold"]) == {"A", "B"}  # the bundled Q&A set's gold, on Blind
    assert set(frame.filter(pl.col("condition") == "DegradedNumber")["gold"]) == {""}
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Accuracy against gold" in report
    # Always [[B]]: no better than a coin on gold, and the headline says so in the task's nouns.
    assert "does not beat picking the longer or the shorter response" in report
    assert "an answer from its copy" in report
    assert any("(label = " in s for s in sent)  # no label placeholder: labels above the texts
    assert (out / "card.md").exists() or (out / "report.md").exists()


def test_the_prompt_is_read_once_so_the_text_hashed_is_the_text_sent(tmp_path: Path) -> None:
    """A prompt file edited after the config was loaded changes neither the hash nor the text."""
    prompt = tmp_path / "p.txt"
    prompt.write_text("{CONTEXT}\n1: {RESPONSE_1}\n2: {RESPONSE_2}\n")
    judge = JudgeConfig(name="j", url="http://h/v1", prompt=str(prompt), verdict=_pattern())
    record = judge.own_record()
    prompt.write_text("edited {RESPONSE_1} {RESPONSE_2}\n")
    assert own_judge(judge).prompt.user_template.text.startswith("{CONTEXT}")
    assert own_judge(judge).prompt_sha256 == record["sha256"] == judge.own_record()["sha256"]
