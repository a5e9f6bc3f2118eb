"""AlpacaEval's own annotation files (tests/fixtures/real_logs/alpaca_eval, SOURCES.md) read whole.

Every expected figure is counted here from the raw JSON (AlpacaEval's own rules: draws are
``preference`` 0 or 1.5, the win rate is the mean of ``preference`` − 1, a null preference is
left out), never through judgeprobe's reader.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from judgeprobe.logs.__main__ import cli as logs_cli
from judgeprobe.runs.rundir import RunDir

HERE = Path(__file__).parent / "fixtures" / "real_logs" / "alpaca_eval"
AE1 = HERE / "alpaca_eval_gpt4__alpaca-7b.json"
AE1_FLOAT = HERE / "alpaca_eval_gpt4__claude-2.json"
WEIGHTED = HERE / "weighted_alpaca_eval_gpt4_turbo__alpaca-7b.json"
FN = HERE / "alpaca_eval_gpt4_turbo_fn__gemini-pro.json"
COT = HERE / "alpaca_eval_cot_gpt4_turbo_fn__alpaca-7b.json"
ALL = [AE1, AE1_FLOAT, WEIGHTED, FN, COT]


def _raw(path: Path) -> list[dict[str, Any]]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(rows, list)
    return rows


def _draw(r: dict[str, Any]) -> bool:
    p = r["preference"]
    return p in (0, 1.5) or (p is None and r["output_1"] == r["output_2"])


def _invalid(r: dict[str, Any]) -> bool:
    return r["preference"] is None and r["output_1"] != r["output_2"]


def _logs(tmp_path: Path, *paths: Path, extra: tuple[str, ...] = ()) -> tuple[int, RunDir]:
    out = tmp_path / "run"
    code = logs_cli([*map(str, paths), "--out", str(out), "--resamples", "0", "--no-report",
                     *extra])  # fmt: skip
    return code, RunDir(out)


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_row_is_read_and_the_win_rate_is_alpacaevals(tmp_path: Path, path: Path) -> None:
    raw = _raw(path)
    code, run = _logs(tmp_path, path)
    assert code in (0, 5, 6)
    j = pl.read_parquet(run.judgments)
    assert j.height == len(raw)  # nothing skipped, nothing dropped
    assert not (run.path / "bad_rows.txt").exists()
    assert int((j["verdict"] == "Invalid").sum()) == sum(map(_invalid, raw))
    assert int((j["verdict"] == "Tie").sum()) == sum(map(_draw, raw))
    model = raw[0]["generator_2"]
    valid = [r for r in raw if not _invalid(r)]
    prefs = [1.5 if _draw(r) else float(r["preference"]) for r in valid]
    expected = sum(p - 1 for p in prefs) / len(prefs)  # AlpacaEval's win rate ÷ 100
    rates = pl.read_csv(run.win_rates)
    assert rates.columns == ["judge", "protocol", "model", "n", "wins", "ties", "losses",
                             "invalid", "win_rate"]  # fmt: skip
    row = rates.filter(pl.col("model") == model).row(0, named=True)
    assert row["judge"] == raw[0]["annotator"]
    assert row["n"] == len(raw)
    assert row["invalid"] == sum(map(_invalid, raw))
    assert row["wins"] == sum(p > 1.5 for p in prefs)
    assert row["losses"] == sum(p < 1.5 for p in prefs)
    assert row["ties"] == sum(map(_draw, raw))
    assert row["win_rate"] == pytest.approx(expected, abs=5e-7)
    base = rates.filter(pl.col("model") == raw[0]["generator_1"]).row(0, named=True)
    assert base["win_rate"] == pytest.approx(1 - expected, abs=5e-7)
    card = json.loads((run.path / "card.json").read_text())
    published = {(w["judge"], w["model"]): w["win_rate"] for w in card["win_rates"]}
    assert published[(raw[0]["annotator"], model)] == pytest.approx(expected, abs=5e-7)


def _q(raw_completion: dict[str, Any]) -> float | None:
    """P(M) / (P(m) + P(M)) over the first token's top log-probabilities; None: neither."""
    top = {
        t["token"]: t["logprob"] for t in raw_completion["logprobs"]["content"][0]["top_logprobs"]
    }
    if "m" not in top and "M" not in top:
        return None
    p_m, p_big = (math.exp(top[k]) if k in top else 0.0 for k in ("m", "M"))
    return p_big / (p_m + p_big)


