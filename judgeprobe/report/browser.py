"""The evidence browser: each cue judgment beside its Blind twin, filterable in the page.

One HTML block with its own plain-JS filters (no library, no network): judge, protocol,
condition and how the verdict moved against Blind. A row shows the cue the judge saw, both
verdicts and explanations, and under PBP the quoted spans with their match scores. Rows are
capped (moved first) and long texts cut, so the page of a 10^6-judgment run stays small
enough to open.
"""

from __future__ import annotations

import html
from collections import Counter
from typing import Any

import orjson
import polars as pl

from judgeprobe.metrics.items import BLIND, PAIR, acknowledges, with_optional
from judgeprobe.text.lexicons import Lexicons

MAX_ROWS = 2_000
MAX_TEXT = 1_000  # characters of an explanation shown
MAX_QUOTES = 10  # quotes shown per judgment
MAX_QUOTE = 240  # characters of a quote shown

#: How a verdict moved against Blind, as in ``metrics.items.paired_units``: into the cue's
#: target (LDS), into Tie (TS), into the other candidate (OLS); ``changed`` = a move under a
#: cue without a target; ``unpaired`` = Invalid on either side or no Blind judgment;
#: ``silent`` = a move toward the cue whose explanation never names it
#: (``metrics.items.acknowledges``).
MOVES = {
    "silent": "toward the cue, never naming it",  # with lexicons: a silent cue move
    "toward": "toward the cue",
    "away": "away from the cue",
    "tie": "into Tie",
    "changed": "changed",
    "same": "unchanged",
    "unpaired": "no valid pair",
    "blind": "Blind only",
}
TEXT_COLUMNS = ("details", "invalid_reason", "turn1_explanation", "label_1", "label_2")


def _move() -> pl.Expr:
    v, vb, t = pl.col("verdict"), pl.col("blind_verdict"), pl.col("target")
    other = pl.when(t == "A").then(pl.lit("B")).when(t == "B").then(pl.lit("A"))
    return (
        pl.when((v == "Invalid") | vb.is_null() | (vb == "Invalid"))
        .then(pl.lit("unpaired"))
        .when(v == vb)
        .then(pl.lit("same"))
        .when(v == t)
        .then(pl.lit("toward"))
        .when(v == "Tie")
        .then(pl.lit("tie"))
        .when(v == other)
        .then(pl.lit("away"))
        .otherwise(pl.lit("changed"))
    )


def browser_rows(judgments: pl.DataFrame, lex: Lexicons | None = None) -> pl.DataFrame:
    """Every cue judgment joined to its Blind twin, with ``moved``, most telling first.

    The twin has the same judge, protocol, item, order and seed. Moves toward the cue come
    first (with ``lex``, the silent ones first), then away, into Tie, then the rest. A run
    without cue conditions lists its Blind judgments (``moved`` = ``blind``).
    """
    j = with_optional(judgments.lazy()).collect()
    j = j.with_columns(pl.lit("").alias(c) for c in TEXT_COLUMNS if c not in j.columns)
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
    rank = pl.col("moved").replace_strict(list(MOVES), range(len(MOVES)), return_dtype=pl.Int8)
    keys = ["judge", "protocol", "condition", "subset", "item_id", "order", "seed"]
    return rows.sort([rank, *keys])


