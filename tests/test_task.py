"""The task (prompts.task): the built-in prompts in a task's nouns and criteria, the default task
byte for byte the paper's prompts, and a config's ``task`` checked like every other key."""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path

import pytest

from judgeprobe.cue.config import SweepConfig, load_config
from judgeprobe.cue.stream import protocols_for
from judgeprobe.prompts import load_template
from judgeprobe.prompts.task import CRITERIA, DEFAULT, Task
from judgeprobe.protocols import PBP, Baseline, SCoT, templates_hash
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.pressure import SENTENCES
from judgeprobe.protocols.pressure import TEMPLATES as PRESSURE
from judgeprobe.protocols.replies import (
    LockReply,
    ScoreReply,
    ScotReply,
    build_replies,
    criteria_replies,
)
from judgeprobe.protocols.reveal import TEMPLATES as REVEAL
from tests.test_protocols import _stub

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = sorted(
    p.name.removesuffix(".txt")
    for p in resources.files("judgeprobe.prompts").joinpath("templates").iterdir()
    if p.name.endswith(".txt")
)
QA = Task.model_validate("qa")
USED = {t for p in (Baseline(), SCoT(), PBP()) for t in p.templates}
USED |= {t for ts in (*REVEAL.values(), *PRESSURE.values(), SENTENCES.values()) for t in ts}


def test_the_default_task_rewords_nothing_so_keys_and_digests_stay() -> None:
    for name in TEMPLATES:
        path = resources.files("judgeprobe.prompts").joinpath("templates", f"{name}.txt")
        assert load_template(name, DEFAULT).text == path.read_text("utf-8"), name
        assert load_template(name, Task()) == load_template(name)
    assert Task.model_validate("summarization").is_default
    assert Task.model_validate({"response": "summary"}).is_default
    # Pinned before the task existed: the default sweep's digest and a paper config's.
    assert load_config(None).digest() == "761130a19125356f"
    paper = load_config(ROOT / "experiments" / "paper" / "cue-labels.toml")
    assert paper.digest() == "ace1c9c19e7f5841"
    assert load_config(None).model_copy(update={"task": Task()}).digest() == "761130a19125356f"


def test_the_paper_criteria_built_as_any_others_are_the_classes_themselves() -> None:
    built = build_replies(CRITERIA)
    for static, made in ((ScotReply, built.scot), (LockReply, built.lock),
                         (ScoreReply, built.score)):  # fmt: skip
        assert json.dumps(static.model_json_schema()) == json.dumps(made.model_json_schema())
    assert criteria_replies(CRITERIA).scot is ScotReply


def test_a_qa_task_words_every_prompt_in_its_nouns_and_criteria() -> None:
    scot = load_template("scot_v1", QA).text
    assert "Two answers respond to the same question." in scot
    assert "correctness, completeness, relevance, clarity" in scot
    assert '{"criteria": {"correctness": {"notes": "...", "summary_1": 0-5' in scot
    assert '"relevance": {...}, "clarity": {...}}' in scot
    lock = load_template("pbp_lock_v3", QA).text
    assert '"correctness", "completeness", "relevance" and "clarity"' in lock
    assert "from the Question or the Answers" in lock
    for name in USED:
        text = load_template(name, QA).text
        assert "summar" not in text.replace("summary_", "").lower(), name
        assert "accuracy" not in text, name
    assert templates_hash(("scot_v1",), QA) != templates_hash(("scot_v1",))


def test_scot_and_pbp_under_a_task_ask_for_its_criteria_and_read_them() -> None:
    cfg = SweepConfig.model_validate({"task": "qa", "protocols": ["scot", "pbp"]})
    assert cfg.protocol.weights == dict.fromkeys(QA.criteria, 1.0)
    protocols = protocols_for(cfg)
    keyed = criteria_replies(QA.criteria)
    p = Presentation("Q?", "one", "two", "", "")
    scores = {c: {"notes": "n", "summary_1": 4, "summary_2": 1} for c in QA.criteria}
    reply = {"criteria": scores, "verdict": "[1,2]", "explanation": "One is right."}
    turn = asyncio.run(protocols["scot"].run(p, _stub({keyed.scot: reply})))
    assert turn.verdict == "[1,2]"
    assert set(turn.details["criteria"]) == set(QA.criteria)
    assert set(keyed.lock.model_json_schema()["properties"]) == set(QA.criteria)
    assert protocols["pbp"].budgets["lock"] > 0


@pytest.mark.parametrize(
    ("task", "needle"),
    [
        ("poetry", "preset"),
        ({"response": "Answer!"}, "lower-case words only"),
        ({"criteria": ["Correct ness"]}, "criterion 'Correct ness'"),
        ({"criteria": ["a", "a"]}, "distinct"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_task_is_a_validation_error(task: object, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        SweepConfig.model_validate({"task": task})


def test_weights_name_the_tasks_criteria() -> None:
    with pytest.raises(ValueError, match="unknown criterion 'accuracy'"):
        SweepConfig.model_validate({"task": "qa", "protocol": {"weights": {"accuracy": 1.0}}})
    cfg = SweepConfig.model_validate(
        {"task": {"criteria": ["faithfulness", "coverage"]},
         "protocol": {"weights": {"faithfulness": 2.0}}}
    )  # fmt: skip
    assert cfg.task.response == "summary"  # the preset's nouns, the config's criteria
    assert cfg.protocol.weights == {"faithfulness": 2.0}


def test_report_and_card_prose_speak_of_the_tasks_nouns() -> None:
    said = "it preferred a summary to its copy; A summary and the summaries, per document"
    assert QA.nouns(said) == (
        "it preferred an answer to its copy; An answer and the answers, per document"
    )
    assert DEFAULT.nouns(said) == said
    dialogue = Task.model_validate("dialogue")
    assert dialogue.nouns("the first-shown summary") == "the first-shown response"