def _switched(r: dict[str, Any]) -> bool | None:
    """Whether ``output_2`` was shown first (docs/metrics.md's rule), from the raw record."""
    c, p = r.get("raw_completion"), r["preference"]
    if not isinstance(c, dict) or p is None or not 1 <= p <= 2:
        return None
    if "logprobs" in c:
        q = _q(c)
        if q is None or abs((p - 1) - q) == abs((p - 1) - (1 - q)):
            return None
        return bool(abs((p - 1) - (1 - q)) < abs((p - 1) - q))
    best = [m["model"] for m in c["ordered_models"] if m["rank"] == 1]
    if p == 1.5 or len(best) != 1:
        return None
    return bool((best[0] == "m") != (p == 1))


@pytest.mark.parametrize("path", [WEIGHTED, FN, COT], ids=lambda p: p.stem)
def test_the_hidden_shown_order_is_recovered(tmp_path: Path, path: Path) -> None:
    raw = _raw(path)
    _, run = _logs(tmp_path, path)
    j = pl.read_parquet(run.judgments).with_columns(
        line=pl.col("request_key").str.extract(r":(\d+)$", 1).cast(pl.Int64)
    )
    switched = [_switched(r) for r in raw]
    assert 0.35 < sum(s is True for s in switched) / len(raw) < 0.65  # a shuffle's half
    for row in j.iter_rows(named=True):
        s = switched[row["line"] - 1]
        if s is None:
            assert row["order"] == ""
            continue
        a_first = row["order"] == "12"
        shown_first = row["generator_1"] if a_first else row["generator_2"]
        r = raw[row["line"] - 1]
        assert shown_first == (r["generator_2"] if s else r["generator_1"])
    manifest = json.loads(run.manifest_file.read_text())
    (cell,) = manifest["config"]["randomized_order"]
    assert cell["switched"] == sum(s is True for s in switched)
    assert cell["kept"] == sum(s is False for s in switched)
    assert cell["undetermined"] == sum(s is None for s in switched)
    # the position (randomized) row: first-shown share of decisive verdicts − ½
    first = second = 0
    for r, s in zip(raw, switched, strict=True):
        if s is None or _draw(r) or _invalid(r):
            continue
        output_1_won = r["preference"] < 1.5
        first += output_1_won != s
        second += output_1_won == s
    card = json.loads((run.path / "card.json").read_text())
    (row,) = [r for r in card["rows"] if r["kind"] == "observed-position-randomized"]
    assert row["row"] == "position (randomized)"
    assert row["n"] == first + second
    assert row["effect"]["value"] == pytest.approx(first / (first + second) - 0.5)
    assert row["effect"]["lo"] <= row["effect"]["value"] <= row["effect"]["hi"]
    assert (row["up"], row["down"]) == (first, second)  # one verdict a question here
    assert row["verdict"] in ("BIASED", "CLEAR", "UNDERPOWERED")
    assert row["threshold"] == card["thresholds"]["values"]["position_effect"]
    assert "randomized by the log's tool" in row["note"]
    assert not [r for r in card["rows"] if r["kind"] == "observed-position"]


def test_the_two_annotators_recover_the_same_order(tmp_path: Path) -> None:
    """AlpacaEval seeds its shuffle with the instruction: both annotators saw the same orders."""
    orders: dict[str, dict[str, bool]] = {}
    for path in (WEIGHTED, FN, COT):
        orders[path.name] = {r["instruction"]: s for r in _raw(path)
                             if (s := _switched(r)) is not None}  # fmt: skip
    w = orders[WEIGHTED.name]
    for other in (FN, COT):
        common = set(w) & set(orders[other.name])
        assert len(common) >= 39
        assert all(w[k] == orders[other.name][k] for k in common)
    _, run = _logs(tmp_path, WEIGHTED, FN, COT)
    j = pl.read_parquet(run.judgments).filter(pl.col("order") != "")
    shown = j.group_by("document_id").agg(pl.col("order").n_unique().alias("orders"))
    assert shown["orders"].max() == 1  # one shown order per question across both annotators


def test_alpacaeval_1_makes_no_position_claim(tmp_path: Path) -> None:
    _, run = _logs(tmp_path, AE1)
    j = pl.read_parquet(run.judgments)
    assert set(j["order"].to_list()) == {""}
    card = json.loads((run.path / "card.json").read_text())
    assert not [r for r in card["rows"] if r["kind"].startswith("observed-position")]
    (cell,) = json.loads(run.manifest_file.read_text())["config"]["randomized_order"]
    assert cell["undetermined"] == len(_raw(AE1))
    assert cell["kept"] == cell["switched"] == 0


