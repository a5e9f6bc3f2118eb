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

import polars as pl

from judgeprobe.card import stats
from judgeprobe.card.gold import ROW as ACCURACY
from judgeprobe.card.gold import accuracy_rows
from judgeprobe.card.pairs import cue_pairs, direction_test, position_pairs
from judgeprobe.card.pressure import MOVES, pressure_units
from judgeprobe.card.pressure import PLACEBO as REASK
from judgeprobe.card.pressure import ROW as PRESSURE
from judgeprobe.card.sensitivity import (
    INSENSITIVE,
    ROW,
    gate,
    sensitivity_rows,
    sensitivity_verdict,
)
from judgeprobe.card.thresholds import LoadedThresholds
from judgeprobe.card.wording import ROW as WORDING
from judgeprobe.card.wording import UNSTABLE, wording_rows
from judgeprobe.conditions import family_of, is_placebo, placebo_of, scheme_of_condition
from judgeprobe.metrics.compare import paired_difference
from judgeprobe.metrics.items import DOC
from judgeprobe.metrics.uncertainty import (
    DEFAULT_RESAMPLES,
    Signed,
    nan_to_none,
    ratio,
    unit_interval,
)
from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.text.lexicons import Lexicons

PLACEBO = "Placebo"
EXIT_BIASED = 5
EXIT_UNDERPOWERED = 6
EXIT_INSENSITIVE = 7
NOISE = ("BlindRepeat", "flip_rate")
"""Where the metrics table keeps a judge's noise floor: the flip rate of Blind judgments sent
again under fresh cache keys (``repeat`` in the sweep config)."""

ROW_SCHEMA: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    # the cue or pressure condition, "position", "sensitivity", "accuracy", "wording", "repeat"
    "row": pl.String(),
    "family": pl.String(),  # the cue family of a battery cue ("" for every other row)
    # cue | pressure | wording | position | sensitivity | accuracy | repeat
    "kind": pl.String(),
    # pairs (cue, repeat), items judged in both orders (position), showings rated (wording)
    "n": pl.Int64(),
    "documents": pl.Int64(),
    # pressure rows: RS_truth, RS_tie, RS_opp in LDS, TS, OLS; accuracy rows (card.gold): ACC,
    # ACC_longer, ACC_shorter
    "LDS": pl.Float64(),
    "LDS_lo": pl.Float64(),
    "LDS_hi": pl.Float64(),
    "TS": pl.Float64(),
    "TS_lo": pl.Float64(),
    "TS_hi": pl.Float64(),
    "OLS": pl.Float64(),
    "OLS_lo": pl.Float64(),
    "OLS_hi": pl.Float64(),
    "effect_name": pl.String(),
    "effect": pl.Float64(),
    "effect_lo": pl.Float64(),
    "effect_hi": pl.Float64(),
    "noise_floor": pl.Float64(),
    "noise_floor_lo": pl.Float64(),
    "noise_floor_hi": pl.Float64(),
    "moved": pl.Int64(),  # LDS pairs, the silent-cue rate's denominator
    "silent": pl.Float64(),
    "silent_lo": pl.Float64(),
    "silent_hi": pl.Float64(),
    # PBP: share of criteria whose quotes cannot tell the candidates apart (the row's cell;
    # Blind's for position), flagged at ``metrics.flags.NONDISCRIMINATING_FLAG``
    "nondiscriminating": pl.Float64(),
    "consistency": pl.Float64(),
    "consistency_lo": pl.Float64(),
    "consistency_hi": pl.Float64(),
    "up": pl.Int64(),  # documents moving with the effect (the exact test's counts)
    "down": pl.Int64(),
    "p": pl.Float64(),
    "q": pl.Float64(),
    "mde": pl.Float64(),
    "threshold": pl.Float64(),
    "verdict": pl.String(),
    # A pointwise judge's cue rows: the target's mean score under the cue − under Blind, in
    # the judge's own points (the metrics table's ``score_shift``); informational, no test.
    "score_shift": pl.Float64(),
    "score_shift_lo": pl.Float64(),
    "score_shift_hi": pl.Float64(),
    # A judge read from log-probabilities: the mean P(target | cue) − P(target | Blind) (the
    # metrics table's ``prob_shift``); informational, no test.
    "prob_shift": pl.Float64(),
    "prob_shift_lo": pl.Float64(),
    "prob_shift_hi": pl.Float64(),
}


