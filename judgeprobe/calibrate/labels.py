"""A run's human labels, from wherever they are, as one table: ``records.LABEL_SCHEMA`` rows.

In order: a ``--labels`` file when one is given, else ``RUN/labels.parquet`` (``judgeprobe
logs --labels`` writes it), else the run's review store (the review page's blind
preference labels and ``annotate import``'s, and the items ``calibrate --draw`` asked for). A
labels file is one of:

- a table of the run's items: ``item_id`` and ``preferred`` (1, 2 or tie, candidate terms) or
  ``label`` (A, B or Tie) or ``score`` (a pointwise item's human score; ``score_1``/``score_2``
  when both its responses are scored), optional ``weight`` (inverse inclusion probability)
  and ``annotator``;
- MT-Bench human judgments (``question_id``, ``model_a``, ``model_b``, ``winner``, ``judge``,
  the layout ``core.layouts`` reads as items): each row is matched to the run's item of that
  question and unordered pair of models, its winner put in that item's candidate terms.

Every row that matches no item of the run is counted and said, never silently dropped.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.core.corpus import read_rows
from judgeprobe.core.layouts import gold_of, mt_bench_winner
from judgeprobe.core.records import LABEL_SCHEMA
from judgeprobe.metrics.calibrated import HUMAN_SCHEMA, MEAN_SCORE, VALUE, WIN_RATE, model_of
from judgeprobe.metrics.load import counted_judgments
from judgeprobe.runs.review import DRAW_SAMPLE, ReviewStore, sample_id
from judgeprobe.runs.rundir import RunDir

LABELS = {**{k: k for k in ("A", "B", "Tie")}, "a": "A", "b": "B", "tie": "Tie"}
CANDIDATE = "candidate"
"""A labels table's extra column: which response a score is for (1 or 2; labels.parquet: 1)."""


@dataclass(frozen=True, slots=True)
class Labels:
    """The labels found, where they came from, and what of them matched nothing."""

    rows: pl.DataFrame  # LABEL_SCHEMA plus ``candidate``
    source: str
    unmatched: int = 0


def _frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    schema = {**LABEL_SCHEMA, CANDIDATE: pl.Int64()}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def from_parquet(path: Path) -> Labels:
    """``RUN/labels.parquet``, checked against the contract."""
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:  # polars raises several unrelated types for bad files
        raise JudgeprobeError(
            f"{path}: not a readable Parquet file ({type(exc).__name__})"
        ) from None
    missing = set(LABEL_SCHEMA) - set(frame.columns)
    if missing:
        raise JudgeprobeError(f"{path}: not a labels table (missing {', '.join(sorted(missing))})")
    try:
        frame = frame.select(list(LABEL_SCHEMA)).cast(LABEL_SCHEMA)  # type: ignore[arg-type]
    except pl.exceptions.PolarsError as exc:
        raise JudgeprobeError(f"{path}: a column of the wrong type ({exc})") from None
    bad = frame.filter(pl.col("label").is_not_null() & ~pl.col("label").is_in(list(VALUE)))
    if bad.height:
        raise JudgeprobeError(f"{path}: label {bad['label'][0]!r} is not A, B or Tie")
    frame = frame.with_columns(pl.lit(1, pl.Int64).alias(CANDIDATE))
    return Labels(_check(frame, str(path)), str(path))


def _check(frame: pl.DataFrame, origin: str) -> pl.DataFrame:
    """Weights positive and finite, scores finite; each row a preference or a score."""
    w = frame["weight"].drop_nulls()
    bad = w.filter(~w.is_finite() | (w <= 0))
    if bad.len():
        raise JudgeprobeError(
            f"{origin}: weight {bad[0]} is not a positive finite number (an inverse inclusion "
            "probability)"
        )
    scores = frame["score"].drop_nulls()
    if (~scores.is_finite()).any():
        raise JudgeprobeError(f"{origin}: score {scores.filter(~scores.is_finite())[0]} is not "
                              "a finite number")  # fmt: skip
    if w.len() and w.len() != frame.height:
        raise JudgeprobeError(f"{origin}: weight given for some rows only (all or none)")
    neither = frame.filter(pl.col("label").is_null() & pl.col("score").is_null())
    if neither.height:
        raise JudgeprobeError(f"{origin}: item {neither['item_id'][0]!r}: no label and no score")
    return frame


