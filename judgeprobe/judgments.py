"""Join the plan with the store into the public judgments table (Parquet).

Every planned judgment becomes exactly one row: its verdict in candidate terms, or
``Invalid`` with the reason (including "not run" for requests a stopped sweep never reached).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from judgeprobe.engine.store import Store
from judgeprobe.plan import Planned
from judgeprobe.prompts.baseline import SCREEN_TO_CANDIDATE
from judgeprobe.records import JUDGMENT_SCHEMA

NOT_RUN = "not run: the sweep stopped before this request finished; rerun with --resume"


def judgment_rows(
    run_id: str, planned: Iterable[Planned], store: Store
) -> Iterable[dict[str, Any]]:
    for p in planned:
        result = store.get(p.request.key)
        row: dict[str, Any] = {
            "run_id": run_id,
            "judge": p.judge,
            "protocol": p.protocol,
            "condition": p.condition,
            "item_id": p.item_id,
            "subset": p.subset,
            "order": p.order,
            "seed": p.seed,
            "target": p.target,
            "request_key": p.request.key,
            "label_1": p.label_1,
            "label_2": p.label_2,
            "fingerprint": p.request.fingerprint,
            "template_hash": p.template_hash,
            "verdict": "Invalid",
            "explanation": "",
            "raw_verdict": "",
            "invalid_reason": NOT_RUN,
        }
        if result is not None:
            row.update(
                latency_s=result.latency_s,
                prompt_tokens=result.prompt_tokens,
                completion_tokens=result.completion_tokens,
                attempts=result.attempts,
                reasks=result.reasks,
                model=result.model,
                invalid_reason=result.invalid_reason,
            )
            if result.status == "valid" and result.reply is not None:
                screen = str(result.reply["verdict"])
                row.update(
                    verdict=SCREEN_TO_CANDIDATE[p.order][screen],
                    raw_verdict=screen,
                    explanation=str(result.reply.get("explanation", "")),
                    invalid_reason="",
                )
            else:
                row["explanation"] = result.raw
        yield row


def write_judgments(rows: Iterable[dict[str, Any]], path: Path) -> pl.DataFrame:
    """Write the table atomically: a killed write never leaves a half file behind."""
    frame = pl.DataFrame(list(rows), schema=JUDGMENT_SCHEMA)
    tmp = path.with_name(path.name + ".tmp")
    frame.write_parquet(tmp)
    os.replace(tmp, path)
    return frame
