"""``python -m judgeprobe.metrics``: the estimates table and the interval table (with the paired
differences), breakdowns, and old tables without ``document_id``."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.metrics.__main__ import main
from judgeprobe.metrics.compute import TIDY_SCHEMA


@pytest.fixture(autouse=True)
def _lexical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEPROBE_DRIFT", "lexical")  # no embedding model to load


def _table(path: Path, *, document_id: bool = True) -> Path:
    rows = []
    for protocol, verdicts in (("baseline", "AAAB"), ("pbp", "ABBT")):
        for condition in ("Blind", "True"):
            for k, v in enumerate("BBBB" if condition == "Blind" else verdicts):
                rows.append(
                    {
                        "judge": "g",
                        "protocol": protocol,
                        "condition": condition,
                        "item_id": f"i{k}",
                        "subset": "s",
                        "document_id": f"d{k // 2}",
                        "domain": "science" if k < 2 else "business",
                        "order": "12",
                        "seed": 0,
                        "verdict": "Tie" if v == "T" else v,
                        "target": "none" if condition == "Blind" else "A",
                    }
                )
    frame = pl.DataFrame(rows)
    (frame if document_id else frame.drop("document_id")).write_parquet(path)
    return path


def test_writes_the_estimates_and_the_interval_table(tmp_path: Path) -> None:
    j = _table(tmp_path / "j.parquet")
    args = [str(j), "--out", str(tmp_path / "m.csv"), "--ci", str(tmp_path / "ci.csv")]
    assert main([*args, "--resamples", "300"]) == 0
    assert pl.read_csv(tmp_path / "m.csv").height == 4
    ci = pl.read_csv(tmp_path / "ci.csv")
    assert ci.columns == list(TIDY_SCHEMA)
    lds = ci.filter((pl.col("metric") == "LDS") & (pl.col("protocol") == "baseline"))
    assert (lds["value"].item(), lds["n"].item(), lds["documents"].item()) == (0.75, 4, 2)
    diff = ci.filter(pl.col("metric") == "diff_LDS").row(0, named=True)
    assert (diff["protocol"], diff["versus"], diff["value"]) == ("pbp", "protocol=baseline", -0.5)


def test_defaults_beside_the_input_and_by_domain(tmp_path: Path) -> None:
    j = _table(tmp_path / "j.parquet")
    assert main([str(j), "--resamples", "100", "--by", "domain"]) == 0
    estimates = pl.read_csv(tmp_path / "metrics.csv")
    ci = pl.read_csv(tmp_path / "metrics_ci.csv")
    assert estimates.columns[0] == ci.columns[0] == "domain"
    assert set(estimates["domain"]) == set(ci["domain"]) == {"science", "business"}


def test_a_table_without_document_id_resamples_items(tmp_path: Path) -> None:
    j = _table(tmp_path / "j.parquet", document_id=False)
    assert main([str(j), "--resamples", "100"]) == 0
    ci = pl.read_csv(tmp_path / "metrics_ci.csv")
    lds = ci.filter((pl.col("metric") == "LDS") & (pl.col("protocol") == "baseline"))
    assert (lds["n"].item(), lds["documents"].item()) == (4, 4)


def test_bad_ci_path_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    j = _table(tmp_path / "j.parquet")
    with pytest.raises(JudgeprobeError, match=r"--ci .*no such directory"):
        main([str(j), "--ci", str(tmp_path / "missing" / "ci.csv")])
    assert not (tmp_path / "metrics.csv").exists()
    with pytest.raises(JudgeprobeError, match="--resamples"):
        main([str(j), "--resamples", "-1"])


def test_a_run_directory_names_its_judgments_and_gets_its_metrics(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    _table(run / "judgments.parquet")
    assert main([str(run), "--resamples", "100"]) == 0
    assert pl.read_csv(run / "metrics.csv").height == 4
    assert (run / "metrics_ci.csv").is_file()
    with pytest.raises(JudgeprobeError, match=r"a folder without judgments.parquet"):
        main([str(tmp_path), "--resamples", "100"])
