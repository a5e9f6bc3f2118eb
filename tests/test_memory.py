"""Bounded memory: a long sweep never holds its jobs or results at once (live objects counted)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import polars as pl
import pytest

from judgeprobe.cue.judgments import write_judgments
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.runner import run_jobs
from judgeprobe.engine.store import Outcome, Store


@dataclass
class CountedJob:
    """A job that counts how many of its kind are alive."""

    key: str
    judge: str
    document: str
    live: ClassVar[int] = 0

    def __post_init__(self) -> None:
        CountedJob.live += 1

    def __del__(self) -> None:
        CountedJob.live -= 1


def stream(n: int) -> Iterator[CountedJob]:
    for i in range(n):
        yield CountedJob(f"key-{i}", "judge", f"document {i // 8}")


async def test_live_jobs_stay_bounded_on_a_long_stream(tmp_path: Path) -> None:
    total, lanes, max_group = 20_000, 8, 16
    peak = 0

    async def handle(job: CountedJob) -> Outcome:
        nonlocal peak
        peak = max(peak, CountedJob.live)
        await asyncio.sleep(0)
        return Outcome(key=job.key, status="valid", verdict="A")

    store = Store(tmp_path / "s.sqlite")
    with SweepProgress(total, enabled=False) as progress:
        done = await run_jobs(
            stream(total), handle, {"judge": lanes}, store, progress,
            group=lambda j: j.document, max_group=max_group,
        )  # fmt: skip
    assert done.sent == total
    assert store.count("outcomes") == total
    store.close()
    # Queue (2 chunks per lane) + one chunk in each lane + the open chunk, whatever the total.
    assert peak <= (2 * lanes + lanes + 1) * max_group
    gc.collect()
    assert CountedJob.live == 0


def test_judgments_table_is_written_in_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import judgeprobe.cue.judgments as judgments

    made = 0

    def rows() -> Iterator[dict[str, object]]:
        nonlocal made
        for i in range(2_500):
            made += 1
            yield {"run_id": "r", "judge": "j", "item_id": str(i), "verdict": "A", "seed": 0}

    monkeypatch.setattr(judgments, "CHUNK_ROWS", 1_000)
    consumed_at_first_write: list[int] = []
    real = pl.DataFrame.write_parquet

    def spy(self: pl.DataFrame, *args: Any, **kwargs: Any) -> None:
        consumed_at_first_write.append(made)
        real(self, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", spy)
    frame = write_judgments(rows(), tmp_path / "j.parquet", {"j": "fp"})
    assert frame.height == 2_500
    assert frame["fingerprint"].unique().to_list() == ["fp"]
    assert consumed_at_first_write[:3] == [1_000, 2_000, 2_500]  # never all rows at once
