"""Print and save the outcome metric table."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

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


UNDEFINED = "\u2013"  # an en dash: the metric is undefined (e.g. LAO when nothing moved)


def _fmt(value: object) -> str:
    if value is None:
        return UNDEFINED
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def print_table(table: pl.DataFrame, console: Console | None = None, title: str = "") -> None:
    view = Table(title=title or "Outcome metrics (paired against Blind)", header_style="bold")
    for name in ("judge", "protocol", "condition"):
        view.add_column(name)
    for _, label in SHOWN:
        view.add_column(label, justify="right")
    for row in table.iter_rows(named=True):
        view.add_row(
            row["judge"], row["protocol"], row["condition"], *(_fmt(row[c]) for c, _ in SHOWN)
        )
    (console or table_console()).print(view)


def table_console() -> Console:
    """stdout console; wide enough for the table when output is redirected."""
    return Console() if sys.stdout.isatty() else Console(width=160)


def write_csv(table: pl.DataFrame, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    table.write_csv(tmp, float_precision=6)
    os.replace(tmp, path)
