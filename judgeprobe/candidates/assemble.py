"""Make a candidate set from documents: the pipeline behind ``python -m judgeprobe.candidates``.

corpus → length filter → LLM summaries, draws, paraphrases and attacks (cached engine requests)
+ extractive summaries (sumy) + rule-based attacks → preservation check → subsets →
``OUT/candidates.parquet`` (set ``items = "OUT/candidates.parquet"`` in a sweep config) and
``OUT/build.json`` (counts, dropped documents, timing). ``OUT/store.sqlite`` caches every
request: rerunning an interrupted or finished build sends only what is missing.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.candidates import preserve
from judgeprobe.candidates.candidate_set import (
    SET_VERSION,
    candidate_frame,
    write_candidate_set,
)
from judgeprobe.candidates.config import CandidatesConfig
from judgeprobe.candidates.llm import Author
from judgeprobe.candidates.materials import Materials, make_materials
from judgeprobe.candidates.subsets import document_rows
from judgeprobe.candidates.tokens import TokenCounter, approx_tokens
from judgeprobe.corpus import Document, load_documents
from judgeprobe.engine.request import Sampling
from judgeprobe.files import bytes_hash, write_json
from judgeprobe.prompts import load_template
from judgeprobe.rundir import open_store
from judgeprobe.sweep import probe_judges

SET_FILE = "candidates.parquet"


@dataclass
class CandidateSetStats:
    """What a build did; also written to ``build.json``."""

    path: Path
    documents: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # id → tokens, outside the filter
    token_method: str = ""
    subsets: dict[str, int] = field(default_factory=dict)
    flagged: int = 0
    failed_requests: int = 0
    no_summary: list[str] = field(default_factory=list)
    context_window: int | None = None
    over_context: list[str] = field(default_factory=list)
    sha256: str = ""
    wall_s: float = 0.0

    def as_dict(self, cfg: CandidatesConfig) -> dict[str, Any]:
        """The build's manifest record, so a candidate set can be traced to its config."""
        return {
            "set_version": SET_VERSION,
            "candidates": str(self.path),
            "sha256": self.sha256,
            "config_digest": cfg.digest(),
            "config": cfg.model_dump(mode="json", exclude={"author": {"api_key_env"}}),
            "documents": self.documents,
            "dropped_by_length": self.dropped,
            "token_method": self.token_method,
            "subsets": self.subsets,
            "items": sum(self.subsets.values()),
            "flagged": self.flagged,
            "failed_requests": self.failed_requests,
            "documents_without_summary": self.no_summary,
            "context_window": self.context_window,
            "items_over_context": self.over_context,
            "wall_s": round(self.wall_s, 1),
        }


def _length_filter(
    docs: list[Document], tokens: list[int], cfg: CandidatesConfig, stats: CandidateSetStats
) -> list[tuple[Document, int]]:
    kept = []
    for doc, n in zip(docs, tokens, strict=True):
        if cfg.min_tokens <= n <= cfg.max_tokens:
            kept.append((doc, n))
        else:
            stats.dropped[doc.id] = n
    if not kept:
        raise JudgeprobeError(
            f"no document is {cfg.min_tokens}-{cfg.max_tokens} tokens long "
            f"({len(docs)} measured with the {stats.token_method}); change min_tokens/max_tokens"
        )
    return kept


def _checks(materials: list[Materials]) -> list[dict[str, preserve.Preservation]]:
    """Preservation of every rewrite against its summary, embedded in one batch."""
    keys: list[tuple[int, str]] = []
    pairs: list[tuple[str, str]] = []
    for i, m in enumerate(materials):
        if m.summary is None:
            continue
        rewrites = {f"paraphrase_{k}": t for k, t in enumerate(m.paraphrases)}
        rewrites |= {f"{a}_{how}": t for (a, how), t in m.attacks.items()}
        for key, text in rewrites.items():
            keys.append((i, key))
            pairs.append((m.summary.text, text.text))
    out: list[dict[str, preserve.Preservation]] = [{} for _ in materials]
    for (i, key), result in zip(keys, preserve.check(pairs), strict=True):
        out[i][key] = result
    return out


