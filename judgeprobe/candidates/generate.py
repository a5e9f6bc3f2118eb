"""One document as a job of the shared runner (``judgeprobe.runs.sweep``): key, texts, outcome.

A job is one document, run in the author's lanes (``judge`` is the author's name), so the
author's concurrency, its circuit breaker and ``[engine] sweep_deadline_s`` apply to the build
as to a sweep. Its key hashes the document with everything that decides its texts (generation
settings, the writers' names and fingerprints, the prompt templates, ``MATERIALS_VERSION``), so
a rerun skips every document already written and redoes one whose texts would change.

``write_document`` writes the texts (each request still cached by its own key) and returns them
in the outcome's ``details``; the set's rows are always rebuilt from there (``stored_materials``),
whether a document was written now or by an earlier, interrupted run. A document is not a
judgment: its outcome is valid (verdict ``""``) when its reference summary was written, Invalid
with the summary request's reason when not (it gives no items and counts towards the breaker).
Either is retryable when one of its requests ended retryable (a timeout, a 5xx), so a rerun asks
that request again and takes every other from the store.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from judgeprobe.candidates.config import CandidatesConfig
from judgeprobe.candidates.llm import Author
from judgeprobe.candidates.materials import (
    TEMPLATES,
    Materials,
    from_record,
    make_materials,
    to_record,
)
from judgeprobe.core.corpus import Document
from judgeprobe.core.files import content_hash
from judgeprobe.core.records import INVALID, NOT_RUN
from judgeprobe.engine.cached import totals
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.prompts import load_template

#: Bump when ``make_materials`` makes other texts from the same requests (extractive summaries,
#: rule attacks): every document is then written again, its requests answered by the store.
MATERIALS_VERSION = 1

#: Settings that choose, check or pair documents but never change a document's texts.
NOT_TEXTS = {
    "corpus", "limit", "min_tokens", "max_tokens", "judge_context", "similarity_threshold",
    "keep_flagged", "author", "paraphraser", "engine",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DocumentJob:
    """One document whose texts the author (``judge``) writes."""

    key: str
    judge: str
    doc: Document


def writers(cfg: CandidatesConfig) -> dict[str, JudgeConfig]:
    """The LLMs a build asks, by role: the author, and the paraphraser when there is one."""
    found = {"author": cfg.author}
    if cfg.paraphraser is not None:
        found["paraphraser"] = cfg.paraphraser
    return found


def document_jobs(
    cfg: CandidatesConfig, docs: Sequence[Document], fingerprints: dict[str, str]
) -> Iterator[DocumentJob]:
    """One job per document, in corpus order (the order of the set's rows)."""
    texts_from = {
        "materials": MATERIALS_VERSION,
        "settings": cfg.model_dump(mode="json", exclude=NOT_TEXTS),
        "writers": {role: [j.name, fingerprints[j.name]] for role, j in writers(cfg).items()},
        "templates": {name: load_template(name).sha256 for name in TEMPLATES.values()},
    }
    for doc in docs:
        yield DocumentJob(
            content_hash({**texts_from, "document": [doc.id, doc.text]}), cfg.author.name, doc
        )


async def write_document(
    job: DocumentJob,
    cfg: CandidatesConfig,
    store: Store,
    author: Endpoint,
    paraphraser: Endpoint | None = None,
) -> Outcome:
    """Write one document's texts through the cached engine; its outcome carries them."""
    asked = [Author(author, store)]
    if paraphraser is not None:
        asked.append(Author(paraphraser, store))
    m = await make_materials(job.doc, asked[0], cfg, asked[1] if paraphraser else None)
    failed = [r for a in asked for r in a.failed.values()]
    fields: dict[str, Any] = {
        "key": job.key,
        "retryable": any(r.retryable for r in failed),
        "details": {**to_record(m), "failed_requests": len(failed)},
        "model": author.info.model,
        **totals([r for a in asked for r in a.results]),
    }
    if m.summary is not None:
        return Outcome(status="valid", verdict="", **fields)
    summary = asked[0].failed.get((TEMPLATES["summary"], cfg.seed))
    why = (summary.invalid_reason if summary else "") or "the reply had no text"
    return Outcome(status="invalid", verdict=INVALID, invalid_reason=f"no summary: {why}", **fields)


def stored_materials(job: DocumentJob, store: Store) -> tuple[Materials, int] | None:
    """A written document's texts and how many of its requests ended Invalid.

    ``None`` when it was not written: the deadline or the author's circuit breaker stopped it.
    """
    outcome = store.get_outcome(job.key)
    if outcome is None or outcome.invalid_reason.startswith(NOT_RUN):
        return None
    return from_record(job.doc, outcome.details), int(outcome.details["failed_requests"])
