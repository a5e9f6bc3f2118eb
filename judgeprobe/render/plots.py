"""Bar panels with 95% intervals on every bar (matplotlib, rendered off-screen to PNG).

A chart returns its PNG, ``None`` when it has no rows at all (its section is left out), or
one line of text when its rows hold nothing to draw (every value 0 or undefined): a panel of
empty axes tells a reader less than a sentence saying so. Inside a chart, a subplot with
nothing to draw says so in words instead of showing empty axes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

COLORS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3")


def png(fig: Figure) -> bytes:
    """Save a figure as PNG bytes and free it, so many plots do not pile up in memory."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _errors(rows: pl.DataFrame) -> np.ndarray:
    value = rows["value"].fill_null(np.nan).to_numpy()
    lo = rows["lo"].fill_null(np.nan).to_numpy()
    hi = rows["hi"].fill_null(np.nan).to_numpy()
    spread: np.ndarray = np.nan_to_num(np.vstack([value - lo, hi - value]), nan=0.0)
    return spread.clip(min=0.0)


def blank(data: pl.DataFrame) -> str | None:
    """Why ``data`` has nothing to draw ("every value is 0"), or None when it has.

    Nothing to draw: every value undefined, or 0 with a zero-width interval (a difference
    of 0 with an interval around it is still drawn).
    """
    value, lo, hi = (data[c] for c in ("value", "lo", "hi"))
    if value.is_null().all():
        return "every value is undefined (–)"
    zero = value.is_null() | ((value == 0) & lo.fill_null(0).eq(0) & hi.fill_null(0).eq(0))
    if zero.all():
        return "every value is 0" + (" or undefined (–)" if value.is_null().any() else "")
    return None


def _say_blank(ax: Axes, title: str, why: str) -> None:
    """A subplot with nothing to draw: its title and why, no empty axes."""
    ax.axis("off")
    ax.set_title(title, fontsize=9)
    ax.text(0.5, 0.5, f"nothing to draw:\n{why}", ha="center", va="center", color="#555")


def _legend(axes: np.ndarray) -> None:
    """One legend, on the first subplot that has bars."""
    for ax in axes.flat:
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="best")
            return


def grouped_bars(
    tidy: pl.DataFrame, metrics: Sequence[str], x: str, hue: str, title: str
) -> bytes | str | None:
    """One subplot per (judge, metric); bars by ``x``, coloured by ``hue``; CI whiskers."""
    data = tidy.filter(pl.col("metric").is_in(list(metrics)))
    if data.is_empty():
        return None
    if why := blank(data):
        named = title if list(metrics) == [title] else f"{title} ({', '.join(metrics)})"
        return f"{named}: nothing to draw — {why}."
    judges = data["judge"].unique(maintain_order=True).to_list()
    xs = data[x].unique(maintain_order=True).to_list()
    hues = data[hue].unique(maintain_order=True).to_list()
    fig, axes = plt.subplots(
        len(judges), len(metrics), figsize=(4.2 * len(metrics), 2.8 * len(judges)),
        squeeze=False, layout="constrained",  # room for the figure title above the subplots
    )  # fmt: skip
    width = 0.8 / max(1, len(hues))
    for r, judge in enumerate(judges):
        for c, metric in enumerate(metrics):
            ax = axes[r][c]
            panel = data.filter((pl.col("judge") == judge) & (pl.col("metric") == metric))
            if why := (blank(panel) if not panel.is_empty() else "no values"):
                _say_blank(ax, f"{metric} — {judge}", why)
                continue
            for k, h in enumerate(hues):
                rows = data.filter(
                    (pl.col("judge") == judge) & (pl.col("metric") == metric) & (pl.col(hue) == h)
                )
                pos = [xs.index(v) + (k - (len(hues) - 1) / 2) * width for v in rows[x]]
                if not pos:
                    continue
                values = rows["value"].fill_null(0).to_numpy()
                color = COLORS[k % len(COLORS)]
                ax.bar(pos, values, width, yerr=_errors(rows), capsize=3, color=color, label=h)
                for p, undefined in zip(pos, rows["value"].is_null(), strict=True):
                    if undefined:  # no bar is not a zero: say it is undefined
                        ax.annotate("–", (p, 0), ha="center", va="bottom", fontsize=11)
            ax.set_xticks(range(len(xs)), [str(v) for v in xs], rotation=30, ha="right")
            ax.set_title(f"{metric} — {judge}", fontsize=9)
            ax.axhline(0, color="black", linewidth=0.5)
    _legend(axes)
    fig.suptitle(title)
    return png(fig)


