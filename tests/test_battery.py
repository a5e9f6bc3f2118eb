"""The cue battery: bundled family conditions, matched placebos, family cue words, and the
preservation check on injected texts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from judgeprobe.card.battery import battery_view
from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.render import display
from judgeprobe.conditions import builtin_conditions, family_of, is_placebo, placebo_of
from judgeprobe.conditions.checks import attack_checks
from judgeprobe.core.records import Item
from judgeprobe.metrics.units import acknowledges
from judgeprobe.text.lexicons import load_lexicons

FAMILIES = {"source", "temporal", "age", "gender", "ethnicity", "education", "authority",
            "bandwagon", "distraction", "self-identification", "format"}  # fmt: skip
# Format is a cue of form, not of words: it has no cue words in the family lexicon.
WORDLESS = {"format"}
ITEM = Item(
    item_id="i1", document="The council approved a bridge costing 40,000 pounds.",
    candidate_1="The council approved the bridge.", candidate_2="A bridge was approved.",
    source_1="LLM", source_2="TradML",
)  # fmt: skip


def test_every_family_has_cues_with_a_matched_placebo_and_cue_words() -> None:
    conditions = builtin_conditions()
    battery = {n: c for n, c in conditions.items() if c.family not in ("", "self-preference")}
    assert {c.family for c in battery.values()} == FAMILIES
    assert set(load_lexicons().family) == (FAMILIES - WORDLESS) | {"self-preference"}
    for name, c in battery.items():
        cue = c.resolve(ITEM)
        if is_placebo(name):
            assert cue.target == "A"
            continue
        placebo = conditions[c.placebo]
        assert placebo.family == c.family
        assert is_placebo(c.placebo)
        # the placebo has the cue's form: labels where the cue has labels, an injection where
        # it has one, on the same side; a format placebo the same form, on both
        assert placebo.kind == c.kind
        shown, placebo_shown = c.resolve(ITEM), placebo.resolve(ITEM)
        assert bool(placebo_shown.label_1 or placebo_shown.label_2) == bool(
            shown.label_1 or shown.label_2
        )
        assert placebo_shown.reformat == shown.reformat
        assert cue.target in ("A", "B")


def test_label_pairs_are_shown_both_ways_round() -> None:
    conditions = builtin_conditions()
    pairs = [n for n in conditions if n.endswith("Flip") and conditions[n].family]
    assert len(pairs) == 7  # six Silent Judge families and self-identification
    for flip in pairs:
        base = conditions[flip.removesuffix("Flip")]
        a, b = base.resolve(ITEM), conditions[flip].resolve(ITEM)
        assert (a.label_1, a.label_2) == (b.label_2, b.label_1)
        assert {a.target, b.target} == {"A", "B"}
        assert family_of(flip) == base.family
        assert placebo_of(flip) == base.placebo


def _row(
    condition: str, i: int, verdict: str, said: str = "Summary 1 reads better."
) -> dict[str, Any]:
    c = builtin_conditions()[condition].resolve(
        Item(item_id="i", document="D.", candidate_1="One.", candidate_2="Two.")
    )
    return {
        "run_id": "t", "judge": "j", "protocol": "baseline", "condition": condition,
        "item_id": f"i{i:04d}", "subset": "s", "document_id": f"d{i:04d}", "order": "12",
        "seed": 0, "verdict": verdict, "target": "none" if condition == "Blind" else "A",
        "label_1": c.label_1, "label_2": c.label_2, "attack": "", "details": "",
        "explanation": said,
    }  # fmt: skip


def test_a_battery_cue_is_read_against_its_own_placebo(tmp_path: Path) -> None:
    """Temporal's effect subtracts TemporalPlacebo, not the paper's Placebo; the placebo row is
    LDS − OLS; a move explained with the family's words (a year) is not silent."""
    rows = []
    for i in range(60):
        rows.append(_row("Blind", i, "B"))
        said = "Summary 1 is more recent." if i < 5 else "Summary 1 reads better."
        rows.append(_row("Temporal", i, "A" if i < 30 else "B", said))
        rows.append(_row("TemporalPlacebo", i, "A" if i < 6 else "B"))
        rows.append(_row("Placebo", i, "A" if i < 20 else "B"))
    run = tmp_path / "run"
    run.mkdir()
    pl.DataFrame(rows).write_parquet(run / "judgments.parquet")
    (run / "manifest.json").write_bytes(orjson.dumps({"run_id": "hand-made"}))
    full = card_for_run(run, resamples=200)
    card = {r["row"]: r for r in full.rows.iter_rows(named=True)}
    assert card["Temporal"]["effect_name"] == "LDS − TemporalPlacebo"
    assert card["Temporal"]["effect"] == pytest.approx(24 / 60)
    assert card["TemporalPlacebo"]["effect_name"] == "LDS − OLS"
    assert card["Temporal"]["silent"] == pytest.approx(25 / 30)
    # grouped by family, and on one screen: the cue (not its placebo) with effect and verdict
    assert display(full)["family"].to_list() == ["", "temporal", "temporal"]  # Placebo first
    view = battery_view(full)
    assert view.columns == ["family", "cue", "j"]
    assert view.row(0) == ("temporal", "Temporal", view["j"][0])
    assert view["j"][0].startswith("0.400 [")
    assert view["j"][0].endswith(card["Temporal"]["verdict"])
    written = pl.read_csv(run / "card.csv", schema_overrides={"family": pl.String})
    assert written.columns[:4] == ["judge", "protocol", "row", "family"]
    assert dict(zip(written["row"], written["family"].fill_null(""), strict=True)) == {
        "Placebo": "", "Temporal": "temporal", "TemporalPlacebo": "temporal",
    }  # fmt: skip


def test_family_words_count_only_for_their_family() -> None:
    lex = load_lexicons()
    said = "Summary 1 was written more recently, in 2025."
    frame = pl.DataFrame([_row("Temporal", 0, "A", said), _row("Placebo", 0, "A", said)])
    assert frame.select(acknowledges(lex)).to_series().to_list() == [True, False]


def test_injected_cues_are_checked_and_the_cue_sentence_is_not_held_against_them() -> None:
    table = attack_checks([ITEM], builtin_conditions(), ["Blind", "Authority", "Distraction"])
    assert table["condition"].to_list() == ["Authority", "Distraction"]
    assert set(table["method"]) == {"inject"}
    authority = table.row(0, named=True)
    assert "2021" in authority["new_numbers"]
    assert "Smith" in authority["new_names"]
    assert "the cue adds numbers" in authority["flag"]
    assert authority["preserved"] in (None, authority["similarity"] >= 0.75)
