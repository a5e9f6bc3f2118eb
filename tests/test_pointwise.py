"""Pointwise judges (``kind = "score"``): each response scored alone, the verdict derived by code.

Hostile replies (out of range, two different scores, none, a huge number) end Invalid with
their reason after the re-asks; a planted score shift is measured exactly, with its interval.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from judgeprobe.card.from_run import card_for_run
from judgeprobe.engine.settings import JudgeConfig, ScoreFormat
from judgeprobe.engine.validate import ReplyError, parse_reply
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.prompts import load_prompt_file
from judgeprobe.prompts.judge import judge_prompt
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.pointwise import derived, score_reply_model, score_values
from judgeprobe.text.lexicons import load_lexicons
from tests.conftest import make_items, run_cli, write_config
from tests.fakeserver import FakeJudge

PATTERN = r"Rating: \[\[(\d+)\]\]"
PROMPT = "[Question]\n{CONTEXT}\n[Answer] (label: {LABEL})\n{RESPONSE}\nRate 1-10: Rating: [[5]]\n"
SCORE = f"{{ pattern = '{PATTERN}', min = 1, max = 10 }}"
JUDGE_TOML = """
[[judges]]
name = "mine"
url = "{url}"
kind = "score"
prompt = "{prompt}"
score = {score}
"""


def _fmt(**extra: object) -> ScoreFormat:
    return ScoreFormat.model_validate({"pattern": PATTERN, "min": 1, "max": 10, **extra})


@pytest.mark.parametrize(
    ("reply", "score", "explanation"),
    [
        ("Clear and correct.\nRating: [[7]]", 7.0, "Clear and correct."),
        ("Rating: [[4]] on reflection, still Rating: [[4]]", 4.0, "on reflection, still"),
        ("Rating: [[10]]", 10.0, ""),
    ],
)
def test_the_last_score_counts(reply: str, score: float, explanation: str) -> None:
    parsed = parse_reply(reply, score_reply_model(_fmt(), "p"), "stop")
    assert parsed.model_dump() == {"score": score, "explanation": explanation}


@pytest.mark.parametrize(
    ("reply", "reason", "truncated"),
    [
        ("Rating: [[11]]", "score 11 is out of range 1–10", False),
        ("Rating: [[0]]", "score 0 is out of range 1–10", False),
        ("Rating: [[7]] ... no, Rating: [[3]]", "ambiguous score: 7, 3", False),
        ("A fine answer, I would say.", "no score matching", False),
        ("Rating: [[" + "9" * 5000 + "]]", "out of range 1–10", False),
        ("The answer is", "hit max_tokens", True),
    ],
)
def test_hostile_replies_are_refused_with_their_reason(
    reply: str, reason: str, truncated: bool
) -> None:
    with pytest.raises(ReplyError, match=re.escape(reason)) as caught:
        parse_reply(reply, score_reply_model(_fmt(), "p"), "length" if truncated else "stop")
    assert caught.value.truncated is truncated
    assert len(str(caught.value)) < 200  # a huge number is not copied into the reason


def test_the_json_form_bounds_its_score_in_the_schema_it_sends() -> None:
    fmt = ScoreFormat.model_validate({"json": "rating", "min": 0, "max": 100, "explanation": "why"})
    model = score_reply_model(fmt, "p")
    parsed = parse_reply('{"why": "thin", "rating": 35}', model, "stop")
    assert parsed.model_dump() == {"score": 35.0, "explanation": "thin"}
    for bad, reason in (('{"why": "", "rating": 101}', "out of range"),
                        ('{"why": "", "rating": true}', "not a number"),
                        ('{"why": ""}', "no 'rating' key")):  # fmt: skip
        with pytest.raises(ReplyError, match=reason):
            parse_reply(bad, model, "stop")
    sent = model.schema_sent
    assert sent is not None
    assert sent["properties"]["rating"] == {"type": "number", "minimum": 0.0, "maximum": 100.0}
    # The reading rule and the prompt's hash are in every request key.
    assert model.key_schema != score_reply_model(fmt, "q").key_schema
    assert model.key_schema["x-prompt"] == "p"


def test_the_verdict_is_derived_and_labels_sit_above_a_response_without_label() -> None:
    assert (derived(7, 5), derived(5, 7), derived(6, 6)) == ("[1,2]", "[2,1]", "Tie")
    text = load_prompt_file(str(_write(Path("/tmp") / "jp-bare-score.txt", "{RESPONSE}\n")))
    bare = judge_prompt(text, None, (), {}, pointwise=True)
    shown = Presentation("q", "text", "other", "LLM", "")
    assert score_values(bare, shown, 1)["response"] == "(label = LLM)\ntext"
    assert score_values(bare, shown, 2)["response"] == "other"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _config(tmp_path: Path, url: str, score: str = SCORE, prompt: str = PROMPT,
            kind: str = "score", **top: Any) -> Path:  # fmt: skip
    items = make_items(tmp_path / "i.jsonl", 4)
    _write(tmp_path / "p.txt", prompt)
    cfg = write_config(tmp_path / "c.toml", url, items, protocols=["own"], **top)
    judge = JUDGE_TOML.format(url=url, prompt=tmp_path / "p.txt", score=score)
    cfg.write_text(cfg.read_text().split("[[judges]]")[0] + judge.replace('"score"', f'"{kind}"'))
    return cfg


@pytest.mark.parametrize(
    ("score", "prompt", "kind", "needle"),
    [
        ("{ pattern = '[[(', min = 1, max = 10 }", PROMPT, "score", "not a regular expression"),
        (f"{{ pattern = '{PATTERN}', min = 10, max = 1 }}", PROMPT, "score", "must be below max"),
        (f"{{ pattern = '{PATTERN}', min = 5, max = 5 }}", PROMPT, "score", "must be below max"),
        ("{ pattern = 'Rating: \\d+', min = 1, max = 10 }", PROMPT, "score", "exactly one group"),
        (SCORE, "{CONTEXT} {LABEL}\n", "score", "no {RESPONSE}"),
        (SCORE, "{CONTEXT} {RESPONSE_1}\n", "score", "unknown placeholder {RESPONSE_1}"),
        (SCORE, PROMPT, "pairwise", "score goes with kind"),
        ("{ json = 'r', pattern = '(x)', min = 1, max = 10 }", PROMPT, "score", "either pattern"),
    ],
)
def test_a_bad_pointwise_judge_is_one_line(
    tmp_path: Path, score: str, prompt: str, kind: str, needle: str
) -> None:
    cfg = _config(tmp_path, "http://127.0.0.1:9/v1", score, prompt, kind)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    assert needle in lines[0], lines


def planted(prompt: str) -> str:
    """A judge with a planted score shift: +2 for a response labelled LLM, on a base of 5 (6
    for the first summary). Labels are read from the prompt's ``(label: …)`` line."""
    label = re.search(r"\(label: ([^)\n]*)\)", prompt)
    base = 6 if "Summary one" in prompt else 5
    return f"Reads well.\nRating: [[{base + 2 * (label is not None and label[1] == 'LLM')}]]"


