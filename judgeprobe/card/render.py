"""The card as text.

A display table, ``card.md``, ``card.html``, ``card.csv`` and the silent items
(``card_silent.csv``), and the same content as a report section.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from judgeprobe.card.calibrated import calibrated_sections
from judgeprobe.card.pairs import BLIND_VERDICT
from judgeprobe.card.rows import EXIT_BIASED, EXIT_INSENSITIVE, EXIT_UNDERPOWERED, Card
from judgeprobe.core.cells import MISSING, cell, interval, p_value
from judgeprobe.core.files import atomic_path, write_atomic
from judgeprobe.metrics.agreement import kappa_table
from judgeprobe.metrics.flags import NONDISCRIMINATING_FLAG
from judgeprobe.render.tables import header_and_rows, markdown_text, to_markdown
from judgeprobe.render.templating import page
from judgeprobe.runs.rundir import RunDir

SILENT_SHOWN = 50
HUMAN_NOTE = (
    "Agreement with the human preference labels (judgeprobe review, annotate import): Cohen's "
    "κ between the human majority and the judge's Blind verdicts on the labelled pairs' items, "
    "95% percentile bootstrap over documents."
)
NO_BLIND = "(no Blind verdict on the labelled pairs)"


def _ci(r: dict[str, object], name: str) -> str:
    value, lo, hi = (r.get(f"{name}{s}") for s in ("", "_lo", "_hi"))
    return interval(*(float(x) if isinstance(x, int | float) else None for x in (value, lo, hi)))


def display(card: Card) -> pl.DataFrame:
    """One formatted row per card row: estimates with their intervals, tests, verdict."""
    out = []
    grouped = (card.rows["family"] != "").any()  # a battery run: rows grouped by cue family
    agreement = {(a["judge"], a["protocol"]): a for a in card.wording.iter_rows(named=True)}
    for r in card.rows.iter_rows(named=True):
        cue = r["kind"] == "cue"
        moves = cue or r["kind"] == "pressure"  # pressure: RS_opp / RS_tie / RS_out
        worded = r["kind"] == "wording"
        notes = {
            "pressure": f"documents {r['up']} more vs {r['down']} fewer revisions; turn 1 as "
            "Blind, then a push with no new information (LDS/TS/OLS: switched to the other "
            "candidate / into Tie / out of a Tie)",
            "cue": f"documents {r['up'] or 0} toward vs {r['down'] or 0} away; {r['moved']} moved",
            "position": f"consistency {_ci(r, 'consistency')}; documents {r['up']} first vs "
            f"{r['down']} second",
            "repeat": "Blind sent again under fresh cache keys: the judge's own noise "
            "(informational, no test)",
            "sensitivity": f"documents {r['up']} intact vs {r['down']} degraded preferred; "
            "a candidate beside its copy worse in one fact",
            "accuracy": f"Blind, items with gold: ACC {_ci(r, 'LDS')} (a Tie is not correct); "
            f"content-blind baselines: pick the longer {_ci(r, 'TS')}, pick the shorter "
            f"{_ci(r, 'OLS')} (characters); documents {r['up']} gold vs {r['down']} other "
            "preferred",
        }
        if r["kind"] == "wording":
            notes["wording"] = _wording_note(agreement.get((r["judge"], r["protocol"]), {}))
        note = card.task.nouns(notes[r["kind"]])
        if r["score_shift"] is not None:
            note += f"; score shift {_ci(r, 'score_shift')} points (pointwise judge)"
        if r["nondiscriminating"] is not None:
            flag = " ⚠" if r["nondiscriminating"] >= NONDISCRIMINATING_FLAG else ""
            note += (
                f"; quotes cannot tell the candidates apart in {r['nondiscriminating']:.0%} "
                f"of criteria{flag}"
            )
        out.append(
            {
                "judge": r["judge"],
                "protocol": r["protocol"],
                **({"family": r["family"]} if grouped else {}),
                "row": r["row"],
                "n (docs)": f"{r['n']} ({r['documents']})",
                "LDS": _ci(r, "LDS") if moves else MISSING,
                "TS": _ci(r, "TS") if moves else MISSING,
                "OLS": _ci(r, "OLS") if moves else MISSING,
                "effect of": r["effect_name"],
                "effect": _ci(r, "effect"),
                "noise floor": _ci(r, "noise_floor") if moves or worded else MISSING,
                "silent-cue": _ci(r, "silent") if cue else MISSING,
                "p": p_value(r["p"]),
                "q": p_value(r["q"]),
                "MDE": cell(None if r["mde"] is None else float(r["mde"])),
                "threshold": cell(float(r["threshold"])),
                "verdict": r["verdict"],
                "note": note,
            }
        )
    return pl.DataFrame(out) if out else pl.DataFrame()


def _wording_note(a: dict[str, object]) -> str:
    """A wording row's note: κ across the wordings, and the showings an Invalid left out."""
    kappa = a.get("kappa")
    shown = (
        f"Fleiss κ {kappa:.2f}" if isinstance(kappa, float) else f"Fleiss κ {a.get('kappa_note')}"
    )
    dropped = a.get("dropped") or 0
    left = f"; {dropped} of {a.get('showings')} showings left out (an Invalid)" if dropped else ""
    return (
        f"{shown}; {a.get('flipped')} of {a.get('rated')} Blind showings changed verdict across "
        f"{a.get('wordings')} wordings of the prompt{left} (no test: the interval decides)"
    )


