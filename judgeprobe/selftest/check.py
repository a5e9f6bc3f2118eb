"""Did the pipeline recover what was planted? One line per planted effect and protocol.

Two checks per line:

- **exact**: the oracle replays the simulated judge's decision rule on every planned
  presentation (``plan.cue_jobs``, no server) and counts, by its own simple rules, what the metrics
  must say: Blind Tie share, LDS/TS/OLS counts, the position excess, the silent-cue rate.
  The pipeline's numbers (estimates table and card, computed from the stored judgments) must
  equal them exactly: this catches a mis-rendered prompt, a mis-read order, a wrong pairing
  or a wrong formula.
- **interval**: the planted rate is estimated from the stored verdicts on the units where
  only that bias can act (e.g. anchoring: pairs whose Blind verdict is not the labelled
  summary) and must lie in the exact binomial (Clopper–Pearson) interval at 99.9%, so an
  install that works misses by chance about once in a thousand lines.

A line with nothing to estimate from (e.g. no condition in a custom config shows the badge)
is SKIP, not a miss. Changing a planted value after the sweep makes its lines miss.

Runs with wordings (every Blind showing judged under K wordings of the prompt) add a ``wording``
line per protocol: the card's wording flip share and Fleiss' κ must equal the oracle's, and
the planted rate is recovered on each further wording of a showing's first order (changed
against the original, or not).

Runs whose items have gold (``--own``) add an ``accuracy`` line: the card's ACC on Blind must
equal the oracle's. Runs with a sensitivity condition add a ``sensitivity`` line: the card's
pooled SENS must equal the oracle's, and the planted reading rate is recovered on the degraded
pairs whose verdict without reading would not be the intact text. A blind judge
(``Biases.blind``) gets that line (nothing planted: 0) and a ``blind judge`` line, which passes
when the card calls its sensitivity INSENSITIVE and none of its rows CLEAR; the planted effects
it overrides are not
checked.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from scipy.stats import binomtest

from judgeprobe.card.record import (
    AccuracyRow,
    CardRow,
    CueRow,
    PressureRow,
    RowBase,
    SensitivityRow,
    WordingRow,
)
from judgeprobe.card.rows import Card, position_row_name
from judgeprobe.conditions import (
    BLIND,
    NAMED_BLIND,
    REASK,
    REPEAT,
    WORDING,
    Condition,
    scheme_of_condition,
    wording_index,
)
from judgeprobe.core.estimate import value_of
from judgeprobe.core.records import INVALID, TIE, Item, Verdict
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.job import Job
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.wording import fleiss
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.names import Scheme, scheme_of
from judgeprobe.protocols.pressure import pressed
from judgeprobe.selftest.simulator import (
    Biases,
    carrying,
    decide,
    form_side,
    give_way,
    longer,
    more_faithful,
    opening,
    plain_view,
    wearing,
)

LEVEL = 0.999
KEY = ["judge", "protocol", "condition", "subset", "item_id", "order", "seed"]
TWIN = ["judge", "protocol", "subset", "item_id", "order", "seed"]
TOLERANCE = 1e-9


def job_key(job: Job) -> dict[str, object]:
    """The ``KEY`` columns of one planned judgment, as the judgments table holds them."""
    return {
        "judge": job.judge,
        "protocol": job.protocol.name,
        "condition": job.condition,
        "subset": job.subset,
        "item_id": job.item_id,
        "order": job.order,
        "seed": job.seed,
    }


def target_label(job: Job) -> str:
    """The label the cue's target wears (candidate terms); empty without a target."""
    return {"A": job.label_1, "B": job.label_2}.get(job.target, "")


