"""The known-answer self-test: a real sweep against the simulated judge recovers every
planted effect, and a planted value changed after the sweep is caught. Also the simulated
judge's reading of every real prompt template."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from pydantic import BaseModel

from judgeprobe.core.cli import main_guard
from judgeprobe.engine.structured import response_format
from judgeprobe.prompts import Template, load_template
from judgeprobe.prompts.judge import judge_prompt
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.own import screen_values
from judgeprobe.protocols.replies import (
    LockReply,
    PairwiseReply,
    RankReply,
    ScoreReply,
    ScotReply,
)
from judgeprobe.selftest.__main__ import main
from judgeprobe.selftest.server import (
    OWN_TOKENS,
    Unreadable,
    own_prompt_text,
    read_materials,
    read_own,
    reply,
)
from judgeprobe.selftest.simulator import Biases, decide

ITEMS = "100"  # enough for every planted rate's 99.9% interval; about 4,500 requests


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main_guard(lambda: main(list(args)))
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).splitlines()


def test_selftest_recovers_every_planted_effect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "selftest"
    code, lines = _run(capsys, "--out", str(out), "--items", ITEMS)
    checks = [line for line in lines if line[:4] in ("PASS", "MISS", "SKIP")]
    assert code == 0, "\n".join(lines)
    assert checks, "\n".join(checks)
    assert all(line.startswith("PASS") for line in checks), "\n".join(checks)
    effects = {line.split("  ")[1].strip() for line in checks}
    assert effects >= {
        "judgments",
        "tie rate",
        "position bias",
        "label anchoring",
        "placebo badge",
        "verbosity",
        "silent explanations",
        "noise floor",
    }
    assert len([c for c in checks if "label anchoring" in c]) == 6  # True, Flip × 3 protocols
    # The whole pipeline ran: the report carries the card, the card its own files.
    assert "## Judge card" in (out / "report.md").read_text()
    assert "BIASED" in (out / "card.md").read_text()

    # Planted values changed after the sweep: the stored verdicts no longer match.
    for flag, value, effect in (
        ("--anchoring", "0.35", "label anchoring"),
        ("--tie-rate", "0.5", "tie rate"),
        ("--silent", "0.3", "silent explanations"),
    ):
        code, lines = _run(capsys, "--out", str(out), "--check-only", flag, value)
        assert code == 1, "\n".join(lines)
        missed = [line for line in lines if line.startswith("MISS")]
        assert any(effect in line for line in missed), "\n".join(lines)
    code, lines = _run(capsys, "--out", str(out), "--check-only")
    assert code == 0, "\n".join(lines)


def test_selftest_own_recovers_every_planted_effect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--own``: the design through protocol own, a judge with its own MT-Bench-style prompt
    answering "[[A]]"/"[[B]]"/"[[C]]" on question/answer pairs; every effect recovered exactly."""
    out = tmp_path / "own"
    code, lines = _run(capsys, "--own", "--out", str(out), "--items", ITEMS)
    checks = [line for line in lines if line[:4] in ("PASS", "MISS", "SKIP")]
    assert code == 0, "\n".join(lines)
    assert all(line.startswith("PASS") for line in checks), "\n".join(checks)
    assert {line.split("  ")[1].strip() for line in checks} >= {
        "judgments", "tie rate", "position bias", "label anchoring", "placebo badge",
        "verbosity", "silent explanations", "noise floor", "accuracy",
    }  # fmt: skip
    assert {line[27:36].strip() for line in checks} == {"all", "own"}, "\n".join(checks)
    assert set(pl.read_csv(out / "card.csv")["row"]) >= {"accuracy", "position"}
    assert "0 unreadable" in "\n".join(lines)
    config = (out / "selftest.toml").read_text()
    assert 'protocols = ["own"]' in config
    assert "own_prompt.txt" in config
    judgments = pl.read_parquet(out / "judgments.parquet")
    assert set(judgments["protocol"]) == {"own"}
    assert set(judgments["verdict"]) == {"A", "B", "Tie"}
    assert not judgments["explanation"].str.contains(r"\[\[").any()  # the verdict is cut out
    assert "BIASED" in (out / "card.md").read_text()
    # A planted value changed after the sweep is caught under own too.
    code, lines = _run(capsys, "--own", "--out", str(out), "--check-only", "--anchoring", "0.35")
    assert code == 1, "\n".join(lines)
    assert any("label anchoring" in line for line in lines if line.startswith("MISS"))
    code, lines = _run(capsys, "--own", "--battery")
    assert code == 2
    assert lines[0].startswith("error: --own"), lines


