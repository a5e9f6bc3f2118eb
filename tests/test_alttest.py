"""The alternative annotator test: ω and ρ worked out by hand, refusals, the command, the card.

The procedure is checked on small tables whose figures are computed here by hand (the arithmetic
spelled out beside each), against the notebook's printed figures by
``bench/alttest_reproduce.py`` (the AltTest data carries no licence, so it is not committed), and
by a planted simulation: a judge drawn like one more annotator passes at ε = 0.2 in most
repetitions, a judge at chance never does.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import orjson
import polars as pl
import pytest
from scipy.stats import t as student

from judgeprobe import JudgeprobeError
from judgeprobe.__main__ import main as console
from judgeprobe.card.kinds.alttest import AltTestRow
from judgeprobe.card.published import PublishedCard
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.core.records import JUDGMENT_SCHEMA
from judgeprobe.metrics.alttest import ACCURACY, EPSILONS, NEG_RMSE, Metric, alt_test, wins
from judgeprobe.runs.rundir import RunDir

ROOT = Path(__file__).resolve().parents[1]
V4 = ROOT / "judgeprobe" / "card" / "thresholds_v4.toml"
V5 = ROOT / "judgeprobe" / "card" / "thresholds_v5.toml"


def _table(rows: Sequence[tuple[str, str, object]], metric: Metric) -> pl.DataFrame:
    dtype = pl.Float64 if metric == NEG_RMSE else pl.String
    return pl.DataFrame(rows, schema={"item_id": pl.String, "annotator": pl.String,
                                      "label": dtype}, orient="row")  # fmt: skip


def _judge(labels: dict[str, object], metric: Metric) -> pl.DataFrame:
    dtype = pl.Float64 if metric == NEG_RMSE else pl.String
    return pl.DataFrame({"item_id": list(labels), "label": pl.Series(list(labels.values()),
                                                                     dtype=dtype)})  # fmt: skip


# Three annotators a, b, c and a judge J on 40 items of three patterns (labels X, Y):
#   P1, 20 items: a = b = c = X, J = X
#   P2, 10 items: a = b = X, c = Y, J = X
#   P3, 10 items: a = b = c = X, J = Y
PATTERNS = {"P1": (20, "X", "X", "X", "X"), "P2": (10, "X", "X", "Y", "X"),
            "P3": (10, "X", "X", "X", "Y")}  # fmt: skip


def _three() -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    humans: dict[str, dict[str, str]] = {"a": {}, "b": {}, "c": {}}
    judge: dict[str, str] = {}
    for name, (n, a, b, c, j) in PATTERNS.items():
        for k in range(n):
            item = f"{name}-{k:02d}"
            humans["a"][item], humans["b"][item], humans["c"][item] = a, b, c
            judge[item] = j
    return humans, judge


def _frames(
    humans: dict[str, dict[str, str]], judge: dict[str, str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    rows = [(i, who, x) for who, got in humans.items() for i, x in got.items()]
    return _table(rows, ACCURACY), _judge(dict(judge), ACCURACY)


def _one_sided_p(d: list[int], epsilon: float) -> float:
    """The t-test by hand: t = (mean − ε) / (sd / √n), p = P(T_{n−1} ≤ t)."""
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
    return float(student.cdf((mean - epsilon) / (sd / math.sqrt(n)), n - 1))


def test_three_annotators_by_hand() -> None:
    points = wins(*_frames(*_three()), ACCURACY)
    # Left out a (b likewise): P1 reference {X, X}: both aligned 1, a point each, d = 0.
    # P2 reference {b = X, c = Y}: a aligned ½, J aligned ½: a tie, d = 0. P3 reference {X, X}:
    # a aligned 1, J 0: d = +1, W_J = 0. So mean W_J = (20 + 10) / 40 = 0.75, mean d = 0.25.
    # Left out c: P1 d = 0; P2 reference {X, X}: c (Y) aligned 0, J (X) 1: d = −1, W_J = 1; P3
    # d = +1, W_J = 0. So mean W_J = 0.75, mean d = 0.
    d_ab = [0] * 30 + [1] * 10
    d_c = [0] * 20 + [-1] * 10 + [1] * 10
    got = {w.annotator: w for w in points.annotators}
    for who, d in (("a", d_ab), ("b", d_ab), ("c", d_c)):
        assert sorted((got[who].human - got[who].judge).tolist()) == sorted(d)
        assert got[who].judge.mean() == 0.75
    assert points.items == 40
    # ε = 0.2: a and b lead by 0.25 > ε, so p > ½. c: t = (0 − 0.2) / (√(20/39) / √40) = −1.766,
    # p = 0.0426; Benjamini–Yekutieli over m = 3 tests, H₃ = 1 + ½ + ⅓ = 11/6, asks the smallest
    # p to be ≤ 1/3 × 0.05 / (11/6) = 0.00909: nothing rejected, ω = 0.
    at_02 = alt_test(points, 0.2)
    ps = {a.annotator: a.p for a in at_02.annotators}
    assert ps["c"] == pytest.approx(_one_sided_p(d_c, 0.2))
    assert ps["c"] == pytest.approx(0.0426, abs=1e-4)
    assert ps["a"] == pytest.approx(_one_sided_p(d_ab, 0.2))
    assert ps["a"] is not None
    assert ps["a"] > 0.5
    assert (at_02.winning_rate, at_02.advantage_probability, at_02.replaces) == (0.0, 0.75, False)
    # ε = 0.3: c: t = −0.3 / 0.1132 = −2.649, p = 0.0058 ≤ 0.00909: rejected. a: t = (0.25 − 0.3)
    # / (√(7.5/39) / √40) = −0.721, p = 0.24 > the rank-2 and rank-3 bars: ω = 1/3, ρ still 0.75.
    at_03 = alt_test(points, 0.3)
    assert {a.annotator: a.p for a in at_03.annotators}["c"] == pytest.approx(0.0058, abs=1e-4)
    assert [a.rejected for a in at_03.annotators] == [False, False, True]
    assert at_03.winning_rate == pytest.approx(1 / 3)
    assert at_03.advantage_probability == 0.75
    assert not at_03.replaces


def test_scores_by_neg_rmse_by_hand() -> None:
    # Two annotators, scores. 20 items a = b = J = 3: a tie each time, d = 0. 20 items a = 1,
    # b = 5, J = 3: left out a, the reference is {b = 5}: a's RMSE 4, J's 2, J wins (d = −1);
    # left out b, reference {1}: b's 4, J's 2, d = −1. Each annotator: W_J = 1 on all 40,
    # mean d = −0.5, sd = √(40 × ¼ / 39) = 0.506; at ε = 0.2, t = −0.7 / (0.506 / √40) = −8.74,
    # p ≈ 5e−11, under both BY bars (m = 2: 0.05 / 1.5 × ½, × 1): ω = 1, ρ = 1.
    rows: list[tuple[str, str, object]] = []
    judge: dict[str, object] = {}
    for k in range(40):
        a, b = (3.0, 3.0) if k < 20 else (1.0, 5.0)
        rows += [(f"i{k}", "a", a), (f"i{k}", "b", b)]
        judge[f"i{k}"] = 3.0
    points = wins(_table(rows, NEG_RMSE), _judge(judge, NEG_RMSE), NEG_RMSE)
    found = alt_test(points, 0.2)
    assert found.winning_rate == 1.0
    assert found.advantage_probability == 1.0
    assert found.replaces
    d = [0] * 20 + [-1] * 20
    assert found.annotators[0].p == pytest.approx(_one_sided_p(d, 0.2), rel=1e-6)
    # Under accuracy the same numbers are categories: J's 3 matches no one on the split items
    # (aligned 0, as each annotator is against the other): a tie, d = 0 everywhere.
    as_text = _table([(i, w, str(x)) for i, w, x in rows], ACCURACY)
    tied = wins(as_text, _judge({k: str(v) for k, v in judge.items()}, ACCURACY), ACCURACY)
    assert all((w.human == w.judge).all() for w in tied.annotators)


def test_constant_differences_are_decided_as_scipy_does() -> None:
    # Everyone, J included, gives every item the same label: every d is 0 and W_J = 1. At ε = 0
    # the t statistic is 0/0: scipy's p is NaN, which is no rejection (ω = 0). At ε = 0.05 the
    # mean 0 lies below ε with no spread: scipy's p is 0, every annotator is rejected (ω = 1).
    humans = {who: {f"i{k}": "X" for k in range(30)} for who in ("a", "b", "c")}
    points = wins(*_frames(humans, {f"i{k}": "X" for k in range(30)}), ACCURACY)
    at_0, at_005 = alt_test(points, 0.0), alt_test(points, 0.05)
    assert [a.p for a in at_0.annotators] == [None, None, None]
    assert at_0.winning_rate == 0.0
    assert [a.p for a in at_005.annotators] == [0.0, 0.0, 0.0]
    assert at_005.winning_rate == 1.0
    assert at_0.advantage_probability == at_005.advantage_probability == 1.0


def test_an_annotator_with_few_items_is_not_tested_but_stays_in_reference_sets() -> None:
    # 30 items a = X, b = Y, J = Y; d labels the first 20 of them X (20 < 30: not tested).
    # Left out a, items 1–20: reference {b = Y, d = X}: a aligned ½, J ½, a tie (d = 0);
    # items 21–30: reference {b = Y}: a 0, J 1, J wins (d = −1). Without d's labels all 30
    # would be J's. Left out b: items 1–20 reference {X, X}: b and J both 0; 21–30 {X}: both 0:
    # ties throughout. ρ = mean(1, 1) = 1. At ε = 0.2: a's mean d = −⅓, sd = √((20/9 + 40/9) /
    # 29) = 0.4795, t = (−⅓ − 0.2) / (0.4795 / √30) = −6.09, p ≈ 6e−7; b's d are all 0, below
    # ε with no spread: scipy's p = 0. BY over m = 2 rejects both: ω = 2/2 = 1 (d not counted).
    humans: dict[str, dict[str, str]] = {"a": {}, "b": {}, "d": {}}
    judge = {}
    for k in range(30):
        humans["a"][f"i{k:02d}"], humans["b"][f"i{k:02d}"] = "X", "Y"
        judge[f"i{k:02d}"] = "Y"
        if k < 20:
            humans["d"][f"i{k:02d}"] = "X"
    points = wins(*_frames(humans, judge), ACCURACY)
    a = {w.annotator: w for w in points.annotators}["a"]
    assert (a.human - a.judge).tolist() == [0] * 20 + [-1] * 10
    found = alt_test(points, 0.2)
    d = next(x for x in found.annotators if x.annotator == "d")
    assert (d.items, d.tested, d.p, d.rejected) == (20, False, None, False)
    assert found.tested == 2
    p_a = next(x.p for x in found.annotators if x.annotator == "a")
    assert p_a == pytest.approx(_one_sided_p([0] * 20 + [-1] * 10, 0.2))
    assert (found.winning_rate, found.advantage_probability, found.replaces) == (1.0, 1.0, True)


def _planted(rng: np.random.Generator, items: int, noise: float) -> tuple[pl.DataFrame, ...]:
    """Three annotators and a judge drawn alike (gold kept w.p. 1 − noise, else a draw from the
    priors), and a judge at chance (uniform over the four categories)."""
    priors = rng.dirichlet(np.ones(4))
    gold = rng.choice(4, size=items, p=priors)

    def draw() -> np.ndarray:
        return np.where(rng.random(items) < 1 - noise, gold, rng.choice(4, size=items, p=priors))

    ids = np.arange(items).astype(str)
    labels = np.concatenate([draw() for _ in range(3)]).astype(str)
    who = np.repeat(["h0", "h1", "h2"], items)
    humans = pl.DataFrame({"item_id": np.tile(ids, 3), "annotator": who, "label": labels})
    alike = pl.DataFrame({"item_id": ids, "label": draw().astype(str)})
    chance = pl.DataFrame({"item_id": ids, "label": rng.integers(0, 4, items).astype(str)})
    return humans, alike, chance


def test_planted_judges_pass_and_fail_as_they_should() -> None:
    rng = np.random.default_rng(44)
    passed, chance_passed, repetitions = 0, 0, 30
    for _ in range(repetitions):
        humans, alike, chance = _planted(rng, 100, 0.3)
        passed += alt_test(wins(humans, alike, ACCURACY), 0.2).replaces
        chance_passed += alt_test(wins(humans, chance, ACCURACY), 0.2).replaces
    assert passed >= 0.8 * repetitions  # a fourth annotator, with ε = 0.2 for its cost
    assert chance_passed == 0


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _pair_files(tmp: Path) -> tuple[Path, Path]:
    humans, judge = _three()
    humans["d"] = {f"P2-{k:02d}": "Y" for k in range(10)}
    other = {k: "X" for k in judge}  # always X: agrees with every majority
    llms = {"judge-j": judge, "always-x": other}
    return _write(tmp / "human_annotations.json", humans), _write(
        tmp / "llm_annotations.json", llms
    )


def test_command_on_the_alttest_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    humans, llms = _pair_files(tmp_path)
    out = tmp_path / "out"
    argv = ["alttest", "--humans", str(humans), "--llm-annotations", str(llms), "--llm",
            "judge-j", "--out", str(out)]  # fmt: skip
    assert console(argv) == 0
    printed = capsys.readouterr().out
    table = pl.read_csv(out / "alttest.csv")
    assert table["epsilon"].to_list() == list(EPSILONS)
    assert table.columns[:6] == ["judge", "protocol", "epsilon", "winning_rate",
                                 "advantage_probability", "replaces"]  # fmt: skip
    assert set(table["judge"]) == {"judge-j"}
    assert table.filter(pl.col("epsilon") == 0.2)["winning_rate"].item() == 0.0
    assert table.filter(pl.col("epsilon") == 0.3)["winning_rate"].item() == pytest.approx(1 / 3)
    assert (table["advantage_probability"] == 0.75).all()
    assert table.filter(pl.col("chosen"))["epsilon"].to_list() == [0.2]
    people = pl.read_csv(out / "alttest_annotators.csv")
    assert people.filter(pl.col("annotator") == "d")["tested"].to_list() == [False] * 7
    assert "annotator d has 10 counted items (< 30): not tested" in printed
    assert "0.2 for experts, 0.15 for skilled annotators, 0.1 for crowd workers" in printed
    assert "cannot replace" in printed
    # Without --llm every judge of the file, and a judge with one answer for everything is named.
    both = tmp_path / "both"
    assert console([*argv[:5], "--epsilon", "0.1", "--out", str(both)]) == 0
    found = pl.read_csv(both / "alttest.csv")
    assert set(found["judge"]) == {"judge-j", "always-x"}
    assert "always-x: note: the judge gave every item the same label (X)" in capsys.readouterr().out
    assert found.filter(pl.col("chosen"))["epsilon"].to_list() == [0.1, 0.1]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], part: str) -> None:
    assert console(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: "), err
    assert part in err[0], err


def test_bad_input_is_one_line_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    humans, llms = _pair_files(tmp_path)
    out = tmp_path / "out"
    base = ["alttest", "--humans", str(humans), "--llm-annotations", str(llms)]
    lone = _write(tmp_path / "one.json", {"a": _three()[0]["a"]})
    words = _write(tmp_path / "words.json", {"j": {"P1-00": "high"}})
    few = _write(tmp_path / "few.json", {"a": {"i": "X", "k": "X"}, "b": {"i": "X", "k": "Y"}})
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    cases = [
        (["alttest", "--humans", str(lone), "--llm-annotations", str(llms), "--out", str(out)],
         "two or more annotators"),
        ([*base, "--metric", "neg_rmse", "--out", str(out)], "is not a number"),
        (["alttest", "--humans", str(humans), "--llm-annotations", str(words), "--metric",
          "neg_rmse", "--out", str(out)], "is not a number"),
        (["alttest", "--humans", str(few), "--llm-annotations", str(llms), "--out", str(out)],
         "no annotator has 30 counted items"),
        ([*base, "--llm", "nobody", "--out", str(out)], "--llm nobody: not in"),
        (["alttest", "--humans", str(broken), "--llm-annotations", str(llms), "--out", str(out)],
         "not JSON"),
        (["alttest", "--humans", str(tmp_path / "none.json"), "--llm-annotations", str(llms),
          "--out", str(out)], "no such file"),
        ([*base, "--out", str(tmp_path / "full")], "not an empty directory"),
        ([*base], "go together"),
        ([*base, "--epsilon", "-0.1", "--out", str(out)], "--epsilon"),
        (["alttest", str(tmp_path), "--humans", str(humans), "--llm-annotations", str(llms),
          "--out", str(out)], "not both"),
        (["alttest", str(tmp_path / "no-run")], "no judgments.parquet"),
        (["alttest"], "give a run directory"),
    ]  # fmt: skip
    for argv, part in cases:
        _refused(argv, capsys, part)
        assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def logs_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A logs run of an MT-Bench pair log (one judge) with three people's MT-Bench votes: the
    patterns above, in candidate terms (X: model m-a wins; Y: m-b wins)."""
    tmp = tmp_path_factory.mktemp("alttest-run")
    pairs, votes = [], []
    winner = {"X": "model_a", "Y": "model_b"}
    q = 0
    for n, a, b, c, j in PATTERNS.values():
        for _ in range(n):
            q += 1
            won = "model_1" if j == "X" else "model_2"
            pairs.append({"question_id": q, "model_1": "m-a", "model_2": "m-b", "g1_winner": won,
                          "g2_winner": won, "judge": ["gpt-4", "pair-v2"], "turn": 1,
                          "g1_judgment": "x", "g2_judgment": "y"})  # fmt: skip
            for who, label in (("a", a), ("b", b), ("c", c)):
                votes.append({"question_id": q, "model_a": "m-a", "model_b": "m-b",
                              "winner": winner[label], "judge": who, "turn": 1})  # fmt: skip
    log, labels = _jsonl(tmp / "pair.jsonl", pairs), _jsonl(tmp / "human.jsonl", votes)
    run = tmp / "run"
    code = console(["logs", str(log), "--labels", str(labels), "--out", str(run),
                    "--resamples", "0"])  # fmt: skip
    assert code in (0, 5, 6, 7)
    return run


