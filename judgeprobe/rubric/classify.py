"""Rubric-only probe: can the judge's label be predicted from the criterion text alone?

The classifiers never see the response or the conversation. Each is an sklearn estimator over
a list of criterion texts, so cross-validation, cohorts and transfer treat them alike:

- ``tfidf``: TF-IDF of word 1-2-grams + logistic regression;
- ``embedding``: all-MiniLM-L6-v2 sentence embeddings (offline) + logistic regression;
- ``transformer``: a local sequence-classification model directory fine-tuned on the
  training rows (only when a directory is given; nothing is ever downloaded).

Per (judge, classifier, cohort): 5-fold stratified CV on the training split (mean ± SD) and
a held-out test split with a 95% interval over its items, beside the majority-class accuracy:
accuracy, precision, recall and the majority's accuracy are shares of test items and get the
metrics' score interval (``metrics.uncertainty.interval``: the share bootstrap collapses to a
point at an accuracy of 1 and under-covers on small splits, docs/coverage.md); F1 and balanced
accuracy, not shares, keep the paper's percentile bootstrap (10,000 resamples by default).
Cohorts: ``standard``; ``WC`` (weighted
classification: class weights inverse to frequency); ``BS`` (balanced subsampling: the
majority class subsampled to the minority's size before splitting). The positive class is
``satisfied``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

import numpy as np
import polars as pl
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.dummy import DummyClassifier
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import StratifiedKFold, cross_validate, train_test_split
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer

from judgeprobe import JudgeprobeError
from judgeprobe.metrics.uncertainty import (
    DEFAULT_RESAMPLES,
    Share,
    Stat,
    interval,
    nan_to_none,
    percentile_interval,
    ratio,
    safe_ratio,
)
from judgeprobe.report.rubric import METRICS

COHORTS = ("standard", "WC", "BS")
FOLDS = 5
TEST_SHARE = 0.2
TOP_TERMS = 10
MIN_PER_LABEL = 5  # fewer of either label and a stratified split or 5-fold CV is meaningless


def _stats() -> dict[str, Stat]:
    """Each metric as a function of confusion sums [..., (tp, fp, fn, tn)]."""

    def part(s: np.ndarray, i: int) -> np.ndarray:
        return s[..., i].astype(np.float64)

    def recall(s: np.ndarray) -> np.ndarray:
        return safe_ratio(part(s, 0), part(s, 0) + part(s, 2))

    def specificity(s: np.ndarray) -> np.ndarray:
        return safe_ratio(part(s, 3), part(s, 3) + part(s, 1))

    return {
        "accuracy": lambda s: safe_ratio(part(s, 0) + part(s, 3), s.sum(-1).astype(np.float64)),
        "precision": lambda s: safe_ratio(part(s, 0), part(s, 0) + part(s, 1)),
        "recall": recall,
        "f1": lambda s: safe_ratio(2 * part(s, 0), 2 * part(s, 0) + part(s, 1) + part(s, 2)),
        "balanced_accuracy": lambda s: (recall(s) + specificity(s)) / 2,
    }


STATS = _stats()


def confusion(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """(tp, fp, fn, tn) with ``satisfied`` = 1 as the positive class."""
    tn, fp, fn, tp = confusion_matrix(y_true, y_pred, labels=[0, 1]).ravel()
    return np.array([tp, fp, fn, tn])


def _fold_scores(model: Any, texts: Sequence[str], y: np.ndarray) -> dict[str, float]:
    """Every metric of one cross-validation fold (a ``cross_validate`` scorer)."""
    return scores(confusion(y, np.asarray(model.predict(texts))))


def scores(counts: np.ndarray) -> dict[str, float]:
    """Every classifier metric from one confusion count."""
    return {m: float(STATS[m](counts)) for m in METRICS}


_PATTERNS = np.eye(4)  # a test item is one of tp, fp, fn, tn
# Beside them, what the shares count: correct, one, predicted positive, actually positive.
_TP, _FP, _FN, _TN = _PATTERNS.T
_COUNTED = np.column_stack([_PATTERNS, _TP + _TN, np.ones(4), _TP + _FP, _TP + _FN])
SHARES = {"accuracy": Share(4, 5), "precision": Share(0, 6), "recall": Share(0, 7)}
"""The metrics that are shares of test items, as shares of ``_COUNTED``'s columns."""


