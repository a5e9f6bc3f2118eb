"""``judgeprobe logs`` beyond the planted self-test: fast and line-by-line reading agree, drift,
the other commands on a logs run, the review sample, inspect_ai (when installed), and the
observed intervals' coverage by seeded simulation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import polars as pl
import pytest

from judgeprobe.__main__ import main as judgeprobe
from judgeprobe.logs.mtbench import pair_calls_fast, pair_rows
from judgeprobe.logs.rows import calls_frame
from judgeprobe.logs.source import records
from judgeprobe.metrics import observed
from judgeprobe.runs.rundir import RunDir
from judgeprobe.selftest.logs import Planted, decisions, design, write_mtbench

QUESTIONS = 8


@pytest.fixture(scope="module")
def mtbench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """An MT-Bench pair log of the planted judge, its answers and human labels."""
    folder = tmp_path_factory.mktemp("mt")
    planted = Planted(questions=QUESTIONS)
    pairs, answers = design(planted)
    return folder, write_mtbench(folder, decisions(pairs, planted), answers)


def test_fast_and_line_by_line_reading_agree(mtbench: tuple[Path, list[str]]) -> None:
    log = Path(mtbench[1][0])
    fast = pair_calls_fast(log)
    assert fast is not None
    slow = calls_frame([row for where, r in records(log) for row in pair_rows(where, r)])  # type: ignore[arg-type]
    order = ["line", "first"]
    assert fast.collect().sort(order).equals(slow.collect().sort(order))
    broken = log.with_name("broken.jsonl")
    broken.write_bytes(log.read_bytes() + b"\n")  # a blank line: the fast path declines
    assert pair_calls_fast(broken) is None


def test_commands_on_a_logs_run(mtbench: tuple[Path, list[str]], tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert judgeprobe(["logs", *mtbench[1], "--out", str(out), "--resamples", "50"]) in (0, 5, 6)
    assert judgeprobe(["card", str(out), "--resamples", "50"]) in (0, 5, 6)
    assert judgeprobe(["metrics", str(out), "--resamples", "50"]) == 0
    assert judgeprobe(["report", str(out), "--resamples", "50"]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Judge card (observed)" in report
    assert "position (observed)" in report
    from judgeprobe.review.pairs import load_sample
    from judgeprobe.review.texts import load_texts

    assert load_texts(out).texts == ()
    sample = load_sample(out, 5, 0)
    assert len(sample.pairs) == 5
    pair = next(iter(sample.pairs.values()))
    assert pair.context.startswith("Question ")
    assert pair.response_1.strip()


def test_drift_against_a_baseline(mtbench: tuple[Path, list[str]], tmp_path: Path) -> None:
    log = Path(mtbench[1][0])
    base = tmp_path / "base"
    assert judgeprobe(["logs", *mtbench[1], "--out", str(base), "--resamples", "0"]) in (0, 5, 6)
    lines = [orjson.loads(x) for x in log.read_bytes().splitlines()]
    flipped = 0
    for n, line in enumerate(lines):
        if n % 4 == 0 and line["g1_winner"] != "tie" and line["g2_winner"] != "tie":
            line["g1_winner"] = line["g2_winner"] = "tie"
            flipped += 1
    new = tmp_path / "new_pair.jsonl"
    new.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    out = tmp_path / "new"
    args = [str(new), *mtbench[1][1:], "--baseline", str(base)]
    assert judgeprobe(["logs", *args, "--out", str(out), "--resamples", "0"]) in (0, 5, 6)
    card = pl.read_csv(RunDir(out).card_csv)
    drift = card.filter(pl.col("row") == "drift (observed)").row(0, named=True)
    before = observed.item_verdicts(pl.read_parquet(RunDir(base).judgments))
    now = observed.item_verdicts(pl.read_parquet(RunDir(out).judgments))
    both = before.join(now, on="item_id", suffix="_now").filter(
        (pl.col("verdict") != "Invalid") & (pl.col("verdict_now") != "Invalid")
    )
    changed = int((both["verdict"] != both["verdict_now"]).sum())
    assert changed > 0
    assert drift["effect"] == pytest.approx(changed / both.height, abs=1e-6)
    assert drift["verdict"] == "OBSERVED"


def test_inspect_ai_eval_log(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from judgeprobe.selftest.logs import write_inspect

    graded = {("alpha", "1"): 7.0, ("beta", "1"): 4.0, ("alpha", "2"): None, ("beta", "2"): 5.0}
    paths = write_inspect(tmp_path, graded, {k: f"answer {k}" for k in graded})
    out = tmp_path / "run"
    assert judgeprobe(["logs", *paths, "--out", str(out), "--resamples", "0"]) in (0, 5, 6)
    j = pl.read_parquet(RunDir(out).judgments)
    assert sorted(j["verdict"].to_list()) == ["A", "Invalid"]


def _coverage(stat: str, reps: int = 300, questions: int = 30) -> float:
    """Share of seeded logs whose 95% interval holds the true value (self-preference, length)."""
    rng = np.random.default_rng(7)
    hits = 0
    for _ in range(reps):
        n = questions * 3
        doc = np.repeat(np.arange(questions).astype(str), 3)
        human = rng.choice(["A", "B", "Tie"], size=n, p=[0.4, 0.4, 0.2])
        lean = 0.15  # the judge sends 15% of its calls to candidate A (its own / the longer)
        rows = []
        for order in ("12", "21"):
            v = np.where(rng.random(n) >= lean, human, "A")
            rows.append(pl.DataFrame({
                "judge": "self", "protocol": "p", "condition": "Blind",
                "item_id": [f"i{k}" for k in range(n)], "document_id": doc,
                "generator_1": "self", "generator_2": "other", "order": order, "seed": 0,
                "verdict": v, "length_1": 200, "length_2": 100,
            }))  # fmt: skip
        j = pl.concat(rows)
        labels = pl.DataFrame({"item_id": [f"i{k}" for k in range(n)], "label": human,
                               "score": None, "weight": None, "annotator": "h"})  # fmt: skip
        if stat == "self":
            got = observed.self_preference(j, labels)[0]
            # E[judge value − human value] = lean × (1 − E human value), per item; true value
            truth = lean * (1 - (0.4 * 1 + 0.2 * 0.5))
        else:
            got = observed.length(j, labels)[0]
            # decisive calls: A with prob lean + (1−lean)·0.4, B (1−lean)·0.4
            pa, pb = lean + (1 - lean) * 0.4, (1 - lean) * 0.4
            truth = pa / (pa + pb) - 0.5
        lo, hi = got.effect.bounds
        assert lo is not None
        assert hi is not None
        hits += lo <= truth <= hi
    return hits / reps


@pytest.mark.parametrize("stat", ["self", "length"])
def test_observed_intervals_cover(stat: str) -> None:
    assert _coverage(stat) >= 0.9