def test_structured_raw_completion_is_kept_whole(tmp_path: Path) -> None:
    raw = _raw(WEIGHTED)
    _, run = _logs(tmp_path, WEIGHTED)
    j = pl.read_parquet(run.judgments).sort("request_key")
    first = j.filter(pl.col("request_key").str.ends_with(":1")).row(0, named=True)
    assert json.loads(first["explanation"]) == raw[0]["raw_completion"]


def _with(tmp_path: Path, name: str, changes: dict[str, Any]) -> Path:
    rows = _raw(AE1)[:5]
    rows[0] = {**rows[0], **changes}
    path = tmp_path / name
    path.write_text(json.dumps(rows))
    return path


def test_an_unparseable_preference_is_an_invalid_judgment(tmp_path: Path) -> None:
    path = _with(tmp_path, "b.json", {"preference": "B"})
    _, run = _logs(tmp_path, path)
    j = pl.read_parquet(run.judgments)
    assert j.height == 5
    bad = j.filter(pl.col("verdict") == "Invalid").row(0, named=True)
    assert "'B' is not a number" in bad["invalid_reason"]


def test_a_null_preference_on_identical_outputs_is_a_draw(tmp_path: Path) -> None:
    rows = _raw(AE1)
    path = _with(tmp_path, "same.json", {"preference": None, "output_2": rows[0]["output_1"]})
    _, run = _logs(tmp_path, path)
    j = pl.read_parquet(run.judgments)
    assert int((j["verdict"] == "Invalid").sum()) == 0
    assert int((j["verdict"] == "Tie").sum()) == 1 + sum(map(_draw, rows[1:5]))


def _verdict(r: dict[str, Any]) -> str | None:
    """A raw record's verdict on (generator_1, generator_2): 1, 2, tie, or None (unreadable)."""
    if _invalid(r):
        return None
    return "tie" if _draw(r) else "1" if r["preference"] < 1.5 else "2"


def test_another_annotators_file_is_a_labels_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--labels in AlpacaEval's own format: matched by instruction and pair, as the log's items."""
    log, labels = _raw(WEIGHTED), _raw(COT)
    code, run = _logs(tmp_path, WEIGHTED, extra=("--labels", str(COT)))
    assert code in (0, 5, 6)
    key = {(r["instruction"], r["generator_1"], r["generator_2"]): r for r in log}
    both = [(key[k], r) for r in labels if (k := (r["instruction"], r["generator_1"],
                                                    r["generator_2"])) in key]  # fmt: skip
    assert len(both) == len(labels) == 40
    agree = sum(_verdict(a) == _verdict(b) for a, b in both)
    card = json.loads((run.path / "card.json").read_text())
    (row,) = [r for r in card["rows"] if r["kind"] == "observed-agreement"]
    assert row["n"] == len(both)
    assert row["effect"]["value"] == pytest.approx(agree / len(both))
    assert "match no item" not in capsys.readouterr().out


def test_labels_that_match_no_item_are_counted_and_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = _raw(FN)  # gemini-pro against the baseline: no item of alpaca-7b's log
    _, run = _logs(tmp_path, WEIGHTED, extra=("--labels", str(FN)))
    assert f"{len(labels)} of {len(labels)} labels in {FN} match no item" in capsys.readouterr().out
    assert json.loads(run.manifest_file.read_text())["config"]["unmatched_labels"] == len(labels)


def test_a_randomized_position_bias_makes_the_card_exit_5(tmp_path: Path) -> None:
    """The _fn excerpt: the first-shown output wins far more than half the decisive verdicts."""
    raw = _raw(FN)
    first = second = 0
    for r in raw:
        s = _switched(r)
        if s is not None and not _draw(r) and not _invalid(r):
            first += (r["preference"] < 1.5) != s
            second += (r["preference"] < 1.5) == s
    assert first / (first + second) - 0.5 > 0.15  # counted from the raw file
    code, run = _logs(tmp_path, FN)
    assert code == 5
    card = json.loads((run.path / "card.json").read_text())
    (biased,) = [r for r in card["rows"] if r["verdict"] == "BIASED"]
    assert biased["kind"] == "observed-position-randomized"
    assert (biased["first_shown"], biased["n"]) == (first, first + second)