def intervals(counts: np.ndarray, resamples: int, seed: int) -> dict[str, tuple[float, float]]:
    """95% intervals over test items: score intervals for shares, else the percentile bootstrap."""
    return {
        m: interval(_COUNTED, counts, SHARES[m])
        if m in SHARES
        else percentile_interval(_PATTERNS, counts, STATS[m], resamples, seed)
        for m in METRICS
    }


# --- classifiers ------------------------------------------------------------------------


class TransformerClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """Fine-tunes a local sequence-classification model directory on the training texts."""

    def __init__(
        self,
        model_dir: str,
        class_weight: str | None = None,
        epochs: int = 3,
        batch_size: int = 16,
        learning_rate: float = 5e-5,
        seed: int = 0,
    ) -> None:
        self.model_dir = model_dir
        self.class_weight = class_weight
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.seed = seed

    def _batches(self, texts: Sequence[str]) -> Any:
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start : start + self.batch_size])
            yield start, self.tokenizer_(chunk, padding=True, truncation=True, return_tensors="pt")

    def fit(self, texts: Sequence[str], y: np.ndarray) -> TransformerClassifier:
        """Fine-tune the local transformer on the training texts (sklearn estimator API)."""
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        torch.manual_seed(self.seed)
        self.tokenizer_ = AutoTokenizer.from_pretrained(self.model_dir, local_files_only=True)
        self.model_ = AutoModelForSequenceClassification.from_pretrained(
            self.model_dir, num_labels=2, local_files_only=True
        )
        y = np.asarray(y)
        self.classes_ = np.array([0, 1])
        counts = np.bincount(y, minlength=2).astype(np.float64)
        weight = None
        if self.class_weight == "balanced":
            weight = torch.tensor(len(y) / (2 * np.maximum(counts, 1)), dtype=torch.float32)
        loss_fn = torch.nn.CrossEntropyLoss(weight=weight)
        optimiser = torch.optim.AdamW(self.model_.parameters(), lr=self.learning_rate)
        order = np.random.default_rng(self.seed)
        self.model_.train()
        for _ in range(self.epochs):
            perm = order.permutation(len(texts))
            shuffled = [texts[i] for i in perm]
            for start, batch in self._batches(shuffled):
                target = torch.tensor(y[perm[start : start + self.batch_size]])
                loss = loss_fn(self.model_(**batch).logits, target)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
        return self

    def predict(self, texts: Sequence[str]) -> np.ndarray:
        """Labels for ``texts`` from the fine-tuned model."""
        import torch

        self.model_.eval()
        out = []
        with torch.no_grad():
            for _, batch in self._batches(list(texts)):
                out.append(self.model_(**batch).logits.argmax(-1).numpy())
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


class EstimatorFactory(Protocol):
    """Makes a fresh estimator; ``weighted``: classes weighted by their inverse frequency."""

    def __call__(self, *, weighted: bool) -> Any:
        """A new, unfitted estimator."""


def _logistic(*, weighted: bool) -> LogisticRegression:
    return LogisticRegression(max_iter=2000, class_weight="balanced" if weighted else None)


def tfidf_estimator(*, weighted: bool) -> Pipeline:
    """The bag-of-words baseline classifier: TF-IDF n-grams into a logistic regression."""
    vectoriser = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, lowercase=True)
    return make_pipeline(vectoriser, _logistic(weighted=weighted))


def embedding_estimator(texts: Sequence[str]) -> EstimatorFactory:
    """Embeds every text once; the estimator looks its rows up."""
    from judgeprobe.text.embeddings import encode

    distinct = sorted(set(texts))
    vectors = encode(distinct)
    index = {t: i for i, t in enumerate(distinct)}

    def lookup(batch: Sequence[str]) -> np.ndarray:
        rows: np.ndarray = vectors[[index[t] for t in batch]]
        return rows

    def make(*, weighted: bool) -> Pipeline:
        return make_pipeline(FunctionTransformer(lookup), _logistic(weighted=weighted))

    return make


def _transformer(model_dir: str, seed: int, *, weighted: bool) -> TransformerClassifier:
    return TransformerClassifier(model_dir, "balanced" if weighted else None, seed=seed)


