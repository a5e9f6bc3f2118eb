"""The cue battery on one screen: families × judges, from the card's rows.

Each cue's effect with its interval and verdict (``conditions/battery.toml`` names the families).
"""

from __future__ import annotations

import polars as pl

from judgeprobe.card.record import CueRow, shown
from judgeprobe.card.rows import Card
from judgeprobe.conditions import builtin_conditions, is_placebo
from judgeprobe.core.cells import MISSING
from judgeprobe.render.page import Section


def battery_view(card: Card) -> pl.DataFrame:
    """One row per battery cue, one column per judge (and protocol, when there are several).

    A cell: the cue's effect (its LDS minus its matched placebo's) with its 95% interval and
    the card's verdict. Placebo rows are left out: they are what the cues are read against.
    """
    rows = [r for r in card.of_type(CueRow) if r.family and not is_placebo(r.row)]
    if not rows:
        return pl.DataFrame()
    several = len({r.protocol for r in rows}) > 1
    cells = pl.DataFrame(
        {
            "family": r.family,
            "row": r.row,
            "column": f"{r.judge} · {r.protocol}" if several else r.judge,
            "cell": f"{shown(r.effect)} {r.verdict}",
        }
        for r in rows
    )
    bundled = dict.fromkeys(c.family for c in builtin_conditions().values() if c.family)
    families_in_order = dict.fromkeys([*bundled, *sorted(set(cells["family"]))])
    order = {name: i for i, name in enumerate(families_in_order)}  # the bundled files' order
    wide = cells.pivot("column", index=["family", "row"], values="cell", aggregate_function="first")
    return (
        wide.rename({"row": "cue"})
        .sort(pl.col("family").replace_strict(order, return_dtype=pl.Int64), "cue")
        .fill_null(MISSING)
    )


def battery_section(card: Card) -> list[Section]:
    """The battery view as a report section; nothing for a run without a battery cue."""
    view = battery_view(card)
    if view.is_empty():
        return []
    return [
        Section(
            "Cue battery",
            "Each battery cue's effect: its LDS minus its matched placebo's on the same items "
            "(LDS − OLS where the run has no placebo), 95% interval over documents, and the "
            "card's verdict. Label pairs appear both ways round (NAME, NAMEFlip); a negative "
            "effect means the judge favours the other side. Families and sources: "
            "docs/battery.md.",
            tables=[view],
        )
    ]
