"""Rubric items: the bundled sample, HealthBench-style and generic loaders, bad rows,
rule-based negation, and the repetition-penalty sampling field."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import orjson
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.rubric.data import load_rubric_items
from judgeprobe.rubric.judge import PRESETS, RubricReply
from judgeprobe.rubric.perturb import negate_rule

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "judgeprobe" / "data" / "rubric"
GENERATOR = ROOT / "experiments" / "rubric-sample" / "make_sample.py"


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_bundled_sample_is_complete_and_regenerates_identically() -> None:
    items = load_rubric_items("bundled:rubric")
    assert len(items) >= 300
    assert len({i.domain for i in items}) >= 5
    assert Counter(i.expected for i in items).keys() == {"satisfied", "violated"}
    assert {i.split for i in items} == {"a", "b"}
    for item in items:
        assert item.reversed_response
        assert item.reversed_response != item.response
        assert item.negated_criterion
        assert item.negated_criterion != item.criterion
    spec = importlib.util.spec_from_file_location("make_sample", GENERATOR)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lines = (SAMPLE_DIR / "sample.jsonl").read_text(encoding="utf-8").splitlines()
    assert [orjson.loads(line) for line in lines] == module.rows()
    assert (SAMPLE_DIR / "LICENSE.md").is_file()


def test_healthbench_rows_become_one_item_per_criterion(tmp_path: Path) -> None:
    conversation = [
        {"role": "user", "content": "I have a headache."},
        {"role": "assistant", "content": "How long has it lasted?"},
        {"role": "user", "content": "Two days."},
    ]
    rows: list[dict[str, object]] = [
        {
            "prompt_id": "p1",
            "prompt": conversation,
            "completion": "Rest, drink water, and see a doctor if it gets worse.",
            "example_tags": ["theme:emergency"],
            "rubrics": [
                {
                    "criterion": "Advises seeing a doctor if it worsens.",
                    "points": 5,
                    "tags": ["axis:completeness"],
                },
                {"criterion": "Recommends an unproven remedy.", "points": -4, "tags": []},
            ],
        },
        {
            "prompt_id": "p2",
            "completion_id": "c9",
            "prompt": conversation[:1],
            "completion": "Take a rest.",
            "rubric": "Asks how long the headache has lasted.",
            "binary_labels": [False, False, True],
        },
    ]
    items = load_rubric_items(str(_jsonl(tmp_path / "hb.jsonl", rows)))
    assert [i.item_id for i in items] == ["p1#0", "p1#1", "p2/c9"]
    first = items[0]
    assert len(first.conversation) == 3
    assert first.conversation[1].role == "assistant"
    assert first.points == 5
    assert first.tags == ("theme:emergency", "axis:completeness")
    assert items[1].points == -4
    assert items[2].criterion == "Asks how long the headache has lasted."
    assert items[2].expected == "violated"  # 1 of 3 graders said met


def test_generic_csv_and_jsonl(tmp_path: Path) -> None:
    csv = tmp_path / "r.csv"
    csv.write_text(
        "item_id,prompt,response,criterion,points,tags,judge_label\n"
        'a,Is tea healthy?,"In moderation, yes.",Mentions moderation.,3,x;y,true\n'
        "b,Is tea healthy?,No.,Mentions moderation.,,,0\n",
        encoding="utf-8",
    )
    items = load_rubric_items(str(csv))
    assert items[0].tags == ("x", "y")
    assert items[0].points == 3.0
    assert items[0].judge_label == "satisfied"
    assert items[1].judge_label == "violated"
    assert items[1].points is None
    assert items[0].conversation[0].role == "user"
    jsonl = _jsonl(tmp_path / "r.jsonl", [{"prompt": "Q?", "response": "A.", "criterion": "C."}])
    assert load_rubric_items(str(jsonl))[0].item_id == "row1"
    assert len(load_rubric_items("bundled:rubric", limit=7)) == 7


@pytest.mark.parametrize(
    ("content", "suffix", "needle"),
    [
        ('{"prompt": "Q", "response": "A"}\n', ".jsonl", "row 1: criterion: Field required"),
        ('{"prompt": "Q", "criterion": "C"}\n', ".jsonl", "row 1: response: Field required"),
        ('{"prompt": "Q", "response": "A", "criterion": "C"}\nnot json\n', ".jsonl", "line 2"),
        (
            '{"prompt": [{"role": "robot", "content": "x"}], "response": "A", "criterion": "C"}\n',
            ".jsonl",
            "row 1: conversation.0.role",
        ),
        ('{"prompt": "Q", "completion": "A", "rubrics": "C"}\n', ".jsonl", "rubrics must be"),
        (
            '{"prompt": "Q", "response": "A", "criterion": "C", "expected": "maybe"}\n',
            ".jsonl",
            "row 1: expected",
        ),
        ("item_id,prompt,response,criterion\na,Q,A,C\na,Q,A,C\n", ".csv", "row 2: duplicate"),
        ("item_id,prompt,response,criterion\na,Q,A,C,extra\n", ".csv", "more fields"),
        ("", ".jsonl", "no rubric items"),
        ("x", ".txt", "expected a .jsonl or .csv"),
    ],
)
def test_bad_rows_are_one_clear_error(
    tmp_path: Path, content: str, suffix: str, needle: str
) -> None:
    path = tmp_path / f"bad{suffix}"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JudgeprobeError) as err:
        load_rubric_items(str(path))
    assert needle in str(err.value)
    assert "\n" not in str(err.value)


def test_missing_file() -> None:
    with pytest.raises(JudgeprobeError, match="no such file"):
        load_rubric_items("/nonexistent/rubric.jsonl")


@pytest.mark.parametrize(
    ("criterion", "negated"),
    [
        ("Recommends seeing a doctor.", "Does not recommend seeing a doctor."),
        ("Identifies the main risk.", "Does not identify the main risk."),
        ("Discusses side effects.", "Does not discuss side effects."),
        ("Advises rest.", "Does not advise rest."),
        ("Fails to mention dosage.", "Mentions dosage."),
        ("Does not address the question.", "Addresses the question."),
        ("Is written in plain language.", "Is not written in plain language."),
        (
            "Clear and concise answer.",
            "The response does not meet this criterion: Clear and concise answer.",
        ),
    ],
)
def test_rule_based_negation(criterion: str, negated: str) -> None:
    assert negate_rule(criterion) == negated


def test_repetition_penalty_leaves_existing_keys_alone() -> None:
    assert Sampling().model_dump() == {"temperature": 0.0, "top_p": 1.0, "max_tokens": 320}
    paper = PRESETS["paper"]
    assert paper.model_dump()["repetition_penalty"] == 1.15
    assert (paper.temperature, paper.top_p) == (1.0, 0.95)

    def key(sampling: Sampling) -> str:
        return Request(
            "j",
            ({"role": "user", "content": "x"},),
            "rubric_verdict",
            RubricReply.model_json_schema(),
            RubricReply,
            sampling,
            0,
            "f",
        ).key

    # A request without the field keys as it did before the field existed.
    import hashlib

    payload = {
        "messages": [{"role": "user", "content": "x"}],
        "schema": RubricReply.model_json_schema(),
        "sampling": {"temperature": 0.0, "top_p": 1.0, "max_tokens": 320},
        "seed": 0,
        "fingerprint": "f",
    }
    expected = hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()
    assert key(Sampling()) == expected
    assert key(Sampling(repetition_penalty=1.15)) != expected
