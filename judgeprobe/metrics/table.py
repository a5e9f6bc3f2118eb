"""Print and save the estimates table; cells that cannot be read are marked."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from judgeprobe.core.cells import cell, interval_bounds, literal, p_value
from judgeprobe.core.files import atomic_path

SHOWN = [
    ("n", "n"),
    ("invalid_rate", "invalid"),
    ("n_A", "A"),
    ("n_B", "B"),
    ("n_Tie", "Tie"),
    ("EDR", "EDR"),
    ("ND", "ND"),
    ("LDS", "LDS"),
    ("TS", "TS"),
    ("OLS", "OLS"),
    ("LAO", "LAO"),
    ("sign_p", "sign p"),
]


def print_table(table: pl.DataFrame, console: Console | None = None, title: str = "") -> None:
    """The estimates table; a flagged cell's row is dimmed and its flag shown last."""
    view = Table(title=title or "Point estimates (paired against Blind)", header_style="bold")
    keys: list[str] = [c for c in ("domain", "subset") if c in table.columns]  # a breakdown
    keys += ["judge", "protocol", "condition"]
    for name in keys:
        view.add_column(name)
    for _, label in SHOWN:
        view.add_column(label, justify="right")
    flagged = "flag" in table.columns
    if flagged:
        view.add_column("cannot be read")
    for row in table.iter_rows(named=True):
        flag = str(row["flag"] or "") if flagged else ""
        cells = [str(row[k]) for k in keys] + [cell(row[c]) for c, _ in SHOWN]
        view.add_row(
            *literal([*cells, *([flag] if flagged else [])]), style="dim" if flag else None
        )
    out = console or table_console()
    out.print(view)
    if flagged and (table["flag"] != "").any():
        out.print(
            f"{int((table['flag'] != '').sum())} of {table.height} cells cannot be read "
            "(too many Invalid or too few items); their metrics are shown but not headlined."
        )


def print_differences(tidy: pl.DataFrame, console: Console | None = None) -> None:
    """The paired differences of a tidy table (``diff_`` rows).

    Each cell minus the cell it is compared with, its 95% interval and the exact sign test.
    """
    diffs = tidy.filter(pl.col("versus").is_not_null())
    if diffs.is_empty():
        return
    view = Table(title="Paired differences (same items, by document)", header_style="bold")
    keys: list[str] = [c for c in ("domain", "subset") if c in tidy.columns]
    for name in [*keys, "judge", "protocol", "condition", "metric", "versus"]:
        view.add_column(name)
    for name in ("difference", "95% interval", "p", "n"):
        view.add_column(name, justify="right")
    for r in diffs.iter_rows(named=True):
        view.add_row(*literal([
            *(r[k] for k in keys),
            r["judge"], r["protocol"], r["condition"], r["metric"], r["versus"],
            cell(r["value"]), interval_bounds(r["lo"], r["hi"]), p_value(r["p"]), r["n"],
        ]))  # fmt: skip
    (console or table_console()).print(view)


def table_console() -> Console:
    """Stdout console; wide enough for the table when output is redirected."""
    return Console() if sys.stdout.isatty() else Console(width=160)


def write_csv(table: pl.DataFrame, path: Path) -> None:
    """Write a metric table atomically, six significant digits, for the report and users."""
    with atomic_path(path) as tmp:
        table.write_csv(tmp, float_precision=6)
