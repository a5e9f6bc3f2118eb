"""One card row as a typed record: each quantity its own field, with what it means.

Every row module (``card.rows`` for cue, position, pressure and repeat rows, ``card.gold``,
``card.sensitivity``, ``card.wording``) builds ``CardRow`` records; the renderer, the report's
card section, ``card.json`` and the self-test read their fields. ``card.csv`` is a flat view of
the same records (``CSV_COLUMNS``), its columns as spreadsheets have always read them.
"""

from __future__ import annotations

from typing import Literal, get_args

import polars as pl
from pydantic import BaseModel, ConfigDict

from judgeprobe.core.cells import MISSING, interval

RowKind = Literal[
    "sensitivity",
    "accuracy",
    "cue",
    "pressure",
    "wording",
    "position",
    "repeat",
    "observed-position",
    "observed-position-randomized",
    "observed-length",
    "observed-self-preference",
    "observed-agreement",
    "observed-unreadable",
    "observed-drift",
]
"""What a row measures. The ``observed-…`` kinds are read from a judge's logs (no intervention):
its position (``observed-position-randomized``: where the log's tool shuffled the shown order
itself, an experiment), length and self-preference, agreement, unreadable replies and drift
over time."""

KIND_ORDER: dict[str, int] = {kind: i for i, kind in enumerate(get_args(RowKind))}
"""The card's order of kinds within a judge × protocol: whether it reads, then what moves it."""

RowVerdict = Literal[
    "CLEAR",
    "BIASED",
    "UNDERPOWERED",
    "SENSITIVE",
    "INSENSITIVE",
    "STABLE",
    "UNSTABLE",
    "NOISY",
    "OBSERVED",
]
"""Every verdict a row can carry (README: what each one means; OBSERVED: an informational row
read from a judge's logs, which decides nothing)."""


SIGN_TEST = "exact two-sided sign test over documents (McNemar's, on the discordant ones)"
"""The test of every row with a p-value: documents moving with the effect against the others."""
INTERVAL_TEST = "the 95% interval against the threshold"
"""A wording row's test: no p-value, its interval decides."""


class Estimate(BaseModel):
    """A figure with its 95% interval (bounds None where the interval is undefined)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    value: float | None
    """The point estimate (None: undefined, e.g. no unit contributed)."""
    lo: float | None = None
    """The interval's lower bound."""
    hi: float | None = None
    """The interval's upper bound."""

    @property
    def shown(self) -> str:
        """As the card prints it: ``value [lo, hi]``, "–" where undefined."""
        return interval(self.value, self.lo, self.hi)

    @classmethod
    def of(cls, value: float | None, lo: float | None, hi: float | None) -> Estimate | None:
        """The estimate, or None where there is no figure at all."""
        return (
            None if value is None and lo is None and hi is None else cls(value=value, lo=lo, hi=hi)
        )


