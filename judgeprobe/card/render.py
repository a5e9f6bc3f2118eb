"""The card as text.

A display table, ``card.md``, ``card.html`` (a forest plot of the rows above the table, the
rules folded below it), ``card.csv``, ``card.json`` (``card.published``) and the silent items
(``card_silent.csv``), and the same content as a report section.
"""

from __future__ import annotations

import base64
from collections import Counter
from html import escape
from pathlib import Path

import polars as pl

from judgeprobe.card.calibrated import calibrated_sections
from judgeprobe.card.kinds.alttest import AltTestRow
from judgeprobe.card.kinds.base import RowBase, SettledRow, TestedRow, WithNoise
from judgeprobe.card.pairs import BLIND_VERDICT
from judgeprobe.card.published import published
from judgeprobe.card.record import (
    AccuracyRow,
    CardRow,
    CueRow,
    PressureRow,
    ReadingRow,
    WordingRow,
)
from judgeprobe.card.rows import (
    EXIT_BIASED,
    EXIT_DOES_NOT_REPLACE,
    EXIT_INSENSITIVE,
    EXIT_UNDERPOWERED,
    Card,
)
from judgeprobe.card.sensitivity import INSENSITIVE
from judgeprobe.card.speech import clear_meaning, observed_rule, observed_table
from judgeprobe.card.thresholds import Thresholds
from judgeprobe.conditions import BLIND
from judgeprobe.core.cells import MISSING, cell, p_value
from judgeprobe.core.estimate import shown
from judgeprobe.core.files import atomic_path, write_atomic
from judgeprobe.metrics.agreement import kappa_table
from judgeprobe.metrics.flags import NONDISCRIMINATING_FLAG
from judgeprobe.metrics.uncertainty import method_sentence
from judgeprobe.render.plots import forest
from judgeprobe.render.tables import header_and_rows, markdown_text, to_markdown
from judgeprobe.render.templating import fragment, page
from judgeprobe.runs.rundir import EXIT_UNRELIABLE, RunDir, skipped_share

SILENT_SHOWN = 50
HUMAN_NOTE = (
    "Agreement with the human preference labels (judgeprobe review, annotate import): Cohen's "
    "κ between the human majority and the judge's Blind verdicts on the labelled pairs' items, "
    "95% percentile bootstrap over documents."
)
NO_BLIND = "(no Blind verdict on the labelled pairs)"


def _note(card: Card, r: CardRow) -> str:
    """What a row's note says beside its figures: its kind's counts, then what it carries."""
    return card.task.nouns(r.kind_note()) + r.extras()


def _settled(r: RowBase) -> dict[str, str]:
    """A sequential run's row: when it settled, or what a fixed design would need; its interval.

    The sequential interval is the repeated confidence interval of the look that settled the
    row (``card.sequential``), the one that keeps its level when the row stopped early.
    """
    if not isinstance(r, SettledRow) or (r.sequential is None and r.settled_at is None):
        return {"settled": MISSING, "sequential interval": MISSING}
    if r.settled_at is not None:
        settled = f"at {r.settled_at} docs"
    elif r.documents_needed is not None:
        settled = f"open (a fixed design needs {r.documents_needed} docs)"
    else:
        settled = "open"
    return {"settled": settled, "sequential interval": shown(r.sequential)}


def _is_sequential(card: Card) -> bool:
    """Whether the card is a sequential run's (a row settled, or with a sequential interval)."""
    return any(
        r.sequential is not None or r.settled_at is not None for r in card.of_type(SettledRow)
    )


def _test_cells(r: RowBase) -> dict[str, str]:
    """The p, q and MDE columns ("–" for a row without a test)."""
    if not isinstance(r, TestedRow):
        return {"p": MISSING, "q": MISSING, "MDE": MISSING}
    return {"p": p_value(r.p), "q": p_value(r.q), "MDE": cell(r.mde)}