def stacked_shifts(tidy: pl.DataFrame, title: str) -> bytes | str | None:
    """LDS/TS/OLS stacked per (condition, protocol); each segment with its own interval."""
    parts = ("LDS", "TS", "OLS")
    data = tidy.filter(pl.col("metric").is_in(parts))
    if data.is_empty():
        return None
    if why := blank(data):
        return f"{title}: nothing to draw — {why}."
    judges = data["judge"].unique(maintain_order=True).to_list()
    n_bars = data.select("condition", "protocol").unique().height
    fig, axes = plt.subplots(
        len(judges), 1, figsize=(max(9.0, 0.55 * n_bars), 3.4 * len(judges)), squeeze=False
    )
    for r, judge in enumerate(judges):
        ax = axes[r][0]
        sub = data.filter(pl.col("judge") == judge)
        if why := blank(sub):
            _say_blank(ax, judge, why)
            continue
        bars = sub.select("condition", "protocol").unique(maintain_order=True)
        labels = [f"{c}\n{p}" for c, p in bars.iter_rows()]
        bottom = np.zeros(len(labels))
        for k, part in enumerate(parts):
            part_rows = sub.filter(pl.col("metric") == part)
            rows = bars.join(part_rows, on=["condition", "protocol"], how="left")
            values = rows["value"].fill_null(0).to_numpy()
            err = _errors(rows.with_columns(pl.col("value").fill_null(0)))
            ax.bar(range(len(labels)), values, 0.6, bottom=bottom, color=COLORS[k], label=part)
            tops = bottom + values
            ax.errorbar(range(len(labels)), tops, yerr=err, fmt="none", ecolor="k", capsize=2)
            bottom += values
        ax.set_xticks(range(len(labels)), labels, fontsize=7, rotation=45, ha="right")
        ax.set_ylabel("share of paired items")
        ax.set_title(judge, fontsize=9)
    _legend(axes)
    fig.suptitle(title)
    return png(fig)


VERDICT_COLORS = {
    "BIASED": "#C44E52",
    "UNSTABLE": "#C44E52",
    "INSENSITIVE": "#DD8452",
    "NOISY": "#DD8452",
    "UNDERPOWERED": "#937860",
    "CLEAR": "#55A868",
    "STABLE": "#55A868",
    "SENSITIVE": "#4C72B0",
    "better": "#55A868",
    "worse": "#C44E52",
    "no detectable difference": "#937860",
}
"""A verdict's colour on the card's forest plot: red fails, orange cannot pass, grey cannot
tell, green passes, blue reads; a comparison of runs (``compare``): green better, red worse,
grey no detectable difference."""
_OTHER = "#555555"


def _literal(text: str) -> str:
    """``text`` shown as it is: a ``$`` would start matplotlib's mathtext."""
    return text.replace("$", r"\$")


FOREST_AXIS = "effect with its 95% interval; grey marks: the row's threshold"


def forest(rows: pl.DataFrame, title: str, axis: str = FOREST_AXIS) -> bytes | None:
    """Each row's effect and 95% interval against its threshold, coloured by verdict.

    ``rows``: ``label``, ``value``, ``lo``, ``hi``, ``threshold`` (None: none drawn),
    ``both_ways`` (the threshold holds either way: a mark at −threshold too) and ``verdict``,
    top to bottom. A row without a value is listed, marked "–". ``axis``: what the x axis shows.
    None for no rows.
    """
    if rows.is_empty():
        return None
    n = rows.height
    fig, ax = plt.subplots(figsize=(8.0, 0.9 + 0.28 * n), layout="constrained")
    ys = np.arange(n)[::-1]
    for y, r in zip(ys, rows.iter_rows(named=True), strict=True):
        color = VERDICT_COLORS.get(r["verdict"] or "", _OTHER)
        if r["threshold"] is not None:
            marks = [r["threshold"], -r["threshold"]] if r["both_ways"] else [r["threshold"]]
            ax.plot(marks, [y] * len(marks), "|", color="#888", markersize=11, markeredgewidth=1.5)
        if r["value"] is None:
            ax.annotate("–", (0, y), ha="center", va="center", color=_OTHER)
            continue
        if r["lo"] is not None and r["hi"] is not None:
            ax.plot([r["lo"], r["hi"]], [y, y], color=color, linewidth=2)
        ax.plot([r["value"]], [y], "o", color=color, markersize=5)
    ax.axvline(0, color="black", linewidth=0.5)
    ax.set_yticks(ys, [_literal(str(label)) for label in rows["label"]], fontsize=7)
    ax.set_ylim(-0.7, n - 0.3)
    ax.set_xlabel(axis, fontsize=8)
    shown = [v for v in VERDICT_COLORS if v in set(rows["verdict"].to_list())]
    handles = [
        Line2D([], [], color=VERDICT_COLORS[v], marker="o", linestyle="-", label=v) for v in shown
    ]
    if handles:
        ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(_literal(title), fontsize=10)
    return png(fig)