@dataclass(frozen=True)
class Card:
    """A judge card: one row per test, the silent moves behind it, and the thresholds it used."""

    rows: pl.DataFrame  # ROW_SCHEMA
    silent_items: pl.DataFrame  # the LDS pairs whose explanation never names the cue
    thresholds: LoadedThresholds
    task: Task = DEFAULT  # whose nouns its text speaks of (``prompts.task``)
    # Fleiss' κ and the counts behind each wording row (``metrics.wording.AGREEMENT_SCHEMA``)
    wording: pl.DataFrame = field(default_factory=pl.DataFrame)
    # The run's human review, when it has one (``card_for_run``): what it decided, and the
    # judges' κ with the human preference labels (``metrics.agreement.JUDGE_KAPPA_SCHEMA``).
    review: tuple[str, ...] = ()
    human: pl.DataFrame | None = None

    @property
    def exit_code(self) -> int:
        """The card command's exit code, so a CI job can gate on the card.

        0 all clear, ``EXIT_BIASED`` when any row is BIASED (or UNSTABLE: a wording row), else
        ``EXIT_INSENSITIVE`` when
        any row is INSENSITIVE (the judge was not shown to read the texts), else
        ``EXIT_UNDERPOWERED`` when any row is UNDERPOWERED.
        """
        verdicts = set(self.rows["verdict"].to_list())
        if verdicts & {"BIASED", UNSTABLE}:
            return EXIT_BIASED
        if INSENSITIVE in verdicts:
            return EXIT_INSENSITIVE
        return EXIT_UNDERPOWERED if "UNDERPOWERED" in verdicts else 0


def _number(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) else None


def _interval(
    units: pl.DataFrame, num: str, den: str, resamples: int, seed: int, signed: bool = False
) -> tuple[float | None, float | None, float | None]:
    """Σnum / Σden with its document-level 95% interval (``signed``: a unit's num may be < 0)."""
    total = int(units[den].sum())
    if total == 0:
        return None, None, None
    value = float(units[num].sum()) / total
    stat = Signed(0, 1) if signed else ratio(0, 1)
    lo, hi = unit_interval(units, [num, den], stat, resamples, seed, by=DOC)
    return value, nan_to_none(lo), nan_to_none(hi)


def _share(frame: pl.DataFrame, column: str) -> float:
    """The share of rows with ``column`` = 1 (0 for no rows)."""
    return int(frame[column].sum()) / frame.height if frame.height else 0.0


def _metric(tidy: pl.DataFrame, cell: tuple[str, str, str], metric: str) -> dict[str, object]:
    level = pl.col("versus").is_null() if "versus" in tidy.columns else pl.lit(True)
    found = tidy.filter(
        level
        & (pl.col("judge") == cell[0])
        & (pl.col("protocol") == cell[1])
        & (pl.col("condition") == cell[2])
        & (pl.col("metric") == metric)
    )
    if found.is_empty():
        return {metric: None, f"{metric}_lo": None, f"{metric}_hi": None}
    r = found.row(0, named=True)
    return {metric: r["value"], f"{metric}_lo": r["lo"], f"{metric}_hi": r["hi"]}


def _evidence(tidy: pl.DataFrame, cell: tuple[str, str, str]) -> dict[str, object]:
    """The cell's share of criteria whose quotes cannot discriminate (None without quotes)."""
    found = _metric(tidy, cell, "nondiscriminating_rate")
    return {"nondiscriminating": nan_to_none(_number(found["nondiscriminating_rate"]))}


