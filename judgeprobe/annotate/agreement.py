"""Read the annotators' files back and measure agreement (people with people, judges with people).

- each annotator's Tie rate (the paper: 94 and 92 of 100);
- Cohen's kappa between every two annotators on the pairs both labelled (scikit-learn's
  ``cohen_kappa_score`` over A/B/Tie);
- the human majority per pair (a label more than half of its annotators gave; none when they
  split), and how often each judge × protocol × condition verdict on the pair's items equals
  it, beside the judge's own Tie rate on those pairs.

Labels arrive in screen terms (``1``/``2`` as shown) and are turned into candidate terms
(``A``/``B``) with the key ``export`` wrote. Every interval is a 95% percentile bootstrap that
resamples documents (metrics.md), seeded; a resample on which kappa is undefined (a single
label) is left out, and how many were is reported.
"""

from __future__ import annotations

import csv
import io
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
from sklearn.metrics import cohen_kappa_score

from judgeprobe import JudgeprobeError
from judgeprobe.annotate.export import KEY_FIELDS

LABELS = ("A", "B", "Tie")
SCREEN = {"A": {"1": "A", "2": "B"}, "B": {"1": "B", "2": "A"}}  # by shown_first


@dataclass(frozen=True, slots=True)
class Annotations:
    """One annotator's labels in candidate terms, by pair id."""

    annotator: str
    labels: dict[str, str]
    unanswered: int


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
    path = run_dir / "annotation" / "key.csv"
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


def bootstrap(
    documents: list[str], stat: Callable[[np.ndarray], float], resamples: int, seed: int
) -> tuple[float, float, int]:
    """95% percentile interval of ``stat(rows)`` resampling documents with all their rows.

    The number of resamples where it was undefined.
    """
    docs, index = np.unique(np.asarray(documents), return_inverse=True)
    rows_of = [np.flatnonzero(index == d) for d in range(len(docs))]
    rng = np.random.default_rng(seed)
    values = np.empty(resamples)
    for r in range(resamples):
        drawn = rng.integers(0, len(docs), size=len(docs))
        values[r] = stat(np.concatenate([rows_of[d] for d in drawn]))
    undefined = int(np.isnan(values).sum())
    if undefined == resamples:
        return float("nan"), float("nan"), undefined
    lo, hi = np.nanpercentile(values, [2.5, 97.5])
    return float(lo), float(hi), undefined


def mean_of(values: np.ndarray) -> Callable[[np.ndarray], float]:
    """The statistic "mean of ``values`` over the drawn rows"."""

    def stat(rows: np.ndarray) -> float:
        return float(values[rows].mean())

    return stat


def kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa over A/B/Tie; NaN when it is undefined (one label throughout)."""
    if len(set(a) | set(b)) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(cohen_kappa_score(a, b, labels=list(LABELS)))


def majority(annotations: list[Annotations]) -> dict[str, str]:
    """Each pair's label given by more than half of the annotators who labelled it."""
    votes: dict[str, Counter[str]] = {}
    for a in annotations:
        for pair, label in a.labels.items():
            votes.setdefault(pair, Counter())[label] += 1
    out = {}
    for pair, count in votes.items():
        label, n = count.most_common(1)[0]
        if n * 2 > sum(count.values()):
            out[pair] = label
    return out


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
    names = [a.annotator for a in annotations]
    if len(set(names)) != len(names):
        raise JudgeprobeError(f"two files name the same annotator ({', '.join(names)})")
    doc_of = dict(zip(key["pair_id"], key["document_id"], strict=True))
    out: list[dict[str, object]] = []
    for a in annotations:
        pairs = sorted(a.labels)
        tie = np.array([a.labels[p] == "Tie" for p in pairs], dtype=float)
        ci = bootstrap([doc_of[p] for p in pairs], mean_of(tie),
                       resamples, seed) if pairs else (np.nan, np.nan, 0)  # fmt: skip
        out.append(_row("annotator", a.annotator, "", "tie_rate",
                        float(tie.mean()) if pairs else np.nan, ci, len(pairs)))  # fmt: skip
    for x, y in combinations(annotations, 2):
        both = sorted(set(x.labels) & set(y.labels))
        lx, ly = [x.labels[p] for p in both], [y.labels[p] for p in both]

        def stat(r: np.ndarray, lx: list[str] = lx, ly: list[str] = ly) -> float:
            return kappa([lx[i] for i in r], [ly[i] for i in r])

        ci = bootstrap([doc_of[p] for p in both], stat, resamples, seed) if both else (
            np.nan, np.nan, 0)  # fmt: skip
        out.append(_row("annotators", f"{x.annotator} vs {y.annotator}", "", "cohen_kappa",
                        kappa(lx, ly) if both else np.nan, ci, len(both)))  # fmt: skip
    human = majority(annotations)
    items = key.select("pair_id", "document_id", item_id=pl.col("item_ids").str.split(";"))
    verdicts = (
        items.explode("item_id")
        .filter(pl.col("pair_id").is_in(list(human)))
        .join(judgments.filter(pl.col("verdict") != "Invalid"), on="item_id", how="inner")
        .with_columns(human=pl.col("pair_id").replace_strict(human, default=None))
    )
    cells = verdicts.group_by("judge", "protocol", "condition", maintain_order=True)
    for (judge, protocol, condition), g in sorted(cells, key=lambda c: tuple(map(str, c[0]))):
        hit = (g["verdict"] == g["human"]).cast(pl.Float64).to_numpy()
        tie = (g["verdict"] == "Tie").cast(pl.Float64).to_numpy()
        docs = g["document_id"].to_list()
        who = f"{judge} {protocol}"
        for metric, values in (("agreement_with_majority", hit), ("judge_tie_rate", tie)):
            ci = bootstrap(docs, mean_of(values), resamples, seed)
            out.append(_row("judge", who, str(condition), metric, float(values.mean()), ci,
                            g["pair_id"].n_unique()))  # fmt: skip
    agreed = sorted(human)
    tie = np.array([human[p] == "Tie" for p in agreed], dtype=float)
    ci = bootstrap([doc_of[p] for p in agreed], mean_of(tie), resamples,
                   seed) if agreed else (np.nan, np.nan, 0)  # fmt: skip
    out.append(_row("majority", "humans", "", "tie_rate",
                    float(tie.mean()) if agreed else np.nan, ci, len(agreed)))  # fmt: skip
    return pl.DataFrame(out, infer_schema_length=None)
