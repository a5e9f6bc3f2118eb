"""The report's self-preference section (``metrics.selfpref``).

The unlabelled preference, with its identical-content control, and the label's effect, apart.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.core.cells import MISSING, interval
from judgeprobe.metrics.selfpref import LABELS, SUBSETS, UNLABELLED, self_preference
from judgeprobe.render.page import Section


def _said(got: dict[tuple[str, str], dict[str, object]], subset: str, measure: str) -> str:
    r = got.get((subset, measure))
    if r is None:
        return MISSING
    value, lo, hi = (r[c] for c in ("value", "lo", "hi"))
    return interval(*(float(x) if isinstance(x, int | float) else None for x in (value, lo, hi)))


def _reading(rows: pl.DataFrame) -> list[str]:
    """Per judge and protocol: is there a preference, is it style, does a label move it."""
    out = []
    for (judge, protocol), part in rows.partition_by(["judge", "protocol"], as_dict=True).items():
        got = {(r["subset"], r["measure"]): r for r in part.iter_rows(named=True)}
        rate = _said(got, "self_vs_other", UNLABELLED)
        text = f"{judge} ({protocol}): its own text wins {rate} unlabelled"
        if ("self_style", UNLABELLED) in got:
            style = _said(got, "self_style", UNLABELLED)
            text += (
                f"; on identical content in its own wording {style} (above 0.5: a preference "
                "for its own style, not for better content)"
            )
        labels = "; ".join(f"{m} {_said(got, 'self_vs_other', m)}" for m in LABELS.values())
        out.append(f"{text}. Label effect on the own text's win rate: {labels}.")
    return out


def selfpref_sections(j: pl.DataFrame, resamples: int, seed: int) -> list[Section]:
    """The self-preference tables; nothing for a run without the self-preference subsets."""
    if not j["subset"].is_in(list(SUBSETS)).any():
        return []
    rows = self_preference(j, resamples, seed)
    shown = rows.select(
        "judge", "protocol", "subset", "measure", "n", "documents",
        value=pl.struct("value", "lo", "hi").map_elements(
            lambda r: interval(r["value"], r["lo"], r["hi"]), return_dtype=pl.String),
    )  # fmt: skip
    return [
        Section(
            "Self-preference",
            "The judge's own text (candidate 1) against another model's. Unlabelled: its win "
            "rate under Blind, a Tie counting half. self_vs_other: its own summary against the "
            "other's; self_style: the other's summary rewritten by the judge against the "
            "original, identical content, so only the wording is its own. Label: the change "
            'in that win rate, paired with Blind, when "Written by you" is shown on its own '
            "text (true) or on the other's (false). 95% intervals over documents.",
            tables=[shown],
            sentences=_reading(rows),
        )
    ]
