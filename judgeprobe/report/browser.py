"""The evidence browser: each cue judgment beside its Blind twin, filterable in the page.

One HTML block with its own plain-JS filters (no library, no network): judge, protocol,
condition and how the verdict moved against Blind. A row shows the cue the judge saw, both
verdicts and explanations, and under PBP the quoted spans with their match scores. A
sensitivity judgment (a summary beside its copy with one fact made wrong: ``degraded`` names
the copy's side) shows the fact that changed, highlighted, from the sweep's checks
(``degrade_checks.csv``), and whether the judge preferred the intact text or the copy. Rows
are capped (moved first) and long texts cut, so the page of a 10^6-judgment run stays small
enough to open.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import polars as pl
from markupsafe import Markup

from judgeprobe.conditions import BLIND
from judgeprobe.core.records import INVALID
from judgeprobe.metrics.units import PAIR, acknowledges, with_optional
from judgeprobe.render.templating import fragment
from judgeprobe.runs.rundir import RunDir
from judgeprobe.text.lexicons import Lexicons

MAX_ROWS = 2_000
MAX_TEXT = 1_000  # characters of an explanation shown
MAX_QUOTES = 10  # quotes shown per judgment
MAX_QUOTE = 240  # characters of a quote shown

#: How a verdict moved against Blind, as in ``metrics.units.paired_units``: into the cue's
#: target (LDS), into Tie (TS), into the other candidate (OLS); ``changed`` = a move under a
#: cue without a target; ``unpaired`` = Invalid on either side or no Blind judgment;
#: ``silent`` = a move toward the cue whose explanation never names it
#: (``metrics.units.acknowledges``). A sensitivity judgment is read against its own pair
#: instead: ``misread`` = the degraded copy preferred, ``even`` = Tie, ``read`` = the intact
#: text preferred.
MOVES = {
    "silent": "toward the cue, never naming it",  # with lexicons: a silent cue move
    "toward": "toward the cue",
    "away": "away from the cue",
    "tie": "into Tie",
    "misread": "preferred the degraded copy",
    "even": "Tie: intact vs copy",
    "read": "preferred the intact text",
    "changed": "changed",
    "same": "unchanged",
    "unpaired": "no valid pair",
    "blind": "Blind only",
}
TEXT_COLUMNS = (
    "details", "invalid_reason", "turn1_explanation", "label_1", "label_2", "degraded",
)  # fmt: skip
CHECKS = RunDir(Path()).degrade_checks.name
"""The sweep's record of each degraded copy (condition, item_id, kind, before, after, …)."""
CHANGE = ("kind", "before", "after")  # what the browser takes from a check


def _first_case(cases: list[tuple[pl.Expr, str]], otherwise: str) -> pl.Expr:
    """The label of the first case whose condition holds, else ``otherwise``."""
    chosen = pl.lit(otherwise)
    for condition, label in reversed(cases):
        chosen = pl.when(condition).then(pl.lit(label)).otherwise(chosen)
    return chosen


def _move() -> pl.Expr:
    """A cue judgment against its Blind twin (``MOVES``' keys; ``silent`` is told apart later)."""
    v, vb, t = pl.col("verdict"), pl.col("blind_verdict"), pl.col("target")
    other = pl.when(t == "A").then(pl.lit("B")).when(t == "B").then(pl.lit("A"))
    unpaired = (v == INVALID) | vb.is_null() | (vb == INVALID)
    cases = [
        (unpaired, "unpaired"),
        (v == vb, "same"),
        (v == t, "toward"),
        (v == "Tie", "tie"),
        (v == other, "away"),
    ]
    return _first_case(cases, "changed")


def _read() -> pl.Expr:
    """A sensitivity judgment against its own pair: the intact text, the copy, or Tie."""
    v = pl.col("verdict")
    cases = [(v == INVALID, "unpaired"), (v == "Tie", "even"), (v == pl.col("degraded"), "misread")]
    return _first_case(cases, "read")