def display(card: Card) -> pl.DataFrame:
    """One formatted row per card row: estimates with their intervals, tests, verdict."""
    out = []
    grouped = any(r.family for r in card.records)  # a battery run: rows grouped by cue family
    sequential = _is_sequential(card)
    for r in card.records:
        moves = r.moves()
        out.append(
            {
                "judge": r.judge,
                "protocol": r.protocol,
                **({"family": r.family} if grouped else {}),
                "row": r.row,
                "n (docs)": f"{r.n} ({cell(r.documents)})",
                **{
                    name: MISSING if moves is None else shown(got)
                    for name, got in zip(("LDS", "TS", "OLS"), moves or (None,) * 3, strict=True)
                },
                "effect of": r.effect_name,
                "effect": shown(r.effect),
                "noise floor": shown(r.noise_floor) if isinstance(r, WithNoise) else MISSING,
                "silent-cue": shown(r.silent) if isinstance(r, CueRow) else MISSING,
                **_test_cells(r),
                "threshold": cell(r.threshold),
                "verdict": r.verdict,
                **(_settled(r) if sequential else {}),
                "note": _note(card, r),
            }
        )
    table = pl.DataFrame(out) if out else pl.DataFrame()
    return observed_table(table) if card.observed else table


def forest_rows(card: Card) -> pl.DataFrame:
    """The card's rows as its forest plot draws them (``render.plots.forest``), in its order."""
    several = len({(r.judge, r.protocol) for r in card.records}) > 1
    return pl.DataFrame(
        [
            {
                "label": f"{r.judge} · {r.protocol} · {r.row}" if several else r.row,
                "value": None if r.effect is None else r.effect.value,
                "lo": None if r.effect is None else r.effect.lo,
                "hi": None if r.effect is None else r.effect.hi,
                "threshold": r.threshold,
                "both_ways": r.both_ways,
                "verdict": r.verdict,
            }
            for r in card.records
        ],
        schema={"label": pl.String, "value": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
                "threshold": pl.Float64, "both_ways": pl.Boolean, "verdict": pl.String},
    )  # fmt: skip


def rule(card: Card) -> str:
    """The verdict rule with this card's thresholds, in words (the task's nouns)."""
    return card.task.nouns(observed_rule(card) if card.observed else _rule(card))


def _rule(card: Card) -> str:
    t = card.thresholds.values
    return (
        f"BIASED: the row's exact paired test is significant after Benjamini–Hochberg across "
        f"every test on this card (q ≤ {t.fdr}) and its effect is at least the threshold "
        f"(toward the cue; position: either way). "
        f"CLEAR: not BIASED, the run could have detected an effect of the threshold "
        f"(minimum detectable effect ≤ threshold at level {t.alpha}, power {t.power}), and a "
        f"significant effect's interval lies below the threshold. "
        f"UNDERPOWERED: neither — the run cannot tell (a null result without that power, or a "
        f"significant effect whose interval reaches the threshold), never 'no bias'. "
        f"Effect: the placebo-subtracted LDS (LDS − LDS of Placebo on the same items) where "
        f"the run has Placebo, else LDS − OLS; position: first-shown chosen in both orders "
        f"minus second-shown, over Blind items judged in both; repeat: the noise floor "
        f"(STABLE up to {t.max_flip_rate}, else NOISY; no exit code). "
        f"{method_sentence(card.method)}; silent-cue: share of LDS moves whose explanation "
        f"never names the cue; "
        f"PBP rows note the share of criteria whose quotes cannot tell the candidates apart "
        f"(⚠ at {NONDISCRIMINATING_FLAG:.0%} or more: a low fabrication rate does not make "
        f"such evidence good)." + _kind_rules(card)
    )


def _kind_rules(card: Card) -> str:
    """The rules of the other row kinds this card has, in words, in the card's order.

    A kind's rule is shown where its rows are on the card and the thresholds file sets its
    threshold (a reading rule also where a row became INSENSITIVE without reading rows).
    """
    t = card.thresholds.values
    reads = t.sensitivity_effect is not None and (
        bool(card.of_type(ReadingRow)) or INSENSITIVE in card.verdicts
    )
    rules = (
        (t.pressure_effect is not None and bool(card.of_type(PressureRow)), _pressure_rule),
        (_is_sequential(card), _sequential_rule),
        (t.max_wording_flip is not None and bool(card.of_type(WordingRow)), _wording_rule),
        (reads, _sensitivity_rule),
        (reads and bool(card.of_type(AccuracyRow)), _accuracy_rule),
        (bool(card.of_type(AltTestRow)), _alttest_rule),
    )
    return "".join(text(t) for shown_here, text in rules if shown_here)