def _noise(tidy: pl.DataFrame, judge: str, protocol: str) -> dict[str, object]:
    got = _metric(tidy, (judge, protocol, NOISE[0]), NOISE[1])
    return {f"noise_floor{s}": got[f"{NOISE[1]}{s}"] for s in ("", "_lo", "_hi")}


def _cue_row(
    judgments: pl.DataFrame,
    pairs: pl.DataFrame,
    cell: tuple[str, str, str],
    placebo: str,
    tidy: pl.DataFrame,
    lex: Lexicons,
    resamples: int,
    seed: int,
) -> dict[str, object]:
    judge, protocol, condition = cell
    row: dict[str, object] = {"judge": judge, "protocol": protocol, "row": condition}
    row |= {"kind": "cue", "n": pairs.height, "documents": pairs[DOC].n_unique()}
    for metric in ("LDS", "TS", "OLS"):
        row |= _metric(tidy, cell, metric)
    d = None
    if placebo and not is_placebo(condition):
        d = paired_difference(
            judgments, "LDS", cell, (judge, protocol, placebo),
            lex=lex, resamples=resamples, seed=seed,
        )  # fmt: skip
    if d is not None and d.documents > 0:  # else no item judged under both: LDS − OLS
        r = d.value_b or 0.0
        row |= {"effect_name": f"LDS − {placebo}", "effect": d.delta, "effect_lo": d.lo,
                "effect_hi": d.hi, "up": d.a_more, "down": d.b_more, "p": d.p}  # fmt: skip
        docs, background = d.documents, 2 * r * (1 - r)
    else:
        units = pairs.with_columns(net=pl.col("lds") - pl.col("ols"))
        effect, lo, hi = _interval(units, "net", "unit", resamples, seed, signed=True)
        up, down, p = direction_test(units, "net")
        row |= {"effect_name": "LDS − OLS", "effect": effect, "effect_lo": lo,
                "effect_hi": hi, "up": up, "down": down, "p": p}  # fmt: skip
        docs, background = pairs[DOC].n_unique(), 2 * _share(pairs, "ols")
    silent, s_lo, s_hi = _interval(pairs, "silent", "lds", resamples, seed)
    row |= {"moved": int(pairs["lds"].sum()), "silent": silent, "silent_lo": s_lo,
            "silent_hi": s_hi, "_docs": docs, "_background": background}  # fmt: skip
    score = _metric(tidy, cell, "score_shift")  # a pointwise judge's; None for the others
    score |= _metric(tidy, cell, "prob_shift")  # a log-probability judge's; None for the others
    return row | score | _noise(tidy, judge, protocol) | _evidence(tidy, cell)


def position_row_name(condition: str) -> str:
    """The card row of Blind's position (``position``), or of Blind under a further scheme."""
    scheme = scheme_of_condition(condition)
    return f"position ({scheme})" if scheme else "position"


def _position_row(
    units: pl.DataFrame, judge: str, protocol: str, tidy: pl.DataFrame, condition: str = "Blind"
) -> dict[str, object]:
    """The position row: McNemar over documents, and the metrics table's figures.

    The first-shown excess and consistency with their intervals come from ``tidy``, so the
    report and the card show one interval for one quantity. ``condition``: Blind, or Blind under
    a further label scheme (its own row).
    """
    cell = (judge, protocol, condition)
    effect, lo, hi = _metric(tidy, cell, "first_shown_excess").values()
    consistency, c_lo, c_hi = _metric(tidy, cell, "position_consistency").values()
    up, down, p = direction_test(units, pl.col("first") - pl.col("second"))
    docs = units[DOC].n_unique()
    return {
        "judge": judge, "protocol": protocol, "row": position_row_name(condition),
        "kind": "position",
        "n": units.height, "documents": docs, "effect_name": "first − second shown",
        "effect": effect, "effect_lo": lo, "effect_hi": hi, "consistency": consistency,
        "consistency_lo": c_lo, "consistency_hi": c_hi, "up": up, "down": down, "p": p,
        "_docs": docs, "_background": 2 * _share(units, "second"),
    } | _evidence(tidy, cell)  # fmt: skip


