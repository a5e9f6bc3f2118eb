"""Join the plan with the store into the public judgments table (Parquet).

Every planned judgment becomes exactly one row: its verdict in candidate terms, or
``Invalid`` with the reason (including "not run" for judgments a stopped sweep never reached).
Rows are written in chunks of ``CHUNK_ROWS`` and streamed into one file, so a 10^6-judgment
table never exists as Python rows all at once.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from itertools import count, islice
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from judgeprobe.core.records import INVALID, JUDGMENT_SCHEMA, STOPPED
from judgeprobe.cue.job import Job
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.protocols.quotes import nondiscriminating

CHUNK_ROWS = 50_000
PARTS_PREFIX = ".judgments-"  # the folder of a table being written, beside it


def _quotes(details: dict[str, Any]) -> list[dict[str, Any]]:
    notes = details.get("notes", {})
    return [q for crit in notes.values() for side in crit.values() for q in side.get("quotes", [])]


def _from_outcome(o: Outcome) -> dict[str, Any]:
    row: dict[str, Any] = {
        "verdict": o.verdict,
        "raw_verdict": o.raw_verdict,
        "explanation": o.explanation,
        "invalid_reason": o.invalid_reason,
        "latency_s": o.latency_s,
        "prompt_tokens": o.prompt_tokens,
        "completion_tokens": o.completion_tokens,
        "attempts": o.attempts,
        "reasks": o.reasks,
        "escalations": o.escalations,
        "model": o.model,
        "n_requests": len(o.request_keys),
        "turn1_verdict": o.turn1_verdict,
        "turn1_explanation": o.turn1_explanation,
        "details": orjson.dumps(o.details).decode() if o.details else "",
    }
    if "pressure_target" in o.details:  # resolved from turn 1's verdict (protocols.pressure)
        row["target"] = o.details["pressure_target"]
    score, stated = o.details.get("score_verdict"), o.details.get("stated_verdict")
    if score is not None:
        row.update(score_verdict=score, stated_verdict=stated, verdict_score_agree=score == stated)
    point = o.details.get("pointwise")
    if point is not None:  # a pointwise judge: its scores in candidate terms, and its scale
        row.update(score_1=point["A"], score_2=point["B"], score_min=point["min"],
                   score_max=point["max"])  # fmt: skip
    prob = o.details.get("probability")
    if prob is not None:  # a verdict read from log-probabilities, in candidate terms
        row.update(prob_1=prob["A"], prob_2=prob["B"], prob_tie=prob["tie"])
    if "notes" in o.details:
        quotes = _quotes(o.details)
        criteria, same = nondiscriminating(o.details["notes"])
        row.update(n_quotes=len(quotes), n_fabricated=sum(q["fabricated"] for q in quotes),
                   n_criteria=criteria, n_nondiscriminating=same)  # fmt: skip
    return row


def _lengths(job: Job) -> dict[str, int]:
    """Each candidate's length in characters as shown (the length baselines of metrics.gold)."""
    shown = (len(job.presentation.text_1), len(job.presentation.text_2))
    first, second = shown if job.order == "12" else shown[::-1]
    return {"length_1": first, "length_2": second}


def judgment_rows(run_id: str, jobs: Iterable[Job], store: Store) -> Iterator[dict[str, Any]]:
    """One judgments-table row per planned job, from the outcomes in the store."""
    for job in jobs:
        row: dict[str, Any] = {
            "run_id": run_id,
            "judge": job.judge,
            "protocol": job.protocol.name,
            "condition": job.condition,
            "item_id": job.item_id,
            "subset": job.subset,
            "document_id": job.document_id,
            "domain": job.domain,
            "generator_1": job.generators[0],
            "generator_2": job.generators[1],
            "order": job.order,
            "seed": job.seed,
            "target": job.target,
            "turn1_target": job.turn1_target or "",
            "request_key": job.key,
            "label_1": job.label_1,
            "label_2": job.label_2,
            "source_1": job.source_1,
            "source_2": job.source_2,
            "attack": job.attack,
            "attack_on": job.attack_on,
            "reformat": job.reformat,
            "reformat_on": job.reformat_on,
            "degraded": "" if job.degraded == "none" else job.degraded,
            "template_hash": job.template_hash,
            "verdict": INVALID,
            "invalid_reason": STOPPED,
            "gold": job.gold or "",
            **_lengths(job),
        }
        outcome = store.get_outcome(job.key)
        if outcome is not None:
            row.update(_from_outcome(outcome))
        yield row


def write_judgments(
    rows: Iterable[dict[str, Any]], path: Path, fingerprints: dict[str, str]
) -> pl.DataFrame:
    """Write the table atomically, chunk by chunk, and return it as read back.

    A killed write never leaves a half file behind. What a killed earlier write left (its part
    folder, its unfinished file) is removed first: one run directory has one writer.
    """
    for stale in path.parent.glob(f"{PARTS_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)
    path.with_name(path.name + ".tmp").unlink(missing_ok=True)
    parts = Path(tempfile.mkdtemp(prefix=PARTS_PREFIX, dir=path.parent))
    try:
        stream = iter(rows)
        for n in count():
            chunk = list(islice(stream, CHUNK_ROWS))
            if not chunk and n:
                break
            pl.DataFrame(chunk, schema=JUDGMENT_SCHEMA).with_columns(
                fingerprint=pl.col("judge").replace_strict(fingerprints, default=None)
            ).write_parquet(parts / f"{n:06d}.parquet")
        tmp = path.with_name(path.name + ".tmp")
        pl.scan_parquet(sorted(parts.glob("*.parquet"))).sink_parquet(tmp)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(parts, ignore_errors=True)
    return pl.read_parquet(path)
