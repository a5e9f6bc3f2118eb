"""Log formats in a registry: every format registered once and detected from its own file, and
the tables' column lists tied to the typed rows they are made from."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.core.records import Item
from judgeprobe.logs.formats import (
    FALLBACK,
    LogFormat,
    ReadOptions,
    detect,
    format_names,
    get_format,
    per_record,
    register_format,
)
from judgeprobe.logs.mtbench import Answers, pair_calls_fast, pair_rows
from judgeprobe.logs.rows import CALLS, PairRow, calls_frame, calls_plan
from judgeprobe.logs.table import TEXTS, ItemText, pair_judgments

PAIR = {"question_id": 81, "model_1": "alpaca-13b", "model_2": "gpt-3.5-turbo",
        "g1_winner": "model_2", "g2_winner": "tie", "judge": ["gpt-4", "pair-v2"],
        "g1_user_prompt": "…", "g1_judgment": "[[B]]", "g2_judgment": "[[C]]", "turn": 1,
        "tstamp": 1687221890.0}  # fmt: skip


def test_calls_are_pair_rows_fields() -> None:
    names = [f.name for f in dataclasses.fields(PairRow)]
    assert names[0] == "where"
    assert list(CALLS) == ["file", "line", *names[1:]]
    assert CALLS["turn"] == pl.Int64
    assert CALLS["p_second"] == pl.Float64
    assert CALLS["shown"] == pl.Boolean
    assert CALLS["winner"] == pl.String


def test_texts_are_item_fields() -> None:
    names = [f.name for f in dataclasses.fields(ItemText)]
    assert list(TEXTS) == names
    assert set(names) <= set(Item.model_fields)  # what items.parquet is read back as
    calls = calls_frame([])
    _, texts = pair_judgments(calls, Answers())
    assert texts.collect_schema() == pl.Schema(TEXTS)


def test_the_fast_path_states_every_field(tmp_path: Path) -> None:
    log = tmp_path / "gpt-4_pair.jsonl"
    unknown = {**PAIR, "turn": 2, "g2_winner": "model_3"}
    log.write_bytes(orjson.dumps(PAIR) + b"\n" + orjson.dumps(unknown) + b"\n")
    fast = pair_calls_fast(log)
    assert fast is not None
    assert fast.collect_schema() == pl.Schema(CALLS)
    rows = get_format("mtbench-pair").read(log, ReadOptions())
    slow = calls_frame([r for r in rows if isinstance(r, PairRow)])
    assert fast.collect().sort("line", "first").equals(slow.collect().sort("line", "first"))
    frame = pl.LazyFrame({"x": [1]})
    with pytest.raises(TypeError, match="missing"):
        calls_plan(frame, file="x")


def test_each_format_registered_once_and_named() -> None:
    names = format_names()
    assert {"mtbench-pair", "mtbench-single", "alpaca", "inspect", "promptfoo"} <= set(names)
    assert names[-1] == FALLBACK
    assert get_format(FALLBACK).detect is None
    with pytest.raises(ValueError, match="registered already"):
        register_format(LogFormat("alpaca", None, per_record(pair_rows)))
    with pytest.raises(JudgeprobeError, match="is not one of"):
        get_format("nosuch")


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_detection_per_file(tmp_path: Path) -> None:
    single = {"question_id": 81, "model": "vicuna-13b", "judge": ["gpt-4", "single-v1"],
              "judgment": "Rating: [[8]]", "score": 8, "turn": 1}  # fmt: skip
    alpaca = {"instruction": "Say hi", "output_1": "hi", "output_2": "hello", "preference": 2}
    found = {
        "mtbench-pair": _write(tmp_path / "p.jsonl", [PAIR]),
        "mtbench-single": _write(tmp_path / "s.jsonl", [single]),
        "generic": _write(tmp_path / "g.jsonl", [{"id": 1, "winner": "A"}]),
    }
    doc = tmp_path / "annotations.json"
    doc.write_bytes(orjson.dumps([alpaca]))
    found["alpaca"] = doc
    for name, path in found.items():
        assert detect(path).name == name
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(JudgeprobeError, match="no record"):
        detect(empty)
    rows = list(get_format("mtbench-pair").read(found["mtbench-pair"], ReadOptions()))
    assert [r.first for r in rows if isinstance(r, PairRow)] == ["alpaca-13b", "gpt-3.5-turbo"]


def test_fast_and_row_readers_agree_on_a_real_fastchat_log() -> None:
    log = Path(__file__).parent / "fixtures/real_logs/fastchat/stefanstud/model_judgment"
    log = log / "gpt-4_pair.jsonl"
    fast = pair_calls_fast(log)
    assert fast is not None
    rows = get_format("mtbench-pair").read(log, ReadOptions())
    slow = calls_frame([r for r in rows if isinstance(r, PairRow)]).collect()
    assert fast.collect().sort("line", "first").equals(slow.sort("line", "first"))
    assert slow["response_first"].null_count() == 0