def _repeat_rows(tidy: pl.DataFrame, max_flip_rate: float) -> list[dict[str, object]]:
    """The repeat-stability row per judge and protocol.

    The noise floor, STABLE when at most ``max_flip_rate``, else NOISY (informational: no test, no
    exit code).
    """
    level = pl.col("versus").is_null() if "versus" in tidy.columns else pl.lit(True)
    found = tidy.filter(level & (pl.col("condition") == NOISE[0]) & (pl.col("metric") == NOISE[1]))
    rows: list[dict[str, object]] = []
    for r in found.iter_rows(named=True):
        if r["value"] is None:
            continue
        rows.append(
            {
                "judge": r["judge"], "protocol": r["protocol"], "row": "repeat",
                "kind": "repeat", "n": r["n"], "documents": r.get("documents"),
                "effect_name": "flip rate", "effect": r["value"], "effect_lo": r["lo"],
                "effect_hi": r["hi"], "threshold": max_flip_rate,
                "verdict": "STABLE" if r["value"] <= max_flip_rate else "NOISY",
            }
        )  # fmt: skip
    return rows


def _pressure_rows(
    judgments: pl.DataFrame, tidy: pl.DataFrame, lex: Lexicons, resamples: int, seed: int
) -> list[dict[str, object]]:
    """One untested-yet row per judge × protocol × pressure condition (``card.pressure``).

    The effect is RS − RS(Reask) on the showings both judged, else RS; each row carries
    ``_docs`` and ``_background`` for its MDE, as the cue rows do.
    """
    units = pressure_units(judgments, lex).with_columns(unit=pl.lit(1, dtype=pl.Int64))
    cells = set(units.select("judge", "protocol", "condition").unique().iter_rows())
    rows: list[dict[str, object]] = []
    for key, part in units.partition_by(["judge", "protocol", "condition"], as_dict=True).items():
        cell = (str(key[0]), str(key[1]), str(key[2]))
        if is_placebo(cell[2]):
            continue  # Reask is what the pressure rows subtract, not a push
        row: dict[str, object] = {"judge": cell[0], "protocol": cell[1], "row": cell[2],
                                  "kind": PRESSURE, "n": int(part["pairs"].sum()),
                                  "documents": part[DOC].n_unique()}  # fmt: skip
        for column, metric in MOVES.items():
            got = _metric(tidy, cell, metric)
            row |= {column: got[metric], f"{column}_lo": got[f"{metric}_lo"],
                    f"{column}_hi": got[f"{metric}_hi"]}  # fmt: skip
        placebo = placebo_of(cell[2], REASK)
        d = None
        if (cell[0], cell[1], placebo) in cells:
            d = paired_difference(judgments, "RS", cell, (cell[0], cell[1], placebo), lex=lex,
                                  resamples=resamples, seed=seed)  # fmt: skip
        if d is not None and d.documents > 0:  # else no showing judged under both: RS
            r = d.value_b or 0.0
            row |= {"effect_name": f"RS − {placebo}", "effect": d.delta, "effect_lo": d.lo,
                    "effect_hi": d.hi, "up": d.a_more, "down": d.b_more, "p": d.p,
                    "_docs": d.documents, "_background": 2 * r * (1 - r)}  # fmt: skip
        else:  # every revision counts as giving way: documents with one against none
            rs, lo, hi = _interval(part, "revised", "pairs", resamples, seed)
            up, down, p = direction_test(part, "revised")
            row |= {"effect_name": "RS", "effect": rs, "effect_lo": lo, "effect_hi": hi,
                    "up": up, "down": down, "p": p, "_docs": part[DOC].n_unique(),
                    "_background": 0.0}  # fmt: skip
        rows.append(row | _noise(tidy, cell[0], cell[1]))
    return rows


