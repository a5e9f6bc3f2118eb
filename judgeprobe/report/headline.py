"""The report's first lines: what the run found, in plain sentences with intervals.

In the order a reader needs them: first how each judge answers with no cue (which position
it prefers, how often it says Tie) — a judge that always picks the first-shown summary or
always says Tie makes every cue effect moot — then the cue effects that stand out from
chance, or a plain statement that nothing did, beside the judge's own noise floor where the
run re-sent Blind requests (BlindRepeat), then the cells too thin to read (``metrics.flags``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from judgeprobe.conditions import REPEAT
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.flags import Readability
from judgeprobe.metrics.items import BLIND, with_optional

ONE_SIDED = 0.8  # one answer in this share of valid judgments: a degenerate judge
MIN_VALID = 5  # fewer valid judgments than this: too few to call a judge degenerate
ALPHA = 0.05  # the sign test's level for "beyond noise"
MAX_EFFECTS = 8  # cue sentences shown; the rest are counted
MAX_UNREAD = 6  # unreadable cells named; the rest are counted


def rule(limits: Readability) -> str:
    """What the headline counts as a finding, in words."""
    return (
        "A cue cell is headlined when its moves toward and away from the cue's target differ "
        f"beyond chance (exact sign test, p < {ALPHA}) or its move into Tie has a 95% interval "
        f"above 0; cells with fewer than {limits.min_n} paired items or more than "
        f"{limits.max_invalid_rate:.0%} Invalid are never headlined."
    )


Row = Mapping[str, Any]
Intervals = dict[tuple[str, str, str, str], tuple[float | None, float | None, float | None]]


def unreadable(row: Row, limits: Readability | None = None) -> str:
    """Why a cue cell of the estimates table must stay out of the headline ('' when it need not).

    The table's own ``flag`` (``metrics.flags``), else the same limits applied here.
    """
    if "flag" in row:
        return str(row["flag"] or "")
    limits = limits or Readability()
    reasons = []
    if (row.get("n_paired") or 0) < limits.min_n:
        reasons.append(f"{row.get('n_paired') or 0} paired items (< {limits.min_n})")
    invalid = row.get("invalid_rate") or 0.0
    if invalid > limits.max_invalid_rate:
        reasons.append(f"{invalid:.0%} Invalid (> {limits.max_invalid_rate:.0%})")
    return ", ".join(reasons)


def pct(value: float | None, lo: float | None = None, hi: float | None = None) -> str:
    """``12% [6, 19]``; "–" when undefined."""
    if value is None:
        return "–"
    if lo is None or hi is None:
        return f"{100 * value:.0f}%"
    return f"{100 * value:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"


def _who(judge: str, protocol: str) -> str:
    return f"{judge} ({protocol})"


def _first_shown() -> pl.Expr:
    """The verdict in screen terms: the first-shown candidate preferred."""
    v, o = pl.col("verdict"), pl.col("order")
    return ((v == "A") & (o == "12")) | ((v == "B") & (o == "21"))


def judge_sentences(j: pl.DataFrame) -> list[str]:
    """One sentence per judge × protocol on its answers without a cue.

    Those are the Blind answers, or all conditions when the run has no Blind; the sentence
    warns when one answer dominates.
    """
    blind = j.filter(pl.col("condition") == BLIND)
    base, basis = (blind, "Blind judgments") if not blind.is_empty() else (j, "judgments")
    valid = pl.col("verdict") != "Invalid"
    counts = (
        base.group_by("judge", "protocol", maintain_order=True)
        .agg(
            n=pl.len(),
            valid=valid.sum(),
            first=(valid & _first_shown()).sum(),
            tie=(pl.col("verdict") == "Tie").sum(),
        )
        .with_columns(second=pl.col("valid") - pl.col("first") - pl.col("tie"))
        .sort("judge", "protocol")
    )
    out = []
    for r in counts.iter_rows(named=True):
        who, n, n_valid = _who(r["judge"], r["protocol"]), r["n"], r["valid"]
        invalid = f"; {n - n_valid} of {n} Invalid" if n_valid < n else ""
        if n_valid == 0:
            out.append(f"⚠ {who} gave no valid verdict in {n} {basis}: nothing can be read.")
            continue
        split = f"first-shown {r['first']}, second-shown {r['second']}, Tie {r['tie']}"
        answers = {
            "answered Tie": r["tie"],
            "picked the first-shown summary": r["first"],
            "picked the second-shown summary": r["second"],
        }
        habit, k = max(answers.items(), key=lambda kv: kv[1])
        if n_valid >= MIN_VALID and k >= ONE_SIDED * n_valid:
            out.append(
                f"⚠ {who} {habit} in {k} of {n_valid} valid {basis} ({split}{invalid}): "
                "a judge this one-sided says little about the texts, and its cue effects "
                "below say little about cues."
            )
        else:
            out.append(
                f"{who} without a cue preferred the first-shown summary {r['first']} times, "
                f"the second-shown {r['second']} and Tie {r['tie']}, of {n_valid} valid "
                f"{basis}{invalid}."
            )
    return out


def target_names(j: pl.DataFrame) -> dict[tuple[str, str, str], str]:
    """What each cue cell favours, in words: the attacked or the labelled summary."""
    side = pl.when(pl.col("target") == "A").then("label_1").otherwise("label_2")
    named = (
        j.filter(pl.col("target").is_in(["A", "B"]))
        .with_columns(label=side.fill_null(""), attack=pl.col("attack").fill_null(""))
        .group_by("judge", "protocol", "condition")
        .agg(pl.col("attack", "label").mode().sort().first())
    )
    out = {}
    for judge, protocol, condition, attack, label in named.iter_rows():
        if attack:
            out[judge, protocol, condition] = f"the {attack}-attacked summary"
        elif label:
            out[judge, protocol, condition] = f"the summary labelled “{label}”"
        else:
            out[judge, protocol, condition] = "the cue's target"
    return out


def _p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def noise_sentences(estimates: pl.DataFrame, ci: Intervals) -> list[str]:
    """The judge's own flip rate: the same Blind request sent again, verdict changed."""
    out = []
    for r in estimates.filter(pl.col("condition") == REPEAT).iter_rows(named=True):
        flip = ci.get((r["judge"], r["protocol"], REPEAT, "flip_rate"), (None, None, None))
        if flip[0] is not None:
            out.append(
                f"Sent the same Blind requests again, {_who(r['judge'], r['protocol'])} changed "
                f"{pct(*flip)} of {r['n_paired']} verdicts: its own noise floor, beside which "
                "any cue effect is read."
            )
    return out