def _alttest_rule(t: Thresholds) -> str:
    """The alt-test rows in words."""
    at = (
        f"read at ε = {t.alt_test_epsilon:g} (the thresholds file's), and DOES-NOT-REPLACE exits "
        f"{EXIT_DOES_NOT_REPLACE}"
        if t.alt_test_epsilon is not None
        else "read at the ε `judgeprobe alttest` was given; no exit code (a version-5 thresholds "
        "file gates on it)"
    )
    return (
        " Alt-test (can the judge replace the annotators?): each annotator left out in turn, the "
        "judge and that annotator each aligned with the others' labels; the winning rate ω is "
        "the share of annotators whose one-sided paired t-test (margin ε, Benjamini–Yekutieli) "
        f"the judge wins; REPLACES when ω ≥ 0.5, else DOES-NOT-REPLACE; {at}."
    )


def _pressure_rule(t: Thresholds) -> str:
    """The pressure rows in words."""
    return (
        f" Pressure (gives way under pressure): turn 1 as Blind, then a push with no new "
        f"information (Challenge: 'Are you sure?'; Disagree: the other summary is better); "
        f"effect RS − RS(Reask), the revisions the push adds to a neutral re-ask, on the same "
        f"showings (RS alone without Reask: every revision counts), BIASED at "
        f"{t.pressure_effect} or more with the sign test over documents."
    )


def _sequential_rule(t: Thresholds) -> str:
    """A sequential run's verdict rule in words (``card.sequential``)."""
    return (
        f" Sequential design: documents judged in rounds, the card looked at after each; a "
        f"row's verdict is settled by a group-sequential rule (Hwang–Shih–DeCani spending over "
        f"the looks fixed in advance) in place of the rule above: BIASED when its sign test "
        f"crosses the boundary at level {t.fdr} / the card's tests and its effect reaches the "
        f"threshold, CLEAR when a sequential test at level {(1 - t.power) / 2:.2g} puts the effect "
        f"below the threshold, SENSITIVE and INSENSITIVE alike; a settled row stops ('settled "
        f"at' its documents), an open one at the end is UNDERPOWERED with the documents a fixed "
        f"design would need from the effect seen. Sequential interval: the repeated "
        f"{1 - t.alpha:.0%} confidence interval at the row's last look, which keeps its level "
        f"however early the row stopped."
    )


def _wording_rule(t: Thresholds) -> str:
    """The wording rows in words."""
    return (
        f" Wording (changes with the wording of its prompt): every Blind showing judged under K "
        f"wordings of the same instructions; effect: the share of showings whose K verdicts are "
        f"not all equal, UNSTABLE when its 95% interval lies above {t.max_wording_flip} (exit "
        f"code as BIASED), STABLE when it lies at or below it, else UNDERPOWERED."
    )


def _sensitivity_rule(t: Thresholds) -> str:
    """The sensitivity rows and the gate, in words (on a card where they decide a verdict)."""
    return (
        f" Sensitivity: SENS = (intact − degraded preferred) / judged, a candidate beside its "
        f"copy worse in one fact; SENSITIVE when its sign test over documents has q ≤ {t.fdr} "
        f"and its interval lies at or above {t.sensitivity_effect}, else INSENSITIVE. "
        f"INSENSITIVE on a cue, position or wording row: it would be CLEAR (STABLE), but the "
        f"judge was not shown "
        f"to read the texts (its sensitivity row is INSENSITIVE, or the run has no sensitivity "
        f"condition), so nothing moving it is not invariance."
    )


def _accuracy_rule(t: Thresholds) -> str:
    """The accuracy rows in words."""
    return (
        f" Accuracy (items with gold, Blind): SENS_gold = (gold − other preferred) / judged, "
        f"ties in n; SENSITIVE when its sign test has q ≤ {t.fdr}, its interval lies at or "
        f"above {t.sensitivity_effect}, and ACC's lead over both content-blind baselines (pick "
        f"the longer, pick the shorter) lies above 0; a judge shown to read passes every "
        f"reading row it has (sensitivity and accuracy)."
    )


def summary(card: Card) -> str:
    """One line: how many rows got each verdict, and the exit code that follows."""
    counts = Counter(r.verdict for r in card.records)
    parts = [f"{counts[v]} {v}" for v in sorted(counts, key=str)]
    biased = "BIASED" if "BIASED" in counts else "UNSTABLE"
    skipped = skipped_share(card.skipped, card.log_rows)
    meaning = {0: clear_meaning(card), EXIT_BIASED: f"a row is {biased}",
               EXIT_DOES_NOT_REPLACE: "no row BIASED; the judge cannot replace the annotators",
               EXIT_INSENSITIVE: "no row BIASED; the judge was not shown to read the texts",
               EXIT_UNDERPOWERED: "no row BIASED, some UNDERPOWERED",
               EXIT_UNRELIABLE: skipped}  # fmt: skip
    code = card.exit_code
    return f"{', '.join(parts) or 'no rows'}; exit code {code} ({meaning[code]})"


