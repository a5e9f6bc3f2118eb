"""The cue-controlled win rate: which source wins once position, length and cues are held fixed.

A raw win rate mixes the quality of a source's texts with everything else the judge saw: which
summary came first, which was longer, which wore a label or badge. Here every valid verdict of
a judge × protocol is one row of a logistic model (AlpacaEval's length control, widened to the
run's cues), in candidate-1 terms:

- outcome: 1 when candidate 1 is preferred (``A``), 0 for ``B``, ½ for a Tie (a fractional
  logit: a Tie is half a win, as win rates count it);
- ``position``: +1 when candidate 1 was shown first (order ``12``), −1 when second;
- ``length``: log(words of candidate 1 / words of candidate 2) as shown (attacks and injected
  sentences counted), when the run's items can be read;
- one column per cue condition: +1 when its cue favours candidate 1 (target ``A``), −1 when it
  favours candidate 2, 0 in every other condition (Blind is the reference);
- one column per source (``generator_1``/``generator_2``, else ``source_1``/``source_2``) but
  the commonest: +1 when candidate
  1 comes from it, −1 when candidate 2 does (a Bradley–Terry contrast; no intercept, so the
  model has no "candidate 1" term of its own).

It is fitted by statsmodels GEE (binomial, independence working correlation), whose point
estimates are the GLM's and whose sandwich covariance is clustered by document, so items
and orders of one document are not counted as independent. A cue's coefficient is its log-odds
effect with the other terms held; a source's *controlled* win rate is the mean predicted chance
that its candidate beats the one it faced, with position, length and every cue at 0 (neutral),
beside its raw win rate over the same verdicts (Ties half); its interval comes from 4,000
seeded draws of the coefficients from their clustered covariance.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np
import polars as pl
import statsmodels.api as sm
from scipy.special import expit
from statsmodels.tools.sm_exceptions import PerfectSeparationError

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import BLIND, parse_conditions
from judgeprobe.core.cells import interval_expr, p_value
from judgeprobe.core.corpus import load_items
from judgeprobe.metrics.units import DOC, with_optional
from judgeprobe.runs.rundir import Manifest

LEVEL = 0.95
DRAWS = 4_000
Z = 1.959963984540054  # the normal quantile of a 95% interval
TERMS = {
    "judge": pl.String,
    "protocol": pl.String,
    "kind": pl.String,  # position | length | cue | source
    "term": pl.String,
    "coef": pl.Float64,  # log-odds of candidate 1 winning per unit of the term
    "lo": pl.Float64,
    "hi": pl.Float64,
    "p": pl.Float64,
    "n": pl.Int64,
    "documents": pl.Int64,
}
WIN_RATES = {
    "judge": pl.String,
    "protocol": pl.String,
    "source": pl.String,
    "n": pl.Int64,  # valid verdicts between this source and another
    "raw": pl.Float64,  # its share of them won, Ties half
    "controlled": pl.Float64,  # predicted with position, length and cues neutral
    "lo": pl.Float64,
    "hi": pl.Float64,
}
_OUTCOME = {"A": 1.0, "B": 0.0, "Tie": 0.5}
_KEYS = ["condition", "item_id"]


def shown_lengths(manifest: Manifest | None) -> pl.DataFrame | None:
    """Words of each candidate as shown, per (condition, item), from the run's manifest.

    The items file and the condition definitions the manifest records are read again and each
    condition applied (attack, injected sentence); None when the items cannot be read (a moved
    file): the model then has no length term.
    """
    if manifest is None or manifest.items_source is None:
        return None
    try:
        items = load_items(manifest.items_source)
        tables = {k: {f: v for f, v in c.items() if f != "name"}
                  for k, c in manifest.conditions.items()}  # fmt: skip
        conditions = parse_conditions(tables, "the run's conditions")
    except (OSError, KeyError, TypeError, JudgeprobeError):
        return None
    rows = []
    for name, condition in conditions.items():
        for item in items:
            try:
                cue = condition.resolve(item)
            except JudgeprobeError:  # a label target this item cannot carry: never judged
                continue
            rows.append((name, item.item_id, len(cue.text_1.split()), len(cue.text_2.split())))
    schema = {"condition": pl.String, "item_id": pl.String, "words_1": pl.Int64,
              "words_2": pl.Int64}  # fmt: skip
    return pl.DataFrame(rows, schema=schema, orient="row").unique(_KEYS, keep="first")


def design(
    judgments: pl.DataFrame, lengths: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, list[tuple[str, str]], str | None]:
    """The model's rows for one cell: outcome, document, and one column per term.

    Returns the frame (``y``, ``doc``, ``source_1``, ``source_2`` and the term columns), the
    terms as (kind, name), and the reference source (None without two sources).
    """
    j = with_optional(judgments.lazy()).collect()
    j = j.filter(pl.col("verdict").is_in(list(_OUTCOME)))
    cols = {
        "y": pl.col("verdict").replace_strict(_OUTCOME, return_dtype=pl.Float64),
        "doc": pl.col(DOC).cast(pl.String),
        "source_1": _source(1),
        "source_2": _source(2),
        "position": pl.when(pl.col("order") == "12").then(1.0).otherwise(-1.0),
    }  # fmt: skip
    terms: list[tuple[str, str]] = [("position", "position")]
    if lengths is not None:
        j = j.join(lengths, on=_KEYS, how="left")
        if j["words_1"].null_count() == 0:
            ratio = pl.col("words_1").clip(1) / pl.col("words_2").clip(1)
            cols["length"] = ratio.log()
            terms.append(("length", "length"))
    target = pl.col("target")
    for cue in sorted(set(j["condition"]) - {BLIND}):
        here = pl.col("condition") == cue
        sign = pl.when(here & (target == "A")).then(1.0).when(here & (target == "B")).then(-1.0)
        cols[f"cue:{cue}"] = sign.otherwise(0.0)
        terms.append(("cue", cue))
    frame = j.select(**cols)
    sources = pl.concat([frame["source_1"], frame["source_2"]])
    counts = sources.filter(sources != "").value_counts(sort=True)
    reference = None
    if counts.height >= 2:
        reference = str(counts[0, 0])
        for s in sorted(counts[1:, 0].to_list()):
            one = (pl.col("source_1") == s).cast(pl.Float64)
            frame = frame.with_columns((one - (pl.col("source_2") == s).cast(pl.Float64))
                                       .alias(f"source:{s}"))  # fmt: skip
            terms.append(("source", s))
    keep = [t for t in terms if frame[_column(t)].abs().sum() > 0]  # a term never shown
    return frame, keep, reference


def _source(k: int) -> pl.Expr:
    """What wrote candidate ``k``: its generator, else its provenance (``source_k``), else ""."""
    named = [pl.col(f"{c}_{k}").replace("", None) for c in ("generator", "source")]
    return pl.coalesce(*named, pl.lit("")).cast(pl.String)


def _column(term: tuple[str, str]) -> str:
    kind, name = term
    return name if kind in ("position", "length") else f"{kind}:{name}"


def fit(frame: pl.DataFrame, terms: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """GEE coefficients and their document-clustered covariance."""
    x = frame.select(_column(t) for t in terms).to_numpy().astype(float)
    if np.linalg.matrix_rank(x) < x.shape[1]:
        raise JudgeprobeError(
            "controlled win rate: the terms are not separable in this cell (a cue or source "
            "always comes with another); " + ", ".join(_column(t) for t in terms)
        )
    groups = pl.Series(frame["doc"]).rank("dense").to_numpy()
    model = sm.GEE(frame["y"].to_numpy(), x, groups=groups, family=sm.families.Binomial(),
                   cov_struct=sm.cov_struct.Independence())  # fmt: skip
    with warnings.catch_warnings():  # fractional outcomes (Ties) are what a quasi-likelihood allows
        warnings.simplefilter("ignore")
        try:
            result = model.fit()
        except (np.linalg.LinAlgError, ValueError, PerfectSeparationError) as exc:
            raise JudgeprobeError(f"controlled win rate: no fit ({exc})") from None
    if not np.all(np.isfinite(result.params)):
        raise JudgeprobeError("controlled win rate: no fit (a coefficient diverged)")
    return np.asarray(result.params, dtype=float), np.asarray(result.cov_params(), dtype=float)


def _win_rates(
    frame: pl.DataFrame,
    terms: list[tuple[str, str]],
    reference: str,
    beta: np.ndarray,
    cov: np.ndarray,
    seed: int,
) -> list[dict[str, object]]:
    """Each source's raw and controlled win rate over the verdicts it took part in."""
    strength = {reference: np.zeros(1)}
    draws = np.random.default_rng(seed).multivariate_normal(beta, cov, DRAWS, method="eigh")
    by_term = {t: i for i, t in enumerate(terms)}
    sources = sorted({*frame["source_1"], *frame["source_2"]} - {""})
    for s in sources:  # a source's strength per draw (the reference is 0)
        i = by_term.get(("source", s))
        strength[s] = np.concatenate([[beta[i]], draws[:, i]]) if i is not None else np.zeros(1)
    rows: list[dict[str, object]] = []
    for s in sources:
        mine = frame.filter((pl.col("source_1") == s) != (pl.col("source_2") == s))
        mine = mine.filter((pl.col("source_1") != "") & (pl.col("source_2") != ""))
        if mine.is_empty():
            continue
        first = (mine["source_1"] == s).to_numpy()
        won = np.where(first, mine["y"].to_numpy(), 1 - mine["y"].to_numpy())
        opponents = np.where(first, mine["source_2"].to_numpy(), mine["source_1"].to_numpy())
        gaps = np.stack([_pad(strength[s]) - _pad(strength[str(o)]) for o in opponents])
        chance = expit(gaps).mean(axis=0)  # per draw: the mean over the verdicts
        lo, hi = np.quantile(chance[1:], [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
        rows.append({"source": s, "n": mine.height, "raw": float(won.mean()),
                     "controlled": float(chance[0]), "lo": float(lo), "hi": float(hi)})  # fmt: skip
    return rows


def _pad(values: np.ndarray) -> np.ndarray:
    """A strength per draw (the point estimate first); a constant for a fixed source."""
    return values if values.size > 1 else np.full(DRAWS + 1, values[0])


def controlled(
    judgments: pl.DataFrame, lengths: pl.DataFrame | None = None, seed: int = 0
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The model's terms and the sources' win rates, per judge × protocol.

    ``lengths`` (``shown_lengths``) adds the length term. A cell whose terms cannot be told
    apart, or with fewer than two documents, is left out.
    """
    terms_rows: list[dict[str, object]] = []
    rate_rows: list[dict[str, object]] = []
    for (judge, protocol), part in judgments.partition_by(
        ["judge", "protocol"], as_dict=True, maintain_order=True
    ).items():
        frame, terms, reference = design(part, lengths)
        documents = frame["doc"].n_unique()
        if documents < 2 or not terms:
            continue
        try:
            beta, cov = fit(frame, terms)
        except JudgeprobeError:
            continue
        cell = {"judge": judge, "protocol": protocol}
        for i, (kind, name) in enumerate(terms):
            se = math.sqrt(max(cov[i, i], 0.0))
            z = beta[i] / se if se > 0 else math.nan
            p = math.erfc(abs(z) / math.sqrt(2)) if se > 0 else math.nan
            terms_rows.append(cell | {"kind": kind, "term": name, "coef": beta[i],
                                      "lo": beta[i] - Z * se, "hi": beta[i] + Z * se, "p": p,
                                      "n": frame.height, "documents": documents})  # fmt: skip
        if reference is not None:
            rate_rows += [cell | r for r in _win_rates(frame, terms, reference, beta, cov, seed)]
    return pl.DataFrame(terms_rows, schema=TERMS), pl.DataFrame(rate_rows, schema=WIN_RATES)


def shown(terms: pl.DataFrame, rates: pl.DataFrame) -> Mapping[str, pl.DataFrame]:
    """Both tables formatted for reading: estimates with their 95% intervals."""
    p = pl.col("p").map_elements(p_value, return_dtype=pl.String)
    return {
        "terms": terms.select("judge", "protocol", "kind", "term",
                              coefficient=interval_expr("coef", "lo", "hi"), p=p,
                              n="n", documents="documents"),
        "win rates": rates.select("judge", "protocol", "source", "n", raw=pl.col("raw").round(3),
                                  controlled=interval_expr("controlled", "lo", "hi")),
    }  # fmt: skip