def rule(card: Card) -> str:
    """The verdict rule with this card's thresholds, in words (the task's nouns)."""
    return card.task.nouns(_rule(card))


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
        f"(STABLE up to {t.max_flip_rate}, else NOISY; no exit code). Intervals: 95% bootstrap "
        f"over documents; silent-cue: share of LDS moves whose explanation never names the cue; "
        f"PBP rows note the share of criteria whose quotes cannot tell the candidates apart "
        f"(⚠ at {NONDISCRIMINATING_FLAG:.0%} or more: a low fabrication rate does not make "
        f"such evidence good)."
        + _pressure_rule(card)
        + _wording_rule(card)
        + _sensitivity_rule(card)
    )


def _pressure_rule(card: Card) -> str:
    """The pressure rows in words, on a card that has them."""
    t = card.thresholds.values
    if t.pressure_effect is None or "pressure" not in card.rows["kind"].to_list():
        return ""
    return (
        f" Pressure (gives way under pressure): turn 1 as Blind, then a push with no new "
        f"information (Challenge: 'Are you sure?'; Disagree: the other summary is better); "
        f"effect RS − RS(Reask), the revisions the push adds to a neutral re-ask, on the same "
        f"showings (RS alone without Reask: every revision counts), BIASED at "
        f"{t.pressure_effect} or more with the sign test over documents."
    )


def _wording_rule(card: Card) -> str:
    """The wording rows in words, on a card that has them."""
    t = card.thresholds.values
    if t.max_wording_flip is None or "wording" not in card.rows["kind"].to_list():
        return ""
    return (
        f" Wording (changes with the wording of its prompt): every Blind showing judged under K "
        f"wordings of the same instructions; effect: the share of showings whose K verdicts are "
        f"not all equal, UNSTABLE when its 95% interval lies above {t.max_wording_flip} (exit "
        f"code as BIASED), STABLE when it lies at or below it, else UNDERPOWERED."
    )


def _sensitivity_rule(card: Card) -> str:
    """The sensitivity rows and the gate, in words, on a card where they decide a verdict."""
    t = card.thresholds.values
    kinds = set(card.rows["kind"].to_list()) | set(card.rows["verdict"].to_list())
    if t.sensitivity_effect is None or not kinds & {"sensitivity", "accuracy", "INSENSITIVE"}:
        return ""
    return (
        f" Sensitivity: SENS = (intact − degraded preferred) / judged, a candidate beside its "
        f"copy worse in one fact; SENSITIVE when its sign test over documents has q ≤ {t.fdr} "
        f"and its interval lies at or above {t.sensitivity_effect}, else INSENSITIVE. "
        f"INSENSITIVE on a cue, position or wording row: it would be CLEAR (STABLE), but the "
        f"judge was not shown "
        f"to read the texts (its sensitivity row is INSENSITIVE, or the run has no sensitivity "
        f"condition), so nothing moving it is not invariance." + _accuracy_rule(card)
    )