def _float(value: object, what: str, where: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return float(str(value)) if not isinstance(value, int | float) else float(value)
    except ValueError:
        raise JudgeprobeError(f"{where}: {what} {value!r} is not a number") from None


def _item_key_row(row: dict[str, object], where: str) -> list[dict[str, object]]:
    """One row of an item-key table as label rows (one per scored response)."""
    item = str(row.get("item_id") or "").strip()
    if not item:
        raise JudgeprobeError(f"{where}: no item_id")
    weight = _float(row.get("weight"), "weight", where)
    who = str(row.get("annotator") or "")
    base = {"item_id": item, "label": None, "score": None, "weight": weight, "annotator": who,
            CANDIDATE: 1}  # fmt: skip
    if row.get("preferred") not in (None, ""):
        try:
            label = gold_of(row["preferred"])
        except ValueError as exc:
            raise JudgeprobeError(f"{where}: {exc}") from None
        return [{**base, "label": label}]
    if row.get("label") not in (None, ""):
        named = LABELS.get(str(row["label"]).strip())
        if named is None:
            raise JudgeprobeError(f"{where}: label {row['label']!r} is not A, B or Tie")
        return [{**base, "label": named}]
    scores = [(k, _float(row.get(f"score_{k}"), f"score_{k}", where)) for k in (1, 2)]
    if any(s is not None for _, s in scores):
        return [{**base, "score": s, CANDIDATE: k} for k, s in scores if s is not None]
    score = _float(row.get("score"), "score", where)
    if score is None:
        raise JudgeprobeError(f"{where}: no preferred, label or score")
    return [{**base, "score": score}]


def _pairs(judgments: pl.DataFrame) -> dict[tuple[str, frozenset[str]], list[tuple[str, str]]]:
    """(document, unordered pair of models) → the run's items there, with candidate 1's model."""
    frame = judgments
    for column in ("generator_1", "generator_2", "source_1", "source_2"):
        if column not in frame.columns:
            frame = frame.with_columns(pl.lit(None, pl.String).alias(column))
    items = frame.group_by("item_id").agg(
        pl.col("document_id").first().cast(pl.String), model_of(1).first().alias("m1"),
        model_of(2).first().alias("m2"),
    )  # fmt: skip
    found: dict[tuple[str, frozenset[str]], list[tuple[str, str]]] = defaultdict(list)
    for item, doc, m1, m2 in items.sort("item_id").iter_rows():
        found[(str(doc), frozenset((m1, m2)))].append((item, m1))
    return found


def _mt_bench_row(
    row: dict[str, object],
    where: str,
    pairs: dict[tuple[str, frozenset[str]], list[tuple[str, str]]],
) -> dict[str, object] | str:
    """A human-judgment row as a label row, or why it matches no single item."""
    a, b = str(row.get("model_a") or ""), str(row.get("model_b") or "")
    try:
        label: str = mt_bench_winner(row.get("winner"))
    except ValueError as exc:
        raise JudgeprobeError(f"{where}: {exc}") from None
    found = pairs.get((str(row.get("question_id")), frozenset((a, b))), [])
    if len(found) != 1:
        return "matches no item" if not found else "matches several items (give item_id)"
    item, first = found[0]
    if first != a and label != "Tie":
        label = "B" if label == "A" else "A"
    who = str(row.get("judge") or "")
    return {"item_id": item, "label": label, "score": None, "weight": None, "annotator": who,
            CANDIDATE: 1}  # fmt: skip


def from_file(path: Path, judgments: pl.DataFrame) -> Labels:
    """A ``--labels`` file (an item-key table or MT-Bench human judgments), in the run's terms."""
    origin = f"--labels {path}"
    if not path.is_file():
        raise JudgeprobeError(f"{origin}: no such file")
    rows = read_rows(path, origin, ("jsonl", "csv", "parquet"))
    if not rows:
        raise JudgeprobeError(f"{origin}: no rows")
    out: list[dict[str, object]] = []
    unmatched = 0
    mt_bench = "winner" in rows[0] and "question_id" in rows[0] and "item_id" not in rows[0]
    pairs = _pairs(judgments) if mt_bench else {}
    for n, row in enumerate(rows, start=1):
        where = f"{origin}: row {n}"
        if mt_bench:
            found = _mt_bench_row(row, where, pairs)
            if isinstance(found, str):
                unmatched += 1
            else:
                out.append(found)
        else:
            out += _item_key_row(row, where)
    frame = _frame(out)
    known = set(judgments["item_id"].unique().to_list())
    if not mt_bench:
        unmatched = frame.filter(~pl.col("item_id").is_in(list(known))).height
        frame = frame.filter(pl.col("item_id").is_in(list(known)))
    if frame.is_empty():
        raise JudgeprobeError(f"{origin}: none of its {len(rows)} rows names an item of the run")
    return Labels(_check(frame, origin), origin, unmatched)


def from_review(run: RunDir, *, drawn_only: bool = False) -> Labels:
    """The review store's preference labels: the blind sample's and the drawn items'.

    ``drawn_only``: the drawn items' alone (what ``calibrate --draw`` asked for).
    """
    if not run.review.is_file():
        return Labels(_frame([]), "the review store (none)")
    samples = [DRAW_SAMPLE] if drawn_only else [s for s in (sample_id(run), DRAW_SAMPLE) if s]
    with ReviewStore(run.review) as store:
        labels = [x for s in samples for x in store.labels(s)]
    rows: list[dict[str, object]] = [
        {"item_id": item, "label": x.preferred, "score": None, "weight": None, "annotator": x.who,
         CANDIDATE: 1}
        for x in labels
        for item in x.item_ids
    ]  # fmt: skip
    people = len({x.who for x in labels})
    return Labels(_frame(rows), f"the review store ({len(labels)} labels by {people} people)")


def condition_judgments(run: RunDir, condition: str) -> pl.DataFrame:
    """The run's counted judgments under ``condition`` (people labelled items without cues)."""
    if not run.judgments.is_file():
        raise JudgeprobeError(f"{run.path}: no {run.judgments.name} (is this a run directory?)")
    judgments = counted_judgments(run.judgments)
    found = judgments.filter(pl.col("condition") == condition)
    if found.is_empty():
        names = ", ".join(sorted(judgments["condition"].unique().to_list())) or "none"
        raise JudgeprobeError(
            f"{run.path}: no judgments under condition {condition!r} (the run has: {names})"
        )
    return found


def label_kind(labels: Labels) -> str:
    """``WIN_RATE`` for preference labels, ``MEAN_SCORE`` for scores; both kinds is an error."""
    prefs = labels.rows["label"].is_not_null().any()
    scores = labels.rows["score"].is_not_null().any()
    if prefs and scores:
        raise JudgeprobeError(f"{labels.source}: both preferences and scores; give one kind")
    return MEAN_SCORE if scores else WIN_RATE


def find_labels(run: RunDir, judgments: pl.DataFrame, labels_file: Path | None) -> Labels:
    """The run's labels: ``--labels`` when given, else labels.parquet, else the review store.

    Labels given on the review page to items ``calibrate --draw`` asked for join a file's or
    labels.parquet's (they were drawn to extend it), unless those carry weights or scores.
    """
    if labels_file is not None:
        found = from_file(labels_file, judgments)
    elif run.labels.is_file():
        found = from_parquet(run.labels)
    else:
        return from_review(run)
    drawn = from_review(run, drawn_only=True)
    kept = found.rows["weight"].is_not_null().any() or found.rows["score"].is_not_null().any()
    if drawn.rows.is_empty() or kept:  # weights or scores: a design the draw is no part of
        return found
    rows = pl.concat([found.rows, drawn.rows])
    n = drawn.rows["item_id"].n_unique()
    return Labels(rows, f"{found.source} and {n} drawn items labelled in the review store",
                  found.unmatched)  # fmt: skip


def human_values(labels: pl.DataFrame) -> pl.DataFrame:
    """Y per (item, candidate) (``metrics.calibrated.HUMAN_SCHEMA``).

    A preference: the most frequent of the item's votes (a draw between labels is Tie), worth
    1, ½, 0 to candidate 1 and the rest to candidate 2. A score: the mean of the response's
    human scores. An item's weight: its rows' mean (null when none is given).
    """
    prefs = labels.filter(pl.col("label").is_not_null())
    votes = prefs.group_by(["item_id", "label"]).agg(pl.len().alias("n"))
    top = votes.filter(pl.col("n") == pl.col("n").max().over("item_id"))
    majority = top.group_by("item_id").agg(
        pl.when(pl.len() == 1).then(pl.col("label").first()).otherwise(pl.lit("Tie")).alias("label")
    )
    weights = labels.group_by("item_id").agg(pl.col("weight").mean())
    one = majority.select(
        "item_id", pl.lit(1, pl.Int64).alias("candidate"),
        pl.col("label").replace_strict(VALUE, return_dtype=pl.Float64).alias("value"),
    )  # fmt: skip
    two = one.with_columns(
        pl.lit(2, pl.Int64).alias("candidate"), (1 - pl.col("value")).alias("value")
    )
    scores = (
        labels.filter(pl.col("score").is_not_null())
        .group_by(["item_id", CANDIDATE])
        .agg(pl.col("score").mean().alias("value"))
        .rename({CANDIDATE: "candidate"})
    )
    out = pl.concat([one, two, scores.select("item_id", "candidate", "value")])
    return out.join(weights, on="item_id", how="left").select(list(HUMAN_SCHEMA)).cast(HUMAN_SCHEMA)  # type: ignore[arg-type]
