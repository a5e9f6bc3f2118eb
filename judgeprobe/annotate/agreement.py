"""Read the annotators' files back and measure agreement (people with people, judges with people).

- each annotator's Tie rate (the paper: 94 and 92 of 100);
- Cohen's kappa between every two annotators on the pairs both labelled (scikit-learn's
  ``cohen_kappa_score`` over A/B/Tie);
- the human majority per pair (a label more than half of its annotators gave; none when they
  split), and how often each judge × protocol × condition verdict on the pair's items equals
  it, beside the judge's own Tie rate on those pairs.

Labels arrive in screen terms (``1``/``2`` as shown) and are turned into candidate terms
(``A``/``B``) with the key ``export`` wrote; they are kept in the run's review store
(``runs.review``) beside the labels given on the review page, and the agreement is computed
over all of them. κ, shares and their intervals over documents are ``metrics.agreement``'s.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.annotate.export import KEY_FIELDS
from judgeprobe.core.records import INVALID, TIE
from judgeprobe.metrics.agreement import (
    Annotations,
    interval,
    kappa,
    kappa_of_table,
    label_pairs,
    majority,
    share,
)
from judgeprobe.metrics.uncertainty import ratio
from judgeprobe.runs.review import Label, ReviewStore, now, sample_id
from judgeprobe.runs.rundir import RunDir

SCREEN = {"A": {"1": "A", "2": "B"}, "B": {"1": "B", "2": "A"}}  # by shown_first


def _read_csv(path: Path) -> list[dict[str, str]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise JudgeprobeError(f"{path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise JudgeprobeError(f"{path}: not UTF-8 text") from None
    return list(csv.DictReader(io.StringIO(text, newline="")))


def read_key(run_dir: Path) -> pl.DataFrame:
    """The export's unblinding key, which maps each pair back to its item and subset."""
    path = RunDir(run_dir).annotation_key
    if not path.is_file():
        raise JudgeprobeError(f"{run_dir}: no annotation/key.csv; run `annotate export` first")
    rows = _read_csv(path)
    if not rows or set(KEY_FIELDS) - set(rows[0]):
        raise JudgeprobeError(f"{path}: not a key written by `annotate export`")
    return pl.DataFrame(rows, schema=dict.fromkeys(KEY_FIELDS, pl.String))


def read_annotations(path: Path, shown_first: dict[str, str]) -> Annotations:
    """Read one annotator's labels file, so agreement can be computed.

    ``pair_id`` and ``label`` columns (``1``, ``2``, ``Tie``; empty = not answered), the annotator
    named by an ``annotator`` column or else the file name.
    """
    rows = _read_csv(path)
    if not rows or not {"pair_id", "label"} <= set(rows[0]):
        raise JudgeprobeError(f"{path}: expected a CSV with pair_id and label columns")
    names = {r.get("annotator", "").strip() for r in rows} - {""}
    if len(names) > 1:
        raise JudgeprobeError(f"{path}: one annotator per file (found {', '.join(sorted(names))})")
    labels: dict[str, str] = {}
    unanswered = 0
    for n, row in enumerate(rows, start=2):
        pair, raw = (row.get("pair_id") or "").strip(), (row.get("label") or "").strip()
        if pair not in shown_first:
            raise JudgeprobeError(f"{path}: line {n}: unknown pair_id {pair!r}")
        if pair in labels:
            raise JudgeprobeError(f"{path}: line {n}: pair {pair} labelled twice")
        if not raw:
            unanswered += 1
            continue
        label = "Tie" if raw.lower() == "tie" else SCREEN[shown_first[pair]].get(raw)
        if label is None:
            raise JudgeprobeError(f"{path}: line {n}: label {raw!r} is not 1, 2 or Tie")
        labels[pair] = label
    return Annotations(names.pop() if names else path.stem, labels, unanswered)


def check_annotators(annotations: Sequence[Annotations]) -> None:
    """One file per annotator: two naming the same person is an error."""
    names = [a.annotator for a in annotations]
    if len(set(names)) != len(names):
        raise JudgeprobeError(f"two files name the same annotator ({', '.join(names)})")


