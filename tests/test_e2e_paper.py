"""End to end on the real embedded judge: Reveal-After's second turn under every protocol, and
the human-check export/import on that run. No fake server here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest

from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.embedded


def test_reveal_after_and_human_check_on_the_embedded_judge(
    embedded_judge: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    proc = run_cli(
        "--config", "experiments/smoke/reveal-after.toml", "--judge",
        f"gemma3-270m={embedded_judge}", "--limit", "1", "--out", str(out), timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    j = pl.read_parquet(out / "judgments.parquet")
    rev = j.filter(pl.col("condition") == "RevealAfter")
    assert sorted(rev["protocol"]) == ["baseline", "pbp", "scot"]
    turns = {"baseline": 2, "scot": 2, "pbp": 5}  # turn 1 (1 or 3 requests) + turn 2 (1 or 2)
    for row in rev.iter_rows(named=True):
        if row["verdict"] == "Invalid":  # a 270M judge may fail a stage: then it says which
            assert row["invalid_reason"], row
            continue
        # Turn 2 is complete: its verdict, explanation and request count, turn 1 beside it.
        assert row["n_requests"] == turns[row["protocol"]]
        assert row["explanation"]
        assert row["turn1_verdict"] in {"A", "B", "Tie"}
        if row["protocol"] != "baseline":
            details = orjson.loads(row["details"])
            assert details["score_verdict"] == row["score_verdict"]
            assert set(details["turn1"]) >= {"score_verdict", "stated_verdict"}
        if row["protocol"] == "pbp":
            assert row["verdict"] == row["score_verdict"]  # computed from the re-scores
    ci = pl.read_csv(out / "metrics_ci.csv")
    assert {"RS", "acknowledgement", "acknowledgement_turn1_floor"} <= set(ci["metric"])

    # The human check on this real run: export, two label files, import.
    python = [sys.executable, "-m", "judgeprobe.annotate"]
    done = subprocess.run([*python, "export", str(out), "--n", "5"], capture_output=True,
                          text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    key = pl.read_csv(out / "annotation" / "key.csv")
    pairs = key["pair_id"].to_list()
    picks = {"ann1": ["Tie"] * len(pairs), "ann2": ["Tie"] + ["1"] * (len(pairs) - 1)}
    labels = []
    for name, pick in picks.items():  # scripted answers: a check of the workflow, not of people
        path = tmp_path / f"{name}.csv"
        path.write_text(
            "pair_id,label\n" + "".join(f"{p},{x}\n" for p, x in zip(pairs, pick, strict=True))
        )
        labels.append(str(path))
    done = subprocess.run([*python, "import", str(out), *labels, "--resamples", "200"],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    table = pl.read_csv(out / "annotation" / "agreement.csv")
    ties = table.filter(pl.col("kind") == "annotator").sort("who")["value"].to_list()
    assert ties == [1.0, 1 / len(pairs)]
    assert table.filter(pl.col("kind") == "judge").height > 0
