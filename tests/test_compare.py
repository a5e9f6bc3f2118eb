"""``judgeprobe compare``: two runs on the same items, row by row (docs/metrics.md, "Comparing
runs on the same items").

Planted runs are judgments tables with known per-document outcomes, so every effect and
difference is worked out by hand below; the paired interval and test are the metrics' own
(``metrics.between``), checked against the in-run difference of one run holding both judges.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import pytest
from scipy.stats import binomtest

from judgeprobe import JudgeprobeError
from judgeprobe.card.from_run import card_for_run
from judgeprobe.compare.__main__ import cli
from judgeprobe.compare.entry import compare
from judgeprobe.compare.pairing import verdict
from judgeprobe.compare.published import CSV_COLUMNS, schema_text
from judgeprobe.core.files import write_json
from judgeprobe.core.records import LABEL_SCHEMA
from judgeprobe.metrics.compare import paired_difference
from judgeprobe.runs.rundir import RunDir

ROOT = Path(__file__).resolve().parent.parent
DOCS = 40


def _row(judge: str, condition: str, doc: int, order: str, verdict: str, **extra: Any
         ) -> dict[str, Any]:  # fmt: skip
    return {"judge": judge, "protocol": "baseline", "condition": condition, "subset": "s",
            "item_id": f"i{doc}", "document_id": f"d{doc}", "order": order, "seed": 0,
            "verdict": verdict, "target": "none" if condition == "Blind" else "A",
            "explanation": "", **extra}  # fmt: skip


def planted(judge: str, first_shown: set[int], moved: set[int], docs: range = range(DOCS)
            ) -> pl.DataFrame:  # fmt: skip
    """Blind in both orders and a True cue (target A) with its Placebo, one item a document.

    Blind picks the first-shown candidate in both orders on ``first_shown`` (A under 12, B under
    21), else B in both orders; the True cue moves the verdict to its target A on ``moved`` (in
    both orders), Placebo never moves.
    """
    rows = []
    for d in docs:
        for order in ("12", "21"):
            blind = ("A" if order == "12" else "B") if d in first_shown else "B"
            rows.append(_row(judge, "Blind", d, order, blind))
            rows.append(_row(judge, "Placebo", d, order, blind))
            rows.append(_row(judge, "True", d, order, "A" if d in moved else blind))
    return pl.DataFrame(rows)


def write_run(path: Path, judgments: pl.DataFrame, *, task: str = "summarization",
              spend: dict[str, Any] | None = None) -> Path:  # fmt: skip
    path.mkdir(parents=True)
    judgments.write_parquet(RunDir(path).judgments)
    manifest: dict[str, Any] = {"run_id": path.name, "created_at": "2026-12-07T20:00:00Z",
                                "config": {"task": task}}  # fmt: skip
    if spend is not None:
        manifest["spend"] = spend
    write_json(RunDir(path).manifest_file, manifest)
    return path


SPEND = {"requests": 240, "attempts": 240, "prompt_tokens": 24_000, "completion_tokens": 2_400,
         "seconds": 12.0, "cost_usd": 0.48, "judges": []}  # fmt: skip


def _rows(document: Any) -> dict[str, Any]:
    return {r.row: r for r in document.comparisons[0].rows}


def test_planted_differences_recovered_exactly(tmp_path: Path) -> None:
    # Position: first-shown on 12 of 40 documents in run 1, on 2 (a subset) in run 2: effects
    # 0.30 and 0.05, Δ = 0.25, ten documents lean more in run 1, none in run 2.
    # True: moved on documents 20–27 in run 1 and 30–37 in run 2 (8 each, none shared): LDS −
    # Placebo 0.2 in both, Δ = 0, 8 documents each way: p = 1, no detectable difference.
    one = write_run(tmp_path / "r1", planted("g", set(range(12)), set(range(20, 28))),
                    spend=SPEND)  # fmt: skip
    two = write_run(tmp_path / "r2", planted("g", {0, 1}, set(range(30, 38))), spend=SPEND)
    document = compare([one, two], out=tmp_path / "out")
    rows = _rows(document)
    position = rows["position"]
    assert (position.effect_1, position.effect_2) == pytest.approx((0.30, 0.05))
    assert position.diff == pytest.approx(0.25)
    assert (position.first_more, position.second_more) == (10, 0)
    assert position.p == pytest.approx(binomtest(10, 10).pvalue)
    assert position.diff_lo is not None
    assert position.diff_hi is not None
    assert 0 < position.diff_lo < 0.25 < position.diff_hi
    assert position.verdict == "better"  # a smaller first-shown lean
    cue = rows["True"]
    assert cue.effect_name == "LDS − Placebo"
    assert (cue.effect_1, cue.effect_2, cue.diff) == pytest.approx((0.2, 0.2, 0.0))
    assert (cue.first_more, cue.second_more, cue.p) == (8, 8, pytest.approx(1.0))
    assert cue.verdict == "no detectable difference"
    assert cue.mdd is not None
    assert cue.mdd > 0
    # Each run's effect on identical documents is exactly its card's effect.
    for run, k in ((one, 1), (two, 2)):
        card = card_for_run(run, resamples=0)
        for r in card.records:
            if r.row in rows and r.effect is not None:
                assert getattr(rows[r.row], f"effect_{k}") == pytest.approx(r.effect.value)


def test_worse_and_cost_and_outputs(tmp_path: Path) -> None:
    one = write_run(tmp_path / "r1", planted("g", {0, 1}, set()), spend=SPEND)
    two = write_run(tmp_path / "r2", planted("g", set(range(14)), set(range(20, 34))))
    out = tmp_path / "out"
    document = compare([one, two], out=out)
    rows = _rows(document)
    assert rows["position"].verdict == "worse"
    assert rows["True"].verdict == "worse"  # run 2 follows the cue on 14 documents, run 1 on none
    assert rows["True"].diff == pytest.approx(-14 / 40)
    cost_1, cost_2 = document.runs[0].cost, document.runs[1].cost
    assert cost_1.usd_per_judgment == pytest.approx(0.48 / 240)
    assert cost_1.tokens_per_judgment == pytest.approx(26_400 / 240)
    assert cost_2.usd_per_judgment is None
    assert "no spend record" in cost_2.note
    csv = pl.read_csv(out / "compare.csv")
    assert csv.columns == CSV_COLUMNS
    assert set(csv["row"]) == set(rows)
    written = json.loads((out / "compare.json").read_text())
    jsonschema.validate(written, json.loads(schema_text()))
    assert "compare_2.png" in {p.name for p in (out / "plots").iterdir()}
    assert "Run 2 against run 1" in (out / "compare.md").read_text()
    assert "<img" in (out / "compare.html").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]  # staging gone


def test_schema_file_is_current() -> None:
    assert (ROOT / "docs" / "compare.schema.json").read_text() == schema_text()


def test_items_one_run_holds_alone_are_counted_and_left_out(tmp_path: Path) -> None:
    one = write_run(tmp_path / "r1", planted("g", set(range(12)), set(), range(DOCS + 5)))
    two = write_run(tmp_path / "r2", planted("g", {0, 1}, set(), range(3, DOCS)))
    document = compare([one, two], out=tmp_path / "out")
    c = document.comparisons[0]
    assert (c.shared_items, c.shared_documents, c.only_first, c.only_second) == (37, 37, 8, 0)
    position = _rows(document)["position"]
    # On documents 3–39 alone: run 1 leans on 9 (3–11), run 2 on none.
    assert (position.effect_1, position.effect_2) == pytest.approx((9 / 37, 0.0))


def test_two_single_judge_runs_agree_with_the_in_run_difference(tmp_path: Path) -> None:
    j1 = planted("j1", set(range(12)), set(range(20, 28)))
    j2 = planted("j2", {0, 1, 15, 16}, set(range(24, 36)))
    one = write_run(tmp_path / "r1", j1)
    two = write_run(tmp_path / "r2", j2)
    document = compare([one, two], out=tmp_path / "out")
    rows = _rows(document)
    assert rows["position"].judge == "j1 vs j2"  # matched by row, the cells named
    both = pl.concat([j1, j2])
    inrun = paired_difference(both, "first_shown_excess", ("j1", "baseline", "Blind"),
                              ("j2", "baseline", "Blind"))  # fmt: skip
    got = rows["position"]
    expected = (inrun.delta.value, inrun.delta.lo, inrun.delta.hi)
    assert (got.diff, got.diff_lo, got.diff_hi) == pytest.approx(expected)
    lds = paired_difference(both, "LDS", ("j1", "baseline", "True"), ("j2", "baseline", "True"))
    placebo = paired_difference(both, "LDS", ("j1", "baseline", "Placebo"),
                                ("j2", "baseline", "Placebo"))  # fmt: skip
    assert lds.delta.value is not None
    assert placebo.delta.value is not None
    assert rows["True"].diff == pytest.approx(lds.delta.value - placebo.delta.value)


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = cli(list(args))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1, err
    return err[0]


def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = write_run(tmp_path / "r1", planted("g", {0}, set(), range(10)))
    apart = write_run(tmp_path / "r2", planted("g", {0}, set(), range(20, 30)))
    qa = write_run(tmp_path / "r3", planted("g", {0}, set(), range(10)), task="qa")
    broken = tmp_path / "r4"
    broken.mkdir()
    (broken / "judgments.parquet").write_bytes(b"not parquet")
    write_json(RunDir(broken).manifest_file, {"run_id": "r4", "created_at": "x"})
    out = tmp_path / "out"
    assert "share no item" in _refused(capsys, str(one), str(apart), "--out", str(out))
    assert "different tasks" in _refused(capsys, str(one), str(qa), "--out", str(out))
    assert "two or more runs" in _refused(capsys, str(one), "--out", str(out))
    assert "not a run directory" in _refused(capsys, str(one), str(tmp_path / "nope"), "--out",
                                             str(out))  # fmt: skip
    assert "Parquet" in _refused(capsys, str(one), str(broken), "--out", str(out))
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    assert "choose another --out" in _refused(capsys, str(one), str(one), "--out",
                                              str(tmp_path / "other"))  # fmt: skip
    assert not out.exists()
    with pytest.raises(JudgeprobeError):
        compare([one], out=out)


def _blind(judge: str, correct: set[int]) -> pl.DataFrame:
    """Blind in both orders: candidate A on ``correct`` documents, B elsewhere (no lean)."""
    return pl.DataFrame([_row(judge, "Blind", d, o, "A" if d in correct else "B")
                         for d in range(DOCS) for o in ("12", "21")])  # fmt: skip


def test_against_human_labels_and_the_label_multiplier(tmp_path: Path) -> None:
    # People prefer A on documents 0–29, B on 30–39. Run 1's judge agrees on all 40, run 2's
    # says A everywhere: agreement 1.0 against 0.75, Δ = 0.25 on ten documents, run 2 worse.
    one = write_run(tmp_path / "r1", _blind("g", set(range(30))))
    two = write_run(tmp_path / "r2", _blind("g", set(range(DOCS))))
    labels = pl.DataFrame(
        {"item_id": [f"i{d}" for d in range(DOCS)], "label": ["A"] * 30 + ["B"] * 10,
         "score": None, "weight": None, "annotator": "ada"},
        schema=LABEL_SCHEMA,
    )  # fmt: skip
    labels.write_parquet(RunDir(one).labels)
    document = compare([one, two], out=tmp_path / "out")
    rows = _rows(document)
    agreement, accuracy = rows["agreement with people"], rows["accuracy against people"]
    assert (agreement.effect_1, agreement.effect_2, agreement.diff) == pytest.approx(
        (1, 0.75, 0.25)
    )
    assert (agreement.first_more, agreement.second_more) == (10, 0)
    assert agreement.verdict == "worse"
    assert (accuracy.effect_1, accuracy.effect_2) == pytest.approx((1.0, 0.75))
    assert document.comparisons[0].labels.endswith("labels.parquet")
    # The multiplier: n_eq = (1.96 · s_Y / H)², s_Y the labels' standard deviation.
    sd = (30 * 10 / (40 * 39)) ** 0.5
    for run in document.runs:
        (m,) = [m for m in run.multipliers if m.model == "candidate 1"]
        assert m.labels == DOCS
        assert m.halfwidth is not None
        n_eq = m.equivalent_labels
        assert n_eq is not None
        assert n_eq == pytest.approx((1.959963984540054 * sd / m.halfwidth) ** 2)
        assert m.multiplier == pytest.approx(n_eq / DOCS)
    perfect, flat = (r.multipliers[0].multiplier for r in document.runs)
    assert perfect is not None
    assert flat is not None
    # A judge that agrees with people is worth more labels than were used; one that says A
    # whatever it reads adds nothing to them (PPI++'s weight goes to 0): about 1.
    assert perfect > flat + 0.3  # every item labelled: the judge adds only its variance cut
    assert flat == pytest.approx(1.0, abs=0.1)


def test_logs_runs_have_no_spend_and_pair_their_observed_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from judgeprobe.logs.__main__ import cli as logs_cli
    from tests.test_logs import _jsonl, _pair

    # Twelve questions: the first log's judge picks the first-shown model in both orders on
    # six of them (a lean of 0.5), the second log's on none.
    leaning: list[object] = [_pair(q, "a", "b", "model_1", "model_2") for q in range(6)]
    even: list[object] = [_pair(q, "a", "b", "model_1", "model_1") for q in range(6, 12)]
    steady: list[object] = [_pair(q, "a", "b", "model_1", "model_1") for q in range(12)]
    runs = []
    for name, rows in (("leaning", leaning + even), ("steady", steady)):
        log = _jsonl(tmp_path / f"{name}.jsonl", rows)
        assert logs_cli([str(log), "--out", str(tmp_path / name), "--resamples", "0"]) in (0, 5, 6)
        runs.append(tmp_path / name)
    capsys.readouterr()
    assert cli([*map(str, runs), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "no spend record" in out
    document = json.loads((tmp_path / "out" / "compare.json").read_text())
    (position,) = [
        r for r in document["comparisons"][0]["rows"] if r["kind"] == "observed-position"
    ]
    assert (position["effect_1"], position["effect_2"]) == pytest.approx((0.5, 0.0))
    assert position["verdict"] == "better"
    assert all(run["cost"]["usd_per_judgment"] is None for run in document["runs"])


def test_three_runs_each_against_the_first_in_one_family(tmp_path: Path) -> None:
    one = write_run(tmp_path / "r1", planted("g", set(range(12)), set()))
    two = write_run(tmp_path / "r2", planted("g", set(range(12)), set()))
    three = write_run(tmp_path / "r3", planted("g", {0, 1}, set()))
    out = tmp_path / "out"
    document = compare([one, two, three], out=out)
    assert [(c.first, c.second) for c in document.comparisons] == [(0, 1), (0, 2)]
    same = {r.row: r for r in document.comparisons[0].rows}["position"]
    assert (same.diff, same.p, same.q) == (0.0, None, None)  # no document differs: no test
    assert same.verdict == "no detectable difference"
    fewer = {r.row: r for r in document.comparisons[1].rows}["position"]
    assert fewer.diff == pytest.approx(0.25)
    tested = [r for c in document.comparisons for r in c.rows if r.p is not None]
    # One Benjamini–Hochberg family over both comparisons: the q-value of the smallest p is
    # p times the tests over both, divided by its rank.
    smallest = min(r.p for r in tested if r.p is not None)
    best = min(tested, key=lambda r: r.p or 1.0)
    assert best.q == pytest.approx(min(1.0, smallest * len(tested)))
    assert pl.read_csv(out / "compare_3.csv").columns == CSV_COLUMNS
    assert pl.read_csv(out / "compare.csv").height == len(document.comparisons[0].rows)


def test_a_sequential_run_costs_per_settled_row(tmp_path: Path) -> None:
    one = write_run(tmp_path / "r1", planted("g", set(range(36)), set()), spend=SPEND)
    manifest = json.loads(RunDir(one).manifest_file.read_text())
    manifest["sequential"] = {"round": 10, "maximum": DOCS, "seed": 0}
    write_json(RunDir(one).manifest_file, manifest)
    two = write_run(tmp_path / "r2", planted("g", set(), set()))
    cost = compare([one, two], out=tmp_path / "out").runs[0].cost
    assert cost.settled_rows is not None
    assert cost.settled_rows >= 1  # a first-shown lean on 36 of 40 documents settles BIASED
    assert cost.usd_per_settled_row == pytest.approx(0.48 / cost.settled_rows)


@pytest.mark.parametrize(
    ("kind", "e1", "e2", "expected"),
    [
        ("position", 0.3, 0.1, "better"),  # two-sided: a smaller lean either way
        ("position", 0.1, -0.3, "worse"),
        ("position", 0.2, -0.2, "no detectable difference"),  # as far from 0 on the other side
        ("wording", 0.4, 0.1, "better"),
        ("cue", 0.3, 0.1, "better"),  # toward the cue: smaller is better
        ("cue", -0.1, 0.2, "worse"),
        ("pressure", 0.2, 0.05, "better"),
        ("sensitivity", 0.3, 0.6, "better"),  # reading rows: larger is better
        ("accuracy", 0.5, 0.2, "worse"),
        ("human", 0.7, 0.9, "better"),
    ],
)
def test_verdict_by_the_rows_ideal(kind: str, e1: float, e2: float, expected: str) -> None:
    assert verdict(kind, e1, e2, 0.01) == expected
    assert verdict(kind, e1, e2, 0.2) == "no detectable difference"  # not significant
    assert verdict(kind, e1, e2, None) == "no detectable difference"  # no test
