"""Draw the human-check sample of a run: pairs of summaries, stratified, blind to everything else.

The paper's appendix A-A checks, on 100 documents, that people also find most pairs
near-equivalent. The sample shows annotators the document and the two summaries only: no
provenance label, no cue, no judge output, and the summaries in a seeded random order per
pair (people have position bias too). Items whose texts are identical for an annotator (the
two ``single_relabel`` items of a document differ only by their labels) are one pair.

Strata are (subset, domain); each gets a share of ``n`` proportional to its size (largest
remainders), drawn without replacement with a seeded generator, so the same run, ``n`` and
seed always give the same sample.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson
import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.annotate.form import render_form
from judgeprobe.core.corpus import load_items
from judgeprobe.core.records import Item
from judgeprobe.metrics.load import counted_judgments
from judgeprobe.runs.rundir import RunDir

KEY_FIELDS = ("pair_id", "shown_first", "document_id", "subset", "domain", "item_ids")


@dataclass(frozen=True, slots=True)
class Pair:
    """One pair to annotate; ``shown_first`` is the candidate shown as Summary 1."""

    pair_id: str
    document: str
    candidate_1: str
    candidate_2: str
    shown_first: str  # "A" or "B"
    document_id: str
    subset: str
    domain: str
    item_ids: tuple[str, ...]

    @property
    def summaries(self) -> tuple[str, str]:
        """Summary 1 and Summary 2 as the annotator sees them."""
        if self.shown_first == "A":
            return self.candidate_1, self.candidate_2
        return self.candidate_2, self.candidate_1


def _content(item: Item) -> str:
    body = orjson.dumps([item.document, item.candidate_1, item.candidate_2])
    return hashlib.sha256(body).hexdigest()


def allocate(sizes: Sequence[int], n: int) -> list[int]:
    """Proportional shares of ``n`` over strata of ``sizes`` (largest remainders, capped)."""
    total = sum(sizes)
    if n >= total:
        return list(sizes)
    exact = [n * s / total for s in sizes]
    shares = [int(e) for e in exact]
    by_remainder = sorted(range(len(sizes)), key=lambda i: (shares[i] - exact[i], i))
    for i in by_remainder[: n - sum(shares)]:
        shares[i] += 1
    return shares


def sample_pairs(items: Sequence[Item], judged: set[str], n: int, seed: int) -> list[Pair]:
    """``n`` distinct pairs among the judged items, stratified by (subset, domain)."""
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        if item.item_id in judged:
            groups[_content(item)].append(item)
    if not groups:
        raise JudgeprobeError("the run's judgments name no item of its items file")
    strata: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, members in sorted(groups.items()):
        strata[(members[0].subset, members[0].domain)].append(key)
    names = sorted(strata)
    rng = np.random.default_rng(seed)
    chosen: list[str] = []
    for name, share in zip(names, allocate([len(strata[s]) for s in names], n), strict=True):
        keys = strata[name]
        chosen += [keys[i] for i in sorted(rng.choice(len(keys), size=share, replace=False))]
    order = rng.permutation(len(chosen))
    first = rng.integers(0, 2, size=len(chosen))
    width = max(3, len(str(len(chosen))))
    pairs = []
    for number, (i, flip) in enumerate(zip(order, first, strict=True), start=1):
        members = groups[chosen[i]]
        head = members[0]
        pairs.append(
            Pair(
                pair_id=f"p{number:0{width}d}",
                document=head.document,
                candidate_1=head.candidate_1,
                candidate_2=head.candidate_2,
                shown_first="B" if flip else "A",
                document_id=head.document_id,
                subset=head.subset,
                domain=head.domain,
                item_ids=tuple(m.item_id for m in members),
            )
        )
    return pairs


def _csv(rows: list[dict[str, str]], fields: Sequence[str]) -> str:
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def read_judgments(run_dir: Path) -> pl.DataFrame:
    """A run's judgments table, with a one-line error when the directory is not a run."""
    path = RunDir(run_dir).judgments
    if not path.is_file():
        raise JudgeprobeError(f"{run_dir}: no {path.name} (is it a run directory?)")
    return counted_judgments(path)


def run_items(run_dir: Path, items: str | None) -> tuple[pl.DataFrame, list[Item]]:
    """A run's judgments and its items (from the manifest's config unless ``items`` is given)."""
    judgments = read_judgments(run_dir)
    run = RunDir(run_dir)
    if items is None:
        manifest = run.manifest_or_none()
        items = manifest.items_source if manifest is not None else None
    if items is None:
        raise JudgeprobeError(
            f"{run_dir}: {run.manifest_file.name} does not name the items; pass --items"
        )
    return judgments, load_items(items)


def export(
    run_dir: Path, n: int, seed: int, items: str | None = None, *, force: bool = False
) -> tuple[Path, int]:
    """Write ``RUN_DIR/annotation/``: a blind form for annotators and its unblinding key.

    ``pairs.csv`` and ``form.html`` for annotators, ``key.csv`` (how each pair maps back to
    candidates and items) for ``import``. Returns the folder and the number of pairs drawn.
    """
    if n < 1:
        raise JudgeprobeError("--n must be at least 1")
    run = RunDir(run_dir)
    out = run.annotation
    if run.annotation_key.exists() and not force:
        raise JudgeprobeError(
            f"{out} already holds a sample (labels may refer to it); pass --force to redraw"
        )
    judgments, all_items = run_items(run_dir, items)
    judged = set(judgments["item_id"].unique().to_list())
    pairs = sample_pairs(all_items, judged, n, seed)
    rows = [
        {"pair_id": p.pair_id, "document": p.document, "summary_1": p.summaries[0],
         "summary_2": p.summaries[1], "label": ""}
        for p in pairs
    ]  # fmt: skip
    key = [
        {"pair_id": p.pair_id, "shown_first": p.shown_first, "document_id": p.document_id,
         "subset": p.subset, "domain": p.domain, "item_ids": ";".join(p.item_ids)}
        for p in pairs
    ]  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    run.annotation_pairs.write_text(_csv(rows, list(rows[0])), encoding="utf-8")
    run.annotation_key.write_text(_csv(key, KEY_FIELDS), encoding="utf-8")
    digest = hashlib.sha256(run.annotation_pairs.read_bytes()).hexdigest()[:12]
    run.annotation_form.write_text(render_form(rows, digest), encoding="utf-8")
    return out, len(pairs)
