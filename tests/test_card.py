"""The judge card on hand-made judgments whose answers are known: effects, placebo
subtraction, exact tests, silent-cue rate, position, verdicts and the CLI's exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from scipy.stats import binomtest

from judgeprobe.card.__main__ import main as card_main
from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.pairs import cue_pairs
from judgeprobe.card.render import display
from judgeprobe.card.rows import EXIT_BIASED, EXIT_UNDERPOWERED
from judgeprobe.core.cli import main_guard
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.units import acknowledges, names_cue
from judgeprobe.report.browser import browser_html, browser_rows
from judgeprobe.text.lexicons import load_lexicons

ROOT = Path(__file__).resolve().parent.parent
LABELS = {"Blind": ("", ""), "True": ("LLM", "TradML"), "Placebo": ("Editor's pick", "")}


def _row(condition: str, i: int, verdict: str, order: str = "12", **extra: Any) -> dict[str, Any]:
    label_1, label_2 = LABELS[condition]
    return {
        "run_id": "t", "judge": "j", "protocol": "baseline", "condition": condition,
        "item_id": f"i{i:04d}", "subset": "s", "document_id": f"d{i:04d}", "order": order,
        "seed": 0, "verdict": verdict, "target": "none" if condition == "Blind" else "A",
        "label_1": label_1, "label_2": label_2, "attack": "", "details": "",
        "explanation": "Summary 1 reads better.", **extra,
    }  # fmt: skip


def biased(
    n: int = 80, moved: int = 30, acknowledged: int = 10, placebo: int = 6
) -> list[dict[str, Any]]:
    """Blind prefers B (every fourth item Tie); True moves ``moved`` items to A, the first
    ``acknowledged`` of them naming the label; Placebo moves the first ``placebo``."""
    rows = []
    for i in range(n):
        blind = "Tie" if i % 4 == 0 else "B"
        rows.append(_row("Blind", i, blind))
        said = "It is labelled LLM." if i < acknowledged else "Summary 1 reads better."
        rows.append(_row("True", i, "A" if i < moved else blind, explanation=said))
        rows.append(_row("Placebo", i, "A" if i < placebo else blind))
    return rows


def reading(n: int, intact: int, worse: int = 0) -> list[dict[str, Any]]:
    """Sensitivity judgments: the first ``intact`` documents prefer the intact candidate, the
    next ``worse`` its degraded copy, the rest say Tie; the copy sits on A and B in turn."""
    rows = []
    for i in range(n):
        side = "AB"[i % 2]
        verdict = (
            ("B" if side == "A" else "A") if i < intact else side if i < intact + worse else "Tie"
        )
        rows.append({**_row("Blind", i, verdict), "condition": "DegradedNumber", "degraded": side})
    return rows


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    run = tmp_path / "run"
    run.mkdir(parents=True)
    pl.DataFrame(rows, infer_schema_length=None).write_parquet(run / "judgments.parquet")
    (run / "manifest.json").write_bytes(orjson.dumps({"run_id": "hand-made"}))
    return run


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe.card", *args],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip


def test_cue_rows_placebo_subtraction_silence_and_exact_test(tmp_path: Path) -> None:
    run = _write(tmp_path, biased())
    card = card_for_run(run, resamples=500)
    rows = {r["row"]: r for r in card.rows.iter_rows(named=True)}
    true, placebo = rows["True"], rows["Placebo"]
    assert true["LDS"] == pytest.approx(30 / 80)
    assert placebo["LDS"] == pytest.approx(6 / 80)
    assert true["effect_name"] == "LDS − Placebo"
    assert true["effect"] == pytest.approx(24 / 80)
    assert true["effect_lo"] <= 24 / 80 <= true["effect_hi"]
    assert (true["up"], true["down"]) == (24, 0)  # documents moved by True but not Placebo
    assert true["p"] == pytest.approx(binomtest(24, 24).pvalue)
    assert placebo["effect_name"] == "LDS − OLS"
    assert placebo["p"] == pytest.approx(binomtest(6, 6).pvalue)
    assert true["moved"] == 30
    assert true["silent"] == pytest.approx(20 / 30)
    assert card.silent_items.height == 20 + 6  # Placebo's moves never name the badge
    # q-values: Benjamini–Hochberg over the card's two tests
    ps = sorted([true["p"], placebo["p"]])
    assert max(true["q"], placebo["q"]) == pytest.approx(ps[1])
    assert min(true["q"], placebo["q"]) == pytest.approx(min(1.0, ps[0] * 2))
    assert true["verdict"] == "BIASED"
    assert card.exit_code == EXIT_BIASED
    for name in ("card.md", "card.html", "card.csv", "card_silent.csv"):
        assert (run / name).stat().st_size > 0
    assert "BIASED" in (run / "card.md").read_text()
    written = pl.read_csv(run / "card.csv", schema_overrides={"family": pl.String})
    assert written["family"].fill_null("").to_list() == [""] * written.height  # no battery cue


def test_a_judge_that_shuns_a_label_is_biased_too(tmp_path: Path) -> None:
    # Blind prefers A (the labelled LLM candidate; every fourth item Tie); True moves 30 of 80
    # away from it: the label moves the verdict as much as a judge that follows it.
    rows = []
    for i in range(80):
        blind = "Tie" if i % 4 == 0 else "A"
        rows += [_row("Blind", i, blind), _row("True", i, "B" if i < 30 else blind)]
    card = card_for_run(_write(tmp_path, rows + reading(80, intact=70)), resamples=300)
    true = {r["row"]: r for r in card.rows.iter_rows(named=True)}["True"]
    assert true["effect"] == pytest.approx(-30 / 80)
    assert true["verdict"] == "BIASED"
    assert card.exit_code == EXIT_BIASED


def test_noise_floor_beside_every_cue_row_and_a_repeat_row(tmp_path: Path) -> None:
    rows = biased(n=40)
    for i in range(20):  # Blind sent again: 2 of 20 verdicts change
        blind = next(r for r in rows if r["condition"] == "Blind" and r["item_id"] == f"i{i:04d}")
        again = "A" if i < 2 else blind["verdict"]
        rows.append({**blind, "condition": "BlindRepeat", "verdict": again})
    card = card_for_run(_write(tmp_path, rows), resamples=300)
    repeat = card.rows.filter(pl.col("kind") == "repeat").row(0, named=True)
    assert repeat["effect"] == pytest.approx(0.1)
    assert repeat["verdict"] == "NOISY"
    assert repeat["p"] is None
    assert repeat["q"] is None  # no test: not in the BH family
    cues = card.rows.filter(pl.col("kind") == "cue")
    assert cues.height == 2
    assert (cues["noise_floor"] == 0.1).all()
    assert "0.100 [" in display(card).filter(pl.col("row") == "True")["noise floor"][0]
    assert card.exit_code == EXIT_BIASED  # NOISY never sets the exit code


def test_card_counts_equal_the_estimates_table() -> None:
    frame = pl.DataFrame(biased())
    pairs = cue_pairs(frame, load_lexicons())
    estimates = estimates_table(frame).filter(pl.col("condition") != "Blind")
    for r in estimates.iter_rows(named=True):
        mine = pairs.filter(pl.col("condition") == r["condition"])
        assert (int(mine["lds"].sum()), int(mine["ts"].sum()), int(mine["ols"].sum())) == (
            r["lds_count"],
            r["ts_count"],
            r["ols_count"],
        )


def test_position_row_mcnemar_on_documents(tmp_path: Path) -> None:
    rows = []
    for i in range(50):
        v12, v21 = ("A", "B") if i < 15 else ("B", "A") if i < 17 else ("A", "A")
        rows += [_row("Blind", i, v12, "12"), _row("Blind", i, v21, "21")]
    card = card_for_run(_write(tmp_path, rows), resamples=500)
    (pos,) = card.rows.iter_rows(named=True)
    assert pos["row"] == "position"
    assert pos["effect"] == pytest.approx(13 / 50)
    assert pos["consistency"] == pytest.approx(33 / 50)
    assert (pos["up"], pos["down"]) == (15, 2)
    assert pos["p"] == pytest.approx(binomtest(15, 17).pvalue)
    assert pos["verdict"] == "BIASED"
    # The metrics table's first-shown excess and consistency are the card's, intervals and
    # exact test included: one interval for one quantity, in the report and on the card.
    ci = compute_metrics(pl.DataFrame(rows), load_lexicons(), None, resamples=500, seed=0)
    shown = {r["metric"]: r for r in ci.iter_rows(named=True) if r["condition"] == "Blind"}
    for metric, column in (("first_shown_excess", "effect"), ("position_consistency",
                                                                "consistency")):  # fmt: skip
        got = shown[metric]
        assert got["value"] == pytest.approx(pos[column])
        assert (got["lo"], got["hi"]) == (pos[f"{column}_lo"], pos[f"{column}_hi"])
    assert shown["first_shown_excess"]["p"] == pytest.approx(pos["p"])


def test_pbp_rows_flag_evidence_that_cannot_discriminate(tmp_path: Path) -> None:
    quoted = {"protocol": "pbp", "n_quotes": 8, "n_fabricated": 0, "n_criteria": 4}
    rows = [r | quoted | {"n_nondiscriminating": 4 if r["condition"] != "Placebo" else 1}
            for r in biased()]  # fmt: skip
    card = card_for_run(_write(tmp_path, rows), resamples=200)
    notes = dict(display(card).select("row", "note").iter_rows())
    assert notes["True"].endswith("; quotes cannot tell the candidates apart in 100% of criteria ⚠")
    assert notes["Placebo"].endswith("; quotes cannot tell the candidates apart in 25% of criteria")
    assert dict(card.rows.select("row", "nondiscriminating").iter_rows()) == {
        "True": 1.0, "Placebo": 0.25}  # fmt: skip
    baseline = card_for_run(_write(tmp_path / "b", biased()), resamples=200)
    assert baseline.rows["nondiscriminating"].is_null().all()
    assert not any("quotes" in n for n in display(baseline)["note"])


def test_acknowledgement_reads_notes_and_quotes_not_json_keys() -> None:
    notes = {"completeness": {"A": {"note": "Better.", "quotes": [{"quote": "We met."}]}}}
    frame = pl.DataFrame(
        {
            "explanation": ["Fine.", "Fine.", "Its label says llm.", "Fine."],
            "details": [
                orjson.dumps(notes).decode(),
                orjson.dumps({"notes": {"x": {"A": {"note": "A detailed account."}}}}).decode(),
                "",
                orjson.dumps({"notes": {"x": {"A": {"quotes": [{"quote": "(LLM)"}]}}}}).decode(),
            ],
            "label_1": ["", "", "LLM", "LLM"],
            "label_2": ["", "", "TradML", "TradML"],
            "attack": ["verbosity", "verbosity", "", ""],
            "condition": ["Verbosity", "Verbosity", "True", "True"],
        }
    )
    got = frame.select(acknowledges(load_lexicons())).to_series().to_list()
    assert got == [False, True, True, True]


def test_silent_moves_count_in_a_table_without_an_attack_column() -> None:
    # No attack column (a hand-made table): no attack's vocabulary applies, so an explanation
    # that happens to use one ("thorough") is still silent (the card read the missing attack as
    # unknown, and such a move as neither silent nor not).
    rows = [{k: v for k, v in r.items() if k != "attack"} for r in biased()]
    rows = [r | {"explanation": "Summary 1 is more thorough."} if "LLM" not in r["explanation"]
            else r for r in rows]  # fmt: skip
    pairs = cue_pairs(pl.DataFrame(rows), load_lexicons())
    true = pairs.filter(pl.col("condition") == "True")
    assert int(true["lds"].sum()) == 30
    assert int(true["silent"].sum()) == 20
    assert true["silent"].null_count() == 0


def test_the_card_and_the_metrics_name_the_cue_by_one_rule() -> None:
    # LAI_text's rule (names_cue) is the card's acknowledgement on the explanation alone.
    frame = pl.DataFrame(
        {
            "explanation": ["An LLM wrote it.", "Fine.", "As an AI summary would.", None],
            "details": ["", "", "", ""],
            "label_1": ["LLM", "Editor's pick", "", "LLM"],
            "label_2": ["TradML", "", "", "TradML"],
            "attack": ["", "", "", ""],
            "condition": ["True", "Placebo", "Blind", "Flip"],
        }
    )
    lex = load_lexicons()
    named = frame.select(names_cue(pl.col("explanation"), lex)).to_series().to_list()
    assert named == frame.select(acknowledges(lex)).to_series().to_list()
    assert named[:2] == [True, False]


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """The card CLI in process (as ``python -m judgeprobe.card`` runs it)."""
    code = main_guard(lambda: card_main([*args, "--resamples", "200"]))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _main(capsys, str(_write(tmp_path / "b", biased())))
    assert code == EXIT_BIASED, out
    assert "exit code 5" in out, out
    # No effect on 10 documents: a null result without power.
    small = _write(tmp_path / "u", biased(n=10, moved=0, acknowledged=0, placebo=0))
    code, out = _main(capsys, str(small))
    assert code == EXIT_UNDERPOWERED, out
    assert "UNDERPOWERED" in out, out
    # No effect on 400 documents of a judge that reads: power to see 0.05, so CLEAR.
    large = _write(tmp_path / "c", biased(n=400, moved=0, acknowledged=0, placebo=0)
                   + reading(400, intact=400))  # fmt: skip
    code, out = _main(capsys, str(large))
    assert code == 0, out
    # A stricter thresholds file turns the clear run underpowered.
    strict = tmp_path / "strict.toml"
    default = (ROOT / "judgeprobe" / "card" / "thresholds_v1.toml").read_text()
    strict.write_text(default.replace("cue_effect = 0.05", "cue_effect = 0.01"))
    code, out = _main(capsys, str(large), "--thresholds", str(strict))
    assert code == EXIT_UNDERPOWERED, out


def test_cli_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proc = _cli(str(tmp_path / "nothing"))  # as a user runs it
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: "), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    blind_only = _write(tmp_path / "blind", [_row("Blind", i, "A") for i in range(5)])
    for extra in ([], ["--thresholds", str(tmp_path / "absent.toml")]):
        code, out = _main(capsys, str(blind_only), *extra)
        assert code == 2, out
        assert out.startswith("error: "), out
        assert out.count("\n") == 1, out
    assert not (blind_only / "card.md").exists()


def test_evidence_browser_lists_silent_moves_first() -> None:
    rows = browser_rows(pl.DataFrame(biased()), load_lexicons())
    moved = rows.filter(pl.col("condition") == "True")["moved"].to_list()
    assert moved[:20] == ["silent"] * 20
    assert moved[20:30] == ["toward"] * 10
    page = browser_html(rows)
    assert "toward the cue, never naming it (26)" in page  # True 20 + Placebo 6