def classifiers(
    names: Sequence[str], texts: Sequence[str], transformer_dir: str | None, seed: int
) -> dict[str, EstimatorFactory]:
    """Estimator factories (``weighted`` → a fresh estimator) for the named classifiers."""
    out: dict[str, EstimatorFactory] = {}
    for name in names:
        if name == "tfidf":
            out[name] = tfidf_estimator
        elif name == "embedding":
            try:
                out[name] = embedding_estimator(texts)
            except ImportError:
                raise JudgeprobeError(
                    "the embedding classifier needs the embeddings extra "
                    "(pip install -e '.[embeddings]'); or choose --classifiers tfidf"
                ) from None
        elif name == "transformer":
            if not transformer_dir:
                raise JudgeprobeError("the transformer classifier needs --transformer DIR")
            out[name] = partial(_transformer, transformer_dir, seed)
        else:
            raise JudgeprobeError(
                f"unknown classifier {name!r} (known: tfidf, embedding, transformer)"
            )
    return out


# --- evaluation -------------------------------------------------------------------------


@dataclass
class ProbeResults:
    """Tidy frames written next to the rubric judgments and read by the report."""

    metrics: list[dict[str, Any]] = field(default_factory=list)
    confusion: list[dict[str, Any]] = field(default_factory=list)
    transfer: list[dict[str, Any]] = field(default_factory=list)
    terms: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def frames(self) -> dict[str, pl.DataFrame]:
        """The probe's results as named tables for the report and CSV files."""
        return {
            "classifier_metrics": pl.DataFrame(self.metrics),
            "confusion": pl.DataFrame(self.confusion),
            "transfer": pl.DataFrame(self.transfer),
            "terms": pl.DataFrame(self.terms),
        }


def balanced_subsample(y: np.ndarray, seed: int) -> np.ndarray:
    """Indices keeping every minority row and as many majority rows, drawn at random."""
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(y == c) for c in (0, 1)]
    size = min(len(g) for g in groups)
    keep = np.concatenate([rng.choice(g, size, replace=False) for g in groups])
    return np.sort(keep)


def _fit_predict(
    make: EstimatorFactory,
    texts: np.ndarray,
    y: np.ndarray,
    train: np.ndarray,
    test: np.ndarray,
    *,
    weighted: bool,
) -> np.ndarray:
    model = make(weighted=weighted)
    model.fit(list(texts[train]), y[train])
    return np.asarray(model.predict(list(texts[test])))


def _cross_validated(
    estimator: Any, texts: np.ndarray, labels: np.ndarray, folds: int, seed: int
) -> dict[str, np.ndarray]:
    """Each metric over stratified folds of the training split (empty below two folds)."""
    if folds < 2:
        return {m: np.array([]) for m in METRICS}
    splitter = StratifiedKFold(folds, shuffle=True, random_state=seed)
    fitted = cross_validate(
        estimator, list(texts), labels, cv=splitter, scoring=_fold_scores, error_score="raise"
    )
    return {m: fitted[f"test_{m}"] for m in METRICS}


def _majority_accuracy(
    train: np.ndarray, y_train: np.ndarray, test: np.ndarray, y_test: np.ndarray
) -> tuple[float, float, float]:
    """The majority class's held-out accuracy with its score interval."""
    majority = DummyClassifier(strategy="most_frequent").fit(train, y_train)
    hits = (y_test == majority.predict(test)).astype(np.float64)
    lo, hi = interval(
        np.array([[1.0, 1.0], [0.0, 1.0]]),
        np.array([hits.sum(), len(hits) - hits.sum()]),
        ratio(0, 1),
    )
    return float(hits.mean()), lo, hi


def evaluate(
    judge: str,
    name: str,
    make: EstimatorFactory,
    texts: np.ndarray,
    y: np.ndarray,
    cohort: str,
    out: ProbeResults,
    resamples: int,
    seed: int,
) -> None:
    """CV on the training split and the held-out test with intervals, for one cohort."""
    rows = balanced_subsample(y, seed) if cohort == "BS" else np.arange(len(y))
    t, labels = texts[rows], y[rows]
    train, test = train_test_split(
        np.arange(len(labels)), test_size=TEST_SHARE, stratify=labels, random_state=seed
    )
    weighted = cohort == "WC"
    folds = min(FOLDS, int(np.bincount(labels[train], minlength=2).min()))
    cv = _cross_validated(make(weighted=weighted), t[train], labels[train], folds, seed)
    pred = _fit_predict(make, t, labels, train, test, weighted=weighted)
    counts = confusion(labels[test], pred)
    point, ci = scores(counts), intervals(counts, resamples, seed)
    cell = {"judge": judge, "classifier": name, "cohort": cohort}
    for m in METRICS:
        values = cv[m][~np.isnan(cv[m])]
        out.metrics.append(
            {
                **cell,
                "metric": m,
                "cv_mean": float(values.mean()) if values.size else None,
                "cv_sd": float(values.std(ddof=1)) if values.size > 1 else None,
                "value": nan_to_none(point[m]),
                "lo": nan_to_none(ci[m][0]),
                "hi": nan_to_none(ci[m][1]),
                "n_test": len(test),
                "folds": folds,
            }
        )
    value, lo, hi = _majority_accuracy(t[train], labels[train], t[test], labels[test])
    out.metrics.append(
        {**cell, "metric": "majority_accuracy", "cv_mean": None, "cv_sd": None, "value": value,
         "lo": nan_to_none(lo), "hi": nan_to_none(hi), "n_test": len(test), "folds": folds}
    )  # fmt: skip
    tp, fp, fn, tn = (int(c) for c in counts)
    out.confusion.append({**cell, "tp": tp, "fp": fp, "fn": fn, "tn": tn})


