"""Explanation drift.

1 − cosine of sentence embeddings (all-MiniLM-L6-v2, offline), or a lexical fallback (1 − Jaccard of
word sets) when no embedding model is installed; the metric name says which (``delta_e_same`` or
``delta_e_same_lexical``).
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl

from judgeprobe.metrics.units import Drift
from judgeprobe.text.embeddings import available, encode


def lexical_drift(a: list[str], b: list[str]) -> np.ndarray:
    """1 − |A ∩ B| / |A ∪ B| over lower-cased word sets, vectorised in Polars."""
    if not a:
        return np.zeros(0)
    words = pl.DataFrame({"a": a, "b": b}).select(
        pl.col(c).str.to_lowercase().str.extract_all(r"\w+").list.unique() for c in ("a", "b")
    )
    both = words.select(
        inter=pl.col("a").list.set_intersection("b").list.len(),
        union=pl.col("a").list.set_union("b").list.len(),
    )
    sim = both.select(pl.when(pl.col("union") > 0).then(pl.col("inter") / pl.col("union"))
                      .otherwise(1.0)).to_series()  # fmt: skip
    return 1.0 - sim.to_numpy()


def embedding_drift(a: list[str], b: list[str]) -> np.ndarray:
    """1 − cos(E(a), E(b)) with L2-normalised embeddings."""
    if not a:
        return np.zeros(0)
    similarity: np.ndarray = np.einsum("ij,ij->i", encode(a), encode(b))
    return 1.0 - similarity


def default_drift() -> tuple[Drift, str]:
    """The embedding drift when its model is installed, else the labelled lexical fallback.

    ``JUDGEPROBE_DRIFT=lexical`` chooses the fallback without loading the model (the self-test and
    quick checks, where the model's load time would dominate).
    """
    if os.environ.get("JUDGEPROBE_DRIFT") == "lexical" or not available():
        return lexical_drift, "delta_e_same_lexical"
    return embedding_drift, "delta_e_same"