def store_annotations(
    run_dir: Path, key: pl.DataFrame, annotations: Sequence[Annotations], origins: Sequence[str]
) -> list[Annotations]:
    """Keep the files' labels in the run's review store; every label of the sample, by person.

    A person's labels from a file replace that person's earlier ones on this sample (the file
    is their whole answer); labels others gave, on the review page or in other files, stay.
    """
    run = RunDir(run_dir)
    sample = sample_id(run)
    doc_of = dict(zip(key["pair_id"], key["document_id"], strict=True))
    items_of = dict(zip(key["pair_id"], key["item_ids"], strict=True))
    when = now()
    with ReviewStore.of(run) as store:
        for a, origin in zip(annotations, origins, strict=True):
            labels = [
                Label(sample=sample, pair_id=pair, who=a.annotator, preferred=label, when=when,
                      document_id=doc_of[pair], item_ids=tuple(items_of[pair].split(";")),
                      origin=origin)
                for pair, label in a.labels.items()
            ]  # fmt: skip
            store.put_labels(labels, replace_who=a.annotator)
        stored = store.labels(sample)
    found: dict[str, dict[str, str]] = {}
    for x in stored:
        found.setdefault(x.who, {})[x.pair_id] = x.preferred
    return [Annotations(who, labels) for who, labels in sorted(found.items())]


def _row(kind: str, who: str, condition: str, metric: str, value: float,
         interval: tuple[float, float, int], n: int) -> dict[str, object]:  # fmt: skip
    lo, hi, undefined = interval
    return {"kind": kind, "who": who, "condition": condition, "metric": metric, "value": value,
            "lo": lo, "hi": hi, "n": n, "undefined_resamples": undefined}  # fmt: skip


def agreement(
    key: pl.DataFrame, annotations: list[Annotations], judgments: pl.DataFrame,
    resamples: int = 10_000, seed: int = 0,
) -> pl.DataFrame:  # fmt: skip
    """The tidy agreement table: kind, who, condition, metric, value, lo, hi, n."""
    check_annotators(annotations)
    doc_of = dict(zip(key["pair_id"], key["document_id"], strict=True))
    out: list[dict[str, object]] = []
    mean = ratio(0, 1)  # Σ hits / Σ rows
    for a in annotations:
        pairs = sorted(a.labels)
        tie = np.array([a.labels[p] == TIE for p in pairs])
        ci = interval([doc_of[p] for p in pairs], share(tie), mean, resamples, seed)
        out.append(_row("annotator", a.annotator, "", "tie_rate",
                        float(tie.mean()) if pairs else np.nan, ci, len(pairs)))  # fmt: skip
    for x, y in combinations(annotations, 2):
        both = sorted(set(x.labels) & set(y.labels))
        lx, ly = [x.labels[p] for p in both], [y.labels[p] for p in both]
        counts = label_pairs(lx, ly)
        ci = interval([doc_of[p] for p in both], counts, kappa_of_table, resamples, seed)
        out.append(_row("annotators", f"{x.annotator} vs {y.annotator}", "", "cohen_kappa",
                        kappa(lx, ly) if both else np.nan, ci, len(both)))  # fmt: skip
    human = majority(annotations)
    items = key.select("pair_id", "document_id", item_id=pl.col("item_ids").str.split(";"))
    verdicts = (
        items.explode("item_id")
        .filter(pl.col("pair_id").is_in(list(human)))
        .join(judgments.filter(pl.col("verdict") != INVALID), on="item_id", how="inner")
        .with_columns(human=pl.col("pair_id").replace_strict(human, default=None))
    )
    cells = verdicts.group_by("judge", "protocol", "condition", maintain_order=True)
    for (judge, protocol, condition), g in sorted(cells, key=lambda c: tuple(map(str, c[0]))):
        hit = (g["verdict"] == g["human"]).to_numpy()
        tie = (g["verdict"] == TIE).to_numpy()
        docs = g["document_id"].to_list()
        who = f"{judge} {protocol}"
        for metric, values in (("agreement_with_majority", hit), ("judge_tie_rate", tie)):
            ci = interval(docs, share(values), mean, resamples, seed)
            out.append(_row("judge", who, str(condition), metric, float(values.mean()), ci,
                            g["pair_id"].n_unique()))  # fmt: skip
    agreed = sorted(human)
    tie = np.array([human[p] == TIE for p in agreed])
    ci = interval([doc_of[p] for p in agreed], share(tie), mean, resamples, seed)
    out.append(_row("majority", "humans", "", "tie_rate",
                    float(tie.mean()) if agreed else np.nan, ci, len(agreed)))  # fmt: skip
    return pl.DataFrame(out, infer_schema_length=None)
