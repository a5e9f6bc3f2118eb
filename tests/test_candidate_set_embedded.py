"""The builder against the real embedded judge (Gemma 3 270M on llama.cpp): LLM summary and
paraphrase through the engine, and one small real build that the sweep then reads."""

from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl
import pytest

from judgeprobe.candidates.assemble import make_candidate_set
from judgeprobe.candidates.config import SUBSETS, CandidatesConfig
from judgeprobe.candidates.extractive import OfflineTokenizer
from judgeprobe.candidates.llm import Author
from judgeprobe.core.corpus import load_documents
from judgeprobe.engine.probe import probe_endpoint
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.engine.store import Store
from judgeprobe.text import embeddings

pytestmark = pytest.mark.embedded

JUDGE = "gemma3-270m"


async def _summary_and_paraphrase(url: str, store_path: Path) -> tuple[str, str, str, int]:
    endpoint = await probe_endpoint(JudgeConfig(name=JUDGE, url=url), EngineConfig())
    store = Store(store_path)
    try:
        author = Author(endpoint, store)
        doc = load_documents("bundled:corpus", limit=1)[0]
        summary = await author.write(
            "summary_v1", {"DOCUMENT": doc.text, "WORDS": "40"}, temperature=0.0, seed=0,
            max_tokens=128,
        )  # fmt: skip
        assert summary is not None, "the summary request ended Invalid"
        paraphrase = await author.write(
            "paraphrase_v1", {"SUMMARY": summary.text}, temperature=0.8, seed=3, max_tokens=128
        )
        assert paraphrase is not None, "the paraphrase request ended Invalid"
        again = await author.write(
            "summary_v1", {"DOCUMENT": doc.text, "WORDS": "40"}, temperature=0.0, seed=0,
            max_tokens=128,
        )  # fmt: skip
        assert again is not None
        return summary.text, paraphrase.text, again.text, store.count("results")
    finally:
        store.close()
        await endpoint.close()


def test_llm_summary_and_paraphrase(embedded_judge: str, tmp_path: Path) -> None:
    summary, paraphrase, cached, n_results = asyncio.run(
        _summary_and_paraphrase(embedded_judge, tmp_path / "store.sqlite")
    )
    assert len(summary.split()) >= 5
    assert len(paraphrase.split()) >= 5
    assert paraphrase != summary
    assert cached == summary
    assert n_results == 2  # the repeat came from the store


@pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")
def test_real_build_of_two_documents(embedded_judge: str, tmp_path: Path) -> None:
    cfg = CandidatesConfig(limit=2, words=40, author=JudgeConfig(name=JUDGE, url=embedded_judge))
    stats = asyncio.run(make_candidate_set(cfg, tmp_path / "set"))
    assert stats.token_method == "judge tokenizer"
    assert stats.context_window
    assert stats.context_window >= 2048
    frame = pl.read_parquet(stats.path)
    assert stats.documents == 2
    assert not stats.no_summary
    assert {"llm_vs_extractive", "identical", "single_relabel"} <= set(frame["subset"])
    assert set(frame["subset"]) <= set(SUBSETS) | {
        f"attack_{a}_{m}" for a in ("verbosity", "confidence") for m in ("llm", "rule")
    }
    extractive = frame.filter(pl.col("subset") == "llm_vs_extractive")
    assert extractive.height == 8
    sentences = OfflineTokenizer().to_sentences
    for llm, extract in zip(extractive["candidate_1"], extractive["candidate_2"], strict=True):
        # within the LLM summary's word count, or the single top sentence that alone exceeds it
        assert len(extract.split()) <= len(llm.split()) or len(sentences(extract)) == 1
