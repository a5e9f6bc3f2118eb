"""``compare``: runs on the same items, each against the first, row by row.

The definitions are docs/metrics.md, "Comparing runs on the same items". For each later run:
the items both runs judged (the rest counted and left out), each run's card made from those
items alone, its rows re-read as document counts (``compare.rows``), rows matched by
(judge, protocol, row) and then by row name, and each matched row's paired difference
(``metrics.between.run_difference``). All rows of all comparisons are one Benjamini–Hochberg
family; each gets its minimum detectable difference (``card.stats.mde``) and a verdict by its
kind's ideal. Beside the rows: each run's cost per judgment from its spend record, and each
judge's label multiplier where the items carry human labels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.calibrate.labels import Labels, find_labels, human_values
from judgeprobe.card import stats
from judgeprobe.card.observed import observed_card
from judgeprobe.card.rows import INTERVALS, Card, make_card
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.compare.published import ComparedRow, Comparison, Verdict
from judgeprobe.compare.rows import FAMILIES, LARGER, TWO_SIDED, Row, card_rows, label_rows
from judgeprobe.conditions import BLIND
from judgeprobe.metrics.between import label_units, run_difference
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.families import families, prepare
from judgeprobe.metrics.load import counted_judgments
from judgeprobe.metrics.units import DOC, with_optional
from judgeprobe.runs.rundir import Manifest, RunDir
from judgeprobe.text.lexicons import Lexicons

FDR = 0.05
POWER = 0.8
NO_DIFFERENCE: Verdict = "no detectable difference"
ITEM = [DOC, "item_id"]


@dataclass(frozen=True)
class Loaded:
    """A run as ``compare`` reads it: its directory, manifest and counted judgments."""

    path: Path
    run: RunDir
    manifest: Manifest
    judgments: pl.DataFrame

    @property
    def logs(self) -> bool:
        """A judge's logs read into a run: observed rows, no spend."""
        return self.manifest.kind == "logs"


def load(path: Path) -> Loaded:
    """The run in ``path``; one error line when it is missing or cannot be read."""
    if not path.is_dir():
        raise JudgeprobeError(f"{path}: not a run directory")
    run = RunDir(path)
    for part in (run.judgments, run.manifest_file):
        if not part.is_file():
            raise JudgeprobeError(f"{path}: no {part.name} (is this a run directory?)")
    manifest = run.manifest()
    judgments = counted_judgments(run.judgments)
    judgments = with_optional(judgments.lazy()).collect()  # document_id where a table lacks it
    return Loaded(path, run, manifest, judgments.with_columns(pl.col(DOC).cast(pl.String)))


def _items(j: pl.DataFrame) -> pl.DataFrame:
    return j.select(pl.col(ITEM).cast(pl.String)).unique()


@dataclass(frozen=True)
class Shared:
    """The items two runs both judged, and what each holds that the other does not."""

    items: pl.DataFrame
    documents: list[str]
    only_first: int
    only_second: int


def shared(first: Loaded, second: Loaded) -> Shared:
    """The items both runs judged; none in common is one error line."""
    one, two = _items(first.judgments), _items(second.judgments)
    both = one.join(two, on=ITEM, how="inner")
    if both.is_empty():
        raise JudgeprobeError(
            f"{first.path} and {second.path} share no item (document_id, item_id): nothing to "
            "compare"
        )
    documents = sorted(both[DOC].unique().to_list())
    return Shared(both, documents, one.height - both.height, two.height - both.height)


def _card(run: Loaded, judgments: pl.DataFrame, lex: Lexicons) -> Card:
    """The run's card on ``judgments`` (its shared items), default thresholds."""
    limits = load_thresholds(None)
    if run.logs:
        return observed_card(run.run, judgments, limits, 0, 0, run.manifest.task)
    tidy = compute_metrics(judgments, lex, None, 0, 0, differences=False, method=INTERVALS)
    return make_card(judgments, tidy, lex, limits, 0, 0, run.manifest.task)


def run_rows(
    run: Loaded, items: pl.DataFrame, lex: Lexicons, labels: Labels | None
) -> tuple[list[Row], list[str]]:
    """Every comparable row of ``run`` on ``items`` alone, and the rows it cannot pair."""
    judgments = run.judgments.join(items, on=ITEM, how="semi")
    card = _card(run, judgments, lex)
    fams = families(prepare(judgments), lex, None, FAMILIES)
    rows, skipped = card_rows(card.records, fams)
    if labels is not None:
        blind = judgments.filter(pl.col("condition") == BLIND)
        rows += label_rows(label_units(blind, labels.rows))
    return rows, skipped


Matched = tuple[Row, Row, str, str]
"""The two runs' rows and the judge and protocol the comparison names."""


def _named(a: str, b: str) -> str:
    return a if a == b else f"{a} vs {b}"


