"""inspect_ai and promptfoo logs written by those tools (``tests/fixtures/real_logs/``).

Every expected figure is counted here from the raw file (the ``.eval`` zip's JSON members, the
JSON log, promptfoo's export), never through judgeprobe's readers; SOURCES.md says where each
file comes from.
"""

from __future__ import annotations

import importlib.util
import json
import math
import zipfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from judgeprobe.__main__ import main as judgeprobe
from judgeprobe.logs.read import read_log_files
from judgeprobe.logs.rows import ScoreRow
from judgeprobe.runs.rundir import RunDir

REAL = Path(__file__).parent / "fixtures" / "real_logs"
INSPECT = REAL / "inspect_ai"
SECURITY = INSPECT / "2025-05-12T20-28-26-04-00_security-guide.json"
CUSTOM = INSPECT / "custom.eval"
UNSCORED = INSPECT / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
ALPHA, BETA = INSPECT / "mockllm_alpha.eval", INSPECT / "mockllm_beta.eval"
PROMPTFOO = REAL / "promptfoo" / "sample-export.json"
STUB = REAL / "promptfoo" / "stub-llm-rubric.json"
GRADES = {"C": 1.0, "P": 0.5, "I": 0.0}

needs_inspect = pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None,
    reason="inspect_ai (the logs extra, which make install adds) is not installed",
)


def _raw_log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An inspect_ai log's eval spec and samples, from its JSON or its zip's members."""
    if path.suffix == ".json":
        whole = json.loads(path.read_text(encoding="utf-8"))
        return whole["eval"], whole["samples"]
    with zipfile.ZipFile(path) as z:
        header = json.loads(z.read("header.json"))
        names = sorted(n for n in z.namelist() if n.startswith("samples/"))
        return header["eval"], [json.loads(z.read(n)) for n in names]


def _scorer_model(sample: dict[str, Any], scorer: str) -> str | None:
    """The first model event inside the scorer's span (or step) of a raw sample."""
    inside = False
    for event in sample.get("events", []):
        if event.get("type") == "scorer" and event.get("name") == scorer:
            inside = event["event"] == "span_begin" or event.get("action") == "begin"
        elif inside and event["event"] == "model":
            return str(event["model"])
    return None


def _value(raw: object) -> float | None:
    if isinstance(raw, str):
        return GRADES.get(raw)
    return None if raw is None or math.isnan(float(raw)) else float(raw)  # type: ignore[arg-type]


def _logs(tmp_path: Path, *paths: Path, out: str = "run") -> tuple[int, Path]:
    run = tmp_path / out
    code = judgeprobe(["logs", *map(str, paths), "--out", str(run), "--resamples", "0"])
    return code, run


@needs_inspect
@pytest.mark.parametrize("path", [SECURITY, CUSTOM], ids=["json-spans", "eval-steps"])
def test_inspect_judge_is_the_grading_model(path: Path) -> None:
    spec, samples = _raw_log(path)
    expected = [
        (str(s["id"]), scorer, _scorer_model(s, scorer), _value(score["value"]))
        for s in samples for scorer, score in s["scores"].items()
    ]  # fmt: skip
    assert expected
    assert all(judge for _, _, judge, _ in expected)
    read = read_log_files([path])
    assert not read.bad
    assert not read.unusable
    got = [(r.question_id, r.protocol, r.judge, r.score) for r in read.scores]
    assert got == expected
    assert all(r.generator == spec["model"] for r in read.scores)
    assert "model_graded_fact" not in {r.judge for r in read.scores}  # the scorer is no judge


@needs_inspect
def test_inspect_grader_role_pairs_two_generators(tmp_path: Path) -> None:
    specs = {p: _raw_log(p) for p in (ALPHA, BETA)}
    grader = {spec["model_roles"]["grader"]["model"] for spec, _ in specs.values()}
    assert grader == {"mockllm/grader"}
    value = {
        (spec["model"], str(s["id"])): _value(s["scores"]["model_graded_fact"]["value"])
        for spec, samples in specs.values() for s in samples
    }  # fmt: skip
    questions = sorted({q for _, q in value})
    code, run = _logs(tmp_path, ALPHA, BETA)
    assert code == 0  # nothing skipped; observed rows only
    j = pl.read_parquet(RunDir(run).judgments).sort("document_id")
    assert j["judge"].unique().to_list() == ["mockllm/grader"]
    assert j["document_id"].to_list() == questions
    for row in j.iter_rows(named=True):
        a, b = (
            value[("mockllm/alpha", row["document_id"])],
            value[("mockllm/beta", row["document_id"])],
        )
        want = "Invalid" if a is None or b is None else "A" if a > b else "B" if a < b else "Tie"
        assert row["verdict"] == want
        # generator names hold "/": escaped in the item id, so it reads back one way only
        assert row["item_id"] == f"{row['document_id']}/t1/mockllm%2Falpha~mockllm%2Fbeta"
    invalid = j.filter(pl.col("verdict") == "Invalid")
    assert invalid.height == sum(v is None for v in value.values())
    assert invalid["invalid_reason"].str.contains("grader_failed").all()
    manifest = RunDir(run).manifest()
    assert manifest.logs is not None
    assert (manifest.logs.skipped, manifest.logs.rows) == (0, len(value))


