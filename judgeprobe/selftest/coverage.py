"""Do the metrics' 95% intervals keep their promise? A seeded coverage simulation.

Simulated judges with a known true value, through the code path ``judgeprobe metrics`` uses to
write ``metrics_ci.csv`` (``compute_metrics``): for each interval kind, document count n,
items per document and true value, ``judges`` simulated judges (one cell each), and the
share of them whose interval holds the true value (``coverage``), is a point
(``zero_width``), or carries a ``ci_flag`` (``flagged``). Several items of a document share
a document-level rate drawn from a Beta distribution (intra-document correlation ``ICC``),
so the cluster design effect is real; with one item per document the rate is the true value.

The kinds (each a judgments design whose metric has a known expectation):

- ``share``: LDS, the share of Blind verdicts (always B) that move to the target A;
- ``ratio``: LAO = LDS / changed, with 30% of verdicts moving and a share v of them to A;
- ``signed``: SENS of a judge that reads with probability v, else picks intact, degraded
  and Tie at 10/10/80%;
- ``excess``: first-shown excess on Blind items in both orders, likewise;
- ``folded``: ND on Blind, A with probability v, else A/B/Tie at 25/25/50%;
- ``paired``: diff_LDS (pbp − baseline on the same items), baseline moving with
  probability 0.1 and pbp with 0.1 + v on average, the two correlated through one uniform draw;
- ``drift``: explanation drift of same-decision pairs, each pair's drift drawn around v.
- ``shift``: a pointwise judge's score shift as a share of its scale (1–10): each pair's
  Blind score 1 + Binomial(9, q_B) and cue score 1 + Binomial(9, q_c), the document's q_c and
  q_B drawn around (1 + v) / 2 and (1 − v) / 2, so the mean of (s_c − s_B) / 9 is v. The
  metric prints it in points (× 9): the same interval, scaled.
- ``prob``: a log-probability judge's probability shift: each pair's P(target | Blind) and
  P(target | cue) drawn from Beta distributions around the document's q_B and q_c (themselves
  drawn around (1 − v) / 2 and (1 + v) / 2), so the mean of P_c − P_B is v
  (``prob_coverage`` measures it through ``compute_metrics`` too).
- ``wording``: the wording flip share, each Blind showing judged under three wordings, the last
  one changing its verdict with probability v (``wording_coverage`` measures it through
  ``compute_metrics`` too).
- ``runs``: ``compare``'s paired difference between two runs of one row (the position row's
  first-shown excess, ``metrics.between.run_difference``): on every item run 2 leans
  first-shown with its document's rate (mean 0.1) and run 1 with a rate higher by v / 1.1, the
  two drawn from one uniform on 80% of items; either leans second-shown with probability 0.1
  where it does not lean first-shown. So excess(run 1) − excess(run 2) = 1.1 × (v / 1.1) = v.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import polars as pl

from judgeprobe.conditions import BLIND, wording_condition
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.registry import BY_NAME
from judgeprobe.metrics.uncertainty import (
    SCORE,
    Method,
    Signed,
    Stat,
    ci_flag,
    interval,
    versus,
)
from judgeprobe.selftest import calibration
from judgeprobe.text.lexicons import load_lexicons

BOUND = 0.93
"""The least coverage a 95% interval may show (docs/metrics.md: what an interval promises)."""
ICC = 0.3
SIZES = (10, 30, 100, 300, 1000)
PER_DOCUMENT = (1, 4)
JUDGES = 200
VALUES: dict[str, tuple[float, ...]] = {
    "share": (0.0, 0.01, 0.02, 0.05, 0.2, 0.5, 1.0),
    "ratio": (0.0, 0.05, 0.2, 0.5, 1.0),
    "signed": (0.0, 0.01, 0.05, 0.2, 0.5, 1.0),
    "excess": (0.0, 0.01, 0.05, 0.2, 0.5),
    "folded": (0.0, 0.05, 0.2, 0.5, 1.0),
    "paired": (0.0, 0.01, 0.05, 0.2, 0.5),
    "drift": (0.0, 0.01, 0.05, 0.2, 0.5),
    "shift": (0.0, 0.05, 0.2, 0.5, 1.0),
    "prob": (0.0, 0.05, 0.2, 0.5, 1.0),
    "wording": (0.0, 0.02, 0.05, 0.2, 0.5, 1.0),
    "runs": (0.0, 0.01, 0.05, 0.2, 0.5),
}
METRIC = {"share": "LDS", "ratio": "LAO", "signed": "SENS", "excess": "first_shown_excess",
          "folded": "ND", "paired": "diff_LDS", "drift": "delta_e_same",
          "shift": "score_shift", "prob": "prob_shift", "wording": "wording_flip",
          "runs": "compare_position"}  # fmt: skip
RESULT_SCHEMA = {
    "kind": pl.String(),
    "metric": pl.String(),
    "method": pl.String(),
    "documents": pl.Int64(),
    "per_document": pl.Int64(),
    "value": pl.Float64(),
    "judges": pl.Int64(),  # judges whose interval is defined
    "coverage": pl.Float64(),
    "zero_width": pl.Float64(),
    "flagged": pl.Float64(),
}


@dataclass(frozen=True)
class Setting:
    """One cell of the coverage table."""

    kind: str
    documents: int
    per_document: int
    value: float


def _rates(rng: np.random.Generator, value: float, documents: int, per_document: int) -> np.ndarray:
    """Each document's own rate: the value itself, or Beta around it with the ``ICC``."""
    if per_document == 1 or value in (0.0, 1.0):
        return np.full(documents, value)
    concentration = 1 / ICC - 1
    return rng.beta(value * concentration, (1 - value) * concentration, documents)


