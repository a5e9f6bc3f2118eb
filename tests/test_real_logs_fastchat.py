"""FastChat (MT-Bench pair and single) and Arena-Hard-Auto judgments as their tools wrote them
(tests/fixtures/real_logs/SOURCES.md): every figure ``judgeprobe logs`` gives equals the one
counted here from the raw file with json and arithmetic, never through judgeprobe's readers."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from judgeprobe.__main__ import main as judgeprobe
from judgeprobe.core.layouts import mt_bench_winner
from judgeprobe.logs.mtbench import human_votes, prompt_text, read_answers
from judgeprobe.logs.rows import Where
from judgeprobe.runs.rundir import RunDir

REAL = Path(__file__).parent / "fixtures" / "real_logs"
PAIR = REAL / "fastchat/stefanstud/model_judgment/gpt-4_pair.jsonl"
ANSWERS = REAL / "fastchat/stefanstud/model_answer"
SINGLE = REAL / "fastchat/alvarobartt/model_judgment/gpt-4_single.jsonl"
ARENA = (REAL / "arena_hard/data/arena-hard-v0.1/model_judgment/gpt-3.5-turbo-0125"
         / "Nexusflow__Athene-V2-Chat.jsonl")  # fmt: skip
BASELINE = "gpt-4-0314"  # arena_hard/config/judge_config.yaml's baseline_model
PICKED = {"model_1", "model_2"}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _logs(tmp: Path, *args: str) -> RunDir:
    out = tmp / "run"
    code = judgeprobe(["logs", *args, "--out", str(out), "--resamples", "0", "--no-report"])
    assert code in (0, 5, 6)
    return RunDir(out)


def _card_rows(run: RunDir, kind: str) -> dict[str, dict[str, Any]]:
    card = json.loads((run.path / "card.json").read_text(encoding="utf-8"))
    return {r["protocol"]: r for r in card["rows"] if r["kind"] == kind}


def _answers() -> dict[tuple[str, str, int], str]:
    """Each model's answer by question and turn, from model_answer/MODEL.jsonl (by file)."""
    out = {}
    for path in ANSWERS.glob("*.jsonl"):
        for line in _lines(path):
            for turn, answer in enumerate(line["choices"][0]["turns"], start=1):
                out[(path.stem, str(line["question_id"]), turn)] = answer
    return out


def _pair_expected() -> tuple[dict[tuple[str, str], str], dict[str, tuple[int, int, int]]]:
    """Each call's verdict by (question, order) in candidate terms, and per prompt name the
    items held validly in both orders: (n, consistent, first-shown both − second-shown both)."""
    verdicts: dict[tuple[str, str], str] = {}
    position: dict[str, list[int]] = {}
    for r in _lines(PAIR):
        m1, m2, qid = str(r["model_1"]), str(r["model_2"]), str(r["question_id"])
        a = min(m1, m2)
        for g, first in (("g1", m1), ("g2", m2)):
            won = r[f"{g}_winner"]
            name = m1 if won == "model_1" else m2 if won == "model_2" else None
            verdict = "Tie" if won == "tie" else "Invalid" if name is None else (
                "A" if name == a else "B")  # fmt: skip
            verdicts[(qid, "12" if first == a else "21")] = verdict
        g1, g2 = r["g1_winner"], r["g2_winner"]
        if {g1, g2} <= PICKED | {"tie"}:
            p = position.setdefault(str(r["judge"][1]), [0, 0, 0])
            p[0] += 1
            p[1] += g1 == g2
            p[2] += (g1, g2) == ("model_1", "model_2")
            p[2] -= (g1, g2) == ("model_2", "model_1")
    return verdicts, {k: (v[0], v[1], v[2]) for k, v in position.items()}


