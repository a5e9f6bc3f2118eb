"""Offline extractive summaries, and the preservation check on style attacks."""

from __future__ import annotations

import socket
from typing import Any

import nltk
import pytest

from judgeprobe.candidates import extractive
from judgeprobe.candidates.llm import salvage
from judgeprobe.core.corpus import load_documents, load_items
from judgeprobe.text import embeddings, preserve
from judgeprobe.text.attacks import ATTACKS


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No network, and no NLTK data file may be loaded."""

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"network or NLTK data used: {args[:2]}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(nltk.data, "load", refuse)
    monkeypatch.setattr(nltk.data, "find", refuse)


@pytest.mark.parametrize("method", sorted(extractive.METHODS))
def test_each_sumy_method_offline(method: str, offline: None) -> None:
    doc = load_documents("bundled:corpus", limit=1)[0]
    summary = extractive.summarize(doc.text, method, words=80)
    sentences = extractive.OfflineTokenizer().to_sentences(summary)
    assert sentences
    assert 0 < extractive.n_words(summary) <= 80
    assert all(s in doc.text for s in sentences)  # extracted verbatim
    tiny = extractive.summarize(doc.text, method, words=3)
    assert len(extractive.OfflineTokenizer().to_sentences(tiny)) == 1  # at least one sentence


def test_sentence_splitter_keeps_abbreviations() -> None:
    text = "Dr. Lind met Mr. Oduya at 9 a.m. in the U.S. office. They agreed, e.g. on budgets."
    assert len(extractive.OfflineTokenizer().to_sentences(text)) == 2


def test_rule_attacks_add_no_numbers_or_names() -> None:
    for item in load_items("bundled:sample"):
        for text in (item.candidate_1, item.candidate_2):
            for attack in ATTACKS.values():
                result = preserve.compare(text, attack(text), similarity=1.0)
                assert result.new_numbers == (), result
                assert result.new_entities == (), result


def test_new_facts_are_caught() -> None:
    original = "Harrow & Finch cut packaging costs by a fifth in 2023."
    rewrite = "Clearly, Harrow & Finch and its partner Lumio cut costs by 25 percent in 2023."
    result = preserve.compare(original, rewrite, similarity=0.9)
    assert result.new_numbers == ("25", "percent")
    assert result.new_entities == ("Lumio",)
    assert not result.ok(0.8)
    assert "new names: Lumio" in result.problems(0.8)


@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_similarity_separates_rewrites_from_other_texts() -> None:
    items = load_items("bundled:sample")[:4]
    pairs = [(i.candidate_1, ATTACKS[a](i.candidate_1)) for i in items for a in sorted(ATTACKS)]
    unrelated = [(items[0].candidate_1, items[2].candidate_1)]
    *attacked, other = preserve.check(pairs + unrelated)
    assert all(r.ok(0.75) for r in attacked), attacked
    assert not other.ok(0.75)


def test_a_reply_cut_at_max_tokens_keeps_its_complete_part() -> None:
    cut = '{\n  "text": "Rye & Ember began in 2019. Each member \\"owned\\" a share. For thr'
    assert salvage(cut) == 'Rye & Ember began in 2019. Each member "owned" a share.'
    assert salvage('{"text": "Revenue rose to $41.6 million in the third quar') == (
        "Revenue rose to $41.6 million in the third"
    )
    assert salvage('{"text": "a_10_b_10_c_10') == ""  # nothing usable
    assert salvage("not the expected object") == ""


def test_rule_attacks_on_a_summary_without_final_stop() -> None:
    text = "The Borrowed Field"  # a weak model's "summary"
    for attack in ATTACKS.values():
        result = preserve.compare(text, attack(text), similarity=1.0)
        assert result.new_entities == (), attack(text)
        assert attack(text).startswith(("The Borrowed Field.", "Without any doubt: The"))
