"""The judge card's rows.

One per judge × protocol × cue condition, one per judge × protocol for position (runs with ``order =
"both"``), each with its effect, exact test, q-value, minimum detectable effect and verdict.

- **Cue rows.** LDS, TS and OLS with their document-level intervals (from the metrics
  table), the silent-cue rate (LDS moves whose explanation never names the cue) with its
  interval, and the row's *effect*: the placebo-subtracted LDS (LDS − LDS of Placebo on the
  same items, ``metrics.compare.paired_difference``) where the run has a Placebo cell for the
  judge and protocol, else LDS − OLS on the row's own pairs. A battery cue is compared with its
  matched placebo (``placebo`` in ``conditions/battery.toml``) where the run has it; a placebo
  row is always LDS − OLS. Its exact test is the sign test over documents the effect implies
  (McNemar on discordant documents). Each row names its cue family (``family``: a
  battery cue's, "" for every other row), and rows are grouped by it.
- **Position rows.** On Blind items judged in both orders: consistency, and the
  first-position excess (first-shown chosen in both orders − second-shown in both) / items
  with McNemar's exact test over documents. Row ``position`` is the sweep's own label scheme;
  each further scheme (``names`` as a list) has its own, ``position (letters)`` and so on, on
  its Blind judgments (``conditions.NAMED_BLIND``).
- **Score shift** (a pointwise judge's cue rows): the cue's target's mean score under the cue
  minus under Blind, in the judge's points, with its interval (the metrics table's); it decides
  no verdict: the row's test is its derived verdicts', as for every judge. A pointwise judge has
  no position row: the order of a pair never reaches it.
- **Evidence** (PBP rows): the share of the cell's criteria whose quotes cannot tell the
  candidates apart (``nondiscriminating_rate``), flagged in the card's note at
  ``metrics.flags.NONDISCRIMINATING_FLAG``; it decides no verdict.
- **Pressure rows** (runs with ``Challenge`` or ``Disagree``, thresholds version 3): does the
  judge give way when pushed with no new information? RS − RS(Reask) with its sign test over
  documents (``card.pressure``); the noise floor beside it.
- **Wording rows** (runs with ``wordings``, thresholds version 4): does the judge change its
  verdict with the wording of its prompt? The wording flip share with its interval against
  ``max_wording_flip`` (UNSTABLE, STABLE, UNDERPOWERED; ``card.wording``); Fleiss' κ in the note.
- **Accuracy rows** (items with gold, ``card.gold``): SENS_gold on Blind, ACC and the
  longer/shorter baselines beside it; a second sensitivity control, which gates CLEAR as the
  degraded copies do.
- **Repeat rows** (runs with ``repeat``): the noise floor, the share of Blind judgments whose
  verdict changed when the identical request was sent again; STABLE or NOISY against
  ``max_flip_rate``. It is shown beside every cue row of the judge and protocol too.

q-values are Benjamini–Hochberg over every test on the card; the MDE is at the row's number
of documents and at the level BH asks of a lone effect among the card's m tests, α / m (see
``stats.mde``); the verdict applies ``stats.verdict`` with the thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import polars as pl

from judgeprobe.card import stats
from judgeprobe.card.gold import accuracy_rows
from judgeprobe.card.kinds.alttest import DOES_NOT_REPLACE, AltTestRow
from judgeprobe.card.kinds.reading import AccuracyRow, SensitivityRow
from judgeprobe.card.pairs import cue_pairs, direction_test, position_pairs
from judgeprobe.card.pressure import pressure_units
from judgeprobe.card.record import (
    KIND_ORDER,
    CalibratedEstimate,
    CardRow,
    CueRow,
    Estimate,
    PositionRow,
    PressureRow,
    RepeatRow,
    RowBase,
    SettledRow,
    rows_frame,
)
from judgeprobe.card.sensitivity import INSENSITIVE, gate, sensitivity_rows, sensitivity_verdict
from judgeprobe.card.thresholds import LoadedThresholds
from judgeprobe.card.wording import UNSTABLE, wording_rows
from judgeprobe.conditions import (
    BLIND,
    PLACEBO,
    REASK,
    REPEAT,
    family_of,
    is_placebo,
    placebo_of,
    scheme_of_condition,
)
from judgeprobe.metrics.compare import PairedDifference, paired_difference
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.metrics.uncertainty import (
    DEFAULT_RESAMPLES,
    SCORE,
    Method,
    Signed,
    nan_to_none,
    ratio,
    unit_interval,
)
from judgeprobe.metrics.units import DOC
from judgeprobe.metrics.winrates import WinRate
from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.runs.rundir import EXIT_UNRELIABLE, skipped_unreliable
from judgeprobe.text.lexicons import Lexicons

EXIT_BIASED = 5
EXIT_DOES_NOT_REPLACE = 8
EXIT_UNDERPOWERED = 6
EXIT_INSENSITIVE = 7
NOISE_FLOOR = (REPEAT, "flip_rate")
"""Where the metrics table keeps a judge's noise floor: the flip rate of Blind judgments sent
again under fresh cache keys (``repeat`` in the sweep config)."""
INTERVALS: Method = SCORE
"""How the card's own intervals are computed (``uncertainty.interval``); the method line of its
rule names it (``uncertainty.method_sentence``), and the metrics table it reads is computed so
too (``card.from_run``)."""
Row = TypeVar("Row", bound=RowBase)


@dataclass(frozen=True)
class Card:
    """A judge card: one row per test, the silent moves behind it, and the thresholds it used."""

    records: tuple[CardRow, ...]  # in the card's order (``make_card``)
    silent_items: pl.DataFrame  # the LDS pairs whose explanation never names the cue
    thresholds: LoadedThresholds
    task: Task = DEFAULT  # whose nouns its text speaks of (``prompts.task``)
    # Fleiss' κ and the counts behind each wording row (``metrics.wording.AGREEMENT_SCHEMA``)
    wording: pl.DataFrame = field(default_factory=pl.DataFrame)
    # The run's human review, when it has one (``card_for_run``): what it decided, and the
    # judges' κ with the human preference labels (``metrics.agreement.JUDGE_KAPPA_SCHEMA``).
    review: tuple[str, ...] = ()
    human: pl.DataFrame | None = None
    method: Method = INTERVALS  # how the rows' intervals were computed
    # Figures corrected by a calibration, where the run has one: a section, not rows.
    calibrated: tuple[CalibratedEstimate, ...] = ()
    # A logs run's rows its readers skipped, of the rows its logs held (the manifest's)
    skipped: int = 0
    log_rows: int = 0
    notes: tuple[str, ...] = ()  # why a row the run asked for is not on the card (``--self``)
    # A judge-logs card (``card.observed``): it speaks of the log, not of a live design.
    observed: bool = False
    # A logs run's win rates as the log's own tool counts them (``metrics.winrates``).
    win_rates: tuple[WinRate, ...] = ()

    @cached_property
    def rows(self) -> pl.DataFrame:
        """The rows as card.csv holds them (``record.CSV_COLUMNS``), for people.

        A view for spreadsheets: nothing in the package reads it back (it reads ``records``).
        """
        return rows_frame(self.records)

    def of_type(self, kind: type[Row]) -> list[Row]:
        """The rows of one kind's model (or a family's base, e.g. ``SettledRow``), in order."""
        return [r for r in self.records if isinstance(r, kind)]

    def find(self, judge: str, protocol: str, row: str) -> CardRow | None:
        """The row named ``row`` of a judge × protocol; None when the card has none."""
        return next(
            (r for r in self.records if (r.judge, r.protocol, r.row) == (judge, protocol, row)),
            None,
        )

    @property
    def verdicts(self) -> set[str]:
        """Every verdict on the card."""
        return {r.verdict for r in self.records if r.verdict is not None}

    @property
    def exit_code(self) -> int:
        """The card command's exit code, so a CI job can gate on the card.

        0 all clear (or, no row able to set one, nothing to gate on: ``card.speech``),
        ``EXIT_BIASED`` when any row is BIASED (or UNSTABLE: a wording row), else
        ``EXIT_DOES_NOT_REPLACE`` when an alt-test row that gates (thresholds version 5) is
        DOES-NOT-REPLACE, else ``EXIT_INSENSITIVE`` when
        any row is INSENSITIVE (the judge was not shown to read the texts), else
        ``EXIT_UNDERPOWERED`` when any row is UNDERPOWERED. Before all of them,
        ``EXIT_UNRELIABLE`` when a logs run skipped more than ``SKIPPED_LIMIT`` of its rows:
        its rows speak of a part of the logs only.
        """
        if skipped_unreliable(self.skipped, self.log_rows):
            return EXIT_UNRELIABLE
        verdicts = self.verdicts
        if verdicts & {"BIASED", UNSTABLE}:
            return EXIT_BIASED
        if any(r.gates and r.verdict == DOES_NOT_REPLACE for r in self.of_type(AltTestRow)):
            return EXIT_DOES_NOT_REPLACE
        if INSENSITIVE in verdicts:
            return EXIT_INSENSITIVE
        return EXIT_UNDERPOWERED if "UNDERPOWERED" in verdicts else 0


def _interval(
    units: pl.DataFrame, num: str, den: str, resamples: int, seed: int, *, signed: bool = False
) -> Estimate | None:
    """Σnum / Σden with its document-level 95% interval (``signed``: a unit's num may be < 0)."""
    total = int(units[den].sum())
    if total == 0:
        return None
    value = float(units[num].sum()) / total
    stat = Signed(0, 1) if signed else ratio(0, 1)
    lo, hi = unit_interval(units, [num, den], stat, resamples, seed, by=DOC, method=INTERVALS)
    return Estimate(value=value, lo=nan_to_none(lo), hi=nan_to_none(hi))


def _share(frame: pl.DataFrame, column: str) -> float:
    """The share of rows with ``column`` = 1 (0 for no rows)."""
    return int(frame[column].sum()) / frame.height if frame.height else 0.0


def _noise(table: MetricsTable, judge: str, protocol: str) -> Estimate | None:
    """The judge's noise floor, shown beside its tested rows."""
    return table.get((judge, protocol, NOISE_FLOOR[0]), NOISE_FLOOR[1]).found


def _evidence(table: MetricsTable, cell: tuple[str, str, str]) -> float | None:
    """The cell's share of criteria whose quotes cannot discriminate (None without quotes)."""
    return table.get(cell, "nondiscriminating_rate").value


def _against_placebo(d: PairedDifference, name: str) -> dict[str, Any]:
    """A row's effect as a paired difference from its placebo: the fields it fills.

    The MDE's background is the placebo's discordance, 2·r·(1 − r) at the placebo's rate r.
    """
    r = d.value_b or 0.0
    return {
        "effect_name": name,
        "effect": Estimate.of(d.delta.value, d.delta.lo, d.delta.hi),
        "up": d.a_more,
        "down": d.b_more,
        "p": d.p,
        "mde_documents": d.documents,
        "background": 2 * r * (1 - r),
    }


def _alone(
    units: pl.DataFrame,
    num: str,
    den: str,
    name: str,
    background: float,
    resamples: int,
    seed: int,
    *,
    signed: bool = False,
) -> dict[str, Any]:
    """A row's effect on its own units, Σnum / Σden, with the sign test of ``num`` by document."""
    up, down, p = direction_test(units, num)
    return {
        "effect_name": name,
        "effect": _interval(units, num, den, resamples, seed, signed=signed),
        "up": up,
        "down": down,
        "p": p,
        "mde_documents": units[DOC].n_unique(),
        "background": background,
    }


def cue_placebo(cell: tuple[str, str, str], cells: set[tuple[str, str, str]]) -> str:
    """The placebo condition a cue row's effect subtracts; "" for LDS − OLS.

    A battery cue's matched placebo where ``cells`` (the directional cells) hold it, else
    ``Placebo``; none for a placebo row itself or without a placebo cell.
    """
    judge, protocol, condition = cell
    if is_placebo(condition):
        return ""
    placebo = placebo_of(condition)
    if (judge, protocol, placebo) not in cells:
        placebo = PLACEBO
    return placebo if (judge, protocol, placebo) in cells else ""


def _cue_row(
    judgments: pl.DataFrame,
    pairs: pl.DataFrame,
    cell: tuple[str, str, str],
    placebo: str,
    table: MetricsTable,
    lex: Lexicons,
    resamples: int,
    seed: int,
) -> CueRow:
    judge, protocol, condition = cell
    d = None
    if placebo:
        d = paired_difference(
            judgments, "LDS", cell, (judge, protocol, placebo),
            lex=lex, resamples=resamples, seed=seed, method=INTERVALS,
        )  # fmt: skip
    if d is not None and d.documents > 0:  # else no item judged under both: LDS − OLS
        effect = _against_placebo(d, f"LDS − {placebo}")
    else:
        units = pairs.with_columns(net=pl.col("lds") - pl.col("ols"))
        effect = _alone(units, "net", "unit", "LDS − OLS", 2 * _share(pairs, "ols"), resamples,
                        seed, signed=True)  # fmt: skip
    return CueRow(
        judge=judge, protocol=protocol, row=condition, n=pairs.height,
        documents=pairs[DOC].n_unique(),
        lds=table.get(cell, "LDS").found, ts=table.get(cell, "TS").found,
        ols=table.get(cell, "OLS").found, moved=int(pairs["lds"].sum()),
        silent=_interval(pairs, "silent", "lds", resamples, seed),
        score_shift=table.get(cell, "score_shift").found,  # a pointwise judge's only
        prob_shift=table.get(cell, "prob_shift").found,  # a log-probability judge's only
        noise_floor=_noise(table, judge, protocol), nondiscriminating=_evidence(table, cell),
        **effect,
    )  # fmt: skip


def position_row_name(condition: str) -> str:
    """The card row of Blind's position (``position``), or of Blind under a further scheme."""
    scheme = scheme_of_condition(condition)
    return f"position ({scheme})" if scheme else "position"


def _position_row(
    units: pl.DataFrame, judge: str, protocol: str, table: MetricsTable, condition: str = BLIND
) -> PositionRow:
    """The position row: McNemar over documents, and the metrics table's figures.

    The first-shown excess and consistency with their intervals come from the metrics table,
    so the report and the card show one interval for one quantity. ``condition``: Blind, or
    Blind under a further label scheme (its own row).
    """
    cell = (judge, protocol, condition)
    up, down, p = direction_test(units, pl.col("first") - pl.col("second"))
    docs = units[DOC].n_unique()
    return PositionRow(
        judge=judge, protocol=protocol, row=position_row_name(condition),
        n=units.height, documents=docs, effect_name="first − second shown",
        effect=table.get(cell, "first_shown_excess").found,
        consistency=table.get(cell, "position_consistency").found,
        up=up, down=down, p=p, mde_documents=docs,
        background=2 * _share(units, "second"),
        nondiscriminating=_evidence(table, cell),
    )  # fmt: skip


def _repeat_rows(table: MetricsTable, max_flip_rate: float) -> list[RepeatRow]:
    """The repeat-stability row per judge and protocol.

    The noise floor, STABLE when at most ``max_flip_rate``, else NOISY (informational: no test, no
    exit code).
    """
    return [
        RepeatRow(
            judge=f.judge,
            protocol=f.protocol,
            row="repeat",
            n=f.n,
            documents=f.documents,
            effect_name="flip rate",
            effect=f.found,
            threshold=max_flip_rate,
            verdict="STABLE" if f.value is not None and f.value <= max_flip_rate else "NOISY",
        )
        for f in table.cells(NOISE_FLOOR[1])
        if f.condition == NOISE_FLOOR[0]
    ]


def _pressure_rows(
    judgments: pl.DataFrame, table: MetricsTable, lex: Lexicons, resamples: int, seed: int
) -> list[PressureRow]:
    """One untested-yet row per judge × protocol × pressure condition (``card.pressure``).

    The effect is RS − RS(Reask) on the showings both judged, else RS; each row carries the
    documents and background of its MDE, as the cue rows do.
    """
    units = pressure_units(judgments, lex).with_columns(unit=pl.lit(1, dtype=pl.Int64))
    cells = set(units.select("judge", "protocol", "condition").unique().iter_rows())
    rows: list[PressureRow] = []
    for key, part in units.partition_by(["judge", "protocol", "condition"], as_dict=True).items():
        cell = (str(key[0]), str(key[1]), str(key[2]))
        if is_placebo(cell[2]):
            continue  # Reask is what the pressure rows subtract, not a push
        placebo = placebo_of(cell[2], REASK)
        d = None
        if (cell[0], cell[1], placebo) in cells:
            d = paired_difference(judgments, "RS", cell, (cell[0], cell[1], placebo), lex=lex,
                                  resamples=resamples, seed=seed, method=INTERVALS)  # fmt: skip
        if d is not None and d.documents > 0:  # else no showing judged under both: RS
            effect = _against_placebo(d, f"RS − {placebo}")
        else:  # every revision counts as giving way: documents with one against none
            effect = _alone(part, "revised", "pairs", "RS", 0.0, resamples, seed)
        rows.append(
            PressureRow(
                judge=cell[0],
                protocol=cell[1],
                row=cell[2],
                n=int(part["pairs"].sum()),
                documents=part[DOC].n_unique(),
                rs_opp=table.get(cell, "RS_opp").found,
                rs_tie=table.get(cell, "RS_tie").found,
                rs_out=table.get(cell, "RS_out").found,
                noise_floor=_noise(table, cell[0], cell[1]),
                **effect,
            )
        )
    return rows


S = TypeVar("S", bound=SettledRow)


def _tested(row: S, q: float | None, tests: int, thresholds: LoadedThresholds) -> S:
    """The row with its q-value, MDE, threshold and verdict (``tests``: the BH family's size)."""
    t = thresholds.values
    threshold = row.limit(t)
    assert threshold is not None
    if row.reading:
        verdict = sensitivity_verdict(row, q, threshold, t.fdr)
        if isinstance(row, AccuracyRow) and row.beats_length is False:  # read by length
            verdict = INSENSITIVE
        return row.model_copy(update={"q": q, "threshold": threshold, "verdict": verdict})
    assert row.mde_documents is not None
    assert row.background is not None
    mde = stats.mde(row.mde_documents, row.background, t.alpha, t.power, tests)
    effect = row.effect or Estimate(value=None)
    verdict = stats.verdict(
        q, effect.value, (effect.lo, effect.hi), mde, threshold, t.fdr,
        either_direction=row.both_ways,
    )  # fmt: skip
    return row.model_copy(update={"q": q, "mde": mde, "threshold": threshold, "verdict": verdict})


def _order(row: RowBase) -> tuple[str, str, int, str, str]:
    return row.judge, row.protocol, KIND_ORDER[row.kind], row.family, row.row


def make_card(
    judgments: pl.DataFrame,
    tidy: pl.DataFrame,
    lex: Lexicons,
    thresholds: LoadedThresholds,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    task: Task = DEFAULT,
) -> Card:
    """Every row of the card, its q-values and verdicts.

    ``tidy`` is the metrics table (``metrics.compute.compute_metrics``) of the same judgments;
    ``task`` the run's (its text speaks of the task's nouns).
    """
    t = thresholds.values
    table = MetricsTable(tidy)
    pairs = cue_pairs(judgments, lex).with_columns(unit=pl.lit(1, dtype=pl.Int64))
    cells = set(pairs.select("judge", "protocol", "condition").unique().iter_rows())
    tested: list[CueRow | PositionRow | SensitivityRow | AccuracyRow | PressureRow] = []
    for key, part in pairs.partition_by(["judge", "protocol", "condition"], as_dict=True).items():
        cell = (str(key[0]), str(key[1]), str(key[2]))
        placebo = cue_placebo(cell, cells)
        tested.append(_cue_row(judgments, part, cell, placebo, table, lex, resamples, seed))
    positions = position_pairs(judgments)
    by = ["judge", "protocol", "condition"]
    for key, part in positions.partition_by(by, as_dict=True).items():
        tested.append(_position_row(part, str(key[0]), str(key[1]), table, str(key[2])))
    if t.sensitivity_effect is not None:  # does the judge read: degraded copies, and gold
        tested += [*sensitivity_rows(judgments, table), *accuracy_rows(judgments, table)]
    if t.pressure_effect is not None:
        tested += _pressure_rows(judgments, table, lex, resamples, seed)
    q_values = stats.bh_qvalues([r.p for r in tested])
    tests = sum(r.tested for r in tested)  # the BH family the MDE must be powered for
    rows: list[CardRow] = [
        _tested(r, q, tests, thresholds) for r, q in zip(tested, q_values, strict=True)
    ]
    wording = pl.DataFrame()
    if t.max_wording_flip is not None:
        worded, wording = wording_rows(judgments, table, t.max_wording_flip)
        rows += [
            r.model_copy(update={"noise_floor": _noise(table, r.judge, r.protocol)}) for r in worded
        ]
    rows += _repeat_rows(table, t.max_flip_rate)
    rows = [r.model_copy(update={"family": family_of(r.row)}) for r in rows]
    if t.sensitivity_effect is not None:
        rows = gate(rows)
    silent_items = pairs.filter(pl.col("silent") == 1).drop("lds", "ts", "ols", "silent", "unit")
    return Card(tuple(sorted(rows, key=_order)), silent_items, thresholds, task, wording)