def test_fastchat_pair_reads_whole_with_texts_from_the_prompts(tmp_path: Path) -> None:
    lines = _lines(PAIR)
    run = _logs(tmp_path, str(PAIR))  # no --answers: the judge prompts hold the answers
    j = pl.read_parquet(run.judgments)
    verdicts, position = _pair_expected()
    assert j.height == 2 * len(lines)
    assert not (run.path / "bad_rows.txt").exists()
    got = {(r["document_id"], r["order"]): r["verdict"] for r in j.iter_rows(named=True)}
    assert got == verdicts
    errors = sum(r[g] == "error" for r in lines for g in ("g1_winner", "g2_winner"))
    assert (j["verdict"] == "Invalid").sum() == errors == 3
    assert set(j["protocol"]) == {"pair-v2", "pair-math-v1"}
    # the texts recovered from g1/g2_user_prompt are FastChat's answers, character for character
    answers = _answers()
    for r in j.iter_rows(named=True):
        qid = r["document_id"]
        assert r["length_1"] == len(answers[(r["generator_1"], qid, 1)])
        assert r["length_2"] == len(answers[(r["generator_2"], qid, 1)])
    items = pl.read_parquet(run.path / "items.parquet")
    assert items.height == len({r["question_id"] for r in lines})
    rows = _card_rows(run, "observed-position")
    for protocol, (n, same, excess) in position.items():
        assert rows[protocol]["n"] == n
        assert rows[protocol]["consistency"]["value"] == pytest.approx(same / n)
        assert rows[protocol]["effect"]["value"] == pytest.approx(excess / n)
    assert set(_card_rows(run, "observed-length")) == {"pair-v2", "pair-math-v1"}


def test_fastchat_pair_with_its_answers_folder(tmp_path: Path) -> None:
    run = _logs(tmp_path, str(PAIR), "--answers", str(ANSWERS))
    j = pl.read_parquet(run.judgments)
    answers = _answers()
    assert all(
        r["length_1"] == len(answers[(r["generator_1"], r["document_id"], 1)])
        for r in j.iter_rows(named=True)
    )
    items = pl.read_parquet(run.path / "items.parquet")
    questions = {str(q["question_id"]): q for q in _lines(ANSWERS.parent / "question.jsonl")}
    for r in items.iter_rows(named=True):
        assert r["document"] == questions[r["document_id"]]["turns"][0]
        assert r["domain"] == questions[r["document_id"]]["category"]


def test_answers_are_keyed_by_file_name(tmp_path: Path) -> None:
    """FastChat's loader names a model by its file, whatever the lines' model_id say."""
    swapped = tmp_path / "model_answer"
    swapped.mkdir()
    shutil.copy(ANSWERS / "phi-3.jsonl", swapped / "phi-3-dpo.jsonl")
    shutil.copy(ANSWERS / "phi-3-dpo.jsonl", swapped / "phi-3.jsonl")
    first = _lines(ANSWERS / "phi-3.jsonl")[0]
    assert first["model_id"] == "phi-3"
    bad: list[str] = []
    found = read_answers([swapped], bad)
    text = first["choices"][0]["turns"][0]
    assert found.answer("phi-3-dpo", str(first["question_id"]), 1) == text
    assert not bad
    assert len(found.answers) == sum(
        len(x["choices"][0]["turns"]) for p in swapped.glob("*.jsonl") for x in _lines(p)
    )