BASE_RATE = 0.1
"""The ``paired`` design's baseline rate of moving (pbp's is higher by the true value)."""


def _raised(base: np.ndarray, value: float) -> np.ndarray:
    """The pbp arm's per-document rate: mean BASE_RATE + value, never above 1."""
    return base + value * (1 - base) / (1 - BASE_RATE)


def _skeleton(judges: int, documents: int, per_document: int) -> dict[str, np.ndarray]:
    """One row per (judge, document, item): the identifiers every design starts from."""
    size = judges * documents * per_document
    index = np.arange(size)
    judge = index // (documents * per_document)
    doc = index // per_document
    return {"judge": judge, "document": doc, "item": index}


SPREAD = 4.0
"""The concentration of a pair's probability around its document's (Beta(q·4, (1 − q)·4))."""


def _probabilities(rng: np.random.Generator, q: np.ndarray) -> np.ndarray:
    """Each pair's probability, drawn around its document's ``q`` (exactly q at 0 and 1)."""
    inner = np.clip(q, 1e-12, 1 - 1e-12)
    drawn = rng.beta(inner * SPREAD, (1 - inner) * SPREAD)
    return np.where((q > 0) & (q < 1), drawn, q)


def _prob_pairs(
    rng: np.random.Generator, value: float, judges: int, documents: int, per: int
) -> tuple[np.ndarray, np.ndarray]:
    """P(target | cue) and P(target | Blind) per pair, shape (judges, documents, per)."""
    cue, blind = _cue_blind_rates(rng, value, judges, documents, per)
    return _probabilities(rng, cue), _probabilities(rng, blind)


