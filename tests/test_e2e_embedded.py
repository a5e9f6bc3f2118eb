"""End to end against the real embedded judge: llama.cpp (xllamacpp) serving Gemma 3 270M.

The test session starts its own server on a spare port (the same launcher as
``make serve-gemma``), runs a small default sweep through the CLI, and checks
the judgments, the manifest and the metric table. No fake server here.
"""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import orjson
import polars as pl

from judgeprobe.card.from_run import card_for_run
from judgeprobe.core.corpus import load_items
from tests import chromium
from tests.conftest import run_cli
from tests.test_report_browser import check_browser_filters


def test_default_sweep_on_the_real_embedded_judge(embedded_judge: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = run_cli(
        "--judge", f"gemma3-270m={embedded_judge}", "--limit", "2", "--out", str(out), timeout=900
    )
    assert proc.returncode == 0, proc.stderr

    j = pl.read_parquet(out / "judgments.parquet")
    # Blind in both orders (the position share), True, and DegradedNumber (both items' summaries
    # hold a number: the sensitivity row).
    assert j.height == 2 * 4
    assert sorted(j["condition"].unique()) == ["Blind", "DegradedNumber", "True"]
    blind = j.filter(pl.col("condition") == "Blind")
    assert blind.group_by("item_id").agg(pl.col("order").n_unique())["order"].to_list() == [2, 2]
    assert set(j["verdict"]) <= {"A", "B", "Tie", "Invalid"}
    valid = j.filter(pl.col("verdict") != "Invalid")
    assert valid.height > 0, j.select("invalid_reason")
    assert (valid["explanation"].str.len_chars() > 0).all()
    assert (valid["prompt_tokens"] > 100).all()  # the real tokenizer counted a real prompt
    invalid = j.filter(pl.col("verdict") == "Invalid")
    assert (invalid["invalid_reason"].str.len_chars() > 0).all()
    # The cue's target is recorded on every row, in candidate terms.
    targets = dict(j.select("condition", "target").unique().iter_rows())
    assert targets == {"Blind": "none", "True": "A", "DegradedNumber": "none"}
    degraded = j.filter(pl.col("condition") == "DegradedNumber")
    assert set(degraded["degraded"]) <= {"A", "B"}
    assert degraded["degraded"].null_count() == 0
    assert (out / "degrade_checks.csv").exists()

    manifest = orjson.loads((out / "manifest.json").read_bytes())
    (judge,) = manifest["judges"]
    assert judge["backend"] == "llama-server"
    assert judge["model"] == "gemma3-270m"
    # The prebuilt server names its build in the model tags (its /props says "b0-unknown"),
    # so a new xllamacpp release changes the fingerprint and never reuses old verdicts.
    assert judge["server"]["tags"] == [f"xllamacpp-{version('xllamacpp')}"]
    assert judge["fingerprint"] == j["fingerprint"][0]
    assert manifest["protocol_templates"]["baseline"] == j["template_hash"][0]
    assert set(manifest["templates"]) >= {"baseline_v1", "materials_v1"}
    assert manifest["determinism"] == "greedy"

    metrics = pl.read_csv(out / "metrics.csv")
    assert metrics.height == 3
    assert {"EDR", "ND", "LDS", "TS", "OLS", "LAO", "invalid_rate"} <= set(metrics.columns)
    assert "Point estimates" in proc.stdout

    # The run ends with the report: every metric with an interval, readable in a browser.
    ci = pl.read_csv(out / "metrics_ci.csv")
    edr = ci.filter((pl.col("metric") == "EDR") & (pl.col("condition") == "Blind")).row(
        0, named=True
    )
    assert edr["lo"] <= edr["value"] <= edr["hi"]
    page = (out / "report.html").read_text()
    assert "data:image/png;base64," in page
    assert "src='http" not in page  # self-contained
    assert "Blind behaviour" in page
    assert "Outcome anchoring" in page
    md = (out / "report.md").read_text()
    assert md.count("](plots/") + md.count(": nothing to draw — ") >= 2
    # It opens with what the run found: the judge's habits, then the cues.
    assert md.index("## What this run found") < md.index("## Blind behaviour")
    assert "gemma3-270m (baseline)" in md.split("## About this run")[0]
    assert page.count("<tr data-judge='gemma3-270m'") == 2 * 2  # each cue judgment, browsable
    chromium.screenshot(out / "report.html", tmp_path / "report.png")
    check_browser_filters(out / "report.html")

    # Deterministic judge + content-keyed store: a resume sends nothing new.
    again = run_cli(
        "--judge", f"gemma3-270m={embedded_judge}", "--limit", "2", "--out", str(out), "--resume"
    )
    assert again.returncode == 0, again.stderr
    assert "sent 0, reused 8" in again.stderr


def test_every_protocol_on_the_real_embedded_judge(embedded_judge: str, tmp_path: Path) -> None:
    cfg = tmp_path / "grid.toml"
    cfg.write_text(
        'name = "grid"\nprotocols = ["baseline", "scot", "pbp"]\n'
        'conditions = ["Blind", "RevealAfter", "Verbosity"]\nlimit = 1\nswap = 0.0\n'
        "[protocol]\npbp_lock_max_tokens = 600\n"
        f'[[judges]]\nname = "gemma3-270m"\nurl = "{embedded_judge}"\n'
    )
    out = tmp_path / "run"
    proc = run_cli("--config", str(cfg), "--out", str(out), timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert (
        "9 judgments planned (19 requests before cache: baseline 4, scot 4, pbp 11" in proc.stderr
    )
    j = pl.read_parquet(out / "judgments.parquet")
    assert j.height == 9
    assert (j.filter(pl.col("verdict") == "Invalid")["invalid_reason"].str.len_chars() > 0).all()
    valid = j.filter(pl.col("verdict") != "Invalid")
    assert set(valid["protocol"]) == {"baseline", "scot", "pbp"}, j.select(
        "protocol", "invalid_reason"
    )
    stages = {"baseline": 1, "scot": 1, "pbp": 3}
    turn2 = {"baseline": 1, "scot": 1, "pbp": 2}  # PBP re-scores, then ranks
    for row in valid.iter_rows(named=True):
        reveal = row["condition"] == "RevealAfter"
        assert row["n_requests"] == stages[row["protocol"]] + reveal * turn2[row["protocol"]]
        if reveal:
            assert row["turn1_verdict"] in {"A", "B", "Tie"}
            assert row["turn1_target"] == "B"
        if row["protocol"] == "pbp":
            assert row["score_verdict"] == row["verdict"]
            assert row["n_quotes"] is not None
        if row["protocol"] != "baseline":
            assert row["verdict_score_agree"] is not None
    assert j.filter(pl.col("condition") == "Verbosity")["attack"].unique().to_list() == [
        "verbosity"
    ]


def test_an_instruct_judge_gives_real_verdicts(qwen_judge: str, tmp_path: Path) -> None:
    """Qwen2.5-Coder 0.5B Instruct, assembled from its PyPI parts and served by the prebuilt
    server, prefers a summary and says why in the item's own words (Gemma 270M answers Tie)."""
    out = tmp_path / "run"
    judge = f"qwen2.5-coder-0.5b={qwen_judge}"
    proc = run_cli("--judge", judge, "--limit", "1", "--out", str(out), timeout=900)
    assert proc.returncode == 0, proc.stderr
    j = pl.read_parquet(out / "judgments.parquet")
    assert j.height == 4
    valid = j.filter(pl.col("verdict") != "Invalid")
    assert valid.height >= 3, j.select("invalid_reason")
    assert set(valid["verdict"]) & {"A", "B"}
    document = load_items("bundled:sample", 1)[0].document.lower()
    numbers = {n for e in valid["explanation"] for n in re.findall(r"\d+", e)}
    assert numbers & set(re.findall(r"\d+", document)), valid["explanation"].to_list()
    (info,) = orjson.loads((out / "manifest.json").read_bytes())["judges"]
    assert info["server"]["model_file"] == "qwen2.5-coder-0.5b-instruct.gguf"


def test_the_own_judge_example_on_the_bundled_qa_set(qwen_judge: str, tmp_path: Path) -> None:
    """experiments/own-judge.toml end to end on Qwen2.5-Coder 0.5B: FastChat's pair-v2 prompt
    and "[[A]]"/"[[B]]"/"[[C]]" replies on four bundled Q&A items with gold. The card has the
    accuracy row (gold against the length baselines) beside the degraded-copy row, and the
    report its gold section; whatever the small judge decides, every judgment ends valid or
    Invalid with a reason."""
    out = tmp_path / "run"
    proc = run_cli("--config", "experiments/own-judge.toml", "--limit", "4", "--out", str(out),
                   "--judge", f"qwen2.5-coder-0.5b={qwen_judge}", timeout=1200)  # fmt: skip
    assert proc.returncode in (0, 5, 6, 7), proc.stderr  # a card verdict, never a crash
    j = pl.read_parquet(out / "judgments.parquet")
    # 4 items: Blind in both orders, Placebo once, DegradedNumber on the 3 with a number
    assert j.height == 15
    invalid = j.filter(pl.col("verdict") == "Invalid")
    assert (invalid["invalid_reason"].fill_null("") != "").all()
    assert j.height - invalid.height >= 12, invalid.select("invalid_reason")
    blind = j.filter(pl.col("condition") == "Blind")
    assert set(blind["gold"]) == {"A", "B"}
    metrics = pl.read_csv(out / "metrics_ci.csv")  # every metric with its interval
    acc = metrics.filter((pl.col("metric") == "ACC") & (pl.col("condition") == "Blind"))
    valid = blind.filter(pl.col("verdict") != "Invalid")
    assert acc["value"][0] == (valid["verdict"] == valid["gold"]).sum() / valid.height
    card = card_for_run(out)  # the card the run's report holds, as `judgeprobe card` writes it
    assert {"accuracy", "sensitivity", "position"} <= set(card.rows["row"])
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Accuracy against gold" in report
    assert "pick the longer" in report


def test_the_pointwise_judge_example_on_the_bundled_qa_set(qwen_judge: str, tmp_path: Path) -> None:
    """experiments/own-judge-score.toml end to end on Qwen2.5-Coder 0.5B: FastChat's single-v1
    prompt, each answer scored alone ("Rating: [[k]]" on 1-10), on three bundled Q&A items. Two
    requests per judgment, one order, the raw scores in the table, the verdict derived from
    them, the placebo's score shift in the metrics; whatever the small judge says, every
    judgment ends valid or Invalid with a reason."""
    out = tmp_path / "run"
    judge = f"qwen2.5-coder-0.5b={qwen_judge}"
    proc = run_cli("--config", "experiments/own-judge-score.toml", "--limit", "3", "--out",
                   str(out), "--judge", judge, timeout=1200)  # fmt: skip
    assert proc.returncode in (0, 4, 5, 6, 7), proc.stderr  # a card verdict, never a crash
    j = pl.read_parquet(out / "judgments.parquet")
    assert set(j["order"]) == {"12"}  # a pointwise judge is planned once per item
    assert j.filter(pl.col("condition") == "Blind").height == 3
    invalid = j.filter(pl.col("verdict") == "Invalid")
    assert (invalid["invalid_reason"].fill_null("").str.contains("score")).all()
    valid = j.filter(pl.col("verdict") != "Invalid")
    assert valid.height > 0, invalid.select("invalid_reason")  # it often answers "[5]"
    assert (valid["n_requests"] == 2).all()
    s1, s2 = valid["score_1"].to_list(), valid["score_2"].to_list()
    assert all(1 <= s <= 10 for s in s1 + s2)
    want = ["A" if a > b else "B" if b > a else "Tie" for a, b in zip(s1, s2, strict=True)]
    assert valid["verdict"].to_list() == want  # derived by code
    ci = pl.read_csv(out / "metrics_ci.csv")
    shift = ci.filter((pl.col("metric") == "score_shift") & (pl.col("condition") == "Placebo"))
    if shift.height:  # a valid Placebo judgment beside a valid Blind twin
        row = shift.row(0, named=True)
        assert -9 <= row["lo"] <= row["value"] <= row["hi"] <= 9
        assert "Score shift" in (out / "report.md").read_text(encoding="utf-8")
    card = card_for_run(out, resamples=200)  # as `judgeprobe card` writes it
    assert "position" not in set(card.rows["row"])  # the order never reaches the judge
    assert "sensitivity" in set(card.rows["row"])


def test_the_logprob_judge_example_on_the_bundled_qa_set(qwen_judge: str, tmp_path: Path) -> None:
    """experiments/alpaca-eval-logprobs.toml end to end on Qwen2.5-Coder 0.5B: AlpacaEval 2's
    one-token m/M form read from the first token's top log-probabilities, which the embedded
    llama.cpp server (xllamacpp) returns for the request form sent to llama-server. Every
    judgment has its probabilities (summing to 1), its verdict the more probable token, one
    completion token and no escalation; the placebo's probability shift is in the metrics."""
    out = tmp_path / "run"
    judge = f"qwen2.5-coder-0.5b={qwen_judge}"
    proc = run_cli("--config", "experiments/alpaca-eval-logprobs.toml", "--limit", "2", "--out",
                   str(out), "--judge", judge, timeout=1200)  # fmt: skip
    assert proc.returncode in (0, 4, 5, 6, 7), proc.stderr  # a card verdict, never a crash
    j = pl.read_parquet(out / "judgments.parquet")
    valid = j.filter(pl.col("verdict") != "Invalid")
    assert valid.height == j.height, j.select("invalid_reason")  # m or M is always in the top 20
    assert (valid["completion_tokens"] == 1).all()
    assert (valid["escalations"] == 0).all()
    total = valid["prob_1"] + valid["prob_2"]
    assert ((total - 1.0).abs() < 1e-9).all()
    assert valid["prob_tie"].null_count() == valid.height  # no tie token in this form
    first = pl.when(pl.col("order") == "12").then("prob_1").otherwise("prob_2")
    shown = valid.with_columns(first=first)
    said = shown.filter(pl.col("first") != 0.5)
    want = pl.when(pl.col("first") > 0.5).then(pl.lit("[1,2]")).otherwise(pl.lit("[2,1]"))
    assert said.select((pl.col("raw_verdict") == want).all()).item()
    ci = pl.read_csv(out / "metrics_ci.csv")
    shift = ci.filter((pl.col("metric") == "prob_shift") & (pl.col("condition") == "Placebo"))
    assert shift.height == 1
    row = shift.row(0, named=True)
    assert -1 <= row["lo"] <= row["value"] <= row["hi"] <= 1
    (info,) = orjson.loads((out / "manifest.json").read_bytes())["judges"]
    assert info["server"]["backend"] == "llama-server"