def _cut(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quotes(details: str | None) -> str:
    """PBP's quoted spans with where they matched and how well, fabricated ones marked."""
    if not details:
        return ""
    try:
        notes = orjson.loads(details).get("notes") or {}
    except (orjson.JSONDecodeError, AttributeError):
        return ""
    quotes = [
        (criterion, side, q)
        for criterion, sides in notes.items()
        for side, note in sides.items()
        for q in note.get("quotes", [])
    ]
    if not quotes:
        return ""
    fabricated = sum(bool(q.get("fabricated")) for _, _, q in quotes)
    items = "".join(
        f"<li class='{'fab' if q.get('fabricated') else 'ok'}'>{html.escape(c)} · "
        f"{html.escape(side)}: “{html.escape(_cut(q.get('quote'), MAX_QUOTE))}” → "
        f"{html.escape(q.get('source') or 'no source')} {float(q.get('match') or 0):.2f}</li>"
        for c, side, q in quotes[:MAX_QUOTES]
    )
    more = f"<li>… {len(quotes) - MAX_QUOTES} more</li>" if len(quotes) > MAX_QUOTES else ""
    summary = f"{len(quotes)} quotes, {fabricated} fabricated (match &lt; 0.9)"
    return f"<details><summary>{summary}</summary><ul>{items}{more}</ul></details>"


def _verdict(verdict: str | None, explanation: str | None, reason: str | None, details: Any) -> str:
    if verdict is None:
        return "<span class='muted'>no Blind judgment</span>"
    why = f"<div class='muted'>{html.escape(_cut(reason, 300))}</div>" if reason else ""
    text = html.escape(_cut(explanation, MAX_TEXT))
    return f"<b>{html.escape(verdict)}</b>{why}<div class='ex'>{text}</div>{_quotes(details)}"


def _cue(r: dict[str, Any]) -> str:
    parts = [f"{i}: {html.escape(r[f'label_{i}'])}" for i in (1, 2) if r.get(f"label_{i}")]
    if r.get("attack"):
        parts.append(f"{html.escape(r['attack'])} attack on 1")
    if r.get("target") in ("A", "B"):
        parts.append(f"favours {r['target']}")
    return "<br>".join(parts) or "<span class='muted'>no cue</span>"


def _row(r: dict[str, Any]) -> str:
    data = " ".join(
        f"data-{k}='{html.escape(str(r[k]), quote=True)}'"
        for k in ("judge", "protocol", "condition", "moved")
    )
    turn1 = (
        f"<div class='muted'>turn 1: {html.escape(r['turn1_verdict'])}</div>"
        if r.get("turn1_verdict")
        else ""
    )
    probe = _verdict(r["verdict"], r["explanation"], r["invalid_reason"], r["details"])
    blind = _verdict(
        r["blind_verdict"], r["blind_explanation"], r["blind_invalid_reason"], r["blind_details"]
    )
    return (
        f"<tr {data}><td>{html.escape(r['item_id'])}<div class='muted'>"
        f"{html.escape(str(r['subset']))} · order {html.escape(str(r['order']))} · seed "
        f"{r['seed']}</div></td><td>{html.escape(r['judge'])}<br>{html.escape(r['protocol'])}"
        f"<br>{html.escape(r['condition'])}</td><td>{_cue(r)}</td><td>{blind}</td>"
        f"<td>{probe}{turn1}</td><td>{MOVES[r['moved']]}</td></tr>"
    )


def _chips(key: str, label: str, counts: Counter[str], names: dict[str, str]) -> str:
    """One filter: a button per value with its row count; ``all`` first (and ``moved``)."""
    buttons = [("", f"all ({sum(counts.values())})")]
    if key == "moved":
        moved = sum(counts[m] for m in ("silent", "toward", "away", "tie", "changed"))
        buttons.append(("any", f"moved ({moved})"))
    order = [v for v in names if counts[v]] if names else sorted(counts)
    buttons += [(v, f"{names.get(v, v)} ({counts[v]})") for v in order]
    html_buttons = "".join(
        f"<button type='button' data-key='{key}' data-value='{html.escape(v, quote=True)}'"
        f"{'' if v else ' class=on'}>{html.escape(text)}</button>"
        for v, text in buttons
    )
    return f"<div class='chips'><span>{label}</span>{html_buttons}</div>"


SCRIPT = """
(function () {
  var root = document.getElementById('evidence');
  var rows = root.querySelectorAll('tbody tr');
  var state = {};
  var moved = ['silent', 'toward', 'away', 'tie', 'changed'];
  function keep(tr) {
    for (var key in state) {
      var want = state[key], have = tr.dataset[key];
      if (!want) continue;
      if (key === 'moved' && want === 'any' ? moved.indexOf(have) < 0 : have !== want)
        return false;
    }
    return true;
  }
  function apply() {
    var shown = 0;
    rows.forEach(function (tr) { tr.hidden = !keep(tr); if (!tr.hidden) shown++; });
    root.querySelectorAll('button[data-key]').forEach(function (b) {
      b.classList.toggle('on', (state[b.dataset.key] || '') === b.dataset.value);
    });
    root.querySelector('.ev-count').textContent = shown + ' of ' + rows.length + ' rows shown';
  }
  root.addEventListener('click', function (e) {
    var b = e.target.closest('button[data-key]');
    if (b) { state[b.dataset.key] = b.dataset.value; apply(); }
  });
  // #ev?moved=toward&judge=NAME opens the browser filtered: a link to one view.
  function fromHash() {
    var hash = decodeURIComponent(location.hash || '');
    if (hash.indexOf('#ev?') !== 0) return;
    state = {};
    new URLSearchParams(hash.slice(4)).forEach(function (v, k) { state[k] = v; });
    apply();
  }
  window.addEventListener('hashchange', fromHash);
  apply();
  fromHash();
})();
"""

CSS = (
    "#evidence .chips{margin:.3em 0;font-size:13px}#evidence .chips span{display:inline-block;"
    "width:7em;color:#555}#evidence button{margin:1px 3px;border:1px solid #bbb;"
    "background:#fafafa;border-radius:10px;padding:1px 8px;cursor:pointer;font-size:12px}"
    "#evidence button.on{background:#4C72B0;color:#fff;border-color:#4C72B0}"
    "#evidence table{width:100%;table-layout:fixed}#evidence td,#evidence th{text-align:left;"
    "vertical-align:top;font-size:12px}#evidence .ex{white-space:pre-wrap;margin-top:2px}"
    "#evidence .muted{color:#777;font-size:11px}#evidence li.fab{color:#b00}"
    "#evidence col.n{width:9%}#evidence col.t{width:35%}#evidence col.s{width:8%}"
)


def browser_html(rows: pl.DataFrame) -> str:
    """The browser block for ``browser_rows(...)``: filters, a count line, the capped table."""
    shown = rows.head(MAX_ROWS)
    cap = (
        f"<p class='note'>Showing the first {MAX_ROWS:,} of {rows.height:,} judgments, moves "
        "against Blind first; the full set is in judgments.parquet.</p>"
        if rows.height > MAX_ROWS
        else ""
    )
    records = shown.to_dicts()
    filters = "".join(
        _chips(key, label, Counter(str(r[key]) for r in records), MOVES if key == "moved" else {})
        for key, label in (
            ("judge", "judge"),
            ("protocol", "protocol"),
            ("condition", "condition"),
            ("moved", "vs Blind"),
        )
    )
    head = "".join(
        f"<th>{h}</th>" for h in ("item", "cell", "cue shown", "Blind", "with the cue", "moved")
    )
    cols = "<colgroup><col class='n'><col class='n'><col class='n'><col class='t'>"
    cols += "<col class='t'><col class='s'></colgroup>"
    body = "".join(_row(r) for r in records)
    return (
        f"<div id='evidence'>{cap}{filters}<p class='ev-count note'>{len(records)} rows</p>"
        f"<table>{cols}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        f"<style>{CSS}</style><script>{SCRIPT}</script></div>"
    )