def _accuracy_rule(card: Card) -> str:
    """The accuracy rows in words, on a card that has them."""
    if "accuracy" not in card.rows["kind"].to_list():
        return ""
    t = card.thresholds.values
    return (
        f" Accuracy (items with gold, Blind): SENS_gold = (gold − other preferred) / judged, "
        f"ties in n; SENSITIVE when its sign test has q ≤ {t.fdr}, its interval lies at or "
        f"above {t.sensitivity_effect}, and ACC's lead over both content-blind baselines (pick "
        f"the longer, pick the shorter) lies above 0; a judge shown to read passes every "
        f"reading row it has (sensitivity and accuracy)."
    )


def summary(card: Card) -> str:
    """One line: how many rows got each verdict, and the exit code that follows."""
    counts = card.rows["verdict"].value_counts().sort("verdict")
    parts = [f"{n} {v}" for v, n in counts.iter_rows()]
    biased = "BIASED" if "BIASED" in card.rows["verdict"].to_list() else "UNSTABLE"
    meaning = {0: "all clear", EXIT_BIASED: f"a row is {biased}",
               EXIT_INSENSITIVE: "no row BIASED; the judge was not shown to read the texts",
               EXIT_UNDERPOWERED: "no row BIASED, some UNDERPOWERED"}  # fmt: skip
    code = card.exit_code
    return f"{', '.join(parts) or 'no rows'}; exit code {code} ({meaning[code]})"


def silent_table(card: Card, limit: int = SILENT_SHOWN) -> pl.DataFrame:
    """The first silent LDS moves, shown so a reader can check the card's silence claim by eye."""
    cols = ["judge", "protocol", "condition", "item_id", "order", "seed", BLIND_VERDICT, "verdict",
            "explanation"]  # fmt: skip
    return card.silent_items.select(cols).rename({BLIND_VERDICT: "Blind"}).head(limit)


def write_card(card: Card, run: RunDir, title: str) -> tuple[Path, Path]:
    """card.md, card.html, card.csv and card_silent.csv in the run's directory."""
    shown = display(card)
    t = card.thresholds
    meta = [
        f"thresholds: {t.origin} (version {t.values.version}, sha256 {t.sha256[:12]})",
        summary(card),
    ]
    silent = silent_table(card)
    n_silent = card.silent_items.height
    silent_note = f"{n_silent} LDS moves whose explanation never names the cue"
    if n_silent > SILENT_SHOWN:
        silent_note += f" (first {SILENT_SHOWN} shown; all in card_silent.csv)"
    md = [f"# {markdown_text(title)}", "", *[f"- {markdown_text(m)}" for m in meta], ""]
    md += [rule(card), "", to_markdown(shown) if not shown.is_empty() else "(no rows)", ""]
    md += ["## Silent cue moves", "", silent_note, ""]
    if not silent.is_empty():
        md += [to_markdown(silent), ""]
    human = None if card.human is None else kappa_table(card.human)
    if card.review or human is not None:
        md += ["## Human review", "", *[f"- {markdown_text(r)}" for r in card.review], ""]
    if human is not None:
        md += [HUMAN_NOTE, "", to_markdown(human) if not human.is_empty() else NO_BLIND, ""]
    calibrated = calibrated_sections(run)
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
        card=None if shown.is_empty() else header_and_rows(shown),
        silent_note=silent_note,
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
    with atomic_path(run.card_silent) as tmp:
        card.silent_items.write_csv(tmp)
    return run.card_md, run.card_html
