"""Position on every card: a seeded share of Blind items judged in the other order too
(``swap``), on top of the paired random design, so the card always has a position row."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polars as pl

from judgeprobe.card.from_run import card_for_run
from judgeprobe.core.corpus import load_items
from judgeprobe.cue.config import SweepConfig, load_config, sweep_conditions
from judgeprobe.cue.run import main
from judgeprobe.cue.stream import blind_orders, count, cue_jobs, orders_for, protocols_for
from judgeprobe.protocols.reveal import reveal_stages
from tests.conftest import make_items, write_config
from tests.fakeserver import FakeJudge
from tests.test_experiments import EXPERIMENTS


def test_swap_share_is_seeded_about_right_and_the_other_order() -> None:
    cfg = SweepConfig(swap=0.3)
    ids = [f"doc-{i}" for i in range(2000)]
    swapped = [i for i in ids if len(blind_orders(cfg, i, 0)) == 2]
    assert 0.27 < len(swapped) / len(ids) < 0.33
    assert swapped == [i for i in ids if len(blind_orders(cfg, i, 0)) == 2]  # seeded
    for i in ids[:50]:
        (own,) = orders_for("random", i, 0)
        assert blind_orders(cfg, i, 0) in ((own,), ("12", "21"))
    assert all(len(blind_orders(SweepConfig(swap=1.0), i, 0)) == 2 for i in ids)
    assert all(len(blind_orders(SweepConfig(swap=0.0), i, 0)) == 1 for i in ids)


def test_swap_changes_nothing_where_it_adds_no_judgment() -> None:
    # order = both judges every item both ways already; without Blind there is nothing to swap.
    both = SweepConfig(order="both")
    assert both.swaps == 0.0
    assert both.digest() == SweepConfig(order="both", swap=0.0).digest()
    assert (
        SweepConfig(conditions=["True"]).digest()
        == SweepConfig(conditions=["True"], swap=0.0).digest()
    )
    assert SweepConfig(swap=0.5).digest() != SweepConfig(swap=0.0).digest()


def test_plan_judges_only_blind_in_the_other_order_and_counts_it() -> None:
    items = load_items("bundled:candidates")[:60]
    for cfg in (
        SweepConfig(
            swap=0.5,
            repeat=0.3,
            conditions=["Blind", "True", "RevealAfter"],
            protocols=["baseline", "pbp"],
        ),
        SweepConfig(order="21", swap=1.0),
        SweepConfig(order="both", swap=1.0),
    ):
        conditions = sweep_conditions(cfg)
        jobs = list(
            cue_jobs(cfg, protocols_for(cfg), items, conditions, {j.name: "f" for j in cfg.judges})
        )
        planned = count(cfg, protocols_for(cfg), items, conditions)
        assert planned.judgments == len(jobs)
        assert sum(planned.requests.values()) == sum(
            j.protocol.stages + reveal_stages(j.protocol.name) * (j.reveal is not None)
            for j in jobs
        )
        for job in jobs:  # every probe has its Blind twin in its own order
            own = orders_for(cfg.order, job.item_id, job.seed)
            if job.condition not in ("Blind", "BlindRepeat"):
                assert job.order in own
            else:
                assert job.order in blind_orders(cfg, job.item_id, job.seed)
        blind = Counter((j.item_id, j.order) for j in jobs if j.condition == "Blind")
        assert set(blind.values()) == {len(cfg.protocols)}
        want = {(i.item_id, o) for i in items for o in blind_orders(cfg, i.item_id, 0)}
        assert set(blind) == want


def test_a_judge_that_always_picks_the_first_shown_gets_a_biased_position_row(
    tmp_path: Path,
) -> None:
    items = make_items(tmp_path / "items.jsonl", 12)
    with FakeJudge(verdict="[1,2]") as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items,
                           conditions=["Blind", "True", "Placebo"], swap=1.0)  # fmt: skip
        out = tmp_path / "run"
        assert main(["--config", str(cfg), "--out", str(out), "--no-progress"]) == 0
    j = pl.read_parquet(out / "judgments.parquet")
    assert j.height == 12 * 4  # Blind in both orders, True and Placebo in the item's own
    blind = j.filter(pl.col("condition") == "Blind")
    assert blind.group_by("item_id").agg(pl.col("order").n_unique())["order"].min() == 2
    assert j.filter(pl.col("condition") != "Blind").group_by("item_id").len()["len"].max() == 2
    card = card_for_run(out, resamples=200)
    (row,) = card.rows.filter(pl.col("kind") == "position").iter_rows(named=True)
    assert (row["n"], row["documents"], row["effect"], row["consistency"]) == (12, 12, 1.0, 0.0)
    assert (row["up"], row["down"]) == (12, 0)
    assert row["verdict"] == "BIASED"
    ci = pl.read_csv(out / "metrics_ci.csv")
    consistency = ci.filter(
        pl.col("condition") == "Blind", pl.col("metric") == "position_consistency"
    )
    assert consistency["value"].to_list() == [0.0]
    assert "position" in (out / "report.md").read_text(encoding="utf-8")


def test_the_default_sweep_and_every_experiment_judge_position() -> None:
    """Every shipped config that judges Blind gives the card a position row."""
    for path in [None, *EXPERIMENTS]:
        cfg = load_config(path)
        if "Blind" in cfg.conditions:
            assert cfg.order == "both" or cfg.swaps > 0, path
