"""Everything generated for one document: the texts the subsets are paired from."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from judgeprobe.candidates import extractive
from judgeprobe.candidates.config import CandidatesConfig
from judgeprobe.candidates.llm import Author, Text
from judgeprobe.core.corpus import Document
from judgeprobe.text.attacks import ATTACKS

#: The prompt template of each kind of LLM-written text (a new wording is a new version).
TEMPLATES = {
    "summary": "summary_v1",
    "paraphrase": "paraphrase_v1",
    "verbosity": "attack_verbosity_v1",
    "confidence": "attack_confidence_v1",
}


@dataclass
class Materials:
    """One document's texts. ``summary`` is the reference LLM summary (``None`` if it failed)."""

    doc: Document
    source_hash: str
    summary: Text | None = None
    draws: list[Text] = field(default_factory=list)  # two independent samples (same_model)
    paraphrases: list[Text] = field(default_factory=list)  # two paraphrases of the summary
    extractive: dict[str, Text] = field(default_factory=dict)
    attacks: dict[tuple[str, str], Text] = field(default_factory=dict)  # (attack, method)


def to_record(m: Materials) -> dict[str, Any]:
    """A document's texts as plain data (its outcome's ``details`` in the build's store)."""
    return {
        "summary": asdict(m.summary) if m.summary else None,
        "draws": [asdict(t) for t in m.draws],
        "paraphrases": [asdict(t) for t in m.paraphrases],
        "extractive": {method: asdict(t) for method, t in m.extractive.items()},
        "attacks": [[attack, how, asdict(t)] for (attack, how), t in m.attacks.items()],
    }


def from_record(doc: Document, record: dict[str, Any]) -> Materials:
    """The texts ``to_record`` stored, back for ``doc``, so a resumed build asks nothing again."""
    summary = record["summary"]
    return Materials(
        doc=doc,
        source_hash=source_hash(doc.text),
        summary=Text(**summary) if summary else None,
        draws=[Text(**t) for t in record["draws"]],
        paraphrases=[Text(**t) for t in record["paraphrases"]],
        extractive={method: Text(**t) for method, t in record["extractive"].items()},
        attacks={(attack, how): Text(**t) for attack, how, t in record["attacks"]},
    )


def source_hash(text: str) -> str:
    """Content hash of a source document, so a candidate set names exactly what it summarised."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def needs_draws(cfg: CandidatesConfig) -> bool:
    """Whether the configured subsets need several drafts from the same model."""
    return "same_model" in cfg.subsets or (
        "single_relabel" in cfg.subsets and cfg.relabel_opponent == "same_model"
    )


async def _pair(
    author: Author, kind: str, values: dict[str, str], cfg: CandidatesConfig, first_seed: int
) -> list[Text]:
    """Two seeded samples of one prompt; only complete pairs count."""
    texts = await asyncio.gather(
        *(
            author.write(
                TEMPLATES[kind],
                values,
                temperature=cfg.sample_temperature,
                seed=seed,
                max_tokens=cfg.max_tokens_for(kind),
            )
            for seed in (first_seed, first_seed + 1)
        )
    )
    return [t for t in texts if t is not None] if all(texts) else []


async def make_materials(
    doc: Document, author: Author, cfg: CandidatesConfig, paraphraser: Author | None = None
) -> Materials:
    """Generate one document's texts: LLM requests go through the cached engine.

    The paraphrases by ``paraphraser`` when given.
    """
    m = Materials(doc=doc, source_hash=source_hash(doc.text))
    summary_values = {"DOCUMENT": doc.text, "WORDS": str(cfg.words)}
    reference = author.write(
        TEMPLATES["summary"], summary_values, temperature=cfg.temperature, seed=cfg.seed,
        max_tokens=cfg.max_tokens_for("summary"),
    )  # fmt: skip
    if needs_draws(cfg):
        m.summary, m.draws = await asyncio.gather(
            reference, _pair(author, "summary", summary_values, cfg, cfg.seed + 1)
        )
    else:
        m.summary = await reference
    if m.summary is None:
        return m
    words = cfg.extractive_words or extractive.n_words(m.summary.text)
    for method in cfg.methods:
        text = extractive.summarize(doc.text, method, words)
        m.extractive[method] = Text(text, f"sumy:{method}", {"words": words})
    await _rewrites(m, m.summary, author, cfg, paraphraser or author)
    return m


async def _nothing() -> list[Text]:
    return []


async def _rewrites(
    m: Materials, summary: Text, author: Author, cfg: CandidatesConfig, paraphraser: Author
) -> None:
    """Paraphrases and style attacks of the reference summary."""
    values = {"SUMMARY": summary.text}
    paraphrases = (
        _pair(paraphraser, "paraphrase", values, cfg, cfg.seed + 3)
        if "eq_pair" in cfg.subsets
        else _nothing()
    )
    llm_attacks = cfg.attacks if "llm" in cfg.attack_methods else []
    attacks = asyncio.gather(
        *(
            author.write(
                TEMPLATES[attack],
                values,
                temperature=cfg.temperature,
                seed=cfg.seed,
                max_tokens=cfg.max_tokens_for(attack),
            )
            for attack in llm_attacks
        )
    )
    m.paraphrases, written = await asyncio.gather(paraphrases, attacks)
    for attack, text in zip(llm_attacks, written, strict=True):
        if text is not None:
            m.attacks[(attack, "llm")] = text
    if "rule" in cfg.attack_methods:
        for attack in cfg.attacks:
            m.attacks[(attack, "rule")] = Text(ATTACKS[attack](summary.text), f"rule:{attack}")
