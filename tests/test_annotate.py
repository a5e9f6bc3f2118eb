"""The human-check workflow: a blind, stratified export and the agreement import."""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from judgeprobe import JudgeprobeError
from judgeprobe.annotate.__main__ import main as annotate
from judgeprobe.annotate.export import allocate
from judgeprobe.cue.run import main as run
from judgeprobe.metrics.agreement import (
    LABELS,
    interval,
    kappa,
    kappa_of_table,
    label_pairs,
    share,
)
from judgeprobe.metrics.uncertainty import ratio
from tests.conftest import ROOT, write_config
from tests.fakeserver import FakeJudge

SUBSETS = {"eq_pair": 12, "llm_vs_extractive": 6}


def _items(path: Path) -> Path:
    rows = []
    for subset, n in SUBSETS.items():
        for i in range(n):
            rows.append({
                "item_id": f"{subset}-{i}", "subset": subset, "document_id": f"doc-{i}",
                "domain": ["science", "business"][i % 2],
                "document": f"Document {i}. The committee met on budgets.",
                "candidate_1": f"{subset} summary one of {i}.",
                "candidate_2": f"{subset} summary two of {i}.",
                "source_1": "LLM", "source_2": "TradML",
            })  # fmt: skip
    # A second item with the very same texts (as single_relabel has): one pair for people.
    rows.append(
        {**rows[0], "item_id": "eq_pair-0-relabelled", "source_1": "TradML", "source_2": "LLM"}
    )
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("annotate")
    items = _items(tmp / "items.jsonl")
    with FakeJudge() as judge:
        cfg = write_config(tmp / "c.toml", judge.url, items, protocols=["baseline", "scot"],
                           conditions=["Blind", "True"], order="both")  # fmt: skip
        assert run(["--config", str(cfg), "--out", str(tmp / "run"), "--no-progress"]) == 0
    return tmp / "run"


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_allocation_is_proportional_and_capped() -> None:
    assert allocate([12, 6], 9) == [6, 3]
    assert allocate([5, 3, 2], 5) == [3, 1, 1]
    assert sum(allocate([7, 7, 7], 10)) == 10
    assert allocate([2, 1], 50) == [2, 1]


def test_export_is_blind_stratified_and_reproducible(run_dir: Path, capsys: Any) -> None:
    assert annotate(["export", str(run_dir), "--n", "9", "--seed", "3"]) == 0
    assert capsys.readouterr().out.startswith("9 pairs → ")  # documents span several lines
    out = run_dir / "annotation"
    pairs, key = _read(out / "pairs.csv"), _read(out / "key.csv")
    assert list(pairs[0]) == ["pair_id", "document", "summary_1", "summary_2", "label"]
    assert len(pairs) == len(key) == 9
    assert all(p["label"] == "" for p in pairs)
    assert [k["subset"] for k in key].count("eq_pair") == 6  # 12:6 strata → 6:3
    text = (out / "pairs.csv").read_text() + (out / "form.html").read_text()
    for hidden in ("LLM", "TradML", "label =", "fake", "Blind", "explanation"):
        assert hidden not in text  # no provenance, no cue, no judge output
    # The relabelled twin has the same texts: one pair standing for both items.
    twins = [k for k in key if "eq_pair-0" in k["item_ids"]]
    assert all(k["item_ids"] == "eq_pair-0;eq_pair-0-relabelled" for k in twins)
    # Summaries appear in the order key.csv records.
    for p, k in zip(pairs, key, strict=True):
        first = p["summary_1"]
        assert ("one of" in first) == (k["shown_first"] == "A")
    # A second export keeps the first (labels may refer to it) unless forced; same seed, same draw.
    with pytest.raises(JudgeprobeError, match="already holds a sample"):
        annotate(["export", str(run_dir), "--n", "9", "--seed", "3"])
    before = (out / "key.csv").read_text()
    assert annotate(["export", str(run_dir), "--n", "9", "--seed", "3", "--force"]) == 0
    assert (out / "key.csv").read_text() == before


