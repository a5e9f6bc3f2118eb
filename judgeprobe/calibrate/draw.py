"""The next items to label: a seeded random order of the run's items, the labelled ones skipped.

The order is one permutation of the run's item ids (sorted, then shuffled with ``seed``), so
the same run, seed and labels always give the same draw, and labelling the first K and drawing
again gives the next K. Taking the first unlabelled items of a random order is a uniform random
sample of the unlabelled items, so a labelled set grown this way (or grown this way from a
uniform random sample, such as the review page's blind sample) stays a uniform random sample:
what the calibrated estimate assumes. Each drawn item gets an opaque pair id (the page never
sees item ids, which may name the models) and a seeded side for its first candidate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np
import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.core.files import atomic_path
from judgeprobe.runs.review import DRAW_FIELDS, Drawn
from judgeprobe.runs.rundir import RunDir


def draw(items: Iterable[str], labelled: set[str], k: int, seed: int) -> list[Drawn]:
    """The first ``k`` unlabelled items in the seeded order of ``items``."""
    if k < 1:
        raise JudgeprobeError("--draw must be at least 1")
    universe = sorted(set(items))
    order = np.random.default_rng(seed).permutation(len(universe))
    chosen = [universe[i] for i in order if universe[i] not in labelled][:k]
    return [
        Drawn(
            f"d{_digest(seed, item)[:12]}",
            item,
            "A" if int(_digest(seed, item, "side")[0], 16) % 2 else "B",
        )
        for item in chosen
    ]


def _digest(seed: int, *parts: str) -> str:
    return hashlib.sha256("\x00".join((str(seed), *parts)).encode()).hexdigest()


def write_draw(run: RunDir, drawn: list[Drawn]) -> None:
    """``RUN/annotation/draw.csv``: what the review page serves first (replacing any earlier)."""
    run.annotation.mkdir(parents=True, exist_ok=True)
    frame = pl.DataFrame(
        [(d.pair_id, d.item_id, d.shown_first) for d in drawn],
        schema=dict.fromkeys(DRAW_FIELDS, pl.String),
        orient="row",
    )
    with atomic_path(run.label_draw) as tmp:
        frame.write_csv(tmp)