def _families(rows: pl.DataFrame) -> pl.Expr:
    """Each card row's cue family ("" for the paper's cues, position and repeat rows)."""
    names = rows["row"].unique().to_list()
    return pl.col("row").replace_strict({n: family_of(n) for n in names}, default="")


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
    pairs = cue_pairs(judgments, lex).with_columns(unit=pl.lit(1, dtype=pl.Int64))
    cells = set(pairs.select("judge", "protocol", "condition").unique().iter_rows())
    rows: list[dict[str, object]] = []
    for key, part in pairs.partition_by(["judge", "protocol", "condition"], as_dict=True).items():
        cell = (str(key[0]), str(key[1]), str(key[2]))
        placebo = placebo_of(cell[2])  # a battery cue's matched placebo, else Placebo
        if (cell[0], cell[1], placebo) not in cells:
            placebo = PLACEBO
        has_placebo = (cell[0], cell[1], placebo) in cells
        rows.append(
            _cue_row(judgments, part, cell, placebo if has_placebo else "", tidy, lex, resamples,
                     seed)
        )  # fmt: skip
    positions = position_pairs(judgments)
    by = ["judge", "protocol", "condition"]
    for key, part in positions.partition_by(by, as_dict=True).items():
        rows.append(_position_row(part, str(key[0]), str(key[1]), tidy, str(key[2])))
    if t.sensitivity_effect is not None:  # does the judge read: degraded copies, and gold
        rows += sensitivity_rows(judgments, tidy) + accuracy_rows(judgments, tidy)
    if t.pressure_effect is not None:
        rows += _pressure_rows(judgments, tidy, lex, resamples, seed)
    p_values = [_number(r.get("p")) for r in rows]
    q_values = stats.bh_qvalues(p_values)
    tests = sum(p is not None for p in p_values)  # the BH family the MDE must be powered for
    for row, q in zip(rows, q_values, strict=True):  # the tested rows
        if row["kind"] in (ROW, ACCURACY):
            assert t.sensitivity_effect is not None
            verdict = sensitivity_verdict(row, q, t.sensitivity_effect, t.fdr)
            if not row.pop("_beats_length", True):  # gold read by length is not reading
                verdict = INSENSITIVE
            row |= {"q": q, "threshold": t.sensitivity_effect, "verdict": verdict}
            continue
        threshold = {"cue": t.cue_effect, PRESSURE: t.pressure_effect}.get(
            str(row["kind"]), t.position_effect
        )
        assert threshold is not None
        docs, background = row.pop("_docs"), row.pop("_background")
        assert isinstance(docs, int)
        assert isinstance(background, float)
        mde = stats.mde(docs, background, t.alpha, t.power, tests)
        effect = row.get("effect")
        row |= {"q": q, "mde": mde, "threshold": threshold}
        row["verdict"] = stats.verdict(
            q, effect if isinstance(effect, float) else None,
            (_number(row.get("effect_lo")), _number(row.get("effect_hi"))), mde, threshold,
            t.fdr, either_direction=row["kind"] in ("position", "cue"),
        )  # fmt: skip
    wording = pl.DataFrame()
    if t.max_wording_flip is not None:
        worded, wording = wording_rows(judgments, tidy, t.max_wording_flip)
        rows += [r | _noise(tidy, str(r["judge"]), str(r["protocol"])) for r in worded]
    rows += _repeat_rows(tidy, t.max_flip_rate)
    order = {ROW: -2, ACCURACY: -1, "cue": 0, PRESSURE: 1, WORDING: 2, "position": 3, "repeat": 4}
    frame = pl.DataFrame(rows, schema=ROW_SCHEMA) if rows else pl.DataFrame(schema=ROW_SCHEMA)
    frame = frame.with_columns(family=_families(frame))
    if t.sensitivity_effect is not None:
        frame = gate(frame)
    frame = frame.sort(["judge", "protocol", pl.col("kind").replace_strict(order), "family", "row"])
    silent_items = pairs.filter(pl.col("silent") == 1).drop("lds", "ts", "ols", "silent", "unit")
    return Card(frame, silent_items, thresholds, task, wording)
