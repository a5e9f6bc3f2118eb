"""card.json: its committed schema is the one the models generate, a written card validates
against it and carries what the card says; the card page's forest plot; and the card's method
line names the interval its rows are computed with."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import jsonschema
import polars as pl
import pytest

from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.pairs import cue_pairs
from judgeprobe.card.published import SCHEMA_VERSION, PublishedCard, schema_text
from judgeprobe.card.record import CSV_COLUMNS, CalibratedEstimate, Estimate
from judgeprobe.card.render import forest_rows, rule, write_card
from judgeprobe.card.rows import INTERVALS
from judgeprobe.metrics.uncertainty import (
    METHOD_WORDS,
    PERCENTILE,
    Signed,
    ci_flag,
    method_sentence,
    unit_interval,
    unit_patterns,
)
from judgeprobe.metrics.units import DOC
from judgeprobe.render.plots import forest
from judgeprobe.runs.rundir import RunDir
from judgeprobe.text.lexicons import load_lexicons
from tests.test_card import _write, biased, reading

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "docs" / "card.schema.json"


def test_the_committed_schema_is_the_one_the_models_generate() -> None:
    """Regenerate with ``python -m judgeprobe.card.published > docs/card.schema.json``."""
    assert SCHEMA.read_text(encoding="utf-8") == schema_text()


def test_a_written_card_json_validates_and_says_what_the_card_says(tmp_path: Path) -> None:
    rows = biased() + reading(80, intact=70)
    spent = [{**r, "attempts": 2, "prompt_tokens": 100, "completion_tokens": 7,
              "latency_s": 0.5, "model": "m-1", "fingerprint": "fp", "template_hash": "h"}
             for r in rows]  # fmt: skip
    run = _write(tmp_path, spent)
    card = card_for_run(run, resamples=200)
    text = RunDir(run).card_json.read_text(encoding="utf-8")
    document = json.loads(text)
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(
        document
    )
    got = PublishedCard.model_validate_json(text)
    assert got.schema_version == SCHEMA_VERSION
    assert got.rows == list(card.records)
    assert got.exit_code == card.exit_code
    assert [(j.judge, j.models, j.fingerprints) for j in got.judges] == [("j", ["m-1"], ["fp"])]
    assert [p.template_hashes for p in got.prompts] == [["h"]]
    (spend,) = got.spend
    assert (spend.judgments, spend.requests) == (len(rows), 2 * len(rows))
    assert (spend.prompt_tokens, spend.completion_tokens) == (100 * len(rows), 7 * len(rows))
    assert spend.request_seconds == pytest.approx(0.5 * len(rows))
    assert got.intervals.sentence == method_sentence(card.method)
    true = next(r for r in document["rows"] if r["row"] == "True")
    for key in ("effect", "p", "q", "mde", "verdict", "documents", "threshold"):
        assert true[key] is not None, key
    assert set(true["effect"]) == {"value", "lo", "hi", "method"}


def test_card_csv_keeps_its_columns(tmp_path: Path) -> None:
    run = _write(tmp_path, biased())
    card_for_run(run, resamples=200)
    assert pl.read_csv(RunDir(run).card_csv).columns == list(CSV_COLUMNS)


def documented_csv_columns() -> list[str]:
    """card.csv's columns as docs/card.md lists them (between its two markers)."""
    text = (ROOT / "docs" / "card.md").read_text(encoding="utf-8")
    block = text.split("<!-- card.csv columns -->")[1].split("<!-- end card.csv columns -->")[0]
    return re.findall(r"`([^`]+)`", block)


def test_the_documented_card_csv_columns_are_the_written_ones(tmp_path: Path) -> None:
    run = _write(tmp_path, biased())
    card_for_run(run, resamples=200)
    written = pl.read_csv(RunDir(run).card_csv).columns
    assert documented_csv_columns() == written