def match(one: list[Row], two: list[Row]) -> tuple[list[Matched], list[str]]:
    """Rows by (judge, protocol, row), then by a row name left once on each side.

    Returns the pairs and the rows left unmatched, named with their run.
    """
    keyed = {(r.judge, r.protocol, r.row): r for r in two}
    pairs: list[Matched] = []
    left: list[Row] = []
    for r in one:
        other = keyed.pop((r.judge, r.protocol, r.row), None)
        if other is not None and other.kind == r.kind:
            pairs.append((r, other, r.judge, r.protocol))
        else:
            left.append(r)
    rest = list(keyed.values())
    names_one, names_two = Counter(r.row for r in left), Counter(r.row for r in rest)
    unmatched: list[str] = []
    for r in left:
        other = next((x for x in rest if x.row == r.row and x.kind == r.kind), None)
        if other is None or names_one[r.row] != 1 or names_two[r.row] != 1:
            unmatched.append(f"first run: {r.judge} · {r.protocol} · {r.row}")
            continue
        rest.remove(other)
        pairs.append((r, other, _named(r.judge, other.judge), _named(r.protocol, other.protocol)))
    unmatched += [f"compared run: {r.judge} · {r.protocol} · {r.row}" for r in rest]
    return pairs, unmatched


def verdict(kind: str, e1: float | None, e2: float | None, q: float | None,
            fdr: float = FDR) -> Verdict:  # fmt: skip
    """The compared run against the first: better, worse, or no detectable difference.

    Better is closer to the row's ideal (docs/metrics.md): a smaller |effect| for two-sided
    rows, a larger effect for reading rows and the rows against people, a smaller one for the
    rest (toward the cue, giving way, unreadable).
    """
    if q is None or q > fdr or e1 is None or e2 is None:
        return NO_DIFFERENCE
    if kind in TWO_SIDED:
        e1, e2 = -abs(e1), -abs(e2)  # larger is better once folded and negated
    elif kind not in LARGER:
        e1, e2 = -e1, -e2
    if e2 == e1:
        return NO_DIFFERENCE
    return "better" if e2 > e1 else "worse"


def compared_rows(pairs: list[Matched], documents: list[str]) -> list[ComparedRow]:
    """Each matched row's paired difference, before its q-value, MDD and verdict."""
    out = []
    for one, two, judge, protocol in pairs:
        d = run_difference(one.contribution, two.contribution, documents)
        out.append(ComparedRow(
            judge=judge, protocol=protocol, row=one.row, kind=one.kind,
            effect_name=_named(one.effect_name, two.effect_name), effect_1=d.value_1,
            effect_2=d.value_2, diff=d.delta.value, diff_lo=d.delta.lo, diff_hi=d.delta.hi,
            documents=d.documents, first_more=d.first_more, second_more=d.second_more, p=d.p,
            q=None, mdd=None, verdict=NO_DIFFERENCE,
        ))  # fmt: skip
    return out


def decided(comparisons: list[Comparison], fdr: float = FDR, power: float = POWER
            ) -> list[Comparison]:  # fmt: skip
    """Every row's q-value (one BH family over all comparisons), MDD and verdict."""
    everything = [r for c in comparisons for r in c.rows]
    q_values = iter(stats.bh_qvalues([r.p for r in everything]))
    tests = sum(r.p is not None for r in everything)
    out = []
    for c in comparisons:
        rows = []
        for r in c.rows:
            q = next(q_values)
            background = 2 * min(r.first_more, r.second_more) / max(r.documents, 1)
            mdd = stats.mde(r.documents, background, fdr, power, tests)
            rows.append(r.model_copy(update={
                "q": q, "mdd": mdd, "verdict": verdict(r.kind, r.effect_1, r.effect_2, q, fdr)
            }))  # fmt: skip
        out.append(c.model_copy(update={"rows": rows}))
    return out


def run_labels(runs: Sequence[Loaded]) -> Labels | None:
    """The human labels of the first run that has any; every run is measured against them."""
    for run in runs:
        found = find_labels(run.run, run.judgments, None)
        if not found.rows.is_empty():
            return found
    return None


def compare_two(first: Loaded, second: Loaded, index: int, lex: Lexicons,
                labels: Labels | None) -> Comparison:  # fmt: skip
    """One later run against the first, before the family's q-values."""
    both = shared(first, second)
    rows_1, skipped_1 = run_rows(first, both.items, lex, labels)
    rows_2, skipped_2 = run_rows(second, both.items, lex, labels)
    pairs, unmatched = match(rows_1, rows_2)
    return Comparison(
        first=0, second=index, shared_items=both.items.height,
        shared_documents=len(both.documents), only_first=both.only_first,
        only_second=both.only_second, labels="" if labels is None else labels.source,
        rows=compared_rows(pairs, both.documents), unmatched=unmatched,
        not_compared=[f"first run: {s}" for s in skipped_1]
        + [f"compared run: {s}" for s in skipped_2],
    )  # fmt: skip


def check_runs(runs: Sequence[Loaded]) -> None:
    """Refuse fewer than two runs and runs of different tasks, one line each."""
    if len(runs) < 2:
        raise JudgeprobeError("compare needs two or more runs (the first is the baseline)")
    tasks = {r.manifest.task.preset for r in runs}
    if len(tasks) > 1:
        named = ", ".join(f"{r.path} ({r.manifest.task.preset})" for r in runs)
        raise JudgeprobeError(f"the runs are of different tasks: {named}")


def human_of(labels: Labels | None) -> pl.DataFrame | None:
    """The labels as the calibrated estimate reads them (``HUMAN_SCHEMA``); None without."""
    return None if labels is None else human_values(labels.rows)
