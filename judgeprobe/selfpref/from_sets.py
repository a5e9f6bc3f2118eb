"""The self-preference items, from two candidate sets of the same documents.

- ``own``: built with the judge as author (``python -m judgeprobe.candidates --author JUDGE``);
  its ``identical`` rows hold the judge's summary of each document.
- ``other``: built with another model as author and the judge as ``paraphraser``; its
  ``identical`` rows hold the other model's summary, its ``eq_pair`` rows the judge's rewrites
  of that summary (same content, checked by the builder's preservation check).

Two subsets, the judge's text always candidate 1 (the sweep randomises or swaps the order):

- ``self_vs_other``: the judge's summary against the other model's. A preference here mixes
  quality with the judge's taste for its own writing.
- ``self_style``: the judge's rewrite of the other model's summary against that summary:
  identical content, only the wording is the judge's — the control that tells a preference
  for its own style from a preference for better content.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl

from judgeprobe import JudgeprobeError

SUBSETS = ("self_vs_other", "self_style")
TEXTS = ["doc_id", "document", "candidate_1", "generator_1"]


def _texts(frame: pl.DataFrame, subset: str, name: str) -> pl.DataFrame:
    missing = {"subset", *TEXTS} - set(frame.columns)
    if missing:
        raise JudgeprobeError(f"{name}: not a candidate set (no {', '.join(sorted(missing))})")
    rows = frame.filter(pl.col("subset") == subset).unique("doc_id", keep="first")
    extra = [c for c in ("domain", "title") if c in frame.columns]
    return rows.select(*TEXTS, *extra)


def self_preference_items(own: pl.DataFrame, other: pl.DataFrame) -> list[dict[str, Any]]:
    """The items of both subsets for every document the two sets share."""
    mine = _texts(own, "identical", "own set").rename(
        {"candidate_1": "own", "generator_1": "own_by"}
    )
    theirs = _texts(other, "identical", "other set").rename(
        {"candidate_1": "other", "generator_1": "other_by", "document": "other_document"}
    )
    restyled = _texts(other, "eq_pair", "other set").select(
        "doc_id", restyled="candidate_1", restyled_by="generator_1"
    )
    both = mine.join(theirs.select("doc_id", "other", "other_by", "other_document"), on="doc_id")
    if both.is_empty():
        raise JudgeprobeError("own and other set: no document in common (subset identical)")
    if (both["document"] != both["other_document"]).any():
        raise JudgeprobeError("own and other set: a document id names different texts")
    judge = set(both["own_by"])
    if len(judge) != 1 or judge & set(both["other_by"]):
        raise JudgeprobeError(
            f"own and other set: need one author for the own set and another for the other "
            f"(own {sorted(judge)}, other {sorted(set(both['other_by']))})"
        )
    by = set(restyled["restyled_by"])
    if restyled.height and by != judge:
        raise JudgeprobeError(
            f"other set: its eq_pair rewrites are by {sorted(by)}, not the judge {sorted(judge)}"
            " (build it with --paraphraser JUDGE)"
        )
    return list(_rows(both.join(restyled, on="doc_id", how="left").sort("doc_id")))


def _rows(both: pl.DataFrame) -> Iterator[dict[str, Any]]:
    for r in both.iter_rows(named=True):
        base = {
            "document": r["document"], "document_id": r["doc_id"],
            "domain": r.get("domain") or "", "title": r.get("title") or "",
            "candidate_2": r["other"], "generator_2": r["other_by"], "source_2": "other",
            "source_1": "self",
        }  # fmt: skip
        for subset, text, by in (
            (SUBSETS[0], "own", "own_by"),
            (SUBSETS[1], "restyled", "restyled_by"),
        ):
            if r[text] is not None:
                yield base | {"item_id": f"{r['doc_id']}/{subset}", "subset": subset,
                              "candidate_1": r[text], "generator_1": r[by]}  # fmt: skip
