"""Paired differences: a metric of one cell minus the same metric of another, on the same items.

The paper's claims are comparisons ("PBP suppresses LDS relative to Baseline"), so a level
with an interval is not enough: the difference must be measured on the units both cells
judged, with an interval that resamples the same documents for both (docs/metrics.md,
"Paired differences"). Here a *unit* is one (document, item, order, seed); two cells share it
when the metric's unit count (``MetricSpec.unit_column``: valid verdicts for EDR, valid Blind
pairs for LDS, …) is positive in both. On the shared units:

- ``delta`` = metric(a) − metric(b), each computed from its own sums;
- ``lo``/``hi``: the 95% interval over documents (``uncertainty.interval``), both cells' sums
  stacked into one pattern per document so both arms are measured on the same documents;
  ``ci_flag`` where it may not keep its promise;
- for shares (num / den, the unit count equal in both arms) an exact two-sided sign test
  over documents: ``a_more`` documents where a's count exceeds b's against ``b_more`` the
  other way (ties dropped), via ``scipy.stats.binomtest``. With one unit per document this
  is McNemar's exact test on the discordant pairs. Ratios of ratios (ND, LAO) get the
  interval only.

``compute_metrics`` adds every protocol pair (per judge and condition) and every judge pair
(per protocol and condition) for ``COMPARED``; ``paired_difference`` compares any two cells,
e.g. a placebo-subtracted effect LDS_True − LDS_Placebo.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import BLIND
from judgeprobe.core.estimate import Estimate
from judgeprobe.metrics.families import CONTINUOUS, families, prepare, union_columns
from judgeprobe.metrics.registry import BY_NAME, MetricSpec
from judgeprobe.metrics.resample import Draw, Key, Resampling, Totals, document_sums
from judgeprobe.metrics.uncertainty import (
    DEFAULT_RESAMPLES,
    SCORE,
    Method,
    Signed,
    by_group,
    difference,
    nan_to_none,
    parallel,
    sign_test_ps,
)
from judgeprobe.metrics.units import CELL, DOC, SHOWING, WORDED, Drift
from judgeprobe.protocols.registry import protocol_names
from judgeprobe.text.lexicons import Lexicons, load_lexicons

Cell = tuple[str, str, str]
"""(judge, protocol, condition)."""

B = "_b"  # suffix of the second arm's columns
COMPARED: dict[str, bool] = {"EDR": True, "ND": True, "LDS": False, "TS": False, "OLS": False,
                             "LAO": False, "wording_flip": True}  # fmt: skip
"""Metrics compared in the metrics table; True: on Blind only (the paper's Table II; the wording
flip share is Blind's). A cue metric is compared on the cue conditions, not on Blind under
another wording (``BlindWording1``, …): no cue there."""


@dataclass(frozen=True)
class PairedDifference:
    """metric(a) − metric(b) on the units both cells judged (see the module docstring)."""

    metric: str
    a: Cell
    b: Cell
    value_a: float | None  # the metric of a on the shared units; None when undefined
    value_b: float | None
    delta: Estimate  # a − b with its 95% paired document-level interval (value None: undefined)
    n: int  # shared units
    documents: int  # the documents they come from: the resampling unit
    a_more: int | None  # documents where a's count exceeds b's (shares only, else None)
    b_more: int | None
    p: float | None  # exact two-sided sign test of a_more against b_more
    ci_flag: str | None = None  # why delta's bounds may not keep their promise (uncertainty)


NO_CELL: Cell = ("", "", "")


def _net(column: str) -> str:
    """The column of a count's per-unit difference between the two arms."""
    return f"{column}_a_minus_b"


def _summaries(
    pairs: pl.DataFrame,
    group: list[str],
    specs: list[MetricSpec],
    resamples: int,
    seed: int,
    method: Method = SCORE,
) -> dict[tuple[Key, str], PairedDifference]:
    """Paired differences per ``group`` and metric, from units both arms share.

    The difference between the plain and ``_b`` columns of the shared units in ``pairs`` (one row
    per unit, both arms side by side); the cells are left for the caller to fill in.

    A share whose denominator is the same in both arms on every shared unit (EDR over units
    valid in both, LDS over units paired in both) is the share of Σ(num_a − num_b) over one
    denominator: each document's pattern is then (num_a − num_b, den), far fewer patterns
    than both arms' columns, and it decides the exact sign test over documents too.
    """
    arms = _BothArms.of(pairs, group, specs, method)
    groups = list(arms.totals.items())
    found = parallel([partial(arms.intervals, key, totals, resamples, seed)
                      for key, totals in groups])  # fmt: skip
    tests = arms.sign_tests(groups)
    return {
        (key, s.name): arms.difference(s, totals, got, tests.get((key, s.name)))
        for (key, totals), got in zip(groups, found, strict=True)
        for s in specs
    }


Interval = tuple[float, float, str | None]
"""A difference's interval and its flag."""

Tally = tuple[int, int, float]
"""Documents where arm a counts more, where b does, and the exact sign test's p."""


@dataclass(frozen=True)
class _BothArms:
    """Both arms' per-document sums of every metric's columns, and their two resamplings.

    ``paired`` draws each metric over both arms' columns; ``reduced`` draws a share whose
    denominator is equal in both arms from its net count alone (``tested``).
    """

    specs: list[MetricSpec]
    nets: list[str]  # each share's numerator column
    dens: list[str]  # each share's denominator column
    totals: dict[Key, Totals]
    equal: dict[Key, np.ndarray]  # per group: each den equal in both arms on every unit
    by_document: dict[Key, np.ndarray]  # per group: each net count per document
    paired: Resampling
    reduced: Resampling

    @classmethod
    def of(
        cls, pairs: pl.DataFrame, group: list[str], specs: list[MetricSpec], method: Method
    ) -> _BothArms:
        """Sum ``pairs`` per document and set up both resamplings."""
        cols = union_columns(specs)
        both = [*cols, *(c + B for c in cols)]
        shares = [s for s in specs if s.share]
        nets = list(dict.fromkeys(s.columns[0] for s in shares))
        dens = list(dict.fromkeys(s.columns[1] for s in shares))
        units = pairs.with_columns((pl.col(c) - pl.col(c + B)).alias(_net(c)) for c in nets)
        continuous = {c + x: n + x for c, n in CONTINUOUS.items() if c in cols for x in ("", B)}
        continuous |= {_net(s.columns[0]): s.columns[1] for s in shares
                       if s.columns[0] in CONTINUOUS}  # fmt: skip
        sums = document_sums(
            units, group, [*both, *map(_net, nets)], count=pl.len(), continuous=continuous
        )
        equal = by_group(
            pairs.group_by(group).agg((pl.col(d) == pl.col(d + B)).all() for d in dens),
            group,
            dens,
        )
        draws = {
            s.name: Draw((*s.columns, *(c + B for c in s.columns)),
                         difference(s.stat, len(s.columns)))
            for s in specs
        }  # fmt: skip
        nets_alone = {s.name: Draw((_net(s.columns[0]), s.columns[1]), Signed(0, 1))
                      for s in shares}  # fmt: skip
        return cls(
            specs=specs,
            nets=nets,
            dens=dens,
            totals=dict(sums.totals),
            equal=equal,
            by_document=by_group(sums.per_document, group, [_net(c) for c in nets]),
            paired=sums.resampling(draws, both, method),
            reduced=sums.resampling(nets_alone, method=method),
        )

    def tested(self, key: Key, spec: MetricSpec) -> bool:
        """A share whose denominator is equal in both arms: drawn and tested by its net count."""
        return spec.share and bool(self.equal[key][0, self.dens.index(spec.columns[1])])

    @staticmethod
    def values(totals: Totals, s: MetricSpec) -> tuple[float, float]:
        """The metric in arm a and in arm b."""
        arms = (totals.values(s.columns), totals.values([c + B for c in s.columns]))
        return float(s.stat(arms[0])), float(s.stat(arms[1]))

    def intervals(self, key: Key, totals: Totals, resamples: int, seed: int) -> dict[str, Interval]:
        """Each defined difference's interval in group ``key``."""
        defined = [s for s in self.specs if not np.isnan(np.subtract(*self.values(totals, s)))]
        # Reduced shares draw alone; the rest may share one draw over both arms' columns.
        reduced, paired = self.reduced, self.paired
        alone = {
            s.name: (*reduced.interval(key, s.name, resamples, seed), reduced.flag(key, s.name))
            for s in defined
            if self.tested(key, s)
        }
        rest = [s.name for s in defined if not self.tested(key, s)]
        drawn = paired.intervals(key, rest, resamples, seed)
        return alone | {n: (*drawn[n], paired.flag(key, n)) for n in rest}

    def sign_tests(self, groups: list[tuple[Key, Totals]]) -> dict[tuple[Key, str], Tally]:
        """The exact sign test over documents of every tested share, all at once."""
        counts: dict[tuple[Key, str], tuple[int, int]] = {}
        for key, _ in groups:
            for s in self.specs:
                if self.tested(key, s):
                    net = self.by_document[key][:, self.nets.index(s.columns[0])]
                    counts[(key, s.name)] = int((net > 0).sum()), int((net < 0).sum())
        more, less = (np.array([c[i] for c in counts.values()], dtype=np.int64) for i in (0, 1))
        p_values = sign_test_ps(more, more + less).tolist()
        return {k: (*c, p) for (k, c), p in zip(counts.items(), p_values, strict=True)}

    def difference(
        self, s: MetricSpec, totals: Totals, got: dict[str, Interval], tally: Tally | None
    ) -> PairedDifference:
        """Metric ``s``'s difference in one group (its cells left for the caller)."""
        va, vb = self.values(totals, s)
        lo, hi, flag = got.get(s.name, (float("nan"), float("nan"), None))
        return PairedDifference(
            metric=s.name,
            a=NO_CELL,
            b=NO_CELL,
            value_a=nan_to_none(va),
            value_b=nan_to_none(vb),
            delta=Estimate(value=nan_to_none(va - vb), lo=nan_to_none(lo), hi=nan_to_none(hi)),
            n=totals.n,
            documents=totals.documents,
            a_more=None if tally is None else tally[0],
            b_more=None if tally is None else tally[1],
            p=None if tally is None else nan_to_none(tally[2]),
            ci_flag=flag,
        )


def shared_units(
    left: pl.DataFrame,
    right: pl.DataFrame,
    on: list[str],
    den: str,
    where: pl.Expr | None = None,
    keep: list[str] | None = None,
) -> pl.DataFrame:
    """Units of ``left`` and ``right`` side by side where both count and ``where`` holds.

    Both count means ``den`` > 0; only the ``keep`` columns stay. Rows are filtered as the join
    streams, so the table of every combination is never held at once.
    """
    renamed = right.rename({c: c + B for c in right.columns if c not in on})
    joined = (
        left.lazy()
        .filter(pl.col(den) > 0)
        .join(renamed.lazy().filter(pl.col(den + B) > 0), on=on, how="inner")
    )
    if where is not None:
        joined = joined.filter(where)
    return (joined.select(keep) if keep else joined).collect()


def _ranked(values: list[str], kind: str) -> list[str]:
    """The order in which cells are compared.

    A row's cell minus an earlier one (protocols in their registry's order, then any other by
    name; judges by name).
    """
    if kind != "protocol":
        return sorted(values)
    known = [p for p in protocol_names() if p in values]
    return known + sorted(v for v in values if v not in known)


def difference_rows(
    fams: dict[str, pl.DataFrame],
    directional: dict[tuple[str, ...], bool],
    resamples: int,
    seed: int,
    method: Method = SCORE,
) -> list[dict[str, object]]:
    """Tidy rows (``compute.TIDY_SCHEMA``) of every protocol pair and judge pair of ``COMPARED``.

    The row's cell minus the ``versus`` cell, on their shared units.
    """
    groups: dict[tuple[str, bool, str], list[MetricSpec]] = {}
    for name, blind_only in COMPARED.items():
        spec = BY_NAME[name]
        groups.setdefault((spec.family, blind_only, spec.unit_column), []).append(spec)
    rows: list[dict[str, object]] = []
    for (family, blind_only, den), specs in groups.items():
        table = fams.get(family)
        if table is None or table.is_empty():
            continue
        cond = (
            pl.col("condition") == BLIND if blind_only else (pl.col("condition") != BLIND) & ~WORDED
        )
        cols = list(dict.fromkeys([*union_columns(specs), den]))
        units = table.filter(cond).select(*CELL, *SHOWING, pl.col(cols).cast(pl.Int32))
        for kind, fixed in (("protocol", "judge"), ("judge", "protocol")):
            values = units.select(pl.col(kind).unique())
            order = _ranked([str(v) for v in values[kind]], kind)
            if len(order) < 2:
                continue
            rank = values.with_columns(
                _rank=pl.col(kind).cast(pl.String).replace_strict(order, list(range(len(order))))
            )
            ranked = units.join(rank, on=kind)
            on = [fixed, "condition", *SHOWING]
            group = [fixed, "condition", kind, kind + B]
            later = pl.col("_rank") > pl.col("_rank" + B)
            keep = [*group, DOC, *cols, *(c + B for c in cols)]
            pairs = shared_units(ranked, ranked, on, den, later, keep)
            for (key, name), d in _summaries(pairs, group, specs, resamples, seed, method).items():
                cells = {kind: key[2], fixed: key[0]}, {kind: key[3], fixed: key[0]}
                a, b = ((c["judge"], c["protocol"], key[1]) for c in cells)
                if BY_NAME[name].directional and not (directional.get(a) and directional.get(b)):
                    continue
                rows.append(_tidy(d, a, name, f"{kind}={key[3]}"))
    return rows


def cell_units(units: pl.DataFrame, spec: MetricSpec, cell: Cell) -> pl.DataFrame:
    """The units of ``cell`` in a family's table: showing keys and the metric's columns.

    Raises ``JudgeprobeError`` when the table has no scorer for the metric or the cell no unit.
    """
    cols = [*dict.fromkeys([*spec.columns, spec.unit_column])]
    if not set(cols) <= set(units.columns):
        raise JudgeprobeError(f"metric {spec.name}: no scorer given for {spec.columns[0]}")
    is_cell = (pl.col(c).cast(pl.String) == v for c, v in zip(CELL, cell, strict=True))
    arm = units.filter(pl.all_horizontal(is_cell))
    if arm.is_empty():
        raise JudgeprobeError(f"metric {spec.name}: no units in cell {'/'.join(cell)}")
    return arm.select(*SHOWING, *cols)


def paired_units(units: pl.DataFrame, spec: MetricSpec, a: Cell, b: Cell) -> pl.DataFrame:
    """The showings both cells count for ``spec``, a's columns beside b's (suffix ``_b``)."""
    arms = [cell_units(units, spec, cell) for cell in (a, b)]
    return shared_units(arms[0], arms[1], SHOWING, spec.unit_column)


def _tidy(d: PairedDifference, a: Cell, name: str, versus: str) -> dict[str, object]:
    """A difference as a row of the tidy table: in ``a``'s cell, ``versus`` the other arm."""
    return {
        "judge": a[0], "protocol": a[1], "condition": a[2], "metric": f"diff_{name}",
        "value": d.delta.value, "lo": d.delta.lo, "hi": d.delta.hi, "n": d.n,
        "documents": d.documents, "versus": versus, "p": d.p, "ci_flag": d.ci_flag,
    }  # fmt: skip


def paired_difference(
    judgments: pl.DataFrame | pl.LazyFrame,
    metric: str,
    a: Cell,
    b: Cell,
    *,
    lex: Lexicons | None = None,
    drift: Drift | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    method: Method = SCORE,
) -> PairedDifference:
    """metric(a) − metric(b) on the items both cells judged.

    With a paired document-level interval (``method``; ``resamples`` and ``seed`` serve the
    percentile bootstrap) and, for shares, an exact sign test over documents.

    Signature::

        paired_difference(judgments, metric, a, b, *, lex=None, drift=None,
                          resamples=10_000, seed=0) -> PairedDifference

    ``judgments``: a judgments table (``records.JUDGMENT_SCHEMA``; ``document_id`` is derived
    from the item where absent). ``metric``: a registry name (``registry.METRICS``), e.g.
    ``"LDS"``, ``"EDR"``, ``"delta_e_same"``. ``a``, ``b``: cells as (judge, protocol,
    condition); they may differ in any of the three, e.g. a placebo-subtracted effect is
    ``paired_difference(j, "LDS", (J, p, "True"), (J, p, "Placebo"))``. ``lex`` defaults to
    the bundled lexicons; ``drift`` scores ``delta_e_same`` (lexical metrics need none).
    Raises ``JudgeprobeError`` for an unknown metric or a cell with no judgments.
    """
    spec = BY_NAME.get(metric)
    if spec is None:
        raise JudgeprobeError(f"unknown metric {metric!r}; known: {', '.join(sorted(BY_NAME))}")
    frame = judgments.lazy()
    # The two cells and the Blind cells their paired metrics are read against.
    keep = pl.lit(False)
    for judge, protocol, condition in (a, b):
        same = (pl.col("judge") == judge) & (pl.col("protocol") == protocol)
        keep = keep | (same & pl.col("condition").is_in([condition, BLIND]))
    table = families(prepare(frame.filter(keep)), lex or load_lexicons(), drift, {spec.family})
    pairs = paired_units(table[spec.family], spec, a, b).with_columns(_pair=pl.lit("ab"))
    got = _summaries(pairs, ["_pair"], [spec], resamples, seed, method).get((("ab",), metric))
    if got is None:  # no shared unit
        return PairedDifference(
            metric, a, b, None, None, Estimate(value=None), 0, 0, None, None, None
        )
    return replace(got, a=a, b=b)