def test_a_planted_score_shift_is_measured_exactly_end_to_end(tmp_path: Path) -> None:
    """Two requests per judgment, one order, scores in the table, the shift in the metrics."""
    with FakeJudge(free_text=planted) as judge:
        cfg = _config(tmp_path, judge.url, order="both", swap=1.0)
        out = tmp_path / "run"
        proc = run_cli("--config", str(cfg), "--out", str(out))
        sent = [b["messages"][0]["content"] for b in judge.bodies]
        again = run_cli("--config", str(cfg), "--out", str(out), "--resume")
    assert "sent 0" in again.stderr, again.stderr  # every request cached under its own key
    assert proc.returncode in (0, 5, 6), proc.stderr
    # 4 items × 4 conditions, one order (a pointwise judge never sees the order): 2 requests each
    assert "16 judgments planned (32 requests before cache" in proc.stderr, proc.stderr
    assert all(s.count("{") == 0 and "[Answer]" in s for s in sent)
    j = pl.read_parquet(out / "judgments.parquet")
    assert j.height == 16
    assert set(j["order"]) == {"12"}
    assert set(j["n_requests"]) == {2}
    assert j.schema["score_1"] == pl.Float64
    blind = j.filter(pl.col("condition") == "Blind")
    assert blind["score_1"].to_list() == [6.0] * 4
    assert blind["score_2"].to_list() == [5.0] * 4
    assert set(blind["verdict"]) == {"A"}
    true = j.filter(pl.col("condition") == "True")  # LLM on candidate 1: 8 against 5
    assert set(true["score_1"]) == {8.0}
    assert set(true["verdict"]) == {"A"}
    flip = j.filter(pl.col("condition") == "Flip")  # LLM on candidate 2: 6 against 7
    assert set(flip["score_2"]) == {7.0}
    assert set(flip["verdict"]) == {"B"}
    assert set(j["score_min"]) == {1.0}
    assert set(j["score_max"]) == {10.0}
    ci = pl.read_csv(out / "metrics_ci.csv").filter(pl.col("metric") == "score_shift")
    shift = {r["condition"]: r for r in ci.iter_rows(named=True)}
    assert shift["True"]["value"] == pytest.approx(2.0)
    assert shift["Flip"]["value"] == pytest.approx(2.0)
    assert shift["Placebo"]["value"] == pytest.approx(0.0)
    assert shift["True"]["lo"] <= 2.0 <= shift["True"]["hi"] <= 9.0
    assert shift["True"]["n"] == 4
    # The derived verdicts feed every pairwise metric: Flip moves every Blind A to the target B.
    lds = pl.read_csv(out / "metrics.csv").filter(pl.col("condition") == "Flip")["LDS"]
    assert lds.to_list() == [1.0]
    report = (out / "report.md").read_text()
    assert "Score shift" in report
    manifest = orjson.loads((out / "manifest.json").read_bytes())
    assert manifest["own_prompts"]["mine"]["kind"] == "score"
    assert "scores each response alone" in report  # position: not applicable
    card = card_for_run(out, resamples=200)
    assert "position" not in card.rows["kind"].to_list()
    true_row = card.rows.filter(pl.col("row") == "True").row(0, named=True)
    assert true_row["score_shift"] == pytest.approx(2.0)
    assert true_row["score_shift_lo"] <= 2.0 <= true_row["score_shift_hi"]
    assert "score shift 2.000 [" in (out / "card.md").read_text()


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Rating: [[11]]", "score 11 is out of range 1–10"),
        ("Rating: [[7]] ... Rating: [[3]]", "ambiguous score: 7, 3"),
        ("No rating from me.", "no score matching"),
        ("Rating: [[" + "9" * 400 + "]]", "out of range"),
    ],
)
def test_a_hostile_judge_ends_invalid_with_its_reason(
    tmp_path: Path, reply: str, reason: str
) -> None:
    with FakeJudge(free_text=reply) as judge:
        cfg = _config(tmp_path, judge.url, conditions=["Blind", "True"])
        out = tmp_path / "run"
        proc = run_cli("--config", str(cfg), "--out", str(out))
    assert proc.returncode == 4, proc.stderr  # every judgment Invalid: the judge is unreliable
    j = pl.read_parquet(out / "judgments.parquet")
    assert set(j["verdict"]) == {"Invalid"}
    assert all(reason in r and "response shown first" in r for r in j["invalid_reason"])
    assert set(j["reasks"]) == {2}  # re-asked twice (max_reasks), then Invalid
    assert j["score_1"].null_count() == j.height