def test_two_folders_naming_one_model_are_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "more" / "model_answer"
    other.mkdir(parents=True)
    shutil.copy(ANSWERS / "phi-3.jsonl", other / "phi-3.jsonl")
    out = tmp_path / "run"
    args = ["logs", str(PAIR), "--answers", str(ANSWERS), "--answers", str(other)]
    assert judgeprobe([*args, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "both hold model phi-3's answers" in err[0]
    assert not out.exists()


def _single_expected(lines: list[dict[str, Any]]) -> Counter[str]:
    """Derived verdicts: every pair of models scored on one question, turn and prompt name."""
    groups: dict[tuple[object, ...], list[dict[str, Any]]] = {}
    for r in lines:
        key = (*r["judge"], r["question_id"], r["turn"])
        groups.setdefault(key, []).append(r)
    out: Counter[str] = Counter()
    for group in groups.values():
        ordered = sorted(group, key=lambda r: str(r["model"]))
        for x, y in combinations(ordered, 2):
            if x["model"] == y["model"]:
                continue
            sx, sy = x["score"], y["score"]
            if not isinstance(sx, int | float) or not isinstance(sy, int | float) or -1 in (sx, sy):
                out["Invalid"] += 1
            else:
                out["A" if sx > sy else "B" if sx < sy else "Tie"] += 1
    return out


def test_fastchat_single_with_a_minus_one(tmp_path: Path) -> None:
    lines = _lines(SINGLE)
    assert sum(r["score"] == -1 for r in lines) == 1
    run = _logs(tmp_path, str(SINGLE))
    j = pl.read_parquet(run.judgments)
    assert Counter(j["verdict"].to_list()) == _single_expected(lines)
    invalid = j.filter(pl.col("verdict") == "Invalid")
    assert set(invalid["invalid_reason"]) == {"the judge's reply held no rating (−1)"}
    assert j["length_1"].null_count() == 0  # the answers, read from each user_prompt
    assert not (run.path / "bad_rows.txt").exists()


def test_unparseable_verdicts_are_invalid_not_dropped(tmp_path: Path) -> None:
    pair = dict(_lines(PAIR)[0], g1_winner="model_3")
    log = tmp_path / "gpt-4_pair.jsonl"
    log.write_text(json.dumps(pair) + "\n", encoding="utf-8")
    j = pl.read_parquet(_logs(tmp_path / "p", str(log)).judgments)
    assert j.height == 2
    bad = j.filter(pl.col("verdict") == "Invalid").row(0, named=True)
    assert bad["invalid_reason"] == "winner 'model_3' is not model_1, model_2, tie or error"
    lines = [r for r in _lines(SINGLE) if r["question_id"] == 81 and r["turn"] == 1
             and r["judge"] == ["gpt-4", "single-v1"]]  # fmt: skip
    lines[0] = dict(lines[0], score="abc")
    single = tmp_path / "gpt-4_single.jsonl"
    single.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    j = pl.read_parquet(_logs(tmp_path / "s", str(single)).judgments)
    assert Counter(j["verdict"].to_list()) == _single_expected(lines)
    assert "score 'abc' is not a number" in set(j["invalid_reason"])


def _arena_expected() -> tuple[dict[tuple[str, str], str], int, int, tuple[int, int]]:
    """arena-hard-auto's reading: game 1 baseline as A, game 2 the model as A; by (question,
    order) the verdict in candidate terms; null labels; strong labels; (n, consistent)."""
    verdicts: dict[tuple[str, str], str] = {}
    null = strong = n = same = 0
    for r in _lines(ARENA):
        model, qid = str(r["model"]), str(r["question_id"])
        a = min(model, BASELINE)
        winners = []
        for number, game in enumerate(r["games"]):
            shown_a, shown_b = (BASELINE, model) if number == 0 else (model, BASELINE)
            label = game["score"]
            null += label is None
            strong += label is not None and ">>" in label
            won = {"A>>B": shown_a, "A>B": shown_a, "A=B": "tie", "B>A": shown_b,
                   "B>>A": shown_b}.get(label)  # fmt: skip
            winners.append(won)
            verdict = "Invalid" if won is None else "Tie" if won == "tie" else (
                "A" if won == a else "B")  # fmt: skip
            verdicts[(qid, "12" if shown_a == a else "21")] = verdict
        if None not in winners:
            n += 1
            same += winners[0] == winners[1]
    return verdicts, null, strong, (n, same)


def test_arena_hard_judgments_against_their_baseline(tmp_path: Path) -> None:
    lines = _lines(ARENA)
    run = _logs(tmp_path, str(ARENA))  # detected; the baseline from config/judge_config.yaml
    manifest = json.loads(run.manifest_file.read_text(encoding="utf-8"))
    assert set(manifest["config"]["formats"].values()) == {"arena-hard"}
    j = pl.read_parquet(run.judgments)
    verdicts, null, strong, (n, same) = _arena_expected()
    assert j.height == 2 * len(lines)
    got = {(r["document_id"], r["order"]): r["verdict"] for r in j.iter_rows(named=True)}
    assert got == verdicts
    assert (j["verdict"] == "Invalid").sum() == null == 2
    assert (j["details"] == '{"strength": "strong"}').sum() == strong
    assert set(j["generator_2"]) | set(j["generator_1"]) == {BASELINE, lines[0]["model"]}
    assert j["length_1"].null_count() == 0  # the answers, read from each game's user_prompt
    row = _card_rows(run, "observed-position")["arena-hard"]
    assert row["n"] == n
    assert row["consistency"]["value"] == pytest.approx(same / n)


def test_arena_hard_baseline_named_or_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alone = tmp_path / "judgments" / ARENA.name
    alone.parent.mkdir()
    shutil.copy(ARENA, alone)
    out = tmp_path / "refused"
    assert judgeprobe(["logs", str(alone), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "--baseline-model" in err[0]
    assert not out.exists()
    run = _logs(tmp_path, str(alone), "--baseline-model", BASELINE)
    got = {(r["document_id"], r["order"]): r["verdict"]
           for r in pl.read_parquet(run.judgments).iter_rows(named=True)}  # fmt: skip
    assert got == _arena_expected()[0]


def test_one_human_winner_rule() -> None:
    """MT-Bench human judgments: tie and tie (bothbad) are both a Tie, wherever read."""
    assert [mt_bench_winner(w) for w in ("model_a", "model_b", "tie", "tie (bothbad)")] == [
        "A", "B", "Tie", "Tie"
    ]  # fmt: skip
    with pytest.raises(ValueError, match="is not model_a"):
        mt_bench_winner("tie (inconsistent)")
    row = {"question_id": 81, "model_a": "x", "model_b": "y", "winner": "tie (bothbad)",
           "judge": "expert_0", "turn": 1}  # fmt: skip
    assert human_votes(Where("h.jsonl", 1), row).preferred == "tie"


def test_multi_turn_pair_prompt_gives_the_second_turn() -> None:
    """FastChat's pair-v2-multi-turn template, filled as its run_judge_pair fills it with the
    real answers: the prompt's texts are question 2 and both answers at turn 2."""
    templates = {t["name"]: t for t in _lines(PAIR.parents[1] / "judge_prompts.jsonl")}
    questions = {q["question_id"]: q for q in _lines(PAIR.parents[1] / "question.jsonl")}
    a_lines = {r["question_id"]: r for r in _lines(ANSWERS / "phi-3.jsonl")}
    b_lines = {r["question_id"]: r for r in _lines(ANSWERS / "phi-3-dpo.jsonl")}
    checked = 0
    for qid, question in questions.items():
        a, b = a_lines[qid]["choices"][0]["turns"], b_lines[qid]["choices"][0]["turns"]
        if len(question["turns"]) < 2 or len(a) < 2 or len(b) < 2:
            continue
        prompt = templates["pair-v2-multi-turn"]["prompt_template"].format(
            question_1=question["turns"][0], question_2=question["turns"][1],
            answer_a_1=a[0], answer_b_1=b[0], answer_a_2=a[1], answer_b_2=b[1],
        )  # fmt: skip
        assert prompt_text(prompt, "question") == question["turns"][1]
        assert prompt_text(prompt, "a") == a[1]
        assert prompt_text(prompt, "b") == b[1]
        checked += 1
    assert checked == len(questions)


def test_answers_named_otherwise_are_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file whose name is not the log's model answers nothing, and the run says so."""
    folder = tmp_path / "model_answer"
    folder.mkdir()
    shutil.copy(ANSWERS / "phi-3.jsonl", folder / "phi3_run2.jsonl")  # model_id still phi-3
    shutil.copy(ANSWERS / "phi-3-dpo.jsonl", folder / "phi-3-dpo.jsonl")
    _logs(tmp_path, str(PAIR), "--answers", str(folder))
    err = capsys.readouterr().err
    assert "warning: --answers has no MODEL.jsonl for 1 of the log's 2 models (phi-3)" in err
