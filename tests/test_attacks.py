"""Rule attacks cannot leak the cue: no lexicon word added, and a preservation check in sweeps."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from judgeprobe.candidates.attacks import ATTACKS, confidence, verbosity
from judgeprobe.corpus import load_items

LEXICON_DIR = Path(__file__).resolve().parents[1] / "judgeprobe" / "metrics" / "lexicons"
LEXICONS = sorted(LEXICON_DIR.glob("*.toml"))


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
    assert len(phrases) > 40  # every table was read
    for text in _texts():
        low = text.lower()
        for name, attack in ATTACKS.items():
            out = attack(text).lower()
            added = [p for p in phrases if out.count(p) > low.count(p)]
            assert not added, f"{name} adds {added} to {text[:60]!r}"


def test_rule_attacks_still_attack() -> None:
    text = "Perhaps the firm grew 12% in 2023. It arguably hired 40 engineers."
    longer = verbosity(text)
    assert longer.startswith(text) and len(longer) > len(text) + 40
    assert "It arguably hired 40 engineers." in longer[len(text) :]  # a clean sentence restated
    sure = confidence(text)
    assert "erhaps" not in sure and "arguably" not in sure
    # A summary whose every sentence holds a lexicon word is padded, never restated.
    padded = verbosity(ADVERSARIAL[0])
    assert padded.count("thorough") == 1 and len(padded) > len(ADVERSARIAL[0])