def test_the_method_line_names_the_interval_the_rows_use(tmp_path: Path) -> None:
    """The rule's sentence comes from the method the rows were computed with, and that method
    is what gave the rows their intervals: recomputed with it, a row's interval is the same;
    recomputed with the other method, it is not."""
    rows = biased()
    card = card_for_run(_write(tmp_path, rows), resamples=200)
    assert card.method == INTERVALS
    assert method_sentence(card.method) in rule(card)
    other = [m for m in METHOD_WORDS if m != card.method]
    assert all(METHOD_WORDS[m] not in rule(card) for m in other)
    assert "bootstrap" not in rule(card)  # no resampling behind any row's interval
    # The LDS − OLS effect of the Placebo row, recomputed over the same pairs.
    pairs = cue_pairs(pl.DataFrame(rows, infer_schema_length=None), load_lexicons())
    units = pairs.filter(pl.col("condition") == "Placebo").with_columns(
        net=pl.col("lds") - pl.col("ols"), unit=pl.lit(1)
    )
    placebo = card.find("j", "baseline", "Placebo")
    assert placebo is not None
    assert placebo.effect is not None
    shown = (placebo.effect.lo, placebo.effect.hi)
    stat = Signed(0, 1)
    assert unit_interval(units, ["net", "unit"], stat, 200, 0, by=DOC, method=card.method) == (
        pytest.approx(shown)
    )
    assert unit_interval(units, ["net", "unit"], stat, 200, 0, by=DOC, method=PERCENTILE) != (
        pytest.approx(shown)
    )
    # The coverage simulation vouches for the method the rows use (no ci_flag).
    patterns = unit_patterns(units, ["net", "unit"], DOC)
    assert ci_flag(*patterns, stat, card.method) is None


def test_the_card_page_draws_the_rows_above_the_table_and_folds_the_rules(tmp_path: Path) -> None:
    run = _write(tmp_path, biased() + reading(80, intact=70))
    card = card_for_run(run, resamples=200)
    page = RunDir(run).card_html.read_text(encoding="utf-8")
    image = page.index("<img class='forest'")
    table = page.index("<table")
    rules = page.index("<details>")
    assert image < table < rules
    assert page.index("BIASED: the row") > rules  # the rule text sits inside the fold
    drawn = forest_rows(card)
    assert drawn.height == len(card.records)
    assert drawn["verdict"].to_list() == [r.verdict for r in card.records]


def test_the_forest_plot_draws_any_name_as_text() -> None:
    rows = pl.DataFrame(
        {"label": ["$\\frac{", "plain"], "value": [0.1, None], "lo": [0.0, None],
         "hi": [0.2, None], "threshold": [0.05, 0.05], "both_ways": [True, False],
         "verdict": ["BIASED", "UNDERPOWERED"]},
    )  # fmt: skip
    got = forest(rows, "$x")
    assert isinstance(got, bytes)
    assert got.startswith(b"\x89PNG")
    assert forest(rows.clear(), "none") is None


def test_fields_for_later_content_reach_the_pages_and_card_json(tmp_path: Path) -> None:
    """A calibrated estimate, a sequential row and a probability shift: card.md, card.html and
    a card.json that still validates carry them."""
    run = _write(tmp_path, biased())
    card = card_for_run(run, resamples=200)
    first = card.records[0].model_copy(
        update={"settled_at": 12, "prob_shift": Estimate(value=0.1, lo=0.02, hi=0.18)}
    )
    later = replace(
        card,
        records=(first, *card.records[1:]),
        calibrated=(
            CalibratedEstimate(
                judge="j",
                protocol="baseline",
                quantity="True LDS",
                calibrated=Estimate(value=0.3, lo=0.2, hi=0.4),
                method="m",
            ),
        ),
    )
    write_card(later, RunDir(run), "t", judgments=pl.read_parquet(RunDir(run).judgments),
               run_id="r")  # fmt: skip
    md = RunDir(run).card_md.read_text(encoding="utf-8")
    assert "at 12 docs" in md  # the settled column of a sequential card
    assert "probability shift 0.100 [0.020, 0.180]" in md
    document = json.loads(RunDir(run).card_json.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(
        document
    )
    assert document["calibrated"][0]["calibrated"]["value"] == 0.3
    assert document["rows"][0]["settled_at"] == 12
