"""The noise floor: a share of Blind judgments re-sent under fresh cache keys, and the judge's
own flip rate beside LDS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import REPEAT
from judgeprobe.core.records import JUDGMENT_SCHEMA
from judgeprobe.cue.config import SweepConfig, load_config
from judgeprobe.cue.run import main
from judgeprobe.cue.stream import repeated
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.text.lexicons import load_lexicons
from tests.conftest import make_items, write_config
from tests.fakeserver import FakeJudge


def test_repeated_share_is_seeded_and_about_right() -> None:
    ids = [f"doc-{i}" for i in range(2000)]
    picked = [i for i in ids if repeated(i, 0, 0.2)]
    assert 0.17 < len(picked) / len(ids) < 0.23
    assert picked == [i for i in ids if repeated(i, 0, 0.2)]  # the same every time
    assert not any(repeated(i, 0, 0.0) for i in ids)
    assert all(repeated(i, 0, 1.0) for i in ids)


def test_repeat_needs_blind_and_a_share(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="add Blind to conditions"):
        SweepConfig(conditions=["True"], repeat=0.5)
    bad = tmp_path / "c.toml"
    bad.write_text("repeat = 1.5\n")
    with pytest.raises(JudgeprobeError, match="repeat"):
        load_config(bad)
    # Without repeat a config hashes as it did before the key existed (runs still resume).
    assert SweepConfig(repeat=0.0).digest() == SweepConfig().digest()
    assert SweepConfig(repeat=0.1).digest() != SweepConfig().digest()


def test_sweep_resends_blind_under_fresh_keys(tmp_path: Path, capsys: Any) -> None:
    items = make_items(tmp_path / "items.jsonl", 8)
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, protocols=["baseline", "pbp"],
                           conditions=["Blind", "True"], repeat=0.5)  # fmt: skip
        out = tmp_path / "run"
        assert main(["--config", str(cfg), "--out", str(out), "--no-progress"]) == 0
        sent = [orjson.dumps(b["messages"]) for b in judge.bodies]
        again = [f"doc-{i:04d}" for i in range(8) if repeated(f"doc-{i:04d}", 0, 0.5)]
        assert 0 < len(again) < 8
        j = pl.read_parquet(out / "judgments.parquet")
        assert f"{j.height} judgments planned" in capsys.readouterr().err
        rep = j.filter(pl.col("condition") == REPEAT).sort("protocol", "item_id")
        blind = j.filter(pl.col("condition") == "Blind", pl.col("item_id").is_in(again))
        blind = blind.sort("protocol", "item_id")
        assert rep["item_id"].to_list() == blind["item_id"].to_list()
        assert rep.height == 2 * len(again)
        assert (rep["target"] == "none").all()
        assert (rep["order"] == blind["order"]).all()
        assert (rep["n_requests"] == blind["n_requests"]).all()
        assert set(rep["request_key"]).isdisjoint(blind["request_key"])
        # The identical messages really went to the judge twice (not answered from the cache).
        first_prompt = [m for m in sent if sent.count(m) == 2]
        assert len(first_prompt) == 2 * (len(again) * 4)  # baseline 1 + PBP 3 stages, twice
        # Resuming sends nothing: each repeat is cached under its own key.
        before = len(judge.bodies)
        assert main(["--config", str(cfg), "--out", str(out), "--no-progress", "--resume"]) == 0
        assert len(judge.bodies) == before
    ci = pl.read_csv(out / "metrics_ci.csv")
    floor = ci.filter(pl.col("condition") == REPEAT, pl.col("metric") == "flip_rate")
    assert floor["value"].to_list() == [0.0, 0.0]  # the fake judge is deterministic
    assert floor["n"].to_list() == [len(again)] * 2


def _row(condition: str, item: str, verdict: str) -> dict[str, Any]:
    return {"judge": "j", "protocol": "baseline", "condition": condition, "subset": "s",
            "item_id": item, "order": "12", "seed": 0, "verdict": verdict, "target": "none",
            "explanation": "x"}  # fmt: skip


def test_flip_rate_is_the_share_of_repeats_that_changed() -> None:
    blind = [("i0", "A"), ("i1", "B"), ("i2", "Tie"), ("i3", "A"), ("i4", "B")]
    again = [("i0", "A"), ("i1", "Tie"), ("i2", "Tie"), ("i3", "A"), ("i4", "Invalid")]
    rows = [_row("Blind", i, v) for i, v in blind] + [_row(REPEAT, i, v) for i, v in again]
    schema = {c: JUDGMENT_SCHEMA[c] for c in rows[0]}
    m = compute_metrics(pl.DataFrame(rows, schema=schema), load_lexicons(), None, resamples=200)
    flip = m.filter(pl.col("condition") == REPEAT, pl.col("metric") == "flip_rate").row(
        0, named=True
    )
    assert flip["value"] == pytest.approx(1 / 4)
    assert flip["n"] == 4  # i4's repeat is Invalid
    assert flip["lo"] <= 0.25 <= flip["hi"]
