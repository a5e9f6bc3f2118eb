"""A judgment's verdict follows its own presentation order, even when another judgment shows
the same screen with the candidates the other way round (an identical pair in both orders, a
Blind text pair that another item shows reversed). Checked with a judge that never reads: it
always answers "Summary 1", so every verdict must be the first-shown candidate."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import run_cli, write_config
from tests.fakeserver import FakeJudge

CONDITIONS = ["Blind", "True", "Flip", "Placebo", "Verbosity", "Confidence", "RevealAfter"]
FIRST_SHOWN = pl.when(pl.col("order") == "12").then(pl.lit("A")).otherwise(pl.lit("B"))


@pytest.fixture(scope="module")
def constant_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[FakeJudge, Path, Path]]:
    """Every subset of the bundled candidate set, both orders, under a constant-reply judge."""
    tmp = tmp_path_factory.mktemp("constant")
    with FakeJudge(verdict="[1,2]") as judge:
        cfg = write_config(
            tmp / "c.toml", judge.url, "bundled:candidates",
            conditions=CONDITIONS, order="both", repeat=0.2, protocols=["baseline"],
        )  # fmt: skip
        out = tmp / "run"
        done = run_cli("--config", str(cfg), "--out", str(out), timeout=900)
        assert done.returncode == 0, done.stderr
        yield judge, cfg, out


def _check_first_shown(out: Path) -> pl.DataFrame:
    df = pl.read_parquet(out / "judgments.parquet")
    assert (df["verdict"] != "Invalid").all(), df.filter(pl.col("verdict") == "Invalid").head()
    wrong = df.filter(pl.col("verdict") != FIRST_SHOWN)
    assert wrong.is_empty(), wrong.select("condition", "subset", "item_id", "order", "verdict")
    reveal = df.filter(pl.col("condition") == "RevealAfter")
    assert (reveal["turn1_verdict"] == reveal.select(FIRST_SHOWN).to_series()).all()
    return df


def test_constant_judge_picks_the_first_shown_in_every_subset_and_order(
    constant_run: tuple[FakeJudge, Path, Path],
) -> None:
    _, _, out = constant_run
    df = _check_first_shown(out)
    assert set(df["order"]) == {"12", "21"}
    assert {"identical", "single_relabel"} <= set(df["subset"])
    # Identical pairs show one screen in both orders (the case that went wrong): each order is
    # a judgment of its own.
    blind = df.filter(pl.col("condition") == "Blind", pl.col("subset") == "identical")
    assert blind.height > 0
    assert blind["request_key"].n_unique() == blind.height


def test_an_old_store_is_rebuilt_from_its_cached_requests(
    constant_run: tuple[FakeJudge, Path, Path],
) -> None:
    """A store whose outcomes no longer match (keyed without the order) resumes to the right
    verdicts without asking the judge again: outcomes are rebuilt from the request cache."""
    judge, cfg, out = constant_run
    with sqlite3.connect(out / "store.sqlite") as db:
        db.execute("UPDATE outcomes SET key = 'old:' || key")
    before = judge.chat_requests
    done = run_cli("--config", str(cfg), "--out", str(out), "--resume", timeout=900)
    assert done.returncode == 0, done.stderr
    assert judge.chat_requests == before
    _check_first_shown(out)
