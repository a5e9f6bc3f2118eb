"""Pair one document's texts into the candidate subsets, one row per item.

- ``llm_vs_extractive``: the LLM summary (1) against each extractive summary (2).
- ``eq_pair``: two paraphrases of the LLM summary by the same LLM (the author, or the build's
  ``paraphraser``) that differ from each other; any preference is cue-driven.
- ``same_model``: two independent, seeded samples from the same LLM.
- ``single_relabel``: the LLM summary against a fixed opponent (a same-model draw by default,
  the first extractive summary when the draws failed), once labelled ``LLM`` and once
  ``TradML``; the texts are the same in both rows, only the provenance labels differ.
- ``identical``: the LLM summary against itself.

Rows with the LLM summary as candidate 1 carry its preserved LLM-written attacks in
``verbosity_1``/``confidence_1``: the Verbosity/Confidence conditions judge those instead of
the rule transform.
- ``attack_<attack>_<llm|rule>``: a style attack of the LLM summary (1, the target) against the
  summary itself (2), i.e. the ``identical`` item with candidate 1 attacked.

Content-controlled pairs carry the paper's nominal labels (1 = ``LLM``, 2 = ``TradML``) so the
True/Flip conditions apply to them; the real generators are in ``generator_1``/``generator_2``.
Rewrites (paraphrases, attacks) that fail the preservation check are dropped, or kept with
``preserved = false`` and the reason in ``flag`` when the build keeps flagged items.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from judgeprobe.candidates.config import CandidatesConfig
from judgeprobe.candidates.llm import Text
from judgeprobe.candidates.materials import Materials
from judgeprobe.text.preserve import Preservation

LLM, TRADML = "LLM", "TradML"


def _params(text: Text) -> str:
    return orjson.dumps(text.params, option=orjson.OPT_SORT_KEYS).decode()


class RowMaker:
    """Rows for one document, with its shared provenance filled in."""

    def __init__(self, m: Materials, fingerprint: str, cfg: CandidatesConfig) -> None:
        self.m = m
        self.fingerprint = fingerprint
        self.cfg = cfg
        self.flagged = 0

    def row(
        self,
        subset: str,
        variant: str,
        pair: tuple[Text, Text],
        labels: tuple[str, str] = (LLM, TRADML),
        check: Preservation | None = None,
        prepared: dict[str, str] | None = None,
        also: str = "",
        **extra: Any,
    ) -> dict[str, Any] | None:
        """One item, or ``None`` when flagged (a failed ``check``, or ``also``) and dropped."""
        found = [check.problems(self.cfg.similarity_threshold) if check else "", also]
        problem = "; ".join(p for p in found if p)
        if problem:
            self.flagged += 1
            if not self.cfg.keep_flagged:
                return None
        doc = self.m.doc
        return {
            "item_id": f"{doc.id}/{subset}/{variant}" if variant else f"{doc.id}/{subset}",
            "subset": subset,
            "document": doc.text,
            "candidate_1": pair[0].text,
            "candidate_2": pair[1].text,
            "source_1": labels[0],
            "source_2": labels[1],
            "domain": doc.domain,
            "title": doc.title,
            "doc_id": doc.id,
            "generator_1": pair[0].generator,
            "generator_2": pair[1].generator,
            "params_1": _params(pair[0]),
            "params_2": _params(pair[1]),
            "model_fingerprint": self.fingerprint,
            "source_hash": self.m.source_hash,
            "similarity": check.similarity if check else None,
            "preserved": not problem,
            "flag": problem,
            **(prepared or {}),
            **extra,
        }


def _worst(checks: list[Preservation]) -> Preservation:
    """One check standing for several rewrites: lowest similarity, every new item."""
    return Preservation(
        similarity=min(c.similarity for c in checks),
        new_numbers=tuple(sorted({n for c in checks for n in c.new_numbers})),
        new_entities=tuple(sorted({e for c in checks for e in c.new_entities})),
    )


def document_rows(
    m: Materials, checks: dict[str, Preservation], fingerprint: str, cfg: CandidatesConfig
) -> tuple[list[dict[str, Any]], int]:
    """Every item of one document and how many were flagged.

    ``checks`` maps ``paraphrase_0``/``paraphrase_1`` and ``<attack>_<method>`` to the
    preservation check of that rewrite against the summary.
    """
    maker = RowMaker(m, fingerprint, cfg)
    rows = [r for r in _rows(maker, m, checks, cfg) if r is not None]
    return rows, maker.flagged


def _rows(
    mk: RowMaker, m: Materials, checks: dict[str, Preservation], cfg: CandidatesConfig
) -> Iterator[dict[str, Any] | None]:
    s = m.summary
    if s is None:
        return
    # The summary's LLM attacks that kept its content, for every row with it as candidate 1.
    prepared = {
        f"{attack}_1": text.text
        for (attack, how), text in m.attacks.items()
        if how == "llm" and not checks[f"{attack}_llm"].problems(cfg.similarity_threshold)
    }
    if "llm_vs_extractive" in cfg.subsets:
        for method in cfg.methods:
            pair = (s, m.extractive[method])
            yield mk.row("llm_vs_extractive", method, pair, (LLM, TRADML), prepared=prepared)
    if "eq_pair" in cfg.subsets and m.paraphrases:
        check = _worst([checks["paraphrase_0"], checks["paraphrase_1"]])
        # Two paraphrases that came out as one text are no pair that "varies superficially":
        # that item would be the identical subset under another name.
        first, second = (" ".join(p.text.split()).lower() for p in m.paraphrases)
        same = "the two paraphrases are the same text" if first == second else ""
        yield mk.row("eq_pair", "", (m.paraphrases[0], m.paraphrases[1]), check=check, also=same)
    if "same_model" in cfg.subsets and m.draws:
        yield mk.row("same_model", "", (m.draws[0], m.draws[1]))
    if "single_relabel" in cfg.subsets:
        opponent = m.extractive.get(cfg.relabel_opponent)
        if cfg.relabel_opponent == "same_model":
            # A document whose draws failed falls back to its first extractive summary, so the
            # subset never silently loses it; generator_2 records which opponent it got.
            opponent = m.draws[0] if m.draws else next(iter(m.extractive.values()), None)
        if opponent is not None:
            yield mk.row(
                "single_relabel", "as-llm", (s, opponent), (LLM, TRADML), prepared=prepared
            )
            yield mk.row(
                "single_relabel", "as-tradml", (s, opponent), (TRADML, LLM), prepared=prepared
            )
    if "identical" in cfg.subsets:
        yield mk.row("identical", "", (s, s), prepared=prepared)
    for (attack, how), text in sorted(m.attacks.items()):
        key = f"{attack}_{how}"
        yield mk.row(
            f"attack_{key}", "", (text, s), check=checks[key],
            attack=attack, attack_method=how, attack_target="A",
            base_item_id=f"{m.doc.id}/identical",
        )  # fmt: skip
