"""The report of a judge-logs run: what the judge already said, in the log's own nouns.

Nothing in a log was intervened on, so the report has none of a live run's sections (a cue, the
sensitivity condition, Blind against a cue, EDR and ND): it opens with what the logs show (each
judge's verdicts in the terms the log keeps, then each observed row of the card in a sentence),
then the run, the verdicts counted, the commonest Invalid reasons, the observed card and what
``calibrate`` added. Which response was shown first is spoken of only where the log keeps it: a
judge whose scores were paired into verdicts, or a log that does not say, gets no position claim.

It reads only the columns it counts, so a log of 10^6 judgments costs its card and a few
group-bys (``bench/logs_1m.py``); ``metrics_ci.csv`` holds the card's figures.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
from rich.console import Console

from judgeprobe.card.calibrated import calibrated_sections
from judgeprobe.card.observed import observed_card
from judgeprobe.card.record import ObservedBase
from judgeprobe.card.rows import Card
from judgeprobe.card.section import observed_card_sections, win_rate_section
from judgeprobe.card.speech import method_over_questions
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.core.estimate import shown
from judgeprobe.core.files import atomic_path, write_atomic
from judgeprobe.core.records import INVALID
from judgeprobe.metrics import observed
from judgeprobe.metrics.compute import TIDY_SCHEMA
from judgeprobe.metrics.flags import invalid_reasons
from judgeprobe.metrics.load import counted_judgments
from judgeprobe.metrics.table import table_console
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.prompts.task import Task
from judgeprobe.render.page import Section, render
from judgeprobe.report.headline import MIN_VALID, ONE_SIDED
from judgeprobe.runs.rundir import Manifest, RunDir

COLUMNS = [*observed.COLUMNS, "score_1", "invalid_reason"]
"""The judgments-table columns the report reads (the card's, the scores, the Invalid reasons)."""
SHOWN = ("12", "21")
"""The orders a log can keep: candidate A shown first, or B."""


def verdict_counts(j: pl.DataFrame) -> pl.DataFrame:
    """Per judge × protocol: judgments, questions, A, B, Tie, Invalid, and the shown order.

    ``ordered``: valid verdicts whose shown order the log keeps (not a score pair); ``first`` and
    ``second``: those that picked the response shown first, or second; ``scored``: judgments
    paired from two scores.
    """
    v, o = pl.col("verdict"), pl.col("order")
    valid = v != INVALID
    ordered = valid & o.is_in(SHOWN) & pl.col("score_1").is_null()
    first = ((v == "A") & (o == "12")) | ((v == "B") & (o == "21"))
    second = ((v == "B") & (o == "12")) | ((v == "A") & (o == "21"))
    return (
        j.lazy()
        .group_by("judge", "protocol")
        .agg(
            judgments=pl.len(),
            questions=pl.col("document_id").n_unique(),
            A=(v == "A").sum(),
            B=(v == "B").sum(),
            Tie=(v == "Tie").sum(),
            Invalid=(~valid).sum(),
            scored=pl.col("score_1").is_not_null().sum(),
            ordered=ordered.sum(),
            first=(ordered & first).sum(),
            second=(ordered & second).sum(),
            ordered_tie=(ordered & (v == "Tie")).sum(),
        )
        .sort("judge", "protocol")
        .collect()
    )


def _counted(n: int, noun: str) -> str:
    """``1 question``, ``2 questions``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _order_sentence(r: dict[str, int], task: Task) -> str:
    """What a cell's verdicts say of the shown order: only what the log keeps of it."""
    valid = r["judgments"] - r[INVALID]
    if r["scored"]:
        return (
            f"It scored each {task.response} alone and its verdicts are its scores paired (the "
            "higher wins): no order reached it, so its position is not measured."
        )
    if not r["ordered"]:
        return (
            f"The log does not keep which {task.response} was shown first, so its position is "
            "not measured."
        )
    unknown = valid - r["ordered"]
    left = f"; {unknown} without a known order left out" if unknown else ""
    said = (
        f"Where the log keeps the shown order ({r['ordered']} valid verdicts{left}), it picked "
        f"the first-shown {task.response} {r['first']} times, the second-shown {r['second']} and "
        f"Tie {r['ordered_tie']}."
    )
    side, k = max((("first", r["first"]), ("second", r["second"])), key=lambda x: x[1])
    if r["ordered"] >= MIN_VALID and k >= ONE_SIDED * r["ordered"]:
        said += (
            f" ⚠ It picked the {side}-shown {task.response} in {k} of {r['ordered']}: a judge this "
            f"one-sided says little about the {task.responses}."
        )
    return said


def judge_sentences(counts: pl.DataFrame, task: Task) -> list[str]:
    """One sentence per judge × protocol on its verdicts, in the terms the log keeps."""
    out = []
    for r in counts.iter_rows(named=True):
        who, n = f"{r['judge']} ({r['protocol']})", r["judgments"]
        valid = n - r[INVALID]
        if valid == 0:
            out.append(f"⚠ {who} gave no readable verdict in {n} judgments: nothing can be read.")
            continue
        said = (
            f"{who}: {n} judgments of {_counted(r['questions'], task.context)}, {r['Tie']} Tie and "
            f"{r['Invalid']} Invalid. {_order_sentence(r, task)}"
        )
        if valid >= MIN_VALID and r["Tie"] >= ONE_SIDED * valid:
            said += f" ⚠ It answered Tie in {r['Tie']} of {valid} valid verdicts."
        out.append(said)
    return out


def row_sentences(card: Card) -> list[str]:
    """Each observed row of the card in a sentence: its figure and what it decided."""
    out = []
    for r in card.of_type(ObservedBase):
        decided = "observed, no verdict" if r.verdict == "OBSERVED" else str(r.verdict)
        q = f", q = {r.q:.3g}" if r.q is not None else ""
        out.append(
            f"{r.judge} ({r.protocol}), {r.row}: {r.effect_name} {shown(r.effect)} over {r.n} "
            f"({_counted(r.documents or 0, card.task.context)}){q}; {decided}."
        )
    if not out:
        out.append("The logs give no observed row (docs/logs.md lists what each needs).")
    return out


def figures(card: Card) -> pl.DataFrame:
    """The card's figures in the metrics table's shape (``metrics_ci.csv`` of a logs run)."""
    rows = [
        {"judge": r.judge, "protocol": r.protocol, "condition": "Blind", "metric": r.row,
         "value": None if r.effect is None else r.effect.value,
         "lo": None if r.effect is None else r.effect.lo,
         "hi": None if r.effect is None else r.effect.hi,
         "n": r.n, "documents": r.documents, "p": r.p}
        for r in card.of_type(ObservedBase)
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=TIDY_SCHEMA) if rows else pl.DataFrame(schema=TIDY_SCHEMA)


def _about(manifest: Manifest, counts: pl.DataFrame, card: Card) -> list[str]:
    formats = manifest.config.get("formats") or {}
    read = ", ".join(f"{Path(str(p)).name} ({f})" for p, f in formats.items())
    total, invalid = int(counts["judgments"].sum()), int(counts[INVALID].sum())
    return [
        f"run {manifest.run_id}, created {manifest.created_at}; read from {read or 'logs'}",
        "judges: " + ", ".join(sorted({str(x) for x in counts["judge"]})),
        f"{total} judgments, {invalid} Invalid",
        method_over_questions(card.method),
    ]


def _verdicts_table(counts: pl.DataFrame, task: Task) -> pl.DataFrame:
    shown_order = ["ordered", "first", "second"] if int(counts["ordered"].sum()) else []
    table = counts.select(
        "judge", "protocol", "judgments", "questions", "A", "B", "Tie", INVALID, *shown_order
    )
    named = {"questions": f"{task.context}s", "ordered": "shown order known",
             "first": "first-shown", "second": "second-shown"}  # fmt: skip
    return table.rename({k: v for k, v in named.items() if k in table.columns})


def _verdicts_section(counts: pl.DataFrame, task: Task) -> Section:
    shown_order = (
        f" First- and second-shown: valid verdicts whose shown order the log keeps, by the "
        f"{task.response} they picked."
        if int(counts["ordered"].sum())
        else ""
    )
    return Section(
        "Verdicts",
        "A and B: each item's two generators in name order (A's name sorts first), whatever "
        "order the log lists them in." + shown_order,
        tables=[_verdicts_table(counts, task)],
    )


def _invalid_section(reasons: pl.DataFrame) -> list[Section]:
    if reasons.is_empty():
        return []
    return [Section("Invalid verdicts", "The commonest reasons per judge and prompt.",
                    tables=[reasons])]  # fmt: skip


def logs_report(
    run_dir: Path,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    console: Console | None = None,
    card: Card | None = None,
) -> Path:
    """Write a logs run's report (report.md, report.html, metrics_ci.csv); the HTML path.

    ``card``: the run's observed card, when the caller has just computed it.
    """
    run = RunDir(run_dir)
    manifest = run.manifest()
    task = manifest.task
    j = counted_judgments(run.judgments, COLUMNS)
    if card is None:
        card = observed_card(run, j, load_thresholds(), resamples, seed, task)
    counts = verdict_counts(j)
    reasons = invalid_reasons(j).select("judge", "protocol", "reason", "n", "share")
    del j
    with atomic_path(run.metrics_ci) as tmp:
        figures(card).write_csv(tmp, float_precision=6)
    found = [task.nouns(s) for s in (*judge_sentences(counts, task), *row_sentences(card))]
    sections = [
        Section(
            "What this run found",
            "Read from the judge's logs: nothing was intervened on, so each figure is an "
            "association in the judge's own traffic (docs/logs.md).",
            sentences=found,
        ),
        Section("About this run", sentences=_about(manifest, counts, card)),
        _verdicts_section(counts, task),
        *_invalid_section(reasons),
        *observed_card_sections(card),
        *win_rate_section(run),
        *calibrated_sections(run),
    ]
    md, page = render(run, f"judgeprobe report — {manifest.run_id}", [], sections)
    write_atomic(run.report_md, md.encode())
    write_atomic(run.report_html, page.encode())
    out = console or table_console()
    out.print("[bold]What this run found[/]", highlight=False)
    for sentence in found:
        out.print(f"- {sentence}", markup=False, highlight=False)
    return run.report_html
