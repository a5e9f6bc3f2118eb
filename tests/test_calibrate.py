"""``judgeprobe calibrate``: the calibrated estimate keeps its coverage, the budget its word.

The coverage test is seeded and small (``selftest.calibration`` at a few settings, where the
library's own interval fails: few labels, a judge that agrees often, a biased judge); the full
table is ``selftest --coverage``'s (docs/coverage.md). The command is run on a simulated run
directory (a judge biased toward one model, human labels on a random few items), with labels
from labels.parquet, an item-key CSV, MT-Bench human judgments and the review store.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import tests
from judgeprobe.__main__ import main as console
from judgeprobe.calibrate.__main__ import cli
from judgeprobe.calibrate.draw import draw
from judgeprobe.card.calibrated import calibrated_sections
from judgeprobe.metrics import calibrated
from judgeprobe.metrics.calibrated import CALIBRATED_SCHEMA, estimate
from judgeprobe.metrics.load import load_run
from judgeprobe.report.run import run_report
from judgeprobe.runs.review import DRAW_SAMPLE, Label, ReviewStore, read_draw
from judgeprobe.runs.rundir import RunDir
from judgeprobe.selftest import calibration, coverage
from judgeprobe.selftest.calibration import Setting, failures, measure, simulated_run
from judgeprobe.text.lexicons import load_lexicons

REPETITIONS = 300
SETTINGS = [
    Setting(20, 1_000, 0.95, biased=False, value=0.85),  # often no disagreement among the labels
    Setting(20, 1_000, 0.95, biased=True, value=0.5),  # ... and the judge biased toward model A
    Setting(20, 1_000, 0.55, biased=True, value=0.5),
    Setting(200, 1_000, 0.75, biased=True, value=0.85),
]


def test_the_tests_package_is_the_projects_not_ppi_pythons() -> None:
    # ppi-python installs a top-level ``tests`` package into site-packages.
    assert Path(tests.__file__).resolve().parent == Path(__file__).resolve().parent


def test_the_calibrated_interval_keeps_its_promise_and_the_budget_its_word() -> None:
    table = measure(SETTINGS, REPETITIONS, seed=36)
    assert failures(table).is_empty(), failures(table)
    assert (table["coverage"] >= 0.93).all()
    assert (table.filter(pl.col("budgeted") > 0)["budget_kept"] >= 0.8).all()
    assert (table["budgeted"] > REPETITIONS // 2).all()
    biased = table.filter(pl.col("judge") == "biased", pl.col("agreement") < 0.9)
    assert (biased["judge_bias"] > 0.03).all()  # the judge alone is off; the calibrated is not


def test_the_librarys_interval_alone_fails_with_few_labels(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(calibrated, "PSEUDO", 0)
    table = measure([Setting(20, 1_000, 0.95, biased=False, value=0.85)], 150, seed=36)
    assert table["coverage"][0] < 0.85  # 20 labels that all agree: a width of the judge's noise


def test_estimate_is_unbiased_beside_a_biased_judge() -> None:
    rng = np.random.default_rng(0)
    human = (rng.random(4_000) < 0.4).astype(float)
    judge = np.where(rng.random(4_000) < 0.3, 1.0, human)  # moves 30 % of items to a win
    shown = np.full(4_000, np.nan)
    shown[:400] = human[:400]
    found = estimate(judge, shown, halfwidth=0.02)
    assert found.judge_only == pytest.approx(judge.mean())
    assert found.human_only == pytest.approx(human[:400].mean())
    got = found.calibrated
    assert got is not None
    assert got.lo is not None
    assert got.hi is not None
    assert got.method == "PPI++"
    assert got.lo <= human.mean() <= got.hi
    assert not got.lo <= judge.mean() <= got.hi
    assert found.labels_for_halfwidth is not None
    assert found.labels_for_halfwidth > 400
    # 0.01 is out of reach even with all 4,000 items labelled: None, not a number
    assert estimate(judge, shown, halfwidth=0.01).labels_for_halfwidth is None
    no_labels = estimate(judge, np.full(4_000, np.nan))
    assert no_labels.calibrated is None
    assert no_labels.n_labels == 0


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    out = tmp_path_factory.mktemp("calibrate") / "run"
    return out, simulated_run(out, items=600, labels=120)


@pytest.fixture
def run_dir(made: tuple[Path, float], tmp_path: Path) -> Path:
    shutil.copytree(made[0], tmp_path / "run")
    return tmp_path / "run"


def _table(run_dir: Path) -> pl.DataFrame:
    return pl.read_csv(RunDir(run_dir).calibrated)


def test_calibrate_writes_each_models_estimates(
    run_dir: Path, made: tuple[Path, float], capsys: pytest.CaptureFixture[str]
) -> None:
    assert console(["calibrate", str(run_dir), "--halfwidth", "0.04"]) == 0
    out = capsys.readouterr().out
    assert "uniform random sample" in out
    table = _table(run_dir)
    assert list(table.columns) == list(CALIBRATED_SCHEMA)
    a = table.filter(pl.col("model") == "model-a").row(0, named=True)
    b = table.filter(pl.col("model") == "model-b").row(0, named=True)
    truth = made[1]
    assert a["n_items"] == 600
    assert a["n_labels"] == 120
    assert a["lo"] <= truth <= a["hi"]
    assert a["judge_only"] - truth > 0.05  # the simulated judge favours model-a
    assert a["calibrated"] + b["calibrated"] == pytest.approx(1.0)
    assert a["labels_for_halfwidth"] > 0
    assert a["target_halfwidth"] == 0.04


def test_labels_from_an_item_key_file_with_weights(run_dir: Path, tmp_path: Path) -> None:
    labels = pl.read_parquet(RunDir(run_dir).labels)
    RunDir(run_dir).labels.unlink()
    key = labels.select(
        "item_id",
        pl.col("label").replace({"A": "1", "B": "2", "Tie": "tie"}).alias("preferred"),
        pl.lit(2.0).alias("weight"),
    )
    path = tmp_path / "votes.csv"
    key.write_csv(path)
    assert cli([str(run_dir), "--labels", str(path)]) == 0
    assert _table(run_dir)["n_labels"].to_list() == [120, 120]


def test_labels_from_mt_bench_human_judgments(run_dir: Path, tmp_path: Path) -> None:
    labels = pl.read_parquet(RunDir(run_dir).labels)
    judgments = pl.read_parquet(RunDir(run_dir).judgments).unique("item_id")
    rows = labels.join(judgments.select("item_id", "document_id"), on="item_id")
    # the models in the other order: model_a is candidate 2, so A/B swap
    human = rows.select(
        pl.col("document_id").alias("question_id"),
        pl.lit("model-b").alias("model_a"),
        pl.lit("model-a").alias("model_b"),
        pl.col("label").replace({"A": "model_b", "B": "model_a", "Tie": "tie"}).alias("winner"),
        pl.lit("expert_0").alias("judge"),
    )
    path = tmp_path / "human.jsonl"
    human.write_ndjson(path)
    # question ids name 20 questions of 30 items each: each row matches several items
    assert cli([str(run_dir), "--labels", str(path)]) == 2
    assert cli([str(run_dir)]) == 0
    expected = _table(run_dir)
    one_each = pl.read_parquet(RunDir(run_dir).judgments).with_columns(
        pl.col("item_id").alias("document_id")
    )
    one_each.write_parquet(RunDir(run_dir).judgments)
    human.with_columns(pl.Series("question_id", rows["item_id"])).write_ndjson(path)
    assert cli([str(run_dir), "--labels", str(path)]) == 0
    assert (
        _table(run_dir)
        .select("model", "human_only", "calibrated")
        .equals(expected.select("model", "human_only", "calibrated"))
    )


def test_bad_input_is_one_error_line(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,preferred\nitem-00001,3\n")
    cases = [
        [str(tmp_path / "nowhere")],
        [str(run_dir), "--halfwidth", "0"],
        [str(run_dir), "--labels", str(bad)],
        [str(run_dir), "--condition", "Verbosity"],
        [str(run_dir), "--draw", "0"],
    ]
    for args in cases:
        assert cli(args) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("error: "), err
        assert err.count("\n") == 1, err
    assert not RunDir(run_dir).calibrated.exists()
    RunDir(run_dir).labels.unlink()
    assert cli([str(run_dir)]) == 2
    assert "--draw" in capsys.readouterr().err


@pytest.mark.parametrize("weight", ["nan", "inf", "-1", "0"])
def test_a_weight_not_positive_and_finite_is_refused_before_anything_is_written(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], weight: str
) -> None:
    labels = pl.read_parquet(RunDir(run_dir).labels)
    RunDir(run_dir).labels.unlink()
    path = tmp_path / "votes.csv"
    key = labels.select("item_id", "label", pl.lit(2.0).alias("weight"))
    rows = key.with_columns(pl.col("weight").cast(pl.String)).to_dicts()
    rows[len(rows) // 2]["weight"] = weight  # one bad weight among good ones
    pl.DataFrame(rows).write_csv(path)
    assert cli([str(run_dir), "--labels", str(path), "--draw", "5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --labels ")
    assert f"weight {float(weight)}" in err
    assert err.count("\n") == 1, err
    assert not RunDir(run_dir).calibrated.exists()
    assert not RunDir(run_dir).label_draw.exists()  # --draw writes nothing on a refusal


def test_draw_writes_nothing_when_the_labels_are_refused(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = pl.read_parquet(RunDir(run_dir).labels)
    RunDir(run_dir).labels.unlink()
    mixed = labels.select("item_id", "label", pl.lit(None, pl.Float64).alias("score"))
    both = mixed.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(None)
                              .otherwise("label").alias("label"),
                              pl.when(pl.int_range(pl.len()) == 0).then(3.0)
                              .otherwise("score").alias("score"))  # fmt: skip
    path = tmp_path / "both.csv"
    both.write_csv(path)
    assert cli([str(run_dir), "--labels", str(path), "--draw", "5"]) == 2
    assert "both preferences and scores" in capsys.readouterr().err
    assert not RunDir(run_dir).label_draw.exists()


def test_draw_is_reproducible_skips_the_labelled_and_goes_on() -> None:
    items = [f"i{k:03d}" for k in range(100)]
    first = draw(items, set(), 10, seed=3)
    assert [d.item_id for d in first] == [d.item_id for d in draw(items, set(), 10, seed=3)]
    assert [d.item_id for d in first] != [d.item_id for d in draw(items, set(), 10, seed=4)]
    labelled = {d.item_id for d in first[:6]}
    second = draw(items, labelled, 10, seed=3)
    assert [d.item_id for d in second[:4]] == [d.item_id for d in first[6:]]
    assert not labelled & {d.item_id for d in second}
    assert all(d.pair_id.startswith("d") and d.item_id not in d.pair_id for d in second)


def test_drawn_labels_from_the_review_store_count(run_dir: Path) -> None:
    run = RunDir(run_dir)
    run.labels.unlink()
    assert cli([str(run_dir), "--draw", "30", "--seed", "1"]) == 0
    drawn = read_draw(run)
    assert len(drawn) == 30
    with ReviewStore.of(run) as store:
        store.put_labels(
            Label(
                sample=DRAW_SAMPLE,
                pair_id=d.pair_id,
                who=who,
                preferred=pref,
                when="now",
                document_id="",
                item_ids=(d.item_id,),
            )
            for d in drawn
            for who, pref in (("ada", "A"), ("bo", "B"), ("cy", "B"))
        )
    assert cli([str(run_dir)]) == 0
    table = _table(run_dir)
    assert table["n_labels"].to_list() == [30, 30]
    a = table.filter(pl.col("model") == "model-a").row(0, named=True)
    assert a["human_only"] == 0.0  # the majority of three: B, model-b
    assert cli([str(run_dir), "--draw", "5", "--seed", "1"]) == 0
    assert not {d.item_id for d in read_draw(run)} & {d.item_id for d in drawn}


def test_the_worked_example_runs_as_the_docs_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "calibrate.md").read_text()
    block = page.split("<!-- worked-example -->\n```bash\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    codes = [console(shlex.split(line)[1:]) for line in block.strip().splitlines()]
    assert codes == [0, 0, 6, 0]  # the card: its position row UNDERPOWERED (exit 6)
    assert "true human win rate 0.506" in capsys.readouterr().out
    run = RunDir(tmp_path / "runs" / "selftest-calibrate")
    a = pl.read_csv(run.calibrated).filter(pl.col("model") == "model-a").row(0, named=True)
    keys = ("judge_only", "human_only", "calibrated", "lo", "hi")
    shown = [a["n_items"], a["n_labels"], *(a[k] for k in keys), a["labels_for_halfwidth"]]
    row = "| model-a | {} | {} | {:.3f} | {:.3f} | {:.3f} [{:.3f}, {:.3f}] | {} more |"
    row = row.format(*shown)
    assert row in page
    assert "Calibrated estimates" in run.card_md.read_text()
    assert len(read_draw(run)) == 50


def test_the_report_shows_the_calibrated_section(run_dir: Path) -> None:
    assert calibrated_sections(RunDir(run_dir)) == []  # never calibrated: no section
    assert cli([str(run_dir)]) == 0
    RunDir(run_dir).calibrated.unlink()  # a view for people: the card reads calibrated.json
    (section,) = calibrated_sections(RunDir(run_dir))
    assert section.title == "Calibrated estimates"
    assert section.tables[0]["model"].to_list() == ["model-a", "model-b"]
    path = run_report(load_run(run_dir), load_lexicons(None), resamples=0)
    assert "## Calibrated estimates" in path.with_suffix(".md").read_text()


def test_a_pointwise_judges_mean_scores_are_calibrated(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    items = 400
    human = rng.integers(1, 11, size=(items, 2)).astype(float)
    judge = np.clip(human + 2 * (rng.random((items, 2)) < 0.5), 1, 10)  # generous half the time
    rows = [
        {"run_id": "r", "judge": "j", "protocol": "own", "condition": "Blind",
         "item_id": f"i{i:03d}", "subset": "s", "document_id": f"d{i:03d}", "generator_1": "x",
         "generator_2": "y", "order": "12", "seed": 0, "verdict": "Tie", "target": "none",
         "score_1": judge[i, 0], "score_2": judge[i, 1], "score_min": 1.0, "score_max": 10.0}
        for i in range(items)
    ]  # fmt: skip
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    pl.DataFrame(rows).write_parquet(run.judgments)
    run.write_manifest({"run_id": "r", "created_at": "2026-01-01T00:00:00+00:00"})
    labelled = rng.permutation(items)[:120]
    votes = tmp_path / "scores.csv"
    pl.DataFrame(
        {"item_id": [f"i{i:03d}" for i in labelled], "score_1": human[labelled, 0],
         "score_2": human[labelled, 1]}
    ).write_csv(votes)  # fmt: skip
    assert cli([str(run.path), "--labels", str(votes)]) == 0
    table = pl.read_csv(run.calibrated)
    assert table["estimate"].unique().to_list() == ["mean score"]
    for k, model in enumerate(("x", "y")):
        r = table.filter(pl.col("model") == model).row(0, named=True)
        assert r["judge_only"] == pytest.approx(judge[:, k].mean())
        assert r["judge_only"] - human[:, k].mean() > 0.5  # the judge is generous
        assert r["lo"] <= human[:, k].mean() <= r["hi"]
        assert r["target_halfwidth"] == pytest.approx(0.05 * 9)


def test_selftest_coverage_prints_the_calibrate_table(monkeypatch: pytest.MonkeyPatch) -> None:
    small = [
        Setting(20, 100, 0.75, biased=True, value=0.5),
        Setting(50, 1_000, 0.95, biased=False, value=0.85),
    ]
    monkeypatch.setattr(calibration, "grid", lambda: small)
    section = coverage.calibrated_coverage(judges=20, seed=0)
    assert section.table.height == 2
    text = coverage.render(section)
    assert text.startswith("Calibrated estimates (calibrate)")
    assert "budget" in text
    assert coverage.calibrated_coverage in coverage.SECTIONS


def test_drawn_labels_join_labels_parquet(run_dir: Path) -> None:
    run = RunDir(run_dir)
    assert cli([str(run_dir), "--draw", "10"]) == 0
    drawn = read_draw(run)
    assert not {d.item_id for d in drawn} & set(pl.read_parquet(run.labels)["item_id"])
    with ReviewStore.of(run) as store:
        store.put_labels(
            Label(sample=DRAW_SAMPLE, pair_id=d.pair_id, who="ada", preferred="Tie", when="now",
                  document_id="", item_ids=(d.item_id,))
            for d in drawn
        )  # fmt: skip
    assert cli([str(run_dir)]) == 0
    assert _table(run_dir)["n_labels"].to_list() == [130, 130]