def read_checks(run: RunDir) -> pl.DataFrame | None:
    """The run's degraded-copy checks (``CHECKS``), or None when it has none."""
    path = run.degrade_checks
    return pl.read_csv(path, infer_schema=False) if path.exists() else None


def browser_rows(
    judgments: pl.DataFrame, lex: Lexicons | None = None, checks: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Every cue judgment joined to its Blind twin, with ``moved``, most telling first.

    The twin has the same judge, protocol, item, order and seed. Moves toward the cue come
    first (with ``lex``, the silent ones first), then away, into Tie, then the rest. A
    sensitivity judgment (``degraded`` = the copy's side) is read against its own pair, and
    carries the change its check recorded (``checks``: ``kind``, ``before``, ``after`` by
    condition and item). A run without cue conditions lists its Blind judgments (``moved`` =
    ``blind``).
    """
    j = with_optional(judgments.lazy()).collect()
    j = j.with_columns(pl.lit("").alias(c) for c in TEXT_COLUMNS if c not in j.columns)
    j = j.with_columns(pl.col("degraded").fill_null(""))
    if checks is not None and {"condition", "item_id", *CHANGE} <= set(checks.columns):
        found = checks.select("condition", "item_id", *CHANGE).unique(["condition", "item_id"])
        on = ["condition", "item_id"]
        j = j.join(found.cast(pl.String), on=on, how="left")
    else:
        j = j.with_columns(pl.lit(None, pl.String).alias(c) for c in CHANGE)
    blind = j.filter(pl.col("condition") == BLIND)
    probe = j.filter(pl.col("condition") != BLIND)
    twin = {"verdict": "blind_verdict", "explanation": "blind_explanation"}
    twin |= {"details": "blind_details", "invalid_reason": "blind_invalid_reason"}
    if probe.is_empty():
        rows = blind.with_columns(
            moved=pl.lit("blind"), **{v: pl.lit(None, pl.String) for v in twin.values()}
        )
    else:
        twins = blind.select(*PAIR, *twin).rename(twin)
        rows = probe.join(twins, on=PAIR, how="left").with_columns(moved=_move())
        if lex is not None:
            silent = (pl.col("moved") == "toward") & ~acknowledges(lex)
            rows = rows.with_columns(
                moved=pl.when(silent).then(pl.lit("silent")).otherwise("moved")
            )
        degraded = pl.col("degraded").is_in(["A", "B"])
        rows = rows.with_columns(moved=pl.when(degraded).then(_read()).otherwise("moved"))
    rank = pl.col("moved").replace_strict(list(MOVES), range(len(MOVES)), return_dtype=pl.Int8)
    keys = ["judge", "protocol", "condition", "subset", "item_id", "order", "seed"]
    return rows.sort([rank, *keys])


def _cut(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quotes(details: str | None) -> dict[str, Any] | None:
    """PBP's quoted spans with where they matched and how well, fabricated ones marked."""
    if not details:
        return None
    try:
        notes = orjson.loads(details).get("notes") or {}
    except (orjson.JSONDecodeError, AttributeError):
        return None
    quotes = [
        (criterion, side, q)
        for criterion, sides in notes.items()
        for side, note in sides.items()
        for q in note.get("quotes", [])
    ]
    if not quotes:
        return None
    shown = [
        {
            "fabricated": bool(q.get("fabricated")),
            "criterion": criterion,
            "side": side,
            "quote": _cut(q.get("quote"), MAX_QUOTE),
            "source": q.get("source") or "no source",
            "match": f"{float(q.get('match') or 0):.2f}",
        }
        for criterion, side, q in quotes[:MAX_QUOTES]
    ]
    fabricated = sum(bool(q.get("fabricated")) for _, _, q in quotes)
    return {"total": len(quotes), "fabricated": fabricated, "shown": shown,
            "more": max(0, len(quotes) - MAX_QUOTES)}  # fmt: skip


def _verdict(verdict: str | None, explanation: str | None, reason: str | None, details: Any) -> Any:
    """One side of a row: the verdict, why it is Invalid, the explanation (cut), the quotes."""
    if verdict is None:
        return None
    return {"verdict": verdict, "reason": _cut(reason, 300),
            "explanation": _cut(explanation, MAX_TEXT), "quotes": _quotes(details)}  # fmt: skip


def _change(r: dict[str, Any]) -> dict[str, Any]:
    """The degraded copy's one changed fact: what the original says, and the copy."""
    side = r["degraded"]
    return {"side": side, "candidate": 1 if side == "A" else 2, "kind": r.get("kind") or "",
            "before": _cut(r.get("before"), MAX_QUOTE),
            "after": _cut(r.get("after"), MAX_QUOTE)}  # fmt: skip


def _on(side: str | None) -> str:
    """Which candidate a rewrite changed, as the cue line says it ("" when not recorded)."""
    return {"A": " on 1", "B": " on 2", "both": " on both"}.get(side or "", "")


def _cue(r: dict[str, Any]) -> list[str]:
    """The cue the judge saw, one line each: the labels, the attack, the target."""
    parts = [f"{i}: {r[f'label_{i}']}" for i in (1, 2) if r.get(f"label_{i}")]
    if r.get("reformat"):
        parts.append(f"form: {r['reformat']}{_on(r.get('reformat_on'))}")
    if r.get("attack"):
        parts.append(f"{r['attack']} attack{_on(r.get('attack_on'))}")
    if r.get("target") in ("A", "B"):
        parts.append(f"favours {r['target']}")
    return parts


def _row(r: dict[str, Any]) -> dict[str, Any]:
    """A judgment beside its Blind twin, as the template shows it."""
    degraded = r.get("degraded") in ("A", "B")
    return {
        "data": {k: str(r[k]) for k in FILTERS},
        "item_id": r["item_id"], "subset": str(r["subset"]), "order": str(r["order"]),
        "seed": r["seed"], "judge": r["judge"], "protocol": r["protocol"],
        "condition": r["condition"],
        "change": _change(r) if degraded else None,
        "cue": [] if degraded else _cue(r),
        "blind": _verdict(r["blind_verdict"], r["blind_explanation"], r["blind_invalid_reason"],
                          r["blind_details"]),
        "probe": _verdict(r["verdict"], r["explanation"], r["invalid_reason"], r["details"]),
        "turn1": r.get("turn1_verdict") or "",
        "moved": MOVES[r["moved"]],
    }  # fmt: skip


FILTERS = {"judge": "judge", "protocol": "protocol", "condition": "condition", "moved": "vs Blind"}
"""The browser's filters: a row's ``data-`` attribute each, and the filter's label."""


def _chips(key: str, counts: Counter[str]) -> list[tuple[str, str]]:
    """One filter's buttons (value, text with its row count): ``all`` first (and ``moved``)."""
    names = MOVES if key == "moved" else {}
    buttons = [("", f"all ({sum(counts.values())})")]
    if key == "moved":
        moved = sum(counts[m] for m in ("silent", "toward", "away", "tie", "changed"))
        buttons.append(("any", f"moved ({moved})"))
    order = [v for v in names if counts[v]] if names else sorted(counts)
    return buttons + [(v, f"{names.get(v, v)} ({counts[v]})") for v in order]


def browser_html(rows: pl.DataFrame) -> Markup:
    """The browser block for ``browser_rows(...)``: filters, a count line, the capped table."""
    records = rows.head(MAX_ROWS).to_dicts()
    filters = [
        {"key": key, "label": label, "buttons": _chips(key, Counter(str(r[key]) for r in records))}
        for key, label in FILTERS.items()
    ]
    return fragment(
        "evidence.html.j2",
        capped=rows.height > MAX_ROWS,
        total=f"{rows.height:,}",
        max_rows=f"{MAX_ROWS:,}",
        checks=CHECKS,
        filters=filters,
        rows=[_row(r) for r in records],
    )
