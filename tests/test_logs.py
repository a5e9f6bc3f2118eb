"""``judgeprobe logs``: readers, the judgments table, bad rows, and the planted-log self-test."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe.core.records import JUDGMENT_SCHEMA, LABEL_SCHEMA
from judgeprobe.logs.__main__ import cli as logs_cli
from judgeprobe.logs.generic import verdict
from judgeprobe.logs.table import item_id
from judgeprobe.runs.rundir import RunDir
from judgeprobe.selftest.logs import Line, Planted, run_logs_selftest

README = Path(__file__).resolve().parents[1] / "README.md"


def _pair(qid: int, g1: str, g2: str, w1: str, w2: str) -> dict[str, object]:
    return {"question_id": qid, "model_1": g1, "model_2": g2, "g1_winner": w1, "g2_winner": w2,
            "judge": ["gpt-4", "pair-v2"], "g1_judgment": "x", "g2_judgment": "y",
            "turn": 1}  # fmt: skip


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def test_planted_logs_are_recovered_exactly(tmp_path: Path) -> None:
    lines = run_logs_selftest(tmp_path / "st", Planted(questions=12), resamples=20)
    inspect = {"inspect"} if importlib.util.find_spec("inspect_ai") is not None else set()
    assert {line.fmt for line in lines} == {
        "mtbench-pair", "generic-csv", "alpaca", "mtbench-single", "promptfoo", *inspect
    }  # fmt: skip
    assert all(line.passed for line in lines), [x.text() for x in lines if not x.passed]
    figures = {(line.fmt, line.figure) for line in lines}
    assert ("mtbench-pair", "position") in figures
    assert ("mtbench-pair", "self-preference: simjudge") in figures
    assert not Line("x", "position", 0.25, 0.26).passed  # a wrong figure is a miss


def test_mtbench_pair_rows_in_candidate_terms(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _jsonl(tmp_path / "pair.jsonl", [
        _pair(1, "b-model", "a-model", "model_2", "model_2"),  # a-model wins both orders
        _pair(2, "a-model", "b-model", "model_1", "model_2"),  # each order: the first shown
        _pair(3, "a-model", "b-model", "error", "tie"),
    ])  # fmt: skip
    with log.open("ab") as f:
        f.write(b"{not json\n")
        f.write(orjson.dumps(_pair(4, "a-model", "b-model", "maybe", "tie")) + b"\n")
    # 2 of its 5 lines skipped: above 1 %, the run is unreliable (exit 4)
    assert logs_cli([str(log), "--out", str(tmp_path / "run"), "--resamples", "0"]) == 4
    err = capsys.readouterr().err
    assert f"skipped {log}:4: not a JSON line" in err
    assert f"skipped {log}:5" not in err  # an unknown winner is an Invalid judgment, not a skip
    run = RunDir(tmp_path / "run")
    j = pl.read_parquet(run.judgments)
    assert j.schema == pl.Schema(JUDGMENT_SCHEMA)
    assert j.height == 8
    maybe = j.filter(pl.col("raw_verdict") == "maybe").row(0, named=True)
    assert maybe["verdict"] == "Invalid"
    assert maybe["invalid_reason"] == "winner 'maybe' is not model_1, model_2, tie or error"
    assert set(j["condition"]) == {"Blind"}
    got = {(r["document_id"], r["order"]): r["verdict"] for r in j.iter_rows(named=True)}
    # q1: model_1 is b-model (B); g1 shows B first (order 21), g2 shows A first (12)
    assert got[("1", "21")] == "A"
    assert got[("1", "12")] == "A"
    assert got[("2", "12")] == "A"
    assert got[("2", "21")] == "B"
    assert got[("3", "12")] == "Invalid"
    assert got[("3", "21")] == "Tie"
    assert j["item_id"].n_unique() == 4
    assert run.manifest().kind == "logs"
    card = pl.read_csv(run.card_csv)
    assert "position (observed)" in card["row"].to_list()
    assert "unreadable (observed)" in card["row"].to_list()


def test_a_file_without_a_usable_row_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _jsonl(tmp_path / "bad.jsonl", [_pair(1, "x", "x", "tie", "tie")])
    out = tmp_path / "run"
    assert logs_cli([str(log), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("error: ")
    assert "bad.jsonl" in err[0]
    assert not out.exists()  # nothing half-written


def test_generic_verdicts_and_labels() -> None:
    assert verdict("[[C]]")[0] == "tie"
    assert verdict("model_b")[0] == "second"
    assert verdict(1.25) == ("first", 0.25, "")
    assert verdict("error")[0] is None
    assert verdict(None)[0] is None
    assert item_id("q", 1, "b", "a") == item_id("q", 1, "a", "b")


def _readme_commands() -> list[list[str]]:
    """The worked example's commands, from the README's block marked for the test."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- logs-example -->\n```bash\n(.*?)```", text, re.S)
    assert block is not None, "README: the judge-logs worked example is missing"
    return [shlex.split(line) for line in block.group(1).splitlines()
            if line.startswith("judgeprobe ")]  # fmt: skip


def test_readme_worked_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from judgeprobe.__main__ import main

    monkeypatch.chdir(tmp_path)
    commands = _readme_commands()
    assert [c[1] for c in commands][:2] == ["selftest", "logs"]
    assert [c[1] for c in commands][2:] == ["calibrate"]
    for command in commands:
        code = main([*command[1:], *(["--resamples", "50"] if command[1] == "logs" else [])])
        assert code in (0, 5, 6), command
    run = RunDir(tmp_path / "runs" / "mt-bench")
    labels = pl.read_parquet(run.labels)
    assert labels.schema == pl.Schema(LABEL_SCHEMA)
    assert set(labels["item_id"]) <= set(pl.read_parquet(run.judgments)["item_id"])
    rows = pl.read_csv(run.card_csv)["row"].to_list()
    for name in ("position", "length", "self-preference", "agreement", "unreadable"):
        assert any(r.startswith(f"{name} (observed)") for r in rows), name
    calibrated = pl.read_csv(run.calibrated).sort("model")
    own = calibrated.filter(pl.col("model") == "simjudge").row(0, named=True)
    assert own["lo"] <= own["human_only"] <= own["hi"]  # every item labelled: it holds the truth
    assert own["judge_only"] > own["hi"]  # the judge's self-preference, corrected away