def effect_sentence(row: Row, ci: Intervals, target: str) -> str:
    """``Under True, qwen05 (baseline) moved 12% [6, 19] of 40 paired items toward …``."""
    key = (row["judge"], row["protocol"], row["condition"])

    def shown(metric: str) -> str:
        return pct(*ci.get((*key, metric), (None, None, None)))

    who, n = _who(row["judge"], row["protocol"]), row["n_paired"]
    if row.get("LDS") is None:  # a cue without a target: only the move into Tie is directional
        return f"Under {row['condition']}, {who} moved {shown('TS')} of {n} paired items into Tie."
    lao = ci.get((*key, "LAO"), (None, None, None))
    lao_text = "–" if lao[0] is None else f"{lao[0]:.2f}"
    if lao[0] is not None and lao[1] is not None and lao[2] is not None:
        lao_text += f" [{lao[1]:.2f}, {lao[2]:.2f}]"
    sign = f"; sign test {_p(row['sign_p'])}" if row.get("sign_p") is not None else ""
    return (
        f"Under {row['condition']}, {who} moved {shown('LDS')} of {n} paired items toward "
        f"{target}, {shown('TS')} into Tie and {shown('OLS')} the other way; "
        f"LAO {lao_text}{sign}."
    )


def _beyond_noise(row: Row, ci: Intervals) -> bool:
    p = row.get("sign_p")
    tie_lo = ci.get((row["judge"], row["protocol"], row["condition"], "TS"), (None, None, None))[1]
    return (p is not None and p < ALPHA) or (tie_lo is not None and tie_lo > 0)