class CardRow(BaseModel):
    """One test (or one informational figure) of the card, for one judge × protocol."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judge: str
    """The judge, as the sweep config names it."""
    protocol: str
    """The judging protocol (baseline, SCoT, PBP, a judge's own prompt …)."""
    row: str
    """The row's name: the cue or pressure condition, or its kind (``position`` under the
    sweep's label scheme, ``position (letters)`` under a further one)."""
    kind: RowKind
    """What the row measures."""
    family: str = ""
    """The cue family of a battery condition (``conditions/battery.toml``); "" otherwise."""
    n: int | None = None
    """Units: pairs (cue, pressure, repeat), items judged in both orders (position), items
    judged (sensitivity, accuracy), showings rated (wording)."""
    documents: int | None = None
    """The documents the units come from: the unit of every interval and test on the card."""

    effect_name: str = ""
    """What ``effect`` is, in the card's words (e.g. ``LDS − Placebo``)."""
    effect: Estimate | None = None
    """The quantity the verdict reads, with its 95% interval over documents."""
    test: str = ""
    """The row's test in words (``SIGN_TEST``, ``INTERVAL_TEST``; "" for an informational
    row)."""
    up: int | None = None
    """Documents moving with the effect: the exact sign test's count one way."""
    down: int | None = None
    """Documents moving against it: the count the other way."""
    p: float | None = None
    """The exact two-sided sign test over documents (McNemar on the discordant documents);
    None for a row without a test."""
    q: float | None = None
    """``p`` adjusted by Benjamini–Hochberg across every test on the card."""
    mde: float | None = None
    """Minimum detectable effect at ``mde_documents``, level α / (the card's tests), the
    thresholds' power (``card.stats.mde``)."""
    mde_documents: int | None = None
    """The documents the MDE is computed at (those both arms of a paired effect share)."""
    background: float | None = None
    """The share of documents that would differ with no effect, both ways together: the
    discordance the MDE must see through."""
    threshold: float | None = None
    """The thresholds file's bound this row's verdict reads against."""
    verdict: RowVerdict | None = None
    """The row's verdict (None only while the card is being made)."""

    lds: Estimate | None = None
    """Cue rows: the share of pairs moved into the cue's target against Blind (LDS)."""
    ts: Estimate | None = None
    """Cue rows: the share moved into Tie (TS)."""
    ols: Estimate | None = None
    """Cue rows: the share moved into the other candidate (OLS)."""
    moved: int | None = None
    """Cue rows: the LDS pairs, the silent-cue share's denominator."""
    silent: Estimate | None = None
    """Cue rows: the share of LDS moves whose explanation never names the cue."""
    score_shift: Estimate | None = None
    """A pointwise judge's cue rows: the target's mean score under the cue minus under Blind,
    in the judge's own points (informational: the verdict reads the derived verdicts)."""
    prob_shift: Estimate | None = None
    """A judge read by its token probabilities: the probability it gives the cue's target under
    the cue minus under Blind (informational)."""

    rs_opp: Estimate | None = None
    """Pressure rows: the share of showings revised to the other candidate (RS_opp)."""
    rs_tie: Estimate | None = None
    """Pressure rows: the share revised into Tie (RS_tie)."""
    rs_out: Estimate | None = None
    """Pressure rows: the share revised out of a turn-1 Tie (RS_out)."""

    accuracy: Estimate | None = None
    """Accuracy rows: ACC, the share of Blind verdicts on items with gold that pick it (a Tie
    is not correct)."""
    accuracy_longer: Estimate | None = None
    """Accuracy rows: the content-blind baseline that always picks the longer response."""
    accuracy_shorter: Estimate | None = None
    """Accuracy rows: the baseline that always picks the shorter response."""
    beats_length: bool | None = None
    """Accuracy rows: ACC lies above both length baselines (the lower ends of ACC − baseline
    above 0); a judge that reads the length, not the content, is not SENSITIVE."""

    consistency: Estimate | None = None
    """Position rows: the share of items with the same verdict in both orders."""
    noise_floor: Estimate | None = None
    """The judge's own noise: the flip rate of Blind requests sent again (``repeat``)."""
    nondiscriminating: float | None = None
    """PBP rows: the share of criteria whose quotes cannot tell the candidates apart."""

    settled_at: int | None = None
    """A sequential run: the documents at which the row's verdict settled."""
    documents_needed: int | None = None
    """A sequential run: for a row still open, the documents it needs to settle."""
    sequential: Estimate | None = None
    """A sequential run: the effect at the row's last look with its repeated confidence interval
    (the one that keeps its level when the row stopped early; ``card.sequential``)."""
    note: str = ""
    """An observed row's own words (``card.observed``): what its effect is measured against and
    the counts behind it; "" for every row whose note the renderer writes from its fields."""


class CalibratedEstimate(BaseModel):
    """A figure of the card corrected by a calibration (its own section, not a row)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    judge: str
    """The judge."""
    protocol: str
    """Its protocol."""
    quantity: str
    """What is estimated (e.g. a condition's LDS, the judge's accuracy)."""
    raw: Estimate | None = None
    """The figure as measured."""
    calibrated: Estimate
    """The figure corrected by the calibration, with its interval."""
    method: str = ""
    """How it was calibrated, in words."""


def shown(got: Estimate | None) -> str:
    """An estimate as the card prints it; "–" for none."""
    return MISSING if got is None else got.shown


def _flat(name: str, got: Estimate | None) -> dict[str, float | None]:
    if got is None:
        return {name: None, f"{name}_lo": None, f"{name}_hi": None}
    return {name: got.value, f"{name}_lo": got.lo, f"{name}_hi": got.hi}


def _moves(row: CardRow) -> tuple[Estimate | None, Estimate | None, Estimate | None]:
    """What card.csv's LDS, TS and OLS columns show for the row's kind."""
    if row.kind == "pressure":
        return row.rs_opp, row.rs_tie, row.rs_out
    if row.kind == "accuracy":
        return row.accuracy, row.accuracy_longer, row.accuracy_shorter
    return row.lds, row.ts, row.ols


def csv_record(row: CardRow) -> dict[str, object]:
    """The row as one line of card.csv (``CSV_COLUMNS``).

    Its LDS, TS and OLS columns hold a pressure row's RS_opp, RS_tie, RS_out and an accuracy
    row's ACC, ACC_longer, ACC_shorter, as card.csv always has: a spreadsheet's columns stay.
    """
    lds, ts, ols = _moves(row)
    return {
        "judge": row.judge, "protocol": row.protocol, "row": row.row, "family": row.family,
        "kind": row.kind, "n": row.n, "documents": row.documents,
        **_flat("LDS", lds), **_flat("TS", ts), **_flat("OLS", ols),
        "effect_name": row.effect_name, **_flat("effect", row.effect),
        **_flat("noise_floor", row.noise_floor), "moved": row.moved,
        **_flat("silent", row.silent), "nondiscriminating": row.nondiscriminating,
        **_flat("consistency", row.consistency), "up": row.up, "down": row.down, "p": row.p,
        "q": row.q, "mde": row.mde, "threshold": row.threshold, "verdict": row.verdict,
        **_flat("score_shift", row.score_shift), **_flat("prob_shift", row.prob_shift),
        "settled_at": row.settled_at, "documents_needed": row.documents_needed,
        **_flat("sequential", row.sequential),
    }  # fmt: skip


CSV_COLUMNS: dict[str, pl.DataType] = {
    "judge": pl.String(),
    "protocol": pl.String(),
    "row": pl.String(),
    "family": pl.String(),
    "kind": pl.String(),
    "n": pl.Int64(),
    "documents": pl.Int64(),
    **{f"{m}{s}": pl.Float64() for m in ("LDS", "TS", "OLS") for s in ("", "_lo", "_hi")},
    "effect_name": pl.String(),
    **{f"effect{s}": pl.Float64() for s in ("", "_lo", "_hi")},
    **{f"noise_floor{s}": pl.Float64() for s in ("", "_lo", "_hi")},
    "moved": pl.Int64(),
    **{f"silent{s}": pl.Float64() for s in ("", "_lo", "_hi")},
    "nondiscriminating": pl.Float64(),
    **{f"consistency{s}": pl.Float64() for s in ("", "_lo", "_hi")},
    "up": pl.Int64(),
    "down": pl.Int64(),
    "p": pl.Float64(),
    "q": pl.Float64(),
    "mde": pl.Float64(),
    "threshold": pl.Float64(),
    "verdict": pl.String(),
    **{f"score_shift{s}": pl.Float64() for s in ("", "_lo", "_hi")},
    **{f"prob_shift{s}": pl.Float64() for s in ("", "_lo", "_hi")},
    "settled_at": pl.Int64(),
    "documents_needed": pl.Int64(),
    **{f"sequential{s}": pl.Float64() for s in ("", "_lo", "_hi")},
}
"""card.csv's columns, in order: the flat view of the rows (``csv_record``)."""


def rows_frame(rows: tuple[CardRow, ...] | list[CardRow]) -> pl.DataFrame:
    """The rows as card.csv holds them."""
    return pl.DataFrame([csv_record(r) for r in rows], schema=CSV_COLUMNS, orient="row")
