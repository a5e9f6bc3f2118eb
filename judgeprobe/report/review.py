"""The report's sections on a run's human review (``judgeprobe review``, ``annotate import``).

What the reviewers decided about the generated texts (how many rejected, why, and the
judgments that leaves out of every table and the card), and the judges' agreement with the
human preference labels: Cohen's κ with its 95% interval over documents
(``metrics.agreement.human_kappa``).
"""

from __future__ import annotations

import polars as pl

from judgeprobe.metrics.agreement import human_kappa, kappa_table
from judgeprobe.metrics.load import LoadedRun, load_judgments
from judgeprobe.render.page import Section
from judgeprobe.runs.review import is_rejected, read_decisions, rejected, review_sentences


def left_out(run: LoadedRun) -> int:
    """How many of the run's judgments show a text the review rejected."""
    decisions = read_decisions(run.dir)
    if not rejected(decisions) or not run.dir.judgments.is_file():
        return 0
    return load_judgments(run.dir.judgments).filter(is_rejected(decisions)).height


def review_sections(run: LoadedRun, resamples: int, seed: int) -> list[Section]:
    """The review's sections; none for a run nobody reviewed."""
    decisions = read_decisions(run.dir)
    out = []
    sentences = review_sentences(decisions, left_out(run))
    if sentences:
        gone = rejected(decisions)
        table = pl.DataFrame(
            [{"condition": d.condition or "(items file)", "item_id": d.item_id, "note": d.note,
              "who": d.who, "when": d.when} for d in gone],
            schema=dict.fromkeys(("condition", "item_id", "note", "who", "when"), pl.String),
        )  # fmt: skip
        out.append(
            Section(
                "Human review of the generated texts",
                "Every text the run generated (style attacks, injected sentences, degraded "
                "copies, a candidate set's rewrites and paraphrases) as reviewers decided in "
                "`judgeprobe review`; the rejected ones:",
                tables=[table] if gone else [],
                sentences=sentences,
            )
        )
    kappa, pairs, people = human_kappa(run.dir, run.judgments, resamples, seed)
    if pairs:
        out.append(
            Section(
                "Human preference labels: agreement with the judge",
                f"{pairs} blind pairs labelled by {people} "
                f"{'person' if people == 1 else 'people'} (1, 2 or tie, in candidate terms); "
                "Cohen's κ between the human majority and each judge's Blind verdicts on the "
                "pairs' items, with a 95% percentile bootstrap over documents (resamples where "
                "κ is undefined are left out and counted).",
                tables=[kappa_table(kappa)],
                sentences=[] if kappa.height else ["No Blind verdict on the labelled pairs."],
            )
        )
    return out
