"""The rubric probe's report sections, and the words its results tables are read in.

Confusion matrices, per-metric bars with intervals, cues in the rubric wording, cross-split transfer
and the transition table.

``rubric_sections(run)`` is what the main report adds when a run directory holds rubric
results (``RUN_DIR/rubric/``); ``write_rubric_report`` renders them alone when there is no cue run.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from judgeprobe.core.cells import MISSING, cell, interval_expr
from judgeprobe.core.files import write_atomic
from judgeprobe.render import plots
from judgeprobe.render.page import Section, figures, render
from judgeprobe.runs.rundir import RunDir

#: The held-out metrics a classifier is scored by, in the order they are shown.
METRICS = ("accuracy", "precision", "recall", "f1", "balanced_accuracy")
#: A transition's name in the tables → its words in the report.
LABELS = {
    "desired_flip": "Desired flip",
    "wrong_direction_flip": "Wrong-direction flip",
    "sticky_satisfy": "Sticky satisfy",
    "sticky_violate": "Sticky violate",
}
#: Columns renamed since a run could have been written (old → new): older run folders render.
RENAMED = {"outcome": "transition"}
FLOATS = ("cv_mean", "cv_sd", "value", "lo", "hi", "percent", "balanced_accuracy", "weight")


def _read(folder: Path, stem: str) -> pl.DataFrame:
    """A results table; number columns stay numbers even when empty in every row."""
    path = folder / f"{stem}.csv"
    if not path.is_file():
        return pl.DataFrame()
    table = pl.read_csv(path, infer_schema_length=None)
    table = table.rename({old: new for old, new in RENAMED.items() if old in table.columns})
    return table.with_columns(pl.col(c).cast(pl.Float64) for c in FLOATS if c in table.columns)


def confusion_png(confusion: pl.DataFrame) -> bytes | None:
    """One 2×2 matrix (rows: judge label, columns: predicted) per judge × classifier × cohort."""
    if confusion.is_empty():
        return None
    cells = confusion.rows(named=True)
    cols = min(6, len(cells))
    rows = -(-len(cells) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.3 * cols, 2.4 * rows), squeeze=False)
    for ax in axes.flat[len(cells) :]:
        ax.axis("off")
    for ax, c in zip(axes.flat, cells, strict=False):
        m = np.array([[c["tp"], c["fn"]], [c["fp"], c["tn"]]])
        ax.imshow(m, cmap="Blues", vmin=0, vmax=max(1, int(m.max())))
        for (i, j), v in np.ndenumerate(m):
            ax.text(
                j,
                i,
                str(v),
                ha="center",
                va="center",
                color="white" if v > m.max() / 2 else "black",
            )
        ax.set_xticks([0, 1], ["sat.", "viol."], fontsize=7)
        ax.set_yticks([0, 1], ["sat.", "viol."], fontsize=7)
        ax.set_title(f"{c['judge']}\n{c['classifier']} · {c['cohort']}", fontsize=8)
    fig.supxlabel("predicted from rubric text", fontsize=8)
    fig.supylabel("judge label", fontsize=8)
    return plots.png(fig)


def word_count_png(labels: pl.DataFrame) -> bytes | None:
    """Histogram of reply lengths per label; None when nothing was labelled."""
    if labels.is_empty():
        return None
    fig, ax = plt.subplots(figsize=(6, 3))
    top = int(labels["words"].to_numpy().max())
    for k, label in enumerate(("satisfied", "violated")):
        words = labels.filter(pl.col("label") == label)["words"].to_numpy()
        ax.hist(words, bins=range(1, top + 2), alpha=0.55, color=plots.COLORS[k], label=label)
    ax.set_xlabel("criterion length (words)")
    ax.set_ylabel("criteria")
    ax.legend(fontsize=7)
    return plots.png(fig)


def transitions_png(transitions: pl.DataFrame) -> bytes | str | None:
    """Bar chart of how verdicts move under each rewrite; None when there are none."""
    if transitions.is_empty():
        return None
    tidy = transitions.select(
        "judge",
        "transition",
        x="perturbation",
        metric=pl.lit("transition"),
        value=pl.col("percent"),
        lo="lo",
        hi="hi",
    )
    return plots.grouped_bars(tidy, ["transition"], "transition", "x", "Transitions (%)")


def _mean_sd(s: dict[str, float | None]) -> str:
    mean, sd = s["cv_mean"], s["cv_sd"]
    if mean is None:
        return MISSING
    return cell(mean) if sd is None else f"{cell(mean)} ± {cell(sd)}"


def classifier_table(metrics: pl.DataFrame) -> pl.DataFrame:
    """The classifier metrics as report text, each with its interval and CV spread."""
    cv = pl.struct("cv_mean", "cv_sd").map_elements(_mean_sd, return_dtype=pl.String)
    return metrics.select(
        "judge",
        "classifier",
        "cohort",
        "metric",
        cv_5fold=cv,
        held_out=interval_expr(),
        n_test="n_test",
    )


def rubric_sections(run: RunDir) -> list[Section]:
    """The rubric probe's sections, or none when the run holds no rubric results."""
    folder = run.rubric.path
    if not folder.is_dir():
        return []
    found = [
        _notes_section(run.rubric.notes),
        _classifier_section(folder),
        _wording_section(run.rubric.labels, folder),
        _transfer_section(folder),
        _transitions_section(folder),
    ]
    return [section for section in found if section is not None]


