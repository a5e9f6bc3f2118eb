"""Make a candidate set from documents: the pipeline behind ``python -m judgeprobe.candidates``.

corpus → length filter → LLM summaries, draws, paraphrases and attacks (cached engine requests)
+ extractive summaries (sumy) + rule-based attacks → preservation check → subsets →
``OUT/candidates.parquet`` (set ``items = "OUT/candidates.parquet"`` in a sweep config) and
``OUT/build.json`` (counts, dropped documents, timing). The documents go through the shared
sweep runner (``judgeprobe.runs.sweep``), one job each (``candidates.generate``), which writes
``OUT/manifest.json`` first. ``OUT/store.sqlite`` caches every request and every written
document: rerunning an interrupted or finished build sends only what is missing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.candidates.candidate_set import (
    SET_VERSION,
    candidate_frame,
    write_candidate_set,
)
from judgeprobe.candidates.config import CandidatesConfig
from judgeprobe.candidates.generate import (
    DocumentJob,
    document_jobs,
    stored_materials,
    write_document,
    writers,
)
from judgeprobe.candidates.materials import TEMPLATES, Materials
from judgeprobe.candidates.subsets import document_rows
from judgeprobe.core.corpus import Document, load_documents
from judgeprobe.core.files import bytes_hash, write_json
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.runner import RunSummary
from judgeprobe.engine.settings import lanes_of
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.engine.tokenizer import TokenCounter
from judgeprobe.prompts import load_template
from judgeprobe.runs.manifest import provenance, server_record
from judgeprobe.runs.sweep import JobType, judges_open, run_sweep
from judgeprobe.text import preserve
from judgeprobe.text.tokens import approx_tokens

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
    not_written: list[str] = field(default_factory=list)  # ids the run stopped before (no set)

    def as_dict(self, cfg: CandidatesConfig) -> dict[str, Any]:
        """The build's manifest record, so a candidate set can be traced to its config."""
        return {
            "set_version": SET_VERSION,
            "candidates": str(self.path),
            "sha256": self.sha256,
            "config_digest": cfg.digest(),
            "config": _public_config(cfg),
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


def _public_config(cfg: CandidatesConfig) -> dict[str, Any]:
    """The config as the build's records show it."""
    return cfg.model_dump(mode="json", exclude={"author": {"api_key_env"}})


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


class BuildIncomplete(JudgeprobeError):
    """Documents were not written (the deadline, the author's breaker): no set is written."""


async def make_candidate_set(
    cfg: CandidatesConfig, out: Path, console: Console | None = None
) -> CandidateSetStats:
    """Make the candidate set in ``out`` (a folder) and return what was done.

    The documents run through the shared sweep runner, one job each (``candidates.generate``);
    the set is written only once every document is, else ``BuildIncomplete`` says why.
    """
    console = console or Console(stderr=True, quiet=True)
    start = time.monotonic()
    docs = load_documents(cfg.corpus, cfg.limit)
    stats = CandidateSetStats(path=out / SET_FILE)
    async with judges_open(list(writers(cfg).values()), cfg.engine, console) as endpoints:
        endpoint = endpoints[cfg.author.name]
        counter = TokenCounter(endpoint)
        try:
            stats.token_method = counter.method
            kept = _length_filter(docs, await counter.count([d.text for d in docs]), cfg, stats)
            stats.documents = len(kept)
            stats.context_window = cfg.judge_context or await counter.context_window()
        finally:
            await counter.close()
        console.print(
            f"{len(kept)} of {len(docs)} documents are {cfg.min_tokens}-{cfg.max_tokens} tokens "
            f"({counter.method}); author {endpoint.info.model} "
            f"(fingerprint {endpoint.info.fingerprint})"
        )
        kind = candidates_job_type(cfg, kept, endpoints, stats)
        swept = await run_sweep(kind, endpoints, cfg.engine, out, console)
    if stats.not_written:
        raise BuildIncomplete(_incomplete(stats, swept.summary, cfg))
    frame = swept.judgments
    if frame.is_empty():
        raise JudgeprobeError("the build produced no items (every LLM summary failed?)")
    write_candidate_set(frame, stats.path)
    stats.sha256 = bytes_hash(stats.path.read_bytes())
    stats.subsets = dict(sorted(Counter(frame["subset"].to_list()).items()))
    stats.wall_s = time.monotonic() - start
    write_json(out / "build.json", stats.as_dict(cfg))
    return stats


def candidates_job_type(
    cfg: CandidatesConfig,
    kept: list[tuple[Document, int]],
    endpoints: dict[str, Endpoint],
    stats: CandidateSetStats,
) -> JobType[DocumentJob]:
    """The build as a job type of the shared runner: one job per kept document.

    Its rows are the candidate set's, rebuilt from every document's stored texts in corpus
    order; what they count (flagged rewrites, failed requests, documents without a summary or
    not written at all) goes into ``stats``.
    """
    docs = [d for d, _ in kept]
    paraphraser = endpoints[cfg.paraphraser.name] if cfg.paraphraser else None

    async def make(job: DocumentJob, endpoint: Endpoint, store: Store) -> Outcome:
        return await write_document(job, cfg, store, endpoint, paraphraser)

    def rows(jobs: Iterable[DocumentJob], store: Store, fp: dict[str, str]) -> pl.DataFrame:
        materials: list[Materials] = []
        for job in jobs:
            found = stored_materials(job, store)
            if found is None:
                stats.not_written.append(job.doc.id)
                continue
            materials.append(found[0])
            stats.failed_requests += found[1]
        items: list[dict[str, Any]] = []
        for m, checks in zip(materials, _checks(materials), strict=True):
            if m.summary is None:
                stats.no_summary.append(m.doc.id)
            doc_rows, flagged = document_rows(m, checks, fp[cfg.author.name], cfg)
            items += doc_rows
            stats.flagged += flagged
        _check_context(items, {d.id: n for d, n in kept}, stats)
        return candidate_frame(items)

    return JobType(
        plan=lambda fp: document_jobs(cfg, docs, fp),
        make=make,
        rows=rows,
        manifest=lambda found: _manifest(cfg, len(docs), found),
        planned=len(docs),
        lanes=lanes_of([cfg.author]),
        progress=("writing", "documents"),
    )


def _manifest(
    cfg: CandidatesConfig, documents: int, endpoints: dict[str, Endpoint]
) -> dict[str, Any]:
    """What the build is about to make, written before anything is sent (``manifest.json``)."""
    return {
        **provenance("candidates", cfg.digest(), TEMPLATES.values()),
        "run_id": f"candidates-{cfg.digest()[:8]}",  # every run directory's manifest has one
        "set_version": SET_VERSION,
        "config": _public_config(cfg),
        "documents": documents,
        "writers": [server_record(n, e) for n, e in endpoints.items()],
    }


def _incomplete(stats: CandidateSetStats, summary: RunSummary, cfg: CandidatesConfig) -> str:
    """Why documents were not written, and what to do, in one line."""
    todo = "rerun the same command to continue"
    if summary.tripped:
        why = "; ".join(f"author {n}: circuit breaker: {w}" for n, w in summary.tripped.items())
        todo = "fix the author, then rerun the same command"
    elif summary.deadline_hit:
        why = f"the sweep deadline ({cfg.engine.sweep_deadline_s:g}s) stopped sending"
    else:
        why = "they did not finish"
    return (
        f"{len(stats.not_written)} of {stats.documents} documents were not written ({why}); "
        f"no set was written to {stats.path}: {todo} (written documents are kept)"
    )


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
