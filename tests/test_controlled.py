"""The cue-controlled win rate recovers known coefficients and matches a hand-built fit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from judgeprobe.metrics.__main__ import cli as metrics_cli
from judgeprobe.metrics.__main__ import main as metrics_main
from judgeprobe.metrics.controlled import controlled
from judgeprobe.report.controlled import controlled_sections

TRUE = {"position": 0.5, "length": 0.7, "Badge": 0.8, "Label": -0.4, "m2": -0.6, "m3": 0.4}
SOURCES = ["m1", "m1", "m2", "m3"]  # m1 the commonest: the reference


def synthetic(n_docs: int = 600, seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame, np.ndarray]:
    """Judgments drawn from the logistic model with TRUE, the lengths, and the design matrix."""
    rng = np.random.default_rng(seed)
    rows, lengths, x = [], [], []
    for d in range(n_docs):
        g1, g2 = rng.choice(SOURCES, 2, replace=False) if d % 5 else ("m1", "m1")
        w1, w2 = int(rng.integers(20, 80)), int(rng.integers(20, 80))
        for condition in ("Blind", "Badge", "Label"):
            target = "none" if condition == "Blind" else str(rng.choice(["A", "B"]))
            lengths.append({"condition": condition, "item_id": f"i{d}", "words_1": w1,
                            "words_2": w2})  # fmt: skip
            for order in ("12", "21"):
                row = [1.0 if order == "12" else -1.0, np.log(w1 / w2)]
                for cue in ("Badge", "Label"):
                    row.append((1.0 if target == "A" else -1.0) if condition == cue else 0.0)
                row += [float(g1 == s) - float(g2 == s) for s in ("m2", "m3")]
                x.append(row)
                win = rng.random() < expit(np.dot(row, list(TRUE.values())))
                rows.append({
                    "run_id": "t", "judge": "j", "protocol": "baseline", "condition": condition,
                    "item_id": f"i{d}", "subset": "s", "document_id": f"d{d}", "order": order,
                    "seed": 0, "verdict": "A" if win else "B", "target": target,
                    "generator_1": g1, "generator_2": g2,
                })  # fmt: skip
    return pl.DataFrame(rows), pl.DataFrame(lengths).unique(), np.array(x)


def test_matches_a_hand_built_logistic_fit_and_recovers_the_coefficients() -> None:
    judgments, lengths, x = synthetic()
    terms, rates = controlled(judgments, lengths)
    got = {r["term"]: r for r in terms.iter_rows(named=True)}
    assert list(got) == list(TRUE)
    y = (judgments["verdict"] == "A").to_numpy()
    hand = LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-10, max_iter=10_000)
    beta = hand.fit(x, y).coef_[0]
    for (name, truth), b in zip(TRUE.items(), beta, strict=True):
        assert got[name]["coef"] == pytest.approx(b, abs=1e-4)
        assert got[name]["lo"] < truth < got[name]["hi"]  # the known coefficient is recovered
    # document-clustered errors: the sandwich a GLM gives with document clusters
    groups = judgments["document_id"].rank("dense").to_numpy()
    glm = sm.GLM(y.astype(float), x, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": groups}
    )
    for i, name in enumerate(TRUE):
        width = (got[name]["hi"] - got[name]["lo"]) / (2 * 1.959964)
        assert width == pytest.approx(glm.bse[i], rel=0.01)
    # each source's win rate with position, length and cues neutral: the hand fit's prediction
    strength = {"m1": 0.0, "m2": beta[4], "m3": beta[5]}
    for r in rates.iter_rows(named=True):
        mine = judgments.filter((pl.col("generator_1") == r["source"])
                                != (pl.col("generator_2") == r["source"]))  # fmt: skip
        first = (mine["generator_1"] == r["source"]).to_numpy()
        other = np.where(first, mine["generator_2"], mine["generator_1"])
        want = np.mean([expit(strength[r["source"]] - strength[o]) for o in other])
        assert r["controlled"] == pytest.approx(want, abs=1e-4)
        assert r["lo"] <= r["controlled"] <= r["hi"]
        won = np.where(first, mine["verdict"] == "A", mine["verdict"] == "B")
        assert r["raw"] == pytest.approx(won.mean())
        assert r["n"] == mine.height


def test_a_cue_confounded_with_a_source_moves_the_raw_rate_not_the_controlled_one() -> None:
    """Source m2 always wears a strong badge: raw, it looks better than it is."""
    judgments, lengths, _ = synthetic(seed=3)
    badge = (pl.col("condition") == "Badge") & (pl.col("generator_2") == "m2")
    tilted = judgments.with_columns(
        verdict=pl.when(badge & (pl.col("target") == "B")).then(pl.lit("B"))
        .otherwise(pl.col("verdict"))
    )  # fmt: skip
    _, rates = controlled(tilted, lengths)
    m2 = rates.filter(pl.col("source") == "m2").row(0, named=True)
    assert m2["raw"] > m2["controlled"]
    assert m2["controlled"] == pytest.approx(expit(TRUE["m2"]), abs=0.06)


def test_ties_count_half_and_no_sources_gives_terms_only() -> None:
    judgments, _, _ = synthetic(n_docs=80)
    judgments = judgments.drop("generator_1", "generator_2")
    judgments = judgments.with_columns(
        verdict=pl.when(pl.int_range(pl.len()) % 7 == 0).then(pl.lit("Tie"))
        .otherwise(pl.col("verdict"))
    )  # fmt: skip
    terms, rates = controlled(judgments)
    assert terms["term"].to_list() == ["position", "Badge", "Label"]
    assert rates.is_empty()


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judgments, _, _ = synthetic(n_docs=100)
    path = tmp_path / "judgments.parquet"
    judgments.write_parquet(path)
    assert metrics_main([str(path), "--controlled"]) == 0
    out = capsys.readouterr().out
    assert "Badge" in out
    assert "m3" in out
    written = pl.read_csv(tmp_path / "controlled.csv")
    assert {"term", "coef", "lo", "hi"} <= set(written.columns)
    assert (tmp_path / "controlled_win_rates.csv").is_file()


def test_cli_writes_beside_out_when_given(tmp_path: Path) -> None:
    judgments, _, _ = synthetic(n_docs=100)
    run, elsewhere = tmp_path / "run", tmp_path / "tables"
    run.mkdir()
    elsewhere.mkdir()
    judgments.write_parquet(run / "judgments.parquet")
    out = elsewhere / "fit.csv"
    assert metrics_main([str(run / "judgments.parquet"), "--controlled", "--out", str(out)]) == 0
    assert {"term", "coef", "lo", "hi"} <= set(pl.read_csv(out).columns)
    assert {"source"} <= set(pl.read_csv(elsewhere / "fit_win_rates.csv").columns)
    assert sorted(p.name for p in run.iterdir()) == ["judgments.parquet"]  # nothing beside it


def test_cli_refuses_an_out_it_cannot_write_before_fitting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judgments, _, _ = synthetic(n_docs=20)
    path = tmp_path / "judgments.parquet"
    judgments.write_parquet(path)
    args = [str(path), "--controlled", "--out", str(tmp_path / "absent" / "fit.csv")]
    assert metrics_cli(args) == 2
    assert capsys.readouterr().err.startswith("error: --out ")


def test_report_section_only_for_runs_with_a_battery_condition(tmp_path: Path) -> None:
    judgments, _, _ = synthetic(n_docs=60)
    paper = controlled_sections(judgments, None)  # Badge and Label: no family
    assert paper == []
    battery = judgments.with_columns(pl.col("condition").replace({"Badge": "Temporal"}))
    (section,) = controlled_sections(battery, None)  # no manifest: no length term
    win_rates, terms = section.tables
    assert set(terms["term"]) == {"position", "Temporal", "Label", "m2", "m3"}
    assert set(win_rates["source"]) == {"m1", "m2", "m3"}