@dataclass(frozen=True)
class Line:
    """One planted effect in one protocol (or the whole run)."""

    effect: str
    protocol: str
    planted: float | None
    k: int
    n: int
    exact: bool
    detail: str

    @property
    def interval(self) -> tuple[float, float] | None:
        """Exact binomial interval of the measured rate; None without units."""
        if self.n == 0:
            return None
        ci = binomtest(self.k, self.n).proportion_ci(confidence_level=LEVEL, method="exact")
        return float(ci.low), float(ci.high)

    @property
    def status(self) -> str:
        """PASS when the planted rate lies in the measured interval, MISS otherwise."""
        if self.planted is None:  # a whole-run check: exact only
            return "PASS" if self.exact else "MISS"
        if self.n == 0:
            return "SKIP"
        lo, hi = self.interval or (0.0, 1.0)
        return "PASS" if self.exact and lo <= self.planted <= hi else "MISS"

    def text(self) -> str:
        """The check's line in the self-test output."""
        head = f"{self.status:<4}  {self.effect:<20} {self.protocol:<9}"
        if self.planted is None:
            return f"{head} {self.detail}"
        if self.n == 0:
            return f"{head} planted {self.planted:.3f}; {self.detail}"
        lo, hi = self.interval or (0.0, 1.0)
        return (
            f"{head} planted {self.planted:.3f}  recovered {self.k / self.n:.3f} "
            f"({self.k}/{self.n}) [{LEVEL:.1%}: {lo:.3f}, {hi:.3f}]  {self.detail}"
        )


def _candidate(side: int, order: str) -> Verdict:
    """A screen position (1, 2; 0 = Tie) as a candidate verdict."""
    if side == 0:
        return "Tie"
    return "A" if (side == 1) == (order == "12") else "B"


def expected(
    cfg: SweepConfig, items: list[Item], conditions: dict[str, Condition], biases: Biases
) -> pl.DataFrame:
    """The oracle: what the self-test's measured rates are checked against.

    Every planned judgment with the verdict the simulated judge gives it, and what the presentation
    offers each bias (in candidate terms).
    """
    rows = []
    unread = biases.model_copy(update={"sensitivity": 0.0})
    for job in cue_jobs(
        cfg, protocols_for(cfg), items, conditions, {j.name: "oracle" for j in cfg.judges}
    ):
        p, o = job.presentation, job.order
        if job.reveal is not None:  # the final verdict is turn 2's, under the true labels
            p = Presentation(p.document, p.text_1, p.text_2, *job.reveal, p.names)
        wording = wording_index(job.condition)
        d = decide(p, biases, wording)
        side, p = form_side(p), plain_view(p)  # the judge reads a summary under any form
        first, target, final = _candidate(d.winner, o), "", d.winner
        if job.pressure is not None:  # turn 1 as Blind, then the push
            target = pressed(job.pressure, first, job.item_id, job.seed)
            stated = 1 if (target == "A") == (o == "12") else 2
            final = give_way(d.winner, job.pressure, stated, p, biases)
        sensitive = job.degraded != "none"
        rows.append(
            job_key(job)
            | {
                "reveal": job.reveal is not None or job.pressure is not None,
                "wording": wording,
                "expected_verdict": _candidate(final, o),
                "expected_turn1": first,
                "pressed": target,
                "x_silent": d.silent,
                "x_evidence": _candidate(d.evidence, o),
                "same_opening": opening(p.text_1) == opening(p.text_2),
                "longer": _candidate(longer(p, biases.length_ratio), o),
                "label": _candidate(wearing(p, biases.favoured_label), o),
                "badge": _candidate(wearing(p, biases.badge_label), o),
                "own": _candidate(carrying(p, biases.own_style), o),
                "formatted": _candidate(side, o),
                "scheme": scheme_of(job.presentation.names),
                "x_taste": _candidate(d.taste, o),
                # sensitivity pairs: the verdict without reading, and the text it would read as
                # more faithful
                "expected_unread": _candidate(decide(p, unread).winner, o) if sensitive else "",
                "faithful": _candidate(more_faithful(p), o) if sensitive else "",
            }
        )
    return pl.DataFrame(rows)