def _judge_prompt_overhead() -> int:
    """Tokens of the judge's own instructions around the document and the two summaries."""
    return sum(approx_tokens(load_template(n).text) for n in ("baseline_v1", "materials_v1"))


async def make_candidate_set(
    cfg: CandidatesConfig, out: Path, console: Console | None = None
) -> CandidateSetStats:
    """Make the candidate set in ``out`` (a folder) and return what was done."""
    console = console or Console(stderr=True, quiet=True)
    start = time.monotonic()
    docs = load_documents(cfg.corpus, cfg.limit)
    stats = CandidateSetStats(path=out / SET_FILE)
    endpoint = (await probe_judges([cfg.author], cfg.engine, console))[cfg.author.name]
    counter = TokenCounter(endpoint)
    para_endpoint = None
    try:
        if cfg.paraphraser is not None:
            found = await probe_judges([cfg.paraphraser], cfg.engine, console)
            para_endpoint = found[cfg.paraphraser.name]
        stats.token_method = counter.method
        kept = _length_filter(docs, await counter.count([d.text for d in docs]), cfg, stats)
        stats.documents = len(kept)
        stats.context_window = cfg.judge_context or await counter.context_window()
        console.print(
            f"{len(kept)} of {len(docs)} documents are {cfg.min_tokens}-{cfg.max_tokens} tokens "
            f"({counter.method}); author {endpoint.info.model} "
            f"(fingerprint {endpoint.info.fingerprint})"
        )
        store = open_store(out)
        try:
            author = Author(endpoint, store)
            paraphraser = Author(para_endpoint, store) if para_endpoint else None
            materials = await _generate([d for d, _ in kept], author, cfg, console, paraphraser)
            stats.failed_requests = author.invalid + (paraphraser.invalid if paraphraser else 0)
        finally:
            store.close()
    finally:
        await counter.close()
        await endpoint.close()
        if para_endpoint is not None:
            await para_endpoint.close()
    rows: list[dict[str, Any]] = []
    for m, checks in zip(materials, _checks(materials), strict=True):
        if m.summary is None:
            stats.no_summary.append(m.doc.id)
        doc_rows, flagged = document_rows(m, checks, endpoint.info.fingerprint, cfg)
        rows += doc_rows
        stats.flagged += flagged
    if not rows:
        raise JudgeprobeError("the build produced no items (every LLM summary failed?)")
    _check_context(rows, dict((d.id, n) for d, n in kept), stats)
    frame = candidate_frame(rows)
    write_candidate_set(frame, stats.path)
    stats.sha256 = bytes_hash(stats.path.read_bytes())
    stats.subsets = dict(sorted(Counter(frame["subset"].to_list()).items()))
    stats.wall_s = time.monotonic() - start
    write_json(out / "build.json", stats.as_dict(cfg))
    return stats


async def _generate(
    docs: list[Document], author: Author, cfg: CandidatesConfig, console: Console,
    paraphraser: Author | None = None,
) -> list[Materials]:  # fmt: skip
    """Every document's texts, a few documents at a time, in corpus order."""
    slots = asyncio.Semaphore(max(1, cfg.author.concurrency))
    done = 0
    step = max(1, len(docs) // 20)

    async def one(doc: Document) -> Materials:
        nonlocal done
        async with slots:
            m = await make_materials(doc, author, cfg, paraphraser)
        done += 1
        if done % step == 0 or done == len(docs):
            console.print(f"documents {done}/{len(docs)}")
        return m

    return list(await asyncio.gather(*(one(d) for d in docs)))


def _check_context(
    rows: list[dict[str, Any]], doc_tokens: dict[str, int], stats: CandidateSetStats
) -> None:
    """Items whose judge prompt (plus a default reply) would not fit the judge's context."""
    if stats.context_window is None:
        return
    budget = stats.context_window - Sampling().max_tokens - _judge_prompt_overhead()
    for row in rows:
        size = doc_tokens[row["doc_id"]] + approx_tokens(row["candidate_1"])
        if size + approx_tokens(row["candidate_2"]) > budget:
            stats.over_context.append(row["item_id"])