def test_command_on_a_logs_run_and_the_card(
    logs_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(logs_run, run)
    assert console(["alttest", str(run), "--epsilon", "0.3"]) == 0
    table = pl.read_csv(RunDir(run).alttest)
    at = {e: w for e, w in zip(table["epsilon"], table["winning_rate"], strict=True)}
    assert at[0.2] == 0.0  # the hand-worked figures of test_three_annotators_by_hand
    assert at[0.3] == pytest.approx(1 / 3)
    assert (table["advantage_probability"] == 0.75).all()
    assert (table["items"] == 40).all()
    capsys.readouterr()
    default = console(["card", str(run)])
    rows = pl.read_csv(RunDir(run).card_csv).filter(pl.col("kind") == "alt-test")
    assert rows["verdict"].to_list() == ["DOES-NOT-REPLACE"]
    assert rows["effect"].item() == pytest.approx(1 / 3)
    card = PublishedCard.model_validate_json(RunDir(run).card_json.read_text())
    row = next(r for r in card.rows if isinstance(r, AltTestRow))
    assert (row.epsilon, row.advantage_probability, row.annotators) == (0.3, 0.75, 3)
    assert not row.gates
    assert default != 8  # the default thresholds (version 4) do not gate on it
    assert console(["card", str(run), "--thresholds", str(V5)]) == 8  # version 5: ε = 0.2
    assert "exit code 8 (no row BIASED; the judge cannot replace" in capsys.readouterr().out
    # A version-5 file on a run without the alt-test is an error, not a gate that passes.
    RunDir(run).alttest.unlink()
    _refused(["card", str(run), "--thresholds", str(V5)], capsys, "run `judgeprobe alttest")
    assert console(["card", str(run), "--thresholds", str(V4)]) == default


def test_the_run_and_the_file_layout_agree(
    logs_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    humans, judge = _three()
    out = tmp_path / "out"
    files = [str(_write(tmp_path / "h.json", humans)), str(_write(tmp_path / "l.json", judge))]
    assert console(["alttest", "--humans", files[0], "--llm-annotations", files[1], "--out",
                    str(out)]) == 0  # fmt: skip
    run = tmp_path / "run"
    shutil.copytree(logs_run, run)
    assert console(["alttest", str(run)]) == 0
    columns = ["epsilon", "winning_rate", "advantage_probability", "replaces", "items"]
    assert (
        pl.read_csv(out / "alttest.csv")
        .select(columns)
        .equals(pl.read_csv(RunDir(run).alttest).select(columns))
    )


def test_thresholds_version_5_needs_its_key_and_only_it_has_it(tmp_path: Path) -> None:
    assert load_thresholds(V5).values.alt_test_epsilon == 0.2
    assert load_thresholds().values.alt_test_epsilon is None  # the default does not gate
    cases = {
        "v4-with.toml": V4.read_text() + "alt_test_epsilon = 0.2\n",
        "v5-without.toml": V4.read_text().replace("version = 4", "version = 5"),
        "v5-range.toml": V5.read_text().replace("alt_test_epsilon = 0.2", "alt_test_epsilon = 1"),
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(JudgeprobeError, match="alt_test_epsilon"):
            load_thresholds(path)


def test_human_scores_on_a_pointwise_run_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three annotators score candidate 1 of 30 items; the judge scores 3 everywhere. 20 items
    # a = b = c = 3: ties, d = 0. 10 items a = 1, b = 3, c = 5. Left out a: reference {3, 5},
    # a's RMSE √((4 + 16)/2) = 3.16, the judge's √((0 + 4)/2) = 1.41: the judge wins, d = −1.
    # Left out b: reference {1, 5}: both RMSE 2, a tie. Left out c: as a. So W_J = 1 on every
    # item (ρ = 1); a and c have mean d = −⅓ (p ≈ 6e−7 at ε = 0.2), b's d are all 0 (scipy's p = 0
    # below ε): BY over m = 3 rejects all three, ω = 1: the judge can replace them.
    rows, labels = [], []
    for k in range(30):
        scores = (3.0, 3.0, 3.0) if k < 20 else (1.0, 3.0, 5.0)
        labels += [{"item_id": f"i{k:02d}", "annotator": who, "score_1": s}
                   for who, s in zip("abc", scores, strict=True)]  # fmt: skip
        for order in ("12", "21"):
            rows.append({"run_id": "pw", "judge": "pointwise", "protocol": "baseline",
                         "condition": "Blind", "item_id": f"i{k:02d}", "subset": "sim",
                         "document_id": f"d{k:02d}", "generator_1": "m-a", "generator_2": "m-b",
                         "order": order, "seed": 0, "verdict": "Tie", "target": "none",
                         "score_1": 3.0})  # fmt: skip
    frame = pl.DataFrame(rows).with_columns(
        pl.lit(None, dtype=t).alias(c) for c, t in JUDGMENT_SCHEMA.items() if c not in rows[0]
    )
    run = RunDir(tmp_path / "run")
    run.path.mkdir()
    frame.select(list(JUDGMENT_SCHEMA)).cast(JUDGMENT_SCHEMA).write_parquet(run.judgments)  # type: ignore[arg-type]
    run.write_manifest({"run_id": "pw", "created_at": "2026-01-01T00:00:00+00:00",
                        "kind": "selftest-calibrate"})  # fmt: skip
    table = tmp_path / "scores.csv"
    pl.DataFrame(labels).write_csv(table)
    assert console(["alttest", str(run.path), "--labels", str(table)]) == 0
    assert "neg_rmse" in capsys.readouterr().out
    at = pl.read_csv(run.alttest).filter(pl.col("chosen")).row(0, named=True)
    assert (at["winning_rate"], at["advantage_probability"], at["items"]) == (1.0, 1.0, 30)
    people = pl.read_csv(run.alttest_annotators).filter(pl.col("epsilon") == 0.2)
    assert people.sort("annotator")["p"][1] == 0.0  # b: constant d = 0 below ε


def test_a_run_without_usable_labels_is_one_line(
    logs_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = RunDir(tmp_path / "run")
    shutil.copytree(logs_run, run.path)
    run.labels.unlink()
    _refused(["alttest", str(run.path)], capsys, "no human labels")
    items = pl.read_parquet(run.judgments)["item_id"].unique().sort()
    anonymous = tmp_path / "anonymous.csv"
    pl.DataFrame({"item_id": items, "label": ["A"] * items.len()}).write_csv(anonymous)
    _refused(["alttest", str(run.path), "--labels", str(anonymous)], capsys, "without an annotator")
    _refused(["alttest", str(run.path), "--condition", "Challenge"], capsys, "no judgments under")
    assert not run.alttest.exists()
    assert not run.alttest_annotators.exists()