def transfer(
    judge: str,
    name: str,
    make: EstimatorFactory,
    texts: np.ndarray,
    y: np.ndarray,
    splits: np.ndarray,
    out: ProbeResults,
    resamples: int,
    seed: int,
) -> None:
    """Balanced accuracy within each split (held-out part) and across splits (WC weights)."""
    for source in sorted(set(splits)):
        src = np.flatnonzero(splits == source)
        if np.bincount(y[src], minlength=2).min() < MIN_PER_LABEL:
            out.notes.append(
                f"{judge}: split {source!r} has under {MIN_PER_LABEL} of a label; no transfer"
            )
            continue
        for target in sorted(set(splits)):
            if source == target:
                train, test = train_test_split(
                    src, test_size=TEST_SHARE, stratify=y[src], random_state=seed
                )
            else:
                train, test = src, np.flatnonzero(splits == target)
            counts = confusion(y[test], _fit_predict(make, texts, y, train, test, weighted=True))
            value = scores(counts)["balanced_accuracy"]
            lo, hi = intervals(counts, resamples, seed)["balanced_accuracy"]
            out.transfer.append(
                {
                    "judge": judge,
                    "classifier": name,
                    "train_split": source,
                    "test_split": target,
                    "within": source == target,
                    "balanced_accuracy": nan_to_none(value),
                    "lo": nan_to_none(lo),
                    "hi": nan_to_none(hi),
                    "n_test": len(test),
                }
            )


def top_terms(judge: str, texts: np.ndarray, y: np.ndarray, out: ProbeResults) -> None:
    """The TF-IDF logistic regression's largest weights towards each label (all rows)."""
    model = tfidf_estimator(weighted=True).fit(list(texts), y)
    vocab = model[0].get_feature_names_out()
    coef = model[-1].coef_[0]
    for label, order in (("satisfied", np.argsort(-coef)), ("violated", np.argsort(coef))):
        for rank, i in enumerate(order[:TOP_TERMS], start=1):
            out.terms.append(
                {
                    "judge": judge,
                    "label": label,
                    "rank": rank,
                    "term": str(vocab[i]),
                    "weight": float(coef[i]),
                }
            )


def run_probe(
    labels: pl.DataFrame,
    names: Sequence[str] = ("tfidf", "embedding"),
    transformer_dir: str | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> ProbeResults:
    """Every classifier × cohort per judge, on a frame with judge, criterion, label, split."""
    out = ProbeResults()
    factories = classifiers(names, labels["criterion"].to_list(), transformer_dir, seed)
    for (judge,), part in labels.group_by(["judge"], maintain_order=True):
        texts = part["criterion"].to_numpy().astype(object)
        y = (part["label"] == "satisfied").cast(pl.Int64).to_numpy()
        counts = np.bincount(y, minlength=2)
        if counts.min() < MIN_PER_LABEL:
            out.notes.append(
                f"{judge}: {counts[1]} satisfied and {counts[0]} violated labels; the rubric-only "
                f"probe needs at least {MIN_PER_LABEL} of each, so it was skipped"
            )
            continue
        top_terms(str(judge), texts, y, out)
        splits = part["split"].to_numpy().astype(object)
        for name, make in factories.items():
            for cohort in COHORTS:
                evaluate(str(judge), name, make, texts, y, cohort, out, resamples, seed)
            if len(set(splits)) > 1:
                transfer(str(judge), name, make, texts, y, splits, out, resamples, seed)
    return out