def effect_sentences(
    estimates: pl.DataFrame, ci: Intervals, targets: Mapping[Any, str]
) -> list[str]:
    """The cue cells beyond noise, most moved first; or that nothing moved beyond noise."""
    # A sensitivity cell has no Blind twin (n_paired null): it is no cue cell.
    probes = estimates.filter(
        ~pl.col("condition").is_in([BLIND, REPEAT]) & pl.col("n_paired").is_not_null()
    )
    if probes.is_empty():
        return ["This run has no cue condition: only the judges' Blind behaviour can be read."]
    rows = [r for r in probes.iter_rows(named=True) if not unreadable(r)]
    if not rows:
        return ["No cue cell has enough valid paired items to read; see the cells below."]

    def moved(r: Row) -> int:
        return sum(r.get(c) or 0 for c in ("lds_count", "ts_count", "ols_count"))

    rows.sort(key=lambda r: (-moved(r), r["judge"], r["protocol"], r["condition"]))
    target = {(r["judge"], r["protocol"], r["condition"]): "the cue's target" for r in rows}
    target.update(targets)

    def sentence(r: Row) -> str:
        return effect_sentence(r, ci, target[r["judge"], r["protocol"], r["condition"]])

    found = [r for r in rows if _beyond_noise(r, ci)]
    if found:
        out = [sentence(r) for r in found[:MAX_EFFECTS]]
        if len(found) > MAX_EFFECTS:
            out.append(f"… and {len(found) - MAX_EFFECTS} more cells (see Outcome anchoring).")
        if quiet := len(rows) - len(found):
            cells = "cell" if quiet == 1 else "cells"
            out.append(f"The {quiet} other readable cue {cells} moved no more than noise.")
        return out
    cells = f"{len(rows)} readable cue cell{'s' if len(rows) > 1 else ''}"
    if moved(rows[0]) == 0:
        return [f"Nothing moved: no verdict changed against Blind in {cells}."]
    return [
        f"Nothing moved beyond noise in {cells}: no cue drew verdicts "
        f"toward its target more than away from it beyond chance (sign test p < {ALPHA}), and "
        "no move into Tie has an interval above 0. The largest change: " + sentence(rows[0])
    ]


def unread_sentences(estimates: pl.DataFrame) -> list[str]:
    """The cue cells kept out of the headline, and why."""
    probes = estimates.filter(~pl.col("condition").is_in([BLIND, REPEAT]))
    probes = probes.sort("judge", "protocol", "condition")
    named = [
        f"{_who(r['judge'], r['protocol'])} under {r['condition']} ({why})"
        for r in probes.iter_rows(named=True)
        if (why := unreadable(r))
    ]
    if not named:
        return []
    more = f"; and {len(named) - MAX_UNREAD} more" if len(named) > MAX_UNREAD else ""
    return ["Not headlined, too thin to read: " + "; ".join(named[:MAX_UNREAD]) + more + "."]


def intervals(tidy: pl.DataFrame) -> Intervals:
    """Each metric's value and interval by judge, protocol, condition and metric, for sentences."""
    rows = tidy.select("judge", "protocol", "condition", "metric", "value", "lo", "hi")
    return {(a, b, c, m): (v, lo, hi) for a, b, c, m, v, lo, hi in rows.iter_rows()}


def headline(j: pl.DataFrame, tidy: pl.DataFrame, limits: Readability | None = None) -> list[str]:
    """The report's opening sentences from the judgments and their tidy metric table.

    Cells flagged under ``limits`` stay out of the findings.
    """
    j = with_optional(j.lazy()).collect()
    estimates = estimates_table(j, limits)
    ci = intervals(tidy)
    return [
        *judge_sentences(j),
        *noise_sentences(estimates, ci),
        *effect_sentences(estimates, ci, target_names(j)),
        *unread_sentences(estimates),
    ]