def _cue_blind_rates(
    rng: np.random.Generator, value: float, judges: int, documents: int, per: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's rate under the cue and under Blind, (1 ± value) / 2 around its document's."""
    cue, blind = (
        np.repeat(
            np.stack([_rates(rng, q, documents, per) for _ in range(judges)])[:, :, None],
            per,
            axis=2,
        )
        for q in ((1 + value) / 2, (1 - value) / 2)
    )
    return cue, blind


def _frame(base: dict[str, np.ndarray], *, cue: bool = False, **columns: object) -> pl.DataFrame:
    """Judgments of one design.

    Each simulated judge is its own judge; in a cue design (``cue``) also its own cue
    condition (``r`` and its number), so that no two simulated judges are ever compared.
    """
    replicate = pl.Series(base["judge"]).cast(pl.String)
    if cue and columns["condition"] != BLIND:
        columns["condition"] = "r" + replicate
    return pl.DataFrame(
        {
            "judge": replicate,
            "subset": "sim",
            "item_id": pl.Series(base["item"]).cast(pl.String),
            "document_id": pl.Series(base["document"]).cast(pl.String),
            "seed": 0,
            **columns,
        }
    )


Extra = Mapping[str, Mapping[str, object]]
"""Further columns of a cue pair's two judgments, by side ("blind", "probe")."""


def _judgments(
    kind: str, rng: np.random.Generator, value: float, judges: int, documents: int, per: int
) -> pl.DataFrame:
    """The judgments of ``judges`` simulated judges of one setting."""
    base = _skeleton(judges, documents, per)
    rate = np.concatenate([_rates(rng, value, documents, per) for _ in range(judges)])[
        base["document"]
    ]
    u = rng.random(rate.size)
    if kind in CUE_KINDS:
        return _cue_judgments(kind, rng, base, rate, u, (value, judges, documents, per))
    return _control_judgments(kind, rng, base, rate, u)


def _cue_pair(
    base: dict[str, np.ndarray], probe: np.ndarray, blind: np.ndarray, protocol: str = "baseline",
    extra: Extra | None = None,
) -> pl.DataFrame:  # fmt: skip
    """A cue (True, target A) beside its Blind twin, each with its verdicts."""
    rows = [
        _frame(base, cue=True, protocol=protocol, condition=BLIND, order="12", verdict=blind,
               target="none", **(extra or {}).get("blind", {})),
        _frame(base, cue=True, protocol=protocol, condition="True", order="12", verdict=probe,
               target="A", **(extra or {}).get("probe", {})),
    ]  # fmt: skip
    return pl.concat(rows)


CUE_KINDS = ("prob", "share", "ratio", "paired", "drift")
"""The kinds simulated as a cue beside Blind (``_cue_judgments``)."""


def _cue_judgments(
    kind: str, rng: np.random.Generator, base: dict[str, np.ndarray], rate: np.ndarray,
    u: np.ndarray, setting: tuple[float, int, int, int],
) -> pl.DataFrame:  # fmt: skip
    """A cue kind's judgments (``setting``: value, judges, documents, items per document)."""
    value, judges, documents, per = setting
    size = rate.size
    cue_pair = partial(_cue_pair, base)
    blind_b = np.full(size, "B")
    if kind == "prob":  # the target is A: P(A | cue) against P(A | Blind)
        cue_p, blind_p = (x.reshape(-1) for x in _prob_pairs(rng, value, judges, documents, per))
        probs = {"probe": {"prob_1": cue_p, "prob_2": 1 - cue_p},
                 "blind": {"prob_1": blind_p, "prob_2": 1 - blind_p}}  # fmt: skip
        return cue_pair(np.where(cue_p > 0.5, "A", "B"), np.where(blind_p > 0.5, "A", "B"),
                        extra=probs)  # fmt: skip
    if kind == "share":
        return cue_pair(np.where(u < rate, "A", "B"), blind_b)
    if kind == "ratio":
        moved = rng.random(size) < 0.3
        return cue_pair(np.where(moved, np.where(u < rate, "A", "Tie"), "B"), blind_b)
    if kind == "paired":
        base_rate = np.concatenate([_rates(rng, BASE_RATE, documents, per) for _ in range(judges)])
        b = base_rate[base["document"]]
        fresh = np.where(rng.random(size) < 0.8, u, rng.random(size))
        return pl.concat(
            [
                cue_pair(np.where(u < b, "A", "B"), blind_b, "baseline"),
                cue_pair(np.where(fresh < _raised(b, value), "A", "B"), blind_b, "pbp"),
            ]
        )
    if kind == "drift":
        mean = np.clip(rate, 1e-9, 1 - 1e-9)
        drift = np.where(rate > 0, rng.beta(mean * 5, (1 - mean) * 5), 0.0)
        explanations = {"probe": {"explanation": [f"{d:.17g}" for d in drift]},
                        "blind": {"explanation": ["0"] * size}}  # fmt: skip
        return cue_pair(blind_b, blind_b, extra=explanations)
    raise ValueError(f"unknown interval kind {kind!r}")


def _control_judgments(
    kind: str,
    rng: np.random.Generator,
    base: dict[str, np.ndarray],
    rate: np.ndarray,
    u: np.ndarray,
) -> pl.DataFrame:
    """A control kind's judgments: wordings, degraded copies, position."""
    size = rate.size
    blind_b = np.full(size, "B")
    if kind == "wording":  # Blind and two more wordings: B, B, and A where the wording flips
        last = np.where(u < rate, "A", "B")
        return pl.concat(
            [
                _frame(base, protocol="baseline", condition=c, order="12", verdict=v,
                       target="none")
                for c, v in ((BLIND, blind_b), (wording_condition(1), blind_b),
                             (wording_condition(2), last))
            ]
        )  # fmt: skip
    reads = u < rate
    noise = rng.choice(3, size=size, p=[0.1, 0.1, 0.8] if kind != "folded" else [0.25, 0.25, 0.5])
    if kind == "signed":
        worse = rng.choice(["A", "B"], size)
        intact = np.where(worse == "A", "B", "A")
        verdict = np.where(reads | (noise == 0), intact, np.where(noise == 1, worse, "Tie"))
        return _frame(base, protocol="baseline", condition="number", order="12",
                      verdict=verdict, target="none", degraded=worse)  # fmt: skip
    if kind == "folded":
        verdict = np.where(reads | (noise == 0), "A", np.where(noise == 1, "B", "Tie"))
        return _frame(base, protocol="baseline", condition=BLIND, order="12", verdict=verdict,
                      target="none")  # fmt: skip
    if kind == "excess":  # first-shown chosen both times, second-shown both times, or A both
        first = reads | (noise == 0)
        second = ~reads & (noise == 1)
        v12 = np.where(second, "B", "A")
        v21 = np.where(first, "B", "A")
        return pl.concat(
            [
                _frame(
                    base, protocol="baseline", condition=BLIND, order=o, verdict=v, target="none"
                )
                for o, v in (("12", v12), ("21", v21))
            ]
        )
    raise ValueError(f"unknown interval kind {kind!r}")


def _counts(rng: np.random.Generator, p: np.ndarray, noise: Sequence[float]) -> np.ndarray:
    """Per item: the first outcome with probability p (the document's rate), else ``noise``'s.

    Returned as one-hot rows over len(noise) outcomes (the first the "reading" one).
    """
    reads = rng.random(p.shape) < p
    drawn = rng.choice(len(noise), size=p.shape, p=list(noise))
    outcome = np.where(reads, 0, drawn)
    return np.eye(len(noise))[outcome]


def document_sums(
    kind: str, rng: np.random.Generator, value: float, judges: int, documents: int, per: int
) -> np.ndarray:
    """Each simulated judge's document sums of its metric's columns, shape (judges, documents, k).

    The same designs as ``_judgments``, summed as ``metrics.resample.document_sums`` sums a
    cell's units: the columns in the registry's order (``METRIC``'s spec; for ``paired``, the
    reduced share of ``compare``: the net count pbp − baseline and the pairs).
    """
    rate = np.stack([_rates(rng, value, documents, per) for _ in range(judges)])
    p = np.repeat(rate[:, :, None], per, axis=2)  # (judges, documents, items)
    ones = np.full(p.shape, 1.0)
    if kind in ("share", "wording"):  # wording: flipped, rated
        cols = [rng.random(p.shape) < p, ones]
    elif kind == "ratio":
        moved = rng.random(p.shape) < 0.3
        cols = [moved & (rng.random(p.shape) < p), moved]
    elif kind in ("signed", "excess", "folded"):
        noise = (0.25, 0.25, 0.5) if kind == "folded" else (0.1, 0.1, 0.8)
        # intact | worse | tie; first | second | consistent; A | B | Tie
        hot = _counts(rng, p, noise)
        cols = [hot[..., 0], hot[..., 1], ones]
    elif kind == "paired":
        base = np.repeat(
            np.stack([_rates(rng, BASE_RATE, documents, per) for _ in range(judges)])[:, :, None],
            per,
            axis=2,
        )
        u = rng.random(p.shape)
        fresh = np.where(rng.random(p.shape) < 0.8, u, rng.random(p.shape))
        net = (fresh < _raised(base, value)).astype(float) - (u < base)
        cols = [net, ones]
    elif kind == "runs":
        cols = _two_runs(rng, value, judges, documents, per)
    elif kind == "drift":
        mean = np.clip(p, 1e-9, 1 - 1e-9)
        cols = [np.where(p > 0, rng.beta(mean * 5, (1 - mean) * 5), 0.0), ones]
    elif kind == "shift":  # (s_c − s_B) / (max − min) per pair, scores on 1–10
        cue, blind = _cue_blind_rates(rng, value, judges, documents, per)
        cols = [(rng.binomial(9, cue) - rng.binomial(9, blind)) / 9, ones]
    elif kind == "prob":  # P(target | cue) − P(target | Blind) per pair
        cue_p, blind_p = _prob_pairs(rng, value, judges, documents, per)
        cols = [cue_p - blind_p, ones]
    else:
        raise ValueError(f"unknown interval kind {kind!r}")
    return np.stack([np.asarray(c, dtype=np.float64).sum(axis=2) for c in cols], axis=2)


SECOND = 0.1
"""The ``runs`` design's chance of a second-shown lean where an item does not lean first."""


def _two_runs(
    rng: np.random.Generator, value: float, judges: int, documents: int, per: int
) -> list[np.ndarray]:
    """Both runs' position columns per item (first, second, swapped; run 1 then run 2)."""
    base = np.repeat(
        np.stack([_rates(rng, BASE_RATE, documents, per) for _ in range(judges)])[:, :, None],
        per,
        axis=2,
    )
    shape = base.shape
    u, w = rng.random(shape), rng.random(shape)
    fresh = np.where(rng.random(shape) < 0.8, u, rng.random(shape))
    other = np.where(rng.random(shape) < 0.8, w, rng.random(shape))
    first_1, first_2 = fresh < _raised(base, value / (1 + SECOND)), u < base
    second_1, second_2 = ~first_1 & (other < SECOND), ~first_2 & (w < SECOND)
    ones = np.ones(shape)
    return [first_1, second_1, ones, first_2, second_2, ones]


def _estimator(kind: str) -> Stat:
    """The estimator the metrics table gives the kind's metric.

    ``paired``: compare's reduced share; ``runs``: ``judgeprobe compare``'s, the excess of run 1
    minus that of run 2 on stacked sums.
    """
    if kind == "runs":
        excess = BY_NAME["first_shown_excess"].stat
        return versus(excess, excess, len(BY_NAME["first_shown_excess"].columns))
    return Signed(0, 1) if kind == "paired" else BY_NAME[METRIC[kind]].stat


def measure_sums(
    settings: Iterable[Setting],
    judges: int = JUDGES,
    seed: int = 0,
    method: Method = SCORE,
    resamples: int = 2_000,
) -> pl.DataFrame:
    """The coverage table from simulated document sums, straight into ``uncertainty.interval``.

    The interval code ``compute_metrics`` runs once it has summed each document's units, without
    the counting before it (``measure`` runs that too): fast enough for the whole grid.
    """
    rows: list[dict[str, object]] = []
    for number, s in enumerate(settings):
        rng = np.random.default_rng([seed, number, 1])
        sums = document_sums(s.kind, rng, s.value, judges, s.documents, s.per_document)
        stat = _estimator(s.kind)
        bounds, flags = [], []
        for judge in range(judges):
            values, weights = np.unique(sums[judge], axis=0, return_counts=True)
            if np.isnan(stat((weights[:, None] * values).sum(axis=0))):
                continue
            bounds.append(interval(values, weights, stat, method, resamples, seed + judge))
            flags.append(method == SCORE and ci_flag(values, weights, stat, method) is not None)
        lo, hi = (np.array([b[i] for b in bounds]) for i in (0, 1))
        rows.append(_row(s, METRIC[s.kind], method, lo, hi, np.array(flags, dtype=bool)))
    return pl.DataFrame(rows, schema=RESULT_SCHEMA)


def _row(
    s: Setting, metric: str, method: str, lo: np.ndarray, hi: np.ndarray, flagged: np.ndarray
) -> dict[str, object]:
    """One line of the coverage table from the judges' bounds."""
    tol = 1e-12  # a bound computed in floating point exactly at the true value covers it
    defined = len(lo) > 0
    return {
        "kind": s.kind,
        "metric": metric,
        "method": method,
        "documents": s.documents,
        "per_document": s.per_document,
        "value": s.value,
        "judges": len(lo),
        "coverage": float(((lo - tol <= s.value) & (s.value <= hi + tol)).mean())
        if defined
        else None,
        "zero_width": float((hi - lo <= tol).mean()) if defined else None,
        "flagged": float(flagged.mean()) if defined else None,
    }


def _drift(probe: list[str], blind: list[str]) -> np.ndarray:
    """The simulated drift: each probe explanation carries its own value."""
    return np.array([float(p) for p in probe], dtype=np.float64)


PROB_TABLE = tuple(
    Setting("prob", n, per, v)
    for n in (10, 30, 100)
    for per in PER_DOCUMENT
    for v in (0.0, 0.05, 0.2, 0.5)
)
"""The probability shift through ``judgeprobe metrics``: one and four pairs per document."""


def _condition(kind: str) -> pl.Expr:
    if kind in ("signed", "folded", "excess", "wording"):
        return pl.col("condition") == ("Degraded" if kind == "signed" else BLIND)
    return pl.col("condition").str.starts_with("r")


def measure(
    settings: Iterable[Setting],
    judges: int = JUDGES,
    seed: int = 0,
    method: Method = SCORE,
    resamples: int = 2_000,
    progress: Callable[[Setting], None] | None = None,
) -> pl.DataFrame:
    """The coverage table (``RESULT_SCHEMA``) of ``settings``, seeded.

    ``resamples`` is only read by the percentile bootstrap (``method="percentile"``).
    """
    lex = load_lexicons()
    rows: list[dict[str, object]] = []
    for number, s in enumerate(settings):
        if progress:
            progress(s)
        rng = np.random.default_rng([seed, number])
        j = _judgments(s.kind, rng, s.value, judges, s.documents, s.per_document)
        drift = _drift if s.kind == "drift" else None
        paired = s.kind == "paired"
        tidy = compute_metrics(j, lex, drift, resamples, seed, differences=paired, method=method)
        metric = METRIC[s.kind]
        got = tidy.filter(
            (pl.col("metric") == metric)
            & _condition(s.kind)
            & (pl.col("protocol") == ("pbp" if s.kind == "paired" else "baseline"))
            & pl.col("lo").is_not_null()
        )
        lo, hi = got["lo"].to_numpy(), got["hi"].to_numpy()
        # The percentile bootstrap is flagged now; the metrics printed it unflagged before.
        flagged = got["ci_flag"].is_not_null().to_numpy() & (method == SCORE)
        rows.append(_row(s, metric, method, lo, hi, flagged))
    return pl.DataFrame(rows, schema=RESULT_SCHEMA)


def grid(
    kinds: Sequence[str] = tuple(VALUES),
    sizes: Sequence[int] = SIZES,
    per_document: Sequence[int] = PER_DOCUMENT,
) -> list[Setting]:
    """Every setting of the full table: kind × documents × items per document × value."""
    return [
        Setting(k, n, m, v) for k in kinds for n in sizes for m in per_document for v in VALUES[k]
    ]


def failures(table: pl.DataFrame, bound: float = BOUND, z: float = 3.0) -> pl.DataFrame:
    """The settings whose unflagged intervals cover less than ``bound``, beyond Monte Carlo error.

    A row fails when its coverage is more than ``z`` standard errors of a binomial share at the
    bound (over its ``judges``) below the bound: with z = 3 a method that holds the bound fails
    a row by chance with probability 0.0013. Rows below the bound but within that error are
    marked in ``render`` and do not fail.
    """
    slack = z * (bound * (1 - bound) / pl.col("judges").cast(pl.Float64)).sqrt()
    return table.filter((pl.col("coverage") < bound - slack) & (pl.col("flagged") < 1))


ISSUE_TABLE = (
    Setting("share", 10, 1, 0.05),
    Setting("share", 10, 1, 0.2),
    Setting("share", 30, 1, 0.05),
    Setting("share", 30, 1, 0.5),
    Setting("share", 100, 1, 0.02),
    Setting("share", 300, 1, 0.01),
)
"""Issue 29's table: LDS, one item per document, through ``judgeprobe metrics``."""


WORDING_TABLE = tuple(
    Setting("wording", n, per, v)
    for n in (10, 30, 100)
    for per in PER_DOCUMENT
    for v in (0.0, 0.05, 0.2, 0.5)
)
"""The wording flip share through ``judgeprobe metrics``: K = 3 wordings, one and four showings
per document, from the edge to a common flip share."""


@dataclass(frozen=True)
class Section:
    """One table of ``judgeprobe selftest --coverage`` and how many of its rows fail."""

    title: str
    table: pl.DataFrame
    failed: int
    text: str = ""  # its own rendering, for a table of another shape (``calibration``)


def interval_coverage(judges: int, seed: int, method: Method = SCORE) -> Section:
    """Every interval kind × documents × items per document × true value (``grid``)."""
    table = measure_sums(grid(), judges, seed, method)
    return Section("Interval coverage (document sums)", table, failures(table).height)


def metrics_coverage(judges: int, seed: int, method: Method = SCORE) -> Section:
    """Issue 29's table re-measured through ``compute_metrics``, as metrics_ci.csv is written."""
    table = measure(ISSUE_TABLE, judges, seed, method)
    title = "LDS through judgeprobe metrics (issue 29's table)"
    return Section(title, table, failures(table).height)


def wording_coverage(judges: int, seed: int, method: Method = SCORE) -> Section:
    """The wording flip share's interval through ``compute_metrics`` (``WORDING_TABLE``)."""
    table = measure(WORDING_TABLE, judges, seed, method)
    return Section("Wording flip share through judgeprobe metrics", table, failures(table).height)


def prob_coverage(judges: int, seed: int, method: Method = SCORE) -> Section:
    """The probability shift's interval through ``compute_metrics`` (``PROB_TABLE``)."""
    table = measure(PROB_TABLE, judges, seed, method)
    return Section("Probability shift through judgeprobe metrics", table, failures(table).height)


def calibrated_coverage(judges: int, seed: int, method: Method = SCORE) -> Section:
    """``calibrate``'s interval and label budget (``selftest.calibration``), ``judges`` reps.

    Its interval is PPI++'s whatever ``method`` says (that names the bootstrap's).
    """
    table = calibration.measure(calibration.grid(), judges, seed)
    failed = calibration.failures(table).height
    title = "Calibrated estimates (calibrate)"
    return Section(title, table, failed, calibration.render(table, failed))


SECTIONS: tuple[Callable[[int, int, Method], Section], ...] = (
    interval_coverage,
    metrics_coverage,
    wording_coverage,
    prob_coverage,
    calibrated_coverage,
)
"""What ``selftest --coverage`` measures and prints, in order: a new table is one more entry."""


def render(section: Section, bound: float = BOUND) -> str:
    """A section as fixed-width text; ``!`` marks a row below ``bound`` that carries no flag."""
    if section.text:
        return section.text
    head = f"{'kind':<7}{'metric':<20}{'method':<11}{'docs':>6}{'per':>5}{'value':>7}"
    head += f"{'judges':>8}{'coverage':>10}{'zero':>7}{'flagged':>9}"
    lines = [section.title, head]
    for r in section.table.iter_rows(named=True):
        cov = r["coverage"]
        bad = cov is not None and cov < bound and (r["flagged"] or 0) < 1
        lines.append(
            f"{r['kind']:<7}{r['metric']:<20}{r['method']:<11}{r['documents']:>6}"
            f"{r['per_document']:>5}{r['value']:>7.2f}{r['judges']:>8}{_three(cov):>10}"
            f"{_three(r['zero_width']):>7}{_three(r['flagged']):>9}{' !' if bad else ''}"
        )
    below = section.table.filter((pl.col("coverage") < bound) & (pl.col("flagged") < 1)).height
    lines.append(
        f"{below} of {section.table.height} rows below {bound} unflagged (!), "
        f"{section.failed} of them beyond Monte Carlo error"
    )
    return "\n".join(lines)


def _three(x: float | None) -> str:
    """A share to three decimals, "–" where it is missing."""
    return "–" if x is None else f"{x:.3f}"