def first_order(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per item and seed (its first order).

    The draws of an item are shared by its orders, so only one of them is an independent trial.
    """
    keys = [k for k in KEY if k != "order"]
    return frame.sort([*keys, "order"]).unique(keys, keep="first", maintain_order=True)


def _shift_counts(frame: pl.DataFrame, verdict: str, blind: str) -> pl.DataFrame:
    """How many verdicts moved from the blind one: to the target, to Tie, to the other side."""
    v, b, t = pl.col(verdict), pl.col(blind), pl.col("target")
    opp = pl.when(t == "A").then(pl.lit("B")).when(t == "B").then(pl.lit("A"))
    return frame.select(
        lds=((v == t) & (b != t)).sum(),
        ts=((v == TIE) & (b != TIE)).sum(),
        ols=((v == opp) & (b != opp)).sum(),
    )


def _effect(row: CardRow | None) -> float | None:
    """A card row's effect (None where the card has no such row or no effect)."""
    return None if row is None else value_of(row.effect)


def _verdict(row: CardRow | None) -> str | None:
    return None if row is None else row.verdict


def _close(a: object, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return isinstance(a, int | float) and abs(float(a) - b) <= TOLERANCE


def check(judgments: pl.DataFrame, oracle: pl.DataFrame, card: Card, biases: Biases) -> list[Line]:
    """Every line: the run as a whole, then each planted effect per judge and protocol."""
    m = judgments.join(oracle, on=KEY, how="left")
    n_valid = int((m["verdict"] != INVALID).sum())
    agree = int((m["verdict"] == m["expected_verdict"]).sum())
    lines = [
        Line("judgments", "all", None, agree, m.height, agree == m.height == n_valid,
             f"{n_valid} of {m.height} valid, {agree} as the simulated judge gave them"),
    ]  # fmt: skip
    estimates = estimates_table(judgments)
    for (judge, protocol), part in m.partition_by(["judge", "protocol"], as_dict=True).items():
        cell = (str(judge), str(protocol))
        sensitivity = part.filter(pl.col("degraded") != "")
        if biases.blind is None:
            lines += _lines(part, estimates, card, cell, biases)
        if sensitivity.height or biases.blind is not None:
            lines.append(_sensitivity(sensitivity, card, cell, biases))
        if biases.blind is not None:
            lines.append(_blind(card, cell, biases.blind))
        if (part["gold"].fill_null("") != "").any() and biases.blind is None:
            lines.append(_accuracy(part, card, cell))
    return lines


def _accuracy(m: pl.DataFrame, card: Card, cell: tuple[str, str]) -> Line:
    """ACC on Blind as the oracle counts it (a Tie is not correct) against the card's."""
    blind = m.filter(
        (pl.col("condition") == BLIND) & pl.col("gold").is_in(["A", "B"])
        & (pl.col("expected_verdict") != INVALID)
    )  # fmt: skip
    k = int((blind["expected_verdict"] == blind["gold"]).sum())
    want = k / blind.height if blind.height else None
    row = card.find(cell[0], cell[1], "accuracy")
    got = value_of(row.accuracy) if isinstance(row, AccuracyRow) else None
    detail = f"card ACC {_fmt(got)}, expected {_fmt(want)}; {_verdict(row)}"
    return Line("accuracy", cell[1], None, k, blind.height, _close(got, want), detail)


def _sensitivity(pairs: pl.DataFrame, card: Card, cell: tuple[str, str], b: Biases) -> Line:
    """SENS as the oracle counts it, and the planted reading rate.

    Recovered on the pairs whose verdict without reading is not the intact text and whose
    intact text the judge reads as the more faithful: there reading alone decides.
    """
    planted = 0.0 if b.blind is not None else b.sensitivity
    row = card.find(cell[0], cell[1], "sensitivity")
    if pairs.is_empty():
        return Line("sensitivity", cell[1], planted, 0, 0, exact=True,
                    detail="no sensitivity condition")  # fmt: skip
    intact = pl.when(pl.col("degraded") == "A").then(pl.lit("B")).otherwise(pl.lit("A"))
    counts = pairs.filter(pl.col("expected_verdict") != INVALID).select(
        net=(pl.col("expected_verdict") == intact).sum().cast(pl.Int64)
        - (pl.col("expected_verdict") == pl.col("degraded")).sum().cast(pl.Int64),
        valid=pl.len(),
    )
    net, valid = (int(x) for x in counts.row(0))
    want = net / valid if valid else None
    units = first_order(pairs).filter(
        (pl.col("faithful") == intact) & (pl.col("expected_unread") != intact)
    )
    k = int((units["verdict"] == units.select(intact).to_series()).sum())
    got = _effect(row)
    detail = f"card SENS {_fmt(got)}, expected {_fmt(want)}; {_verdict(row)}"
    return Line("sensitivity", cell[1], planted, k, units.height, _close(got, want), detail)


def _blind(card: Card, cell: tuple[str, str], mode: str) -> Line:
    """The card never calls a judge that does not read CLEAR."""
    rows = [r for r in card.records if (r.judge, r.protocol) == cell]

    def verdicts(kind: type[RowBase]) -> list[str]:
        return [str(r.verdict) for r in rows if isinstance(r, kind)]

    sens, cues, worded = verdicts(SensitivityRow), verdicts(CueRow), verdicts(WordingRow)
    ok = sens == ["INSENSITIVE"] and "CLEAR" not in {r.verdict for r in rows}
    ok = ok and "STABLE" not in worded  # it says the same under every wording: no pass
    detail = (
        f"always {'the first-shown summary' if mode == 'first' else 'Tie'}: sensitivity "
        f"{'/'.join(sens) or 'not measured'}, cue rows {', '.join(sorted(set(cues))) or '–'}"
        + (f", wording {'/'.join(worded)}" if worded else "")
    )
    return Line("blind judge", cell[1], None, int(ok), 1, ok, detail)


def _lines(
    m: pl.DataFrame, estimates: pl.DataFrame, card: Card, cell: tuple[str, str], b: Biases
) -> list[Line]:
    blind = m.filter(pl.col("condition") == BLIND)
    twins = blind.select(
        *TWIN, blind_verdict="verdict", blind_expected="expected_verdict", blind_longer="longer"
    )
    probes = m.filter((pl.col("condition") != BLIND) & ~pl.col("reveal")).join(
        twins, on=TWIN, how="inner"
    )
    scheme: Scheme = blind["scheme"][0] if blind.height else "numbers"
    out = [_tie(blind, estimates, cell, b), _position(blind, card, cell, b.position_for(scheme))]
    for condition in NAMED_BLIND.values():  # Blind under a further label scheme
        named = m.filter(pl.col("condition") == condition)
        if named.height:
            rate = b.position_for(scheme_of_condition(condition))  # type: ignore[arg-type]
            out.append(_position(named, card, cell, rate, position_row_name(condition)))
    cues = {"label anchoring": ("label", b.anchoring), "placebo badge": ("badge", b.badge),
            "verbosity": ("longer", b.verbosity), "format": ("formatted", b.format)}  # fmt: skip
    single: list[str] = []
    for effect, (column, rate) in cues.items():
        for condition in sorted(_single_cue(probes, column)):
            part = probes.filter(pl.col("condition") == condition)
            out.append(_cue(effect, part, probes, column, rate, estimates, card, cell))
            if column != "formatted":  # the simulated judge never names a layout
                single.append(condition)
    out.append(_silent(probes.filter(pl.col("condition").is_in(single)), card, cell, b))
    out.append(_repeat(probes.filter(pl.col("condition") == REPEAT), card, cell))
    out += _pressure(m.filter(pl.col("pressed") != ""), card, cell, b)
    worded = m.filter((pl.col("condition") == BLIND) | pl.col("condition").str.starts_with(WORDING))
    if worded["wording"].max():
        out.append(_wording(worded, card, cell, b))
    return out


def _wording(m: pl.DataFrame, card: Card, cell: tuple[str, str], b: Biases) -> Line:
    """The planted wording sensitivity: the card's flip share and κ as the oracle counts them.

    A showing counts when valid under every wording; its K expected verdicts give the oracle's
    flip share and Fleiss' κ (``metrics.wording.fleiss``). The planted rate is recovered on the
    first order of each counted showing, one trial per further wording: changed or not.
    """
    keys = [k for k in TWIN if k not in ("judge", "protocol")]
    x = pl.col("expected_verdict")
    per = (
        m.group_by(keys)
        .agg(
            valid=(pl.col("verdict") != INVALID).all(),
            kinds=x.n_unique(),
            **{c: (x == v).sum() for c, v in (("a", "A"), ("b", "B"), ("tie", "Tie"))},
        )
        .filter(pl.col("valid"))
    )
    n = per.height
    want = int((per["kinds"] > 1).sum()) / n if n else None
    kappa = fleiss(per.select("a", "b", "tie").to_numpy().astype(float))
    row = card.find(cell[0], cell[1], "wording")
    found = card.wording.filter((pl.col("judge") == cell[0]) & (pl.col("protocol") == cell[1]))
    got_kappa = found["kappa"][0] if found.height else None
    exact = _close(_effect(row), want) and _close(got_kappa, kappa.value)
    original = m.filter(pl.col("wording") == 0).select(*keys, original="verdict")
    trials = first_order(
        m.filter(pl.col("wording") > 0).join(original, on=keys).join(per.select(keys), on=keys)
    )
    k = int((trials["verdict"] != trials["original"]).sum())
    false_alarm = b.wording == 0 and _verdict(row) == "UNSTABLE"
    detail = (f"card flip share {_fmt(_effect(row))} (expected {_fmt(want)}), "
              f"Fleiss κ {_fmt(got_kappa)} (expected {_fmt(kappa.value)}); "
              f"{_verdict(row)}")  # fmt: skip
    return Line("wording", cell[1], b.wording, k, trials.height, exact and not false_alarm, detail)


def _rs(frame: pl.DataFrame) -> tuple[int, int, int]:
    """Valid pairs, revised, and switched to the other candidate (RS_opp), as the oracle sees."""
    final, first = pl.col("expected_verdict"), pl.col("expected_turn1")
    counts = frame.filter(pl.col("verdict") != INVALID).select(
        n=pl.len(),
        revised=(final != first).sum(),
        switched=(first.is_in(["A", "B"]) & final.is_in(["A", "B"]) & (final != first)).sum(),
    )
    n, revised, switched = (int(x or 0) for x in counts.row(0))
    return n, revised, switched


def _pressure(m: pl.DataFrame, card: Card, cell: tuple[str, str], b: Biases) -> list[Line]:
    """The planted giving way, per pressure condition: RS and the card's effect, exactly.

    The card's effect must equal RS − RS(Reask) as the oracle counts it (Reask plants none), its
    RS_opp column the oracle's share switched to the other candidate; the planted rate is
    recovered on the first order of each showing where a push can act (Challenge: a non-Tie
    turn 1).
    """
    out = []
    reask = m.filter(pl.col("condition") == REASK)
    for condition in sorted(set(m["condition"].to_list()) - {REASK}):
        part = m.filter(pl.col("condition") == condition)
        n, revised, switched = _rs(part)
        base = _rs(reask)
        want = revised / n - (base[1] / base[0] if base[0] else 0.0) if n else None
        row = card.find(cell[0], cell[1], condition)
        got = _effect(row)
        got_switched = value_of(row.rs_opp) if isinstance(row, PressureRow) else None
        exact = _close(got, want) and _close(got_switched, switched / n if n else None)
        units = first_order(part.filter(pl.col("verdict") != INVALID))
        if condition == "Challenge":
            units = units.filter(pl.col("expected_turn1") != TIE)
        k = int((units["verdict"] != units["expected_turn1"]).sum())
        name = "" if row is None else row.effect_name
        detail = (f"{condition}: card {name} {_fmt(got)} (expected "
                  f"{_fmt(want)}), RS_opp {_fmt(got_switched)}; {_verdict(row)}")  # fmt: skip
        false_alarm = b.pressure == 0 and _verdict(row) == "BIASED"
        out.append(Line("pressure", cell[1], b.pressure, k, units.height, exact and not
                        false_alarm, detail))  # fmt: skip
    return out


def _single_cue(probes: pl.DataFrame, column: str) -> set[str]:
    """Conditions where only the cue of ``column`` acts.

    It is shown on every judgment, no other cue is, and Blind shows no length difference.
    """
    others = {"label", "badge", "longer", "formatted"} - {column}
    per = probes.group_by("condition").agg(
        shown=(pl.col(column) != TIE).all(),
        alone=pl.all_horizontal(*(pl.col(c) == TIE for c in others)).all(),
        even=(pl.col("blind_longer") == TIE).all(),
    )
    return set(per.filter(pl.col("shown") & pl.col("alone") & pl.col("even"))["condition"])


def _cell_row(estimates: pl.DataFrame, cell: tuple[str, str], condition: str) -> dict[str, object]:
    row = estimates.filter(
        (pl.col("judge") == cell[0])
        & (pl.col("protocol") == cell[1])
        & (pl.col("condition") == condition)
    )
    return row.row(0, named=True) if row.height else {}


def _tie(blind: pl.DataFrame, estimates: pl.DataFrame, cell: tuple[str, str], b: Biases) -> Line:
    valid = blind.filter(pl.col("verdict") != INVALID)
    want = int((valid["expected_verdict"] == TIE).sum()) / valid.height if valid.height else None
    got = _cell_row(estimates, cell, BLIND).get("EDR")
    units = first_order(blind).filter(~pl.col("same_opening") & (pl.col("longer") == TIE))
    k = int((units["verdict"] == TIE).sum())
    detail = f"Blind EDR {_fmt(got)}, expected {_fmt(want)}"
    return Line("tie rate", cell[1], b.tie_rate, k, units.height, _close(got, want), detail)


def _position(blind: pl.DataFrame, card: Card, cell: tuple[str, str], rate: float,
              row_name: str = "position") -> Line:  # fmt: skip
    """The position row (``row_name``: Blind's, or Blind's under a further label scheme)."""
    keys = [k for k in KEY if k != "order"]
    cols = ["verdict", "expected_verdict", "same_opening", "longer", "own"]
    v12 = blind.filter(pl.col("order") == "12").select(*keys, *cols)
    v21 = blind.filter(pl.col("order") == "21").select(*keys, *cols)
    both = v12.join(v21, on=keys, suffix="_21").filter(
        (pl.col("verdict") != INVALID) & (pl.col("verdict_21") != INVALID)
    )
    if both.is_empty():
        why = "not measured: no Blind item judged in both orders (order = both)"
        return Line(row_name, cell[1], rate, 0, 0, exact=True, detail=why)
    first = (pl.col("expected_verdict") == "A") & (pl.col("expected_verdict_21") == "B")
    second = (pl.col("expected_verdict") == "B") & (pl.col("expected_verdict_21") == "A")
    net = both.select(first.cast(pl.Int64) - second.cast(pl.Int64)).to_series()
    want = int(net.sum()) / both.height
    row = card.find(cell[0], cell[1], row_name)
    got = _effect(row)
    units = both.filter(
        ~pl.col("same_opening") & (pl.col("longer") == TIE) & (pl.col("own") == TIE)
        & (pl.col("verdict") != TIE) & (pl.col("verdict_21") != TIE)
    )  # fmt: skip
    k = int(units.select((pl.col("verdict") == "A") & (pl.col("verdict_21") == "B")).sum().item())
    detail = f"card first − second {_fmt(got)}, expected {_fmt(want)}; {_verdict(row)}"
    exact = _close(got, want) and not (rate == 0 and _verdict(row) == "BIASED")
    effect = "position bias" if row_name == "position" else f"{row_name[9:].strip('()')} position"
    return Line(effect, cell[1], rate, k, units.height, exact, detail)


def _cue(
    effect: str,
    part: pl.DataFrame,
    probes: pl.DataFrame,
    column: str,
    rate: float,
    estimates: pl.DataFrame,
    card: Card,
    cell: tuple[str, str],
) -> Line:
    condition = str(part["condition"][0])
    want = _shift_counts(part, "expected_verdict", "blind_expected").row(0, named=True)
    row = _cell_row(estimates, cell, condition)
    counts_ok = all(row.get(f"{k}_count") == want[k] for k in ("lds", "ts", "ols"))
    card_row = card.find(cell[0], cell[1], condition)
    n = part.height
    effect_name = "" if card_row is None else card_row.effect_name
    placebo = effect_name.removeprefix("LDS − ")
    if placebo not in ("", "OLS"):  # the card subtracts this placebo's LDS
        shown = probes.filter(pl.col("condition") == placebo)
        base = _shift_counts(shown, "expected_verdict", "blind_expected")["lds"][0]
        want_effect = (want["lds"] - base) / n if n else None
    else:
        want_effect = (want["lds"] - want["ols"]) / n if n else None
    got_effect = _effect(card_row)
    units = first_order(part).filter(pl.col("blind_verdict") != pl.col(column))
    k = int((units["verdict"] == units[column]).sum())
    detail = (
        f"{condition}: LDS/TS/OLS {row.get('lds_count')}/{row.get('ts_count')}/"
        f"{row.get('ols_count')} (expected {want['lds']}/{want['ts']}/{want['ols']}); "
        f"card {effect_name or None} {_fmt(got_effect)} (expected {_fmt(want_effect)}), "
        f"{_verdict(card_row)}"
    )
    false_alarm = rate == 0 and _verdict(card_row) == "BIASED"  # nothing was planted
    exact = counts_ok and _close(got_effect, want_effect) and not false_alarm
    return Line(effect, cell[1], rate, k, units.height, exact, detail)


def _silent(probes: pl.DataFrame, card: Card, cell: tuple[str, str], b: Biases) -> Line:
    """Pooled over the single-cue conditions.

    Each moved judgment draws its explanation independently, so every LDS move is a trial.
    """
    t = pl.col("target")
    moved_x = probes.filter((pl.col("expected_verdict") == t) & (pl.col("blind_expected") != t))
    want = moved_x.group_by("condition").agg(moved=pl.len(), silent=pl.col("x_silent").mean())
    exact, shown = True, []
    for condition, moved, silent in want.sort("condition").iter_rows():
        row = card.find(cell[0], cell[1], condition)
        got_silent = value_of(row.silent) if isinstance(row, CueRow) else None
        exact &= isinstance(row, CueRow) and row.moved == moved and _close(got_silent, silent)
        shown.append(f"{condition} {_fmt(got_silent)}")
    conditions = set(probes["condition"].unique())
    n = sum(
        r.moved or 0
        for r in card.of_type(CueRow)
        if (r.judge, r.protocol) == cell and r.row in conditions
    )
    k = card.silent_items.filter(
        (pl.col("judge") == cell[0]) & (pl.col("protocol") == cell[1])
        & pl.col("condition").is_in(conditions)
    ).height  # fmt: skip
    detail = "card silent-cue " + (", ".join(shown) or "–") + " (as expected)" * exact
    if not conditions:
        detail = "no condition with a single planted cue"
    return Line("silent explanations", cell[1], b.silent, k, n, exact, detail)


def _repeat(repeats: pl.DataFrame, card: Card, cell: tuple[str, str]) -> Line:
    """The simulated judge is deterministic.

    Sent again, a Blind request gets the same verdict, so the planted noise floor is 0 and the
    repeat row must read exactly that.
    """
    if repeats.is_empty():
        return Line("noise floor", cell[1], 0.0, 0, 0, exact=True,
                    detail="no BlindRepeat (repeat = 0)")  # fmt: skip
    k = int((repeats["verdict"] != repeats["blind_verdict"]).sum())
    want = int((repeats["expected_verdict"] != repeats["blind_expected"]).sum()) / repeats.height
    row = card.find(cell[0], cell[1], "repeat")
    got = _effect(row)
    beside = [  # the same noise floor beside every cue row
        value_of(r.noise_floor) for r in card.of_type(CueRow) if (r.judge, r.protocol) == cell
    ]
    exact = _close(got, want) and all(_close(x, want) for x in beside)
    detail = f"card repeat flip rate {_fmt(got)}, expected {_fmt(want)}; {_verdict(row)}"
    return Line("noise floor", cell[1], 0.0, k, repeats.height, exact, detail)


def _fmt(x: object) -> str:
    return f"{x:.4f}" if isinstance(x, float) else str(x)
