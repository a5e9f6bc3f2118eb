"""Item layouts (core.layouts): every pairwise layout read onto one Item, on hand-made rows,
and hostile rows refused with one line naming the file and line."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import orjson
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.core.corpus import load_items
from judgeprobe.core.layouts import item_fields, layout_of

ROOT = Path(__file__).resolve().parent.parent


def _file(path: Path, rows: Sequence[Mapping[str, object]]) -> str:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return str(path)


def test_pairwise_layout_reads_a_question_two_responses_sources_and_gold(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"id": 7, "question": "Q?", "response_1": "a", "response_2": "b", "preferred": 2,
         "source_1": "m1", "source_2": "m2"},
        {"item_id": "x", "context": "C", "candidate_1": "a", "candidate_2": "b",
         "preferred": "Tie"},
        {"item_id": "y", "prompt": "P", "response_1": "a", "response_2": "b", "preferred": "1"},
        {"item_id": "z", "document": "D", "candidate_1": "a", "candidate_2": "b"},
    ]  # fmt: skip
    items = load_items(_file(tmp_path / "i.jsonl", rows))
    assert [i.item_id for i in items] == ["7", "x", "y", "z"]
    assert [i.gold for i in items] == ["B", "Tie", "A", None]
    assert [i.document for i in items] == ["Q?", "C", "P", "D"]
    assert (items[0].candidate_1, items[0].candidate_2) == ("a", "b")
    assert (items[0].source_1, items[0].source_2) == ("m1", "m2")


def test_a_conversation_context_is_rendered_role_by_role() -> None:
    row = {
        "item_id": "c",
        "context": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi?"},
        ],
        "response_1": "a",
        "response_2": "b",
    }
    assert item_fields(row, "f")["document"] == "System: Be brief.\n\nUser: Hi?"


def test_preference_rows_put_chosen_on_either_side_and_gold_on_it(tmp_path: Path) -> None:
    rows = [{"id": f"r{k}", "prompt": f"P{k}", "chosen": f"good {k}", "rejected": f"bad {k}"}
            for k in range(40)]  # fmt: skip
    items = load_items(_file(tmp_path / "p.jsonl", rows))
    for item in items:
        chosen = item.candidate_1 if item.gold == "A" else item.candidate_2
        assert chosen.startswith("good")
        assert item.gold in ("A", "B")
    firsts = sum(item.gold == "A" for item in items)
    assert 10 <= firsts <= 30  # balanced in candidate terms, not all first
    again = load_items(_file(tmp_path / "p2.jsonl", rows))
    assert [i.gold for i in again] == [i.gold for i in items]  # drawn by id, not at random


def test_preference_rows_of_messages_and_hh_transcripts() -> None:
    shared = [{"role": "user", "content": "Q?"}]
    row = {
        "chosen": [*shared, {"role": "assistant", "content": "good"}],
        "rejected": [*shared, {"role": "assistant", "content": "bad"}],
    }
    fields = item_fields(row, "m")
    assert fields["document"] == "User: Q?"
    assert {fields["candidate_1"], fields["candidate_2"]} == {"good", "bad"}
    turn = "\n\nHuman: Q?\n\nAssistant:"
    hh = {"chosen": f"{turn} good", "rejected": f"{turn} bad"}
    fields = item_fields(hh, "h")
    assert fields["document"] == "Human: Q?"
    assert {fields["candidate_1"].strip(), fields["candidate_2"].strip()} == {"good", "bad"}


def _mt_row(winner: str, turn: int | None = None) -> dict[str, object]:
    def conv(model: str) -> list[dict[str, str]]:
        return [
            {"role": "user", "content": "Q1"},
            {"role": "assistant", "content": f"{model} one"},
            {"role": "user", "content": "Q2"},
            {"role": "assistant", "content": f"{model} two"},
        ]

    row: dict[str, object] = {"question_id": 81, "model_a": "alpaca-13b", "model_b": "gpt-4",
                              "winner": winner, "conversation_a": conv("a"),
                              "conversation_b": conv("b")}  # fmt: skip
    if turn is not None:
        row["turn"] = turn
    return row


def test_mt_bench_human_judgment_rows() -> None:
    assert layout_of(_mt_row("model_a")) == "mt_bench"
    one = item_fields(_mt_row("model_b", turn=1), "f")
    shown = (one["document"], one["candidate_1"], one["candidate_2"])
    assert shown == ("User: Q1", "a one", "b one")
    assert one["gold"] == "B"
    assert (one["source_1"], one["source_2"]) == ("alpaca-13b", "gpt-4")
    assert one["document_id"] == "81"
    two = item_fields(_mt_row("tie (bothbad)", turn=2), "f")
    assert two["document"] == "User: Q1"
    assert two["gold"] == "Tie"
    assert two["candidate_1"] == "Assistant: a one\n\nUser: Q2\n\nAssistant: a two"
    assert item_fields(_mt_row("model_a"), "f")["gold"] == "A"


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ({"item_id": "a", "response_1": "x", "response_2": "y"}, "missing the context"),
        ({"item_id": "a", "question": "q", "response_1": "x"}, "missing field 'response_2'"),
        ({"item_id": "a", "question": "q", "document": "d", "response_1": "x",
          "response_2": "y"}, "one context per item"),
        ({"item_id": "a", "question": "q", "response_1": "x", "response_2": "y",
          "candidate_1": "z"}, "both given"),
        ({"item_id": "a", "question": "q", "response_1": "x", "response_2": "y",
          "preferred": 3}, "preferred must be 1, 2 or tie"),
        ({"item_id": "a", "question": "q", "response_1": "x", "response_2": "y",
          "preferred": "A"}, "preferred must be 1, 2 or tie"),
        ({"item_id": "a", "question": "q", "response_1": "x", "response_2": "y",
          "preferred": True}, "preferred must be 1, 2 or tie"),
        ({"item_id": "a", "question": "q", "response_1": "", "response_2": "y"},
         "candidate_1"),
        ({"item_id": "a", "question": "q", "response_1": " \n", "response_2": "y"}, "blank"),
        ({"item_id": "a", "question": [{"role": "robot", "content": "hi"}], "response_1": "x",
          "response_2": "y"}, "question[0]: role"),
        ({"item_id": "a", "question": [{"role": "user", "content": "  "}], "response_1": "x",
          "response_2": "y"}, "question[0]: content is blank"),
        ({"item_id": "a", "question": [], "response_1": "x", "response_2": "y"},
         "non-empty list"),
        ({"item_id": "a", "question": 5, "response_1": "x", "response_2": "y"},
         "must be a string or a list of messages"),
        ({"item_id": "a", "prompt": "p", "chosen": "x"}, "missing field 'rejected'"),
        ({"item_id": "a", "chosen": "x", "rejected": "y"}, "missing field 'prompt'"),
        ({"item_id": "a", "prompt": "p", "chosen": "x", "rejected": 4}, "rejected must be"),
        ({**_mt_row("model_c")}, "winner 'model_c' is not model_a, model_b, tie"),
        ({**_mt_row("tie", turn=3)}, "turn 3"),
        ({**_mt_row("tie"), "conversation_b": [{"role": "user", "content": "other"},
                                               {"role": "assistant", "content": "b"}]},
         "share no opening message"),
        ({**_mt_row("tie"), "conversation_a": [{"role": "user", "content": "Q1"}]},
         "no assistant message"),
    ],
)  # fmt: skip
def test_hostile_rows_are_one_line_naming_file_and_line(
    tmp_path: Path, row: dict[str, object], needle: str
) -> None:
    good = {"item_id": "ok", "question": "q", "response_1": "x", "response_2": "y"}
    path = tmp_path / "bad.jsonl"
    path.write_bytes(orjson.dumps(good) + b"\n\n" + orjson.dumps(row) + b"\n")
    with pytest.raises(JudgeprobeError) as exc:
        load_items(str(path))
    message = str(exc.value)
    assert "\n" not in message, message
    assert "bad.jsonl: line 3: " in message, message
    assert needle in message, message


def test_a_bad_parquet_row_is_named_by_its_row(tmp_path: Path) -> None:
    import polars as pl

    path = tmp_path / "bad.parquet"
    pl.DataFrame({"item_id": ["a"], "question": ["q"], "response_1": ["x"],
                  "response_2": ["y"], "preferred": ["maybe"]}).write_parquet(path)  # fmt: skip
    with pytest.raises(JudgeprobeError, match=r"bad.parquet: row 1: preferred must be"):
        load_items(str(path))


def test_bundled_qa_is_small_balanced_and_its_wrong_answers_differ_in_one_fact() -> None:
    from judgeprobe.text.degrade import one_edit

    items = load_items("bundled:qa")
    assert 6 <= len(items) <= 20
    assert {i.gold for i in items} == {"A", "B"}
    assert abs(sum(i.gold == "A" for i in items) * 2 - len(items)) <= 1
    for item in items:
        assert "Question:" in item.document
        assert "Passage:" in item.document
        assert one_edit(item.candidate_1, item.candidate_2) is not None, item.item_id
    assert len({i.document_id for i in items}) < len(items)  # a document with two questions


def test_bundled_qa_is_what_its_build_script_writes() -> None:
    proc = subprocess.run([sys.executable, "-m", "judgeprobe.candidates.qa", "--check"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