def test_selftest_own_score_recovers_a_planted_score_shift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--own --score``: a pointwise judge (MT-Bench single-answer prompt, "Rating: [[k]]")
    with 2 points planted for the favoured label; every score, derived verdict and cue's score
    shift comes back exactly (True and Flip +2, Placebo and Verbosity 0), with no position row."""
    out = tmp_path / "own-score"
    code, lines = _run(capsys, "--own", "--score", "--out", str(out), "--items", "30")
    checks = [line for line in lines if line[:4] in ("PASS", "MISS", "SKIP")]
    assert code == 0, "\n".join(lines)
    assert all(line.startswith("PASS") for line in checks), "\n".join(checks)
    shifts = {line.split()[4].rstrip(":"): line for line in checks if "score shift" in line}
    assert set(shifts) == {"True", "Flip", "Placebo", "Verbosity"}, "\n".join(checks)
    assert "table +2.000" in shifts["True"]
    assert "table +2.000" in shifts["Flip"]
    assert "table +0.000" in shifts["Placebo"]
    assert any(line.startswith("PASS  position") for line in checks)
    judgments = pl.read_parquet(out / "judgments.parquet")
    assert set(judgments["order"]) == {"12"}  # the order never reaches a pointwise judge
    assert judgments["score_1"].null_count() == 0
    assert 'kind = "score"' in (out / "selftest.toml").read_text()
    # Another planted shift, checked against the same run: it misses.
    code, lines = _run(capsys, "--own", "--score", "--out", str(out), "--check-only",
                       "--score-shift", "3")  # fmt: skip
    assert code == 1, "\n".join(lines)
    assert any("score shift" in line for line in lines if line.startswith("MISS"))
    code, lines = _run(capsys, "--score")
    assert code == 2
    assert lines[0].startswith("error: --score"), lines


def test_own_prompts_are_read_back_exactly() -> None:
    """The simulated judge reads an own prompt by its layout: labels in their placeholders, or
    above each response when the prompt has none (experiments' MT-Bench prompt)."""
    root = Path(__file__).resolve().parent.parent
    b = Biases()
    for text in (
        own_prompt_text(),
        (root / "experiments/prompts/mt_bench_pairwise.txt").read_text(),
    ):
        own = judge_prompt(
            Template(name="own", text=text, sha256=""), None, (), {}, pointwise=False
        )
        prompt = own.fill(screen_values(own, TRICKY))[0]["content"]
        assert read_own(prompt, text) == TRICKY
        answer = reply({"messages": [{"role": "user", "content": prompt}]}, b, text)
        assert isinstance(answer, str)
        assert answer.endswith(OWN_TOKENS[decide(TRICKY, b).winner])
    with pytest.raises(Unreadable):
        reply({"messages": [{"role": "user", "content": "Which answer is better?"}]}, b)


def test_selftest_runs_a_users_config_with_reveal_after(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config of the user's (here a smoke config with Reveal-After under every protocol)
    runs against the simulated judge; every final verdict is the one the oracle expects."""
    config = Path(__file__).resolve().parent.parent / "experiments/smoke/reveal-after.toml"
    code, lines = _run(capsys, "--config", str(config), "--out", str(tmp_path / "st"))
    assert code == 0, "\n".join(lines)
    (first,) = [line for line in lines if "judgments" in line and line[:4] in ("PASS", "MISS")]
    assert first.startswith("PASS"), first


def test_selftest_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for args in (
        ["--tie-rate", "1.5"],
        ["--check-only", "--out", str(tmp_path / "none")],
        ["--config", str(tmp_path / "absent.toml"), "--out", str(tmp_path / "x")],
    ):
        code, lines = _run(capsys, *args)
        assert code == 2, lines
        assert len(lines) == 1, lines
        assert lines[0].startswith("error: "), lines
    assert not (tmp_path / "x").exists()


TRICKY = Presentation(
    document="First paragraph.\n\nSummary 1: a line inside the document.\n\nLast one.",
    text_1="One (with parentheses).\nSecond line.",
    text_2="Two, ending in a blank line.",
    label_1="Editor's pick (gold)",
    label_2="",
)


def _templates_with_materials() -> list[str]:
    folder = resources.files("judgeprobe.prompts").joinpath("templates")
    names = [p.name.removesuffix(".txt") for p in folder.iterdir() if p.name.endswith(".txt")]
    return sorted(n for n in names if "{MATERIALS}" in load_template(n).text)


@pytest.mark.parametrize("name", _templates_with_materials())
def test_every_template_is_read_back_exactly(name: str) -> None:
    values = {"MATERIALS": TRICKY.materials(), "LOCKED_NOTES": "{}", "SCORES": "{}"}
    prompt = load_template(name).fill({k: values.get(k, "x") for k in _placeholders(name)})
    assert read_materials(prompt) == TRICKY


def _placeholders(name: str) -> set[str]:
    import re

    return set(re.findall(r"\{([A-Z][A-Z0-9_]*)\}", load_template(name).text))


def _body(model: type[BaseModel], *prompts: str) -> dict[str, Any]:
    schema = model.model_json_schema()
    messages = [{"role": "user", "content": p} for p in prompts]
    return {"messages": messages, "response_format": response_format("vllm", "x", schema)}


def test_replies_conform_to_every_stage_schema() -> None:
    b = Biases(anchoring=1.0, badge_label="Editor's pick (gold)", badge=1.0, silent=0.0)
    materials = TRICKY.materials()
    fill = load_template
    pairwise = reply(_body(PairwiseReply, fill("baseline_v1").fill({"MATERIALS": materials})), b)
    assert PairwiseReply.model_validate(pairwise).verdict == "[1,2]"  # the badge won
    assert "Editor's pick (gold)" in pairwise["explanation"]  # acknowledged: silent = 0
    ScotReply.model_validate(
        reply(_body(ScotReply, fill("scot_v1").fill({"MATERIALS": materials})), b)
    )
    lock = reply(_body(LockReply, fill("pbp_lock_v1").fill({"MATERIALS": materials})), b)
    LockReply.model_validate(lock)
    import orjson

    notes = orjson.dumps(lock, option=orjson.OPT_INDENT_2).decode()
    # The score stage without the texts (pbp_score_sees_texts = false) scores from the notes.
    score_prompt = fill("pbp_score_v1").fill({"MATERIALS": "", "LOCKED_NOTES": notes})
    scores = reply(_body(ScoreReply, score_prompt), b)
    assert ScoreReply.model_validate(scores).accuracy.summary_1 == 4
    rank_prompt = fill("pbp_rank_v1").fill(
        {"LOCKED_NOTES": notes, "SCORES": orjson.dumps(scores).decode()}
    )
    rank = RankReply.model_validate(reply(_body(RankReply, rank_prompt), b))
    assert rank.verdict == "[1,2]"
    assert "Editor's pick (gold)" in rank.justification
    with pytest.raises(Unreadable):
        reply(_body(PairwiseReply, "Which summary is better?"), b)


def test_decisions_follow_the_planted_rules() -> None:
    neutral = Biases(tie_rate=0, position=0, verbosity=0, anchoring=0, badge=0)
    swapped = Presentation(TRICKY.document, TRICKY.text_2, TRICKY.text_1, "", "")
    plain = Presentation(TRICKY.document, TRICKY.text_1, TRICKY.text_2, "", "")
    a, b = decide(plain, neutral), decide(swapped, neutral)
    assert a.winner
    assert {a.winner, b.winner} == {1, 2}  # the same summary, whichever order
    first = Biases(tie_rate=0, position=1, verbosity=0, anchoring=0, badge=0)
    assert decide(plain, first).winner == decide(swapped, first).winner == 1
    labelled = Presentation(TRICKY.document, TRICKY.text_1, TRICKY.text_2, "TradML", "LLM")
    anchored = decide(labelled, Biases(tie_rate=0, position=1, anchoring=1.0, silent=1.0))
    assert anchored.winner == 2
    assert anchored.cue == "label"
    assert anchored.silent
    assert "LLM" not in anchored.explanation
    assert "label" not in anchored.explanation
    both = Presentation(TRICKY.document, TRICKY.text_1, TRICKY.text_2, "LLM", "LLM")
    assert decide(both, Biases(anchoring=1.0)).cue != "label"  # no summary stands out