@needs_inspect
def test_inspect_unscored_eval_among_inputs_is_skipped_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unscored = sum(not s["scores"] for s in _raw_log(UNSCORED)[1])
    scored = sum(len(_raw_log(p)[1]) for p in (ALPHA, BETA))
    assert unscored == len(_raw_log(UNSCORED)[1]) > 0
    code, run = _logs(tmp_path, ALPHA, UNSCORED, BETA)
    captured = capsys.readouterr()
    assert code == 4  # the skipped share is above 1 %: unreliable, before any card verdict
    assert f"warning: {UNSCORED}: no usable row as inspect" in captured.err
    share = f"{unscored} of {unscored + scored} log rows skipped"
    assert share in captured.out
    manifest = RunDir(run).manifest()
    assert manifest.logs is not None
    assert (manifest.logs.skipped, manifest.logs.rows) == (unscored, unscored + scored)
    first = RunDir(run).card_md.read_text().splitlines()[0]
    assert share in first
    assert judgeprobe(["card", str(run), "--resamples", "0"]) == 4  # the card says so again


@needs_inspect
def test_inspect_only_unscored_is_one_line_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, run = _logs(tmp_path, UNSCORED)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1
    assert err[0].startswith(f"error: {UNSCORED}: no usable row as inspect")
    assert not run.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no staging directory left either


def test_promptfoo_llm_rubric_export(tmp_path: Path) -> None:
    export = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    results = export["results"]["results"]
    rubric: dict[tuple[str, str], float] = {}
    output: dict[tuple[str, str], str] = {}
    for r in results:
        key = (str(r["testIdx"]), r["provider"]["id"])
        parts = r["gradingResult"]["componentResults"]
        (score,) = [p["score"] for p in parts if p["assertion"]["type"] == "llm-rubric"]
        rubric[key], output[key] = float(score), r["response"]["output"]
    providers = sorted({p for _, p in rubric})
    tests = sorted({t for t, _ in rubric})
    code, run = _logs(tmp_path, PROMPTFOO)
    assert code == 0
    j = pl.read_parquet(RunDir(run).judgments).sort("document_id")
    assert j.height == len(tests)  # one pair of providers per test case
    assert j["judge"].unique().to_list() == ["promptfoo-default-grader"]  # no provider named
    for row in j.iter_rows(named=True):
        t = row["document_id"]
        assert [row["generator_1"], row["generator_2"]] == providers
        a, b = rubric[(t, providers[0])], rubric[(t, providers[1])]
        assert row["verdict"] == ("A" if a > b else "B" if a < b else "Tie")
        assert (row["score_1"], row["score_2"]) == (a, b)  # the rubric's, not the whole result's
        assert row["length_1"] == len(output[(t, providers[0])])
        assert row["length_2"] == len(output[(t, providers[1])])


def test_promptfoo_rows_keep_the_graders_reason() -> None:
    export = json.loads(PROMPTFOO.read_text(encoding="utf-8"))
    reasons = [
        p["reason"]
        for r in export["results"]["results"]
        for p in r["gradingResult"]["componentResults"]
        if p["assertion"]["type"] == "llm-rubric"
    ]
    read = read_log_files([PROMPTFOO])
    assert all(isinstance(r, ScoreRow) for r in read.scores)
    assert [r.explanation for r in read.scores] == reasons


def _raw_grade(result: dict[str, Any]) -> tuple[str, float | None]:
    """A raw promptfoo result's grader (label) and llm-rubric score; None: the reply unread."""
    parts = result["gradingResult"]["componentResults"]
    rubric = [p for p in parts if p.get("assertion", {}).get("type") == "llm-rubric"]
    grader = result["testCase"]["options"]["provider"]["label"]
    if not rubric:  # promptfoo's fail(): no assertion attached, the reply not read
        assert [p["reason"] for p in parts] == ["Could not extract JSON from llm-rubric response"]
        return grader, None
    named = rubric[0]["assertion"].get("provider")
    return (named["label"] if named else grader), float(rubric[0]["score"])


def test_promptfoo_stub_eval_scores_and_unread_replies(tmp_path: Path) -> None:
    export = json.loads(STUB.read_text(encoding="utf-8"))
    graded = {(str(r["testIdx"]), r["provider"]["label"]): _raw_grade(r)
              for r in export["results"]["results"]}  # fmt: skip
    code, run = _logs(tmp_path, STUB)
    assert code == 0
    j = pl.read_parquet(RunDir(run).judgments)
    assert j.height == len({t for t, _ in graded})  # one pair of stub providers per test case
    for row in j.iter_rows(named=True):
        (ja, a), (jb, b) = (
            graded[(row["document_id"], "stub-alpha")],
            graded[(row["document_id"], "stub-beta")],
        )
        assert row["judge"] == ja == jb  # the grader the test case (or its assertion) names
        want = "Invalid" if a is None or b is None else "A" if a > b else "B" if a < b else "Tie"
        assert row["verdict"] == want
    unread = j.filter(pl.col("verdict") == "Invalid")
    assert unread.height == sum(
        1 for t in {t for t, _ in graded}
        if graded[(t, "stub-alpha")][1] is None or graded[(t, "stub-beta")][1] is None
    ) > 0  # fmt: skip
    assert unread["invalid_reason"].str.contains("Could not extract JSON").all()
    assert set(j["judge"]) == {"stub-grader", "stub-grader-strict"}
