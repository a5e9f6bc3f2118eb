"""The comparison's page: each comparison's differences as a forest plot, then the tables."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from judgeprobe.compare.published import ComparedRun, Comparison, PublishedComparison
from judgeprobe.core.cells import MISSING, interval
from judgeprobe.render.page import Section, figures, render
from judgeprobe.render.plots import forest
from judgeprobe.runs.rundir import RunDir

AXIS = "difference (first run − compared run) with its 95% paired interval over documents"
RULE = (
    "Each row's effect in both runs on the documents both judged, their difference with its 95% "
    "paired interval and exact sign test over documents, q-values by Benjamini–Hochberg over "
    "every row of every comparison; a verdict other than 'no detectable difference' needs "
    "q ≤ {fdr}; MDD: the smallest difference the test would see with power {power} "
    "(docs/metrics.md, 'Comparing runs on the same items')."
)


def _num(x: float | None, digits: int = 3) -> str:
    return MISSING if x is None else f"{x:.{digits}f}"


def _label(r: object, *, several: bool) -> str:
    judge, protocol, row = (getattr(r, k) for k in ("judge", "protocol", "row"))
    return f"{judge} · {protocol} · {row}" if several else str(row)


def forest_rows(c: Comparison) -> pl.DataFrame:
    """The rows' differences as ``render.plots.forest`` draws them (no thresholds)."""
    several = len({(r.judge, r.protocol) for r in c.rows}) > 1
    return pl.DataFrame(
        [{"label": _label(r, several=several), "value": r.diff, "lo": r.diff_lo, "hi": r.diff_hi,
          "threshold": None, "both_ways": False, "verdict": r.verdict} for r in c.rows],
        schema={"label": pl.String, "value": pl.Float64, "lo": pl.Float64, "hi": pl.Float64,
                "threshold": pl.Float64, "both_ways": pl.Boolean, "verdict": pl.String},
    )  # fmt: skip


def rows_table(c: Comparison) -> pl.DataFrame:
    """One formatted line per compared row."""
    return pl.DataFrame(
        [{"judge": r.judge, "protocol": r.protocol, "row": r.row, "effect of": r.effect_name,
          "first run": _num(r.effect_1), "compared run": _num(r.effect_2),
          "difference": interval(r.diff, r.diff_lo, r.diff_hi),
          "docs (1 > 2 / 2 > 1)": f"{r.documents} ({r.first_more} / {r.second_more})",
          "p": _num(r.p, 4), "q": _num(r.q, 4), "MDD": _num(r.mdd), "verdict": r.verdict}
         for r in c.rows],
        schema=["judge", "protocol", "row", "effect of", "first run", "compared run",
                "difference", "docs (1 > 2 / 2 > 1)", "p", "q", "MDD", "verdict"],
        orient="row",
    )  # fmt: skip


def _comparison(c: Comparison, runs: list[ComparedRun]) -> Section:
    first, second = runs[c.first], runs[c.second]
    note = (f"{second.run_id} ({second.path}) against {first.run_id} ({first.path}): "
            f"{c.shared_items} shared items in {c.shared_documents} documents; left out: "
            f"{c.only_first} items only the first judged, {c.only_second} only the compared "
            "run judged.")  # fmt: skip
    sentences = [f"human labels: {c.labels}"] if c.labels else []
    sentences += [f"unmatched: {u}" for u in c.unmatched]
    sentences += [f"not compared: {n}" for n in c.not_compared]
    plot = forest(forest_rows(c), f"{second.run_id} against {first.run_id}", AXIS)
    return Section(
        title=f"Run {c.second + 1} against run 1", note=note,
        figures=figures(**{f"compare_{c.second + 1}": plot}), tables=[rows_table(c)],
        sentences=sentences,
    )  # fmt: skip


def cost_table(runs: list[ComparedRun]) -> pl.DataFrame:
    """Each run's spend per judgment (and per settled row), or why it has none."""
    return pl.DataFrame(
        [{"run": r.run_id, "kind": r.kind, "judgments": str(r.cost.judgments),
          "requests / judgment": _num(r.cost.requests_per_judgment, 2),
          "tokens / judgment": _num(r.cost.tokens_per_judgment, 1),
          "seconds / judgment": _num(r.cost.seconds_per_judgment, 3),
          "$ / judgment": _num(r.cost.usd_per_judgment, 6),
          "settled rows": MISSING if r.cost.settled_rows is None else str(r.cost.settled_rows),
          "$ / settled row": _num(r.cost.usd_per_settled_row, 4), "note": r.cost.note}
         for r in runs],
        orient="row",
    )  # fmt: skip


def multiplier_table(runs: list[ComparedRun]) -> pl.DataFrame:
    """Each judge's label multiplier for the calibrated estimate, per model."""
    return pl.DataFrame(
        [{"run": r.run_id, "judge": m.judge, "protocol": m.protocol, "model": m.model,
          "labels": str(m.labels), "calibrated ± ": _num(m.halfwidth),
          "equivalent labels": _num(m.equivalent_labels, 1), "multiplier": _num(m.multiplier, 2)}
         for r in runs for m in r.multipliers],
        schema=["run", "judge", "protocol", "model", "labels", "calibrated ± ",
                "equivalent labels", "multiplier"],
        orient="row",
    )  # fmt: skip


def page(document: PublishedComparison, folder: Path) -> tuple[str, str]:
    """compare.md and compare.html (plots written into ``folder``/plots)."""
    sections = [_comparison(c, document.runs) for c in document.comparisons]
    sections.append(Section(title="Cost per judgment", tables=[cost_table(document.runs)]))
    multipliers = multiplier_table(document.runs)
    if not multipliers.is_empty():
        sections.append(Section(
            title="Label multipliers",
            note="Human labels alone that would give the calibrated (PPI++) interval's width, "
                 "divided by the labels used with the judge (docs/metrics.md).",
            tables=[multipliers],
        ))  # fmt: skip
    names = ", ".join(f"{k + 1}. {r.run_id}" for k, r in enumerate(document.runs))
    meta = [f"runs: {names}", RULE.format(fdr=document.fdr, power=document.power),
            document.intervals]  # fmt: skip
    return render(RunDir(folder), "Runs compared on the same items", meta, sections)