def _notes_section(path: Path) -> Section | None:
    """What the probe noted about its run, when it wrote notes."""
    notes = path.read_text(encoding="utf-8").split("\n") if path.is_file() else []
    if not any(notes):
        return None
    return Section("Rubric probe: notes", " ".join(n for n in notes if n))


def _classifier_section(folder: Path) -> Section | None:
    """How well the criterion text alone predicts the judge's label."""
    metrics = _read(folder, "classifier_metrics")
    if metrics.is_empty():
        return None
    bars = metrics.filter(pl.col("metric").is_in(METRICS)).rename({"classifier": "x"})
    return Section(
        "Rubric-only probe: the judge's label from the criterion text alone",
        "Classifiers see only the criterion, never the response. 5-fold stratified CV "
        "on the training split (mean ± SD) and the held-out split [95% interval over its "
        "items: score-type for accuracy, precision and recall, the percentile bootstrap for "
        "F1 and balanced accuracy]; positive class = satisfied; WC = class-weighted, BS = "
        "balanced subsample; majority_accuracy = always the training majority.",
        figures(
            rubric_metrics=plots.grouped_bars(
                bars, list(METRICS), "x", "cohort", "Held-out metrics"
            ),
            rubric_confusion=confusion_png(_read(folder, "confusion")),
        ),
        [classifier_table(metrics)],
    )


def _wording_section(labels_path: Path, folder: Path) -> Section | None:
    """The words that lean towards each label, and criterion length by label."""
    labels = pl.read_parquet(labels_path) if labels_path.is_file() else pl.DataFrame()
    if labels.is_empty():
        return None
    words = (
        labels.group_by("judge", "label")
        .agg(n=pl.len(), mean_words=pl.col("words").mean(), median_words=pl.col("words").median())
        .sort("judge", "label")
    )
    terms = _read(folder, "terms")
    return Section(
        "Rubric-only probe: cues in the wording",
        "Largest TF-IDF logistic-regression weights towards each judge label (fit on "
        "all labelled criteria, class-weighted), and criterion length by label.",
        figures(rubric_words=word_count_png(labels)),
        [words, terms.select("judge", "label", "rank", "term", "weight")]
        if not terms.is_empty()
        else [words],
    )


def _transfer_section(folder: Path) -> Section | None:
    """Trained on one split, tested on the other."""
    transfer = _read(folder, "transfer")
    if transfer.is_empty():
        return None
    return Section(
        "Rubric-only probe: cross-split transfer",
        "Balanced accuracy, class-weighted: within a split (held-out part) and trained "
        "on one split, tested on the other. A smaller gap = better generalisation.",
        [],
        [
            transfer.select(
                "judge",
                "classifier",
                "train_split",
                "test_split",
                "within",
                balanced_accuracy=interval_expr("balanced_accuracy"),
                n_test="n_test",
            )
        ],
    )


def _transitions_section(folder: Path) -> Section | None:
    """How often a perturbed pair changes the judge's label, by transition."""
    transitions = _read(folder, "transitions")
    if transitions.is_empty():
        return None
    table = transitions.select(
        "judge",
        "perturbation",
        "transition",
        "count",
        percent=interval_expr("percent", decimals=1, unit="%"),
        detail="detail",
        valid_pairs="valid_pairs",
    )
    return Section(
        "Counterfactual perturbation: does the judge flip?",
        "Response reversal (criterion fixed) and criterion negation (response fixed); "
        "each pair judged before and after. Percent of valid pairs [95% score-type "
        f"interval over items]. Transitions: {', '.join(LABELS.values())}.",
        figures(rubric_transitions=transitions_png(transitions)),
        [table],
    )


def write_rubric_report(run: RunDir) -> Path:
    """The rubric sections alone as report.md / report.html in the run's directory."""
    manifest = run.rubric.manifest()
    judges = ", ".join(f"{j['name']} ({j.get('model', '')})" for j in manifest.judges)
    meta = [
        f"run {manifest.run_id}, created {manifest.created_at}",
        f"judges: {judges or 'labels from the file'}; preset {manifest.config['preset']}, "
        f"seeds {manifest.config['seeds']}",
        f"items {manifest.items['source']} ({manifest.items['n']})",
    ]
    title = f"judgeprobe rubric report — {manifest.run_id}"
    md, page = render(run, title, meta, rubric_sections(run))
    write_atomic(run.report_md, md.encode())
    write_atomic(run.report_html, page.encode())
    return run.report_html