def test_one_invalid_score_makes_the_derived_verdict_invalid(tmp_path: Path) -> None:
    """The first answer scored, the second out of range: the judgment is Invalid, its reason
    names the second request, and no half-scored row reaches the table."""

    def half(prompt: str) -> str:
        return "Rating: [[11]]" if "Summary two" in prompt else "Rating: [[6]]"

    with FakeJudge(free_text=half) as judge:
        cfg = _config(tmp_path, judge.url, conditions=["Blind", "True"])
        out = tmp_path / "run"
        run_cli("--config", str(cfg), "--out", str(out))
    j = pl.read_parquet(out / "judgments.parquet")
    assert set(j["verdict"]) == {"Invalid"}
    assert all(
        r.startswith("score of the response shown second: score 11 is out of range")
        for r in j["invalid_reason"]
    )
    assert set(j["n_requests"]) == {2}
    assert j["score_1"].null_count() == j.height


def _table(shift: dict[str, list[float]], low: float, high: float) -> pl.DataFrame:
    """A judgments table of a pointwise judge: Blind and one cue per item, in its scale."""
    rows = []
    letter = {"[1,2]": "A", "[2,1]": "B", "Tie": "Tie"}
    for i, (before, after) in enumerate(zip(shift["blind"], shift["cue"], strict=True)):
        for condition, target, s1 in (("Blind", "none", before), ("True", "A", after)):
            scores = {"score_1": s1, "score_2": 5.0, "score_min": low, "score_max": high}
            rows.append({"judge": "j", "protocol": "own", "condition": condition,
                         "item_id": f"i{i}", "subset": "s", "document_id": f"d{i // 2}",
                         "order": "12", "seed": 0, "target": target,
                         "verdict": letter[derived(s1, 5.0)], **scores})  # fmt: skip
    return pl.DataFrame(rows)


@pytest.mark.parametrize(("low", "high"), [(1.0, 10.0), (0.0, 100.0)])
def test_the_score_shift_is_the_mean_target_difference_in_the_judges_points(
    low: float, high: float
) -> None:
    blind = [3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 2.0, 5.0]
    moved = [2.0, 2.0, 0.0, 1.0, 3.0, -1.0, 2.0, 0.0]  # mean 1.125
    table = _table({"blind": blind, "cue": [b + m for b, m in zip(blind, moved, strict=True)]},
                   low, high)  # fmt: skip
    tidy = compute_metrics(table, load_lexicons(), None, differences=False)
    row = tidy.filter((pl.col("metric") == "score_shift") & (pl.col("condition") == "True"))
    assert row["value"].to_list() == [pytest.approx(1.125)]
    assert row["n"].to_list() == [8]
    assert row["documents"].to_list() == [4]
    lo, hi = row["lo"][0], row["hi"][0]
    assert lo < 1.125 < hi
    assert -(high - low) <= lo
    assert hi <= high - low
    # An Invalid judgment (either side) leaves its pair out; Blind has no shift of its own.
    invalid = table.with_columns(
        verdict=pl.when(pl.col("item_id") == "i5").then(pl.lit("Invalid")).otherwise("verdict")
    )
    tidy = compute_metrics(invalid, load_lexicons(), None, differences=False)
    row = tidy.filter(pl.col("metric") == "score_shift")
    assert row["condition"].to_list() == ["True"]
    assert row["value"][0] == pytest.approx((9.0 + 1.0) / 7)


def test_a_pointwise_judge_record_keeps_older_digests() -> None:
    """kind and score are dumped only for a pointwise judge: a pairwise dump is as before."""
    pairwise = JudgeConfig(name="j", url="http://h/v1").model_dump(mode="json")
    assert "kind" not in pairwise
    assert "score" not in pairwise