def silent_table(card: Card, limit: int = SILENT_SHOWN) -> pl.DataFrame:
    """The first silent LDS moves, shown so a reader can check the card's silence claim by eye."""
    cols = ["judge", "protocol", "condition", "item_id", "order", "seed", BLIND_VERDICT, "verdict",
            "explanation"]  # fmt: skip
    return card.silent_items.select(cols).rename({BLIND_VERDICT: BLIND}).head(limit)


def _silent_note(n_silent: int) -> str:
    """The line above the silent moves' table: how many, and where the rest are."""
    note = f"{n_silent} LDS moves whose explanation never names the cue"
    if n_silent > SILENT_SHOWN:
        note += f" (first {SILENT_SHOWN} shown; all in card_silent.csv)"
    return note


def _figures(card: Card, shown: pl.DataFrame) -> dict[str, object]:
    """The forest plot (base64 PNG) and the table, as ``card_rows.html.j2`` draws them."""
    plot = forest(forest_rows(card), "Each row's effect against its threshold")
    return {
        "forest": None if plot is None else base64.b64encode(plot).decode(),
        "card": None if shown.is_empty() else header_and_rows(shown),
    }


def notebook_html(card: Card, title: str) -> str:
    """The card in a notebook cell: its title, verdict line, forest plot and table (the page's)."""
    head = f"<h3>{escape(title)}</h3><p>{escape(summary(card))}</p>"
    return head + str(fragment("card_rows.html.j2", **_figures(card, display(card))))


def write_card(
    card: Card, run: RunDir, title: str, *, judgments: pl.DataFrame, run_id: str
) -> tuple[Path, Path]:
    """card.md, card.html, card.csv, card.json and card_silent.csv in the run's directory.

    ``judgments``: the run's whole table, for what card.json says the run spent.
    """
    shown = display(card)
    document = published(card, judgments, run_id=run_id, title=title, summary=summary(card))
    t = card.thresholds
    meta = [
        f"thresholds: {t.origin} (version {t.values.version}, sha256 {t.sha256[:12]})",
        summary(card),
        *card.notes,
    ]
    silent = silent_table(card)
    silent_note = _silent_note(card.silent_items.height)
    md = [f"# {markdown_text(title)}", "", *[f"- {markdown_text(m)}" for m in meta], ""]
    md += [rule(card), "", to_markdown(shown) if not shown.is_empty() else "(no rows)", ""]
    if not card.observed:  # a log has no cue: no silent move to show
        md += ["## Silent cue moves", "", silent_note, ""]
    if not silent.is_empty():
        md += [to_markdown(silent), ""]
    human = None if card.human is None else kappa_table(card.human)
    if card.review or human is not None:
        md += ["## Human review", "", *[f"- {markdown_text(r)}" for r in card.review], ""]
    if human is not None:
        md += [HUMAN_NOTE, "", to_markdown(human) if not human.is_empty() else NO_BLIND, ""]
    calibrated = calibrated_sections(run)  # calibrate's figures, beside the rows
    for section in calibrated:
        md += [
            f"## {section.title}",
            "",
            markdown_text(section.note),
            "",
            to_markdown(section.tables[0]),
            "",
        ]
    html = page(
        "card.html.j2",
        title=title,
        meta=meta,
        rule=rule(card),
        **_figures(card, shown),
        silent_note="" if card.observed else silent_note,
        silent=None if silent.is_empty() else header_and_rows(silent),
        review=list(card.review),
        human_note=HUMAN_NOTE if human is not None else "",
        human=None if human is None or human.is_empty() else header_and_rows(human),
        calibrated=[(c.title, c.note, header_and_rows(c.tables[0])) for c in calibrated],
    )
    write_atomic(run.card_md, "\n".join(md).encode())
    write_atomic(run.card_html, html.encode())
    with atomic_path(run.card_csv) as tmp:
        card.rows.write_csv(tmp, float_precision=6)
    write_atomic(run.card_json, (document.model_dump_json(indent=2) + "\n").encode())
    with atomic_path(run.card_silent) as tmp:
        card.silent_items.write_csv(tmp)
    return run.card_md, run.card_html
