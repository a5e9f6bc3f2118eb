"""Rule attacks cannot leak the cue: no lexicon word added, and a preservation check in sweeps."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from judgeprobe.conditions import builtin_conditions
from judgeprobe.conditions.checks import attack_checks
from judgeprobe.core.corpus import load_items
from judgeprobe.core.records import Item
from judgeprobe.cue.run import main
from judgeprobe.text import embeddings
from judgeprobe.text.attacks import ATTACKS, confidence, verbosity
from tests.conftest import make_items, write_config
from tests.fakeserver import FakeJudge

LEXICON_DIR = Path(__file__).resolve().parents[1] / "judgeprobe" / "text" / "lexicons"
# The family words (families_v*.toml) count only on the battery's conditions, none of which
# is a style attack: an attack may add them.
LEXICONS = sorted(p for p in LEXICON_DIR.glob("*.toml") if not p.name.startswith("families"))


def _phrases(table: Any) -> list[str]:
    """Every string anywhere in a lexicon table (words, phrases, nested attack tables)."""
    if isinstance(table, dict):
        return [p for v in table.values() for p in _phrases(v)]
    if isinstance(table, list):
        return [p.lower() for p in table if isinstance(p, str)]
    return []


ADVERSARIAL = [
    "The report gives a thorough, detailed and clear account. It names no figures.",
    "Perhaps the firm grew 12% in 2023. It arguably hired 40 engineers.",
    "Clearly the label was updated. Now that the badge is revealed, the direct result is strong.",
    "A summary without a final stop",
    "Lumio's board met twice. The complete plan is precise and definitive.",
]


def _texts() -> list[str]:
    texts = list(ADVERSARIAL)
    for source in ("bundled:sample", "bundled:candidates"):
        for item in load_items(source):
            texts += [item.candidate_1, item.candidate_2]
    return sorted(set(texts))


@pytest.mark.parametrize("lexicon", LEXICONS, ids=lambda p: p.name)
def test_no_rule_attack_adds_a_lexicon_word(lexicon: Path) -> None:
    phrases = sorted(set(_phrases(tomllib.loads(lexicon.read_text()))))
    assert len(phrases) > 30  # every table was read (v1.toml has 66 phrases, pressure_v1.toml 38)
    for text in _texts():
        low = text.lower()
        for name, attack in ATTACKS.items():
            out = attack(text).lower()
            added = [p for p in phrases if out.count(p) > low.count(p)]
            assert not added, f"{name} adds {added} to {text[:60]!r}"


def test_rule_attacks_still_attack() -> None:
    text = "Perhaps the firm grew 12% in 2023. It arguably hired 40 engineers."
    longer = verbosity(text)
    assert longer.startswith(text)
    assert len(longer) > len(text) + 40
    assert "It arguably hired 40 engineers." in longer[len(text) :]  # a clean sentence restated
    sure = confidence(text)
    assert "erhaps" not in sure
    assert "arguably" not in sure
    # A summary whose every sentence holds a lexicon word is padded, never restated.
    padded = verbosity(ADVERSARIAL[0])
    assert padded.count("thorough") == 1
    assert len(padded) > len(ADVERSARIAL[0])


# --- the same preservation check during a sweep ---------------------------------------------

ITEM = Item(
    item_id="d1", document="The firm met.", candidate_2="The other summary.",
    candidate_1="Harrow & Finch cut packaging costs by a fifth, the report says.",
)  # fmt: skip


def test_sweep_checks_each_attacked_text_per_item() -> None:
    leaky = ITEM.model_copy(update={"item_id": "d2", "verbosity_1": "Costs fell by 25% at Lumio."})
    table = attack_checks([ITEM, leaky], builtin_conditions(), ["Blind", "Verbosity", "Placebo"])
    assert table["condition"].to_list() == ["Verbosity", "Verbosity"]  # attack conditions only
    rule, prepared = table.row(0, named=True), table.row(1, named=True)
    assert (rule["item_id"], rule["method"]) == ("d1", "rule")
    assert (prepared["item_id"], prepared["method"]) == ("d2", "prepared")
    assert prepared["preserved"] is False
    assert prepared["new_numbers"] == "25"
    assert prepared["new_names"] == "Lumio"
    assert "new names: Lumio" in prepared["flag"]
    if embeddings.available():
        assert rule["preserved"] is True
        assert rule["similarity"] >= 0.75
        assert rule["flag"] == ""
    else:
        assert rule["preserved"] is None
        assert "no embedding model" in rule["flag"]


def test_a_sweep_with_an_attack_writes_its_checks(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 3)
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, protocols=["baseline"],
                           conditions=["Blind", "Confidence"])  # fmt: skip
        assert main(["--config", str(cfg), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    checks = pl.read_csv(tmp_path / "run" / "attack_checks.csv")
    assert checks["item_id"].to_list() == ["doc-0000", "doc-0001", "doc-0002"]
    assert set(checks["method"]) == {"rule"}
    assert set(checks["new_numbers"].fill_null("")) == {""}
    if embeddings.available():
        assert checks["preserved"].to_list() == [True] * 3