def test_form_is_self_contained_and_saves_what_import_reads(run_dir: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the form's CSV writer cannot be run here")
    assert annotate(["export", str(run_dir), "--n", "6", "--force"]) == 0
    html = (run_dir / "annotation" / "form.html").read_text()
    assert "http://" not in html
    assert "https://" not in html
    assert " src=" not in html
    data = html.split('<script id="data" type="application/json">')[1].split("</script>")[0]
    pairs = orjson.loads(data.replace("<\\/", "</"))
    writer = html.split('<script id="csv">')[1].split("</script>")[0]
    answers = {p["pair_id"]: ["1", "2", "Tie"][i % 3] for i, p in enumerate(pairs)}
    answers.pop(pairs[-1]["pair_id"])  # one left unanswered
    who = 'Ann, "A"'  # a name that needs CSV quoting
    call = ", ".join(orjson.dumps(v).decode() for v in (who, pairs, answers))
    script = f"{writer}\nprocess.stdout.write(toCsv({call}));"
    saved = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
    path = tmp_path / "labels-ann.csv"
    path.write_text(saved.stdout)
    rows = _read(path)
    assert {r["annotator"] for r in rows} == {who}
    assert rows[-1]["label"] == ""
    assert annotate(["import", str(run_dir), str(path), "--resamples", "200"]) == 0
    table = pl.read_csv(run_dir / "annotation" / "agreement.csv")
    tie = table.filter(pl.col("metric") == "tie_rate", pl.col("kind") == "annotator").row(
        0, named=True
    )
    assert tie["who"] == who
    assert tie["n"] == 5


def _labels(path: Path, who: str, labels: dict[str, str]) -> Path:
    lines = ["pair_id,annotator,label"] + [f"{p},{who},{lab}" for p, lab in labels.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_import_reports_ties_kappa_and_judge_agreement(run_dir: Path, tmp_path: Path) -> None:
    assert annotate(["export", str(run_dir), "--n", "18", "--force"]) == 0
    key = _read(run_dir / "annotation" / "key.csv")
    ids = [k["pair_id"] for k in key]
    one = {p: ["1", "2", "Tie", "Tie"][i % 4] for i, p in enumerate(ids)}
    two = {p: ["1", "Tie", "Tie", "2", "Tie"][i % 5] for i, p in enumerate(ids)}
    files = [_labels(tmp_path / "a.csv", "ann1", one), _labels(tmp_path / "b.csv", "ann2", two)]
    assert annotate(["import", str(run_dir), *map(str, files), "--resamples", "300"]) == 0
    t = pl.read_csv(run_dir / "annotation" / "agreement.csv")

    shown = {k["pair_id"]: k["shown_first"] for k in key}

    def cand(p: str, lab: str) -> str:
        return "Tie" if lab == "Tie" else {("A", "1"): "A", ("A", "2"): "B", ("B", "1"): "B",
                                           ("B", "2"): "A"}[(shown[p], lab)]  # fmt: skip

    c1, c2 = [cand(p, one[p]) for p in ids], [cand(p, two[p]) for p in ids]
    kappa = t.filter(pl.col("metric") == "cohen_kappa").row(0, named=True)
    assert kappa["who"] == "ann1 vs ann2"
    assert kappa["n"] == 18
    assert kappa["value"] == pytest.approx(cohen_kappa_score(c1, c2))
    assert kappa["lo"] <= kappa["value"] <= kappa["hi"]
    ties = dict(t.filter(pl.col("kind") == "annotator").select("who", "value").iter_rows())
    assert ties == {
        "ann1": pytest.approx(c1.count("Tie") / 18),
        "ann2": pytest.approx(c2.count("Tie") / 18),
    }
    # A judge cell's agreement, recomputed from the judgments on the pairs both people agree on.
    majority = {p: a for p, a, b in zip(ids, c1, c2, strict=True) if a == b}
    j = pl.read_parquet(run_dir / "judgments.parquet").filter(
        pl.col("judge") == "fake", pl.col("protocol") == "scot", pl.col("condition") == "Blind"
    )
    item_pair = {i: k["pair_id"] for k in key for i in k["item_ids"].split(";")}
    hits = [v == majority[item_pair[i]] for i, v in zip(j["item_id"], j["verdict"], strict=True)
            if i in item_pair and item_pair[i] in majority and v != "Invalid"]  # fmt: skip
    row = t.filter(pl.col("who") == "fake scot", pl.col("condition") == "Blind",
                   pl.col("metric") == "agreement_with_majority").row(0, named=True)  # fmt: skip
    assert row["value"] == pytest.approx(sum(hits) / len(hits))
    assert row["n"] == len({item_pair[i] for i in j["item_id"] if item_pair.get(i) in majority})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("pair_id,label\nnope,1\n", "line 2: unknown pair_id 'nope'"),
        ("pair_id,label\n{p},3\n", "line 2: label '3' is not 1, 2 or Tie"),
        ("pair_id,label\n{p},1\n{p},2\n", "line 3: pair {p} labelled twice"),
        ("id,choice\n{p},1\n", "expected a CSV with pair_id and label columns"),
    ],
)
def test_bad_labels_file_is_one_error_line(run_dir: Path, tmp_path: Path, content: str,
                                           message: str) -> None:  # fmt: skip
    assert annotate(["export", str(run_dir), "--n", "4", "--force"]) == 0
    pair = _read(run_dir / "annotation" / "key.csv")[0]["pair_id"]
    path = tmp_path / "bad.csv"
    path.write_text(content.format(p=pair))
    proc = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-m", "judgeprobe.annotate", "import",
         str(run_dir), str(path)], capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == f"error: {path}: {message.format(p=pair)}\n"


def test_kappa_of_the_summed_table_is_scikit_learns() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 25))
        skew = rng.dirichlet(np.ones(3))
        a, b = (rng.choice(LABELS, n, p=skew).tolist() for _ in range(2))
        table = np.array([v.sum() for v in label_pairs(a, b).values()])
        got, want = float(kappa_of_table(table)), kappa(a, b)
        assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def test_intervals_resample_documents_as_a_loop_over_them_does() -> None:
    # The metrics' pattern bootstrap against documents drawn by hand, kappa by scikit-learn.
    rng = np.random.default_rng(1)
    docs = [f"d{i // 3}" for i in range(45)]
    a = rng.choice(LABELS, 45, p=[0.2, 0.2, 0.6]).tolist()
    b = [x if rng.random() < 0.6 else str(rng.choice(LABELS)) for x in a]
    lo, hi, undefined = interval(docs, label_pairs(a, b), kappa_of_table, 4000, seed=0)
    rows = {d: [i for i, e in enumerate(docs) if e == d] for d in dict.fromkeys(docs)}
    names = list(rows)
    draws = []
    for _ in range(4000):
        drawn = [i for d in rng.choice(names, len(names)) for i in rows[str(d)]]
        draws.append(kappa([a[i] for i in drawn], [b[i] for i in drawn]))
    want = np.nanpercentile(draws, [2.5, 97.5])
    assert (lo, hi) == pytest.approx(tuple(want), abs=0.04)
    assert undefined == 0
    tie = np.array([x == "Tie" for x in a])
    lo, hi, _ = interval(docs, share(tie), ratio(0, 1), 4000, seed=0)
    assert lo < tie.mean() < hi
    assert interval([], share(tie[:0]), ratio(0, 1), 100, seed=0)[2] == 0
