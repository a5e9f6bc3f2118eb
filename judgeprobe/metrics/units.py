"""Per-item contribution tables: the one place where each metric's counting rule lives.

Each builder returns one row per unit, (judge, protocol, condition, document_id, subset,
item_id, order, seed), with the columns that metric family sums (the estimates table asks
the builders it shares for one row per cell instead: ``keys``). A metric is then a function
of the column sums over a cell's units (see ``registry``), which gives the point estimate, the
per-seed spread and, from the documents' summed units, the 95% interval over documents
(``uncertainty.interval``: score-type bounds, no resampling) — all from the same counts.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from judgeprobe.conditions import BLIND, WORDING, family_members
from judgeprobe.core.records import INVALID, JUDGMENT_SCHEMA, TIE, VERDICTS
from judgeprobe.protocols.pressure import unsupplied_pressure
from judgeprobe.protocols.reveal import unsupplied
from judgeprobe.text.lexicons import Lexicons

CELL = ["judge", "protocol", "condition"]
DOC = "document_id"  # the unit of every interval: a document's items count together
UNIT = ["subset", "item_id"]
SHOWING = [DOC, *UNIT, "order", "seed"]
"""One showing of an item: its document, the item, the order of its candidates and the seed."""
KEYS = [*CELL, *SHOWING]
PAIR = ["judge", "protocol", *SHOWING]
"""A judgment and its Blind twin share these: the same showing to the same judge and protocol."""
RELABEL = "single_relabel"  # the candidate set's subset: one summary under swapped labels

VERDICT, TARGET = pl.col("verdict"), pl.col("target")
"""The judgment's verdict (A, B, Tie or Invalid) and the candidate its cue favours (A, B, none)."""
VALID = VERDICT != INVALID
DEGRADED = pl.col("degraded").fill_null("") != ""
"""A sensitivity judgment (a candidate beside its degraded copy): it has no Blind twin, so
it is no probe of a cue; its own family is ``metrics.sensitivity``."""
PRESSURE = pl.col("turn1_target").fill_null("") == "none"
"""A pressure judgment (``protocols.pressure``): turn 1 as Blind (target none), then a push with
no new information. No cue: its moves are its revisions (``reveal_units``), not a probe's."""
WORDED = pl.col("condition").cast(pl.String).str.starts_with(WORDING)
"""A Blind showing judged under another wording of the prompt (``BlindWording1``, …): no cue;
paired with Blind it gives that wording's flip rate, and with every wording ``wording_units``."""
PROBE = (pl.col("condition") != BLIND) & ~DEGRADED & ~PRESSURE
"""A cue judgment, compared with its Blind twin."""
CHANGED_TEXT = (pl.col("attack").fill_null("") != "") | (pl.col("reformat").fill_null("") != "")
"""A judgment whose cue rewrote a candidate: a style attack or a format."""
OPTIONAL: dict[str, pl.DataType] = {
    name: JUDGMENT_SCHEMA[name]
    for name in (
        "domain",
        "generator_1",
        "generator_2",
        "explanation",
        "label_1",
        "label_2",
        "source_1",
        "source_2",
        "attack",
        "attack_on",
        "reformat",
        "reformat_on",
        "degraded",
        "n_requests",
        "turn1_verdict",
        "turn1_target",
        "turn1_explanation",
        "n_quotes",
        "n_fabricated",
        "n_criteria",
        "n_nondiscriminating",
        "verdict_score_agree",
        "score_1",
        "score_2",
        "score_min",
        "score_max",
        "prob_1",
        "prob_2",
        "prob_tie",
        "latency_s",
        "prompt_tokens",
        "completion_tokens",
        "gold",
        "length_1",
        "length_2",
    )
}

# The reasoning a judgment stores beside its explanation (SCoT notes, PBP notes and quoted
# spans), read out of the ``details`` JSON: only these values, never its keys (a key such
# as "completeness" would otherwise match attack vocabulary).
_REASONING = r'"(?:note|notes|quote)"\s*:\s*"(?:[^"\\]|\\.)*"'

Drift = Callable[[list[str], list[str]], np.ndarray]
"""Explanation distance for aligned lists of texts: 1 − similarity, one value per pair."""


LEGACY_FORMAT = "format:"
"""How a table written before ``reformat`` had its column wrote a format condition's form: in
``attack``, as ``format:FORM``."""


def _format_apart(j: pl.LazyFrame) -> pl.LazyFrame:
    """An older table's ``format:FORM`` attacks as the form in ``reformat``, no attack."""
    attack = pl.col("attack").fill_null("")
    legacy = attack.str.starts_with(LEGACY_FORMAT)
    return j.with_columns(
        reformat=pl.when(legacy).then(attack.str.strip_prefix(LEGACY_FORMAT)).otherwise(pl.lit("")),
        attack=pl.when(legacy).then(pl.lit("")).otherwise(pl.col("attack")),
    )


def with_optional(j: pl.LazyFrame) -> pl.LazyFrame:
    """Add any optional column a hand-made judgments table lacks, as nulls.

    A table from before judgments carried their document (or a row without one) gets its
    item as its document: the bootstrap then resamples items, as it did then.
    """
    have = set(j.collect_schema().names())
    if "reformat" not in have and "attack" in have:
        j, have = _format_apart(j), have | {"reformat"}
    item = pl.concat_str("subset", "item_id", separator="/")
    doc = pl.coalesce(pl.col(DOC), item) if DOC in have else item
    return j.with_columns(
        *(pl.lit(None, dtype=t).alias(c) for c, t in OPTIONAL.items() if c not in have),
        doc.alias(DOC),
    )


def pressure_conditions(j: pl.DataFrame | pl.LazyFrame) -> list[str]:
    """The pressure conditions a judgments table holds (``PRESSURE``), sorted."""
    found = with_optional(j.lazy()).filter(PRESSURE).select(pl.col("condition").cast(pl.String))
    return sorted(found.unique().collect()["condition"].to_list())


def _other(target: pl.Expr) -> pl.Expr:
    return pl.when(target == "A").then(pl.lit("B")).when(target == "B").then(pl.lit("A"))


def moves(before: pl.Expr) -> dict[str, pl.Expr]:
    """How a valid verdict moved from the valid verdict ``before`` (Blind's, or turn 1's).

    ``lds`` into the cue's target, ``ts`` into Tie, ``ols`` into the other candidate.
    """
    other = _other(TARGET)  # the candidate the cue does not favour
    return {
        "lds": (VERDICT == TARGET) & (before != TARGET),
        "ts": (VERDICT == TIE) & (before != TIE),
        "ols": (other == VERDICT) & (before != other),
    }


def _mentions(text: pl.Expr, words: tuple[str, ...]) -> pl.Expr:
    if not words:
        return pl.lit(False)
    return text.fill_null("").str.to_lowercase().str.contains_any(list(words))


def cell_units(j: pl.LazyFrame, keys: list[str] = KEYS) -> pl.LazyFrame:
    """Counts per item: judgments, invalid, valid, Tie, A, B; and whether the cue is directional."""
    return j.group_by(keys).agg(
        judgments=pl.len().cast(pl.Int64),
        invalid=(~VALID).sum().cast(pl.Int64),
        valid=VALID.sum().cast(pl.Int64),
        tie=(VERDICT == TIE).sum().cast(pl.Int64),
        a=(VERDICT == "A").sum().cast(pl.Int64),
        b=(VERDICT == "B").sum().cast(pl.Int64),
        directional=TARGET.is_in(["A", "B"]).all(),
    )


def blind_twins(j: pl.LazyFrame) -> pl.LazyFrame:
    """Each valid Blind judgment by ``PAIR``: its ``blind_verdict`` and ``blind_explanation``."""
    return j.filter((pl.col("condition") == BLIND) & VALID).select(
        *PAIR, blind_verdict=VERDICT, blind_explanation=pl.col("explanation")
    )


def paired_units(j: pl.LazyFrame, keys: list[str] = KEYS) -> pl.LazyFrame:
    """Moves against Blind per item, over pairs valid in both: into target, Tie, other."""
    blind = pl.col("blind_verdict")
    return (
        j.filter(PROBE & VALID)
        .join(blind_twins(j), on=PAIR, how="inner")
        .group_by(keys)
        .agg(
            paired=pl.len().cast(pl.Int64),
            **{name: move.sum().cast(pl.Int64) for name, move in moves(blind).items()},
            changed=(blind != VERDICT).sum().cast(pl.Int64),
        )
    )


def marginal_units(j: pl.LazyFrame, keys: list[str] = KEYS) -> pl.LazyFrame:
    """Each side's own valid verdicts per item: the probe cell and Blind read with its target.

    Blind is read with the probe's target for the same item presentation where there is
    one, else the probe cell's target when that is the same for every item.
    """
    probe = j.filter(PROBE & VALID)
    other = _other(TARGET)  # the candidate the cue does not favour
    p_side = probe.group_by(keys).agg(
        p_valid=pl.len().cast(pl.Int64),
        p_fav=(VERDICT == TARGET).sum().cast(pl.Int64),
        p_tie=(VERDICT == TIE).sum().cast(pl.Int64),
        p_opp=(other == VERDICT).sum().cast(pl.Int64),
    )
    cell_target = probe.group_by(CELL).agg(
        cell_target=pl.when(TARGET.n_unique() == 1).then(TARGET.first())
    )
    item_target = probe.select(*CELL, *SHOWING, item_target=TARGET).unique([*CELL, *SHOWING])
    blind_target = pl.coalesce("item_target", "cell_target")
    b_side = (
        j.filter((pl.col("condition") == BLIND) & VALID)
        .select(*PAIR, blind_verdict=VERDICT)
        .join(cell_target, on=["judge", "protocol"], how="inner")
        .join(item_target, on=[*CELL, *SHOWING], how="left")
        .group_by(keys)
        .agg(
            b_valid=pl.len().cast(pl.Int64),
            b_fav=(pl.col("blind_verdict") == blind_target).sum().cast(pl.Int64),
            b_tie=(pl.col("blind_verdict") == TIE).sum().cast(pl.Int64),
            b_opp=(pl.col("blind_verdict") == _other(blind_target)).sum().cast(pl.Int64),
        )
    )
    cols = ["p_valid", "p_fav", "p_tie", "p_opp", "b_valid", "b_fav", "b_tie", "b_opp"]
    return p_side.join(b_side, on=keys, how="full", coalesce=True).with_columns(
        pl.col(cols).fill_null(0)
    )


def reveal_units(j: pl.LazyFrame, lex: Lexicons) -> pl.LazyFrame:
    """Reveal-After: turn-2 verdict v_R against turn-1 (Flip) v_F, truth target t.

    A pressure condition's judgments (``PRESSURE``) are two-turn too: v_F is its Blind turn 1,
    v_R the verdict after the push and t the candidate the push points to, so ``to_truth``
    counts giving way toward it.

    Acknowledgement counts only phrases the reveal prompts do not contain themselves
    (``protocols.reveal.unsupplied``); ``ack_floor`` counts them in turn 1's explanation, which
    saw no reveal. Under a push the phrases are the pressure lexicon's (words that answer a
    challenge, ``lexicons/pressure_v1.toml``) less those the push's own prompts supply.

    The split of a revision follows docs/metrics.md: ``to_tie`` into Tie, ``to_out`` out of a
    turn-1 Tie, and ``to_opp`` to the opposite — of the truth after a reveal, of turn 1's pick
    after a push (so ``to_opp + to_tie + to_out`` is every revision a push made);
    ``to_target`` counts final verdicts on t.
    """
    v_f = pl.col("turn1_verdict")
    both = VALID & v_f.is_in(VERDICTS)
    revision = moves(v_f)
    # Under a push there is no truth: "the opposite" is the other of turn 1's pick.
    switched = v_f.is_in(["A", "B"]) & (_other(v_f) == VERDICT)
    picked = VERDICT.is_in(["A", "B"])
    ack, ack_floor = (
        pl.when(PRESSURE)
        .then(_mentions(pl.col(text), unsupplied_pressure(lex.pressure)))
        .otherwise(_mentions(pl.col(text), unsupplied(lex.acknowledgement)))
        for text in ("explanation", "turn1_explanation")
    )
    return (
        j.filter(pl.col("turn1_target").fill_null("") != "")
        .filter(both)
        .group_by(KEYS)
        .agg(
            pairs=pl.len().cast(pl.Int64),
            revised=(v_f != VERDICT).sum().cast(pl.Int64),
            to_truth=revision["lds"].sum().cast(pl.Int64),
            to_tie=revision["ts"].sum().cast(pl.Int64),
            to_opp=pl.when(PRESSURE).then(switched).otherwise(revision["ols"]).sum().cast(pl.Int64),
            to_out=((v_f == TIE) & picked).sum().cast(pl.Int64),
            to_target=(TARGET.is_in(["A", "B"]) & (VERDICT == TARGET)).sum().cast(pl.Int64),
            ack=ack.sum().cast(pl.Int64),
            ack_floor=ack_floor.sum().cast(pl.Int64),
        )
    )


def names_cue(text: pl.Expr, lex: Lexicons) -> pl.Expr:
    """Whether ``text`` names a cue its judgment was shown.

    A label shown beside a summary, or a cue word or provenance stereotype of the lexicons.
    """
    low = text.fill_null("").str.to_lowercase()
    labels = (pl.col(c).fill_null("") for c in ("label_1", "label_2"))
    shown = [(label != "") & low.str.contains(label.str.to_lowercase(), literal=True)
             for label in labels]  # fmt: skip
    return shown[0] | shown[1] | _mentions(low, (*lex.cue, *lex.stereotype))


def _attack_words(text: pl.Expr, lex: Lexicons) -> pl.Expr:
    """Whether ``text`` uses the vocabulary of the style attack its judgment was shown."""
    hit = pl.lit(False)
    for attack, words in lex.attack.items():
        hit = pl.when(pl.col("attack") == attack).then(_mentions(text, words)).otherwise(hit)
    return hit


def _family_words(text: pl.Expr, lex: Lexicons) -> pl.Expr:
    """Whether ``text`` uses the words of the battery family its judgment's condition is in."""
    hit = pl.lit(False)
    for family, words in lex.family.items():
        if words and (members := family_members(family)):
            hit = hit | (pl.col("condition").is_in(members) & _mentions(text, words))
    return hit


def acknowledges(lex: Lexicons) -> pl.Expr:
    """Whether a judgment's explanation names the cue it was shown (``names_cue``).

    Under SCoT/PBP its notes and quotes count too (read out of ``details``); under a style
    attack, the attack's own vocabulary; under a battery cue, its family's words.
    """
    reasoning = pl.col("details").fill_null("").str.extract_all(_REASONING).list.join(" ")
    text = pl.concat_str(pl.col("explanation").fill_null(""), reasoning, separator=" ")
    return names_cue(text, lex) | _attack_words(text, lex) | _family_words(text, lex)


def same_units(j: pl.LazyFrame, lex: Lexicons, scorers: dict[str, Drift]) -> pl.DataFrame:
    """Same-decision pairs (v_p = v_B): explanation drift and label-aligned rhetoric.

    Each scorer gives one drift column (its name), so the scorers can be read side by side.
    ``lai_floor`` applies the probe's own cue words to the Blind explanation: the rate a
    judge reaches without being shown any cue.
    """
    pairs = (
        j.filter(PROBE & VALID)
        .join(blind_twins(j), on=PAIR, how="inner")
        .filter(pl.col("blind_verdict") == VERDICT)
        .with_columns(
            lai=names_cue(pl.col("explanation"), lex),
            lai_floor=names_cue(pl.col("blind_explanation"), lex),
        )
        .select(*KEYS, "explanation", "blind_explanation", "lai", "lai_floor")
        .collect()
    )
    probe, blind = (pairs[c].fill_null("").to_list() for c in ("explanation", "blind_explanation"))
    drifts = {
        name: pl.Series(name, scorer(probe, blind), dtype=pl.Float64)
        for name, scorer in scorers.items()
    }
    return (
        pairs.with_columns(**drifts)
        .group_by(KEYS)
        .agg(
            pl.col(*drifts).sum() if drifts else [],
            same=pl.len().cast(pl.Int64),
            lai=pl.col("lai").sum().cast(pl.Int64),
            lai_floor=pl.col("lai_floor").sum().cast(pl.Int64),
        )
    )


def relabel_units(j: pl.LazyFrame) -> pl.LazyFrame:
    """Single-relabel pairs: the units of the provenance-label metrics.

    One document's two ``single_relabel`` items (the same summary and opponent, the provenance
    labels swapped) judged in the same cell, seed and, where both items were shown in one order,
    that order.

    ``flip``: the verdicts differ (texts fixed, so only the labels moved it). Where the cue's
    target differs between the two items (True/Flip: the ``LLM``-labelled candidate), a pair
    is directional: ``toward`` when candidate 1 fares better (A > Tie > B) in the item whose
    target is A than in the one whose target is B — the verdict follows the label —
    ``away`` when it fares worse.
    """
    rank = {"A": 1, "Tie": 0, "B": -1}
    judged = j.filter((pl.col("subset") == RELABEL) & VALID).select(
        *CELL,
        DOC,
        "order",
        "seed",
        "target",
        item_id=pl.col("item_id").cast(pl.String),
        rank=VERDICT.replace_strict(rank, default=0),
    )
    pairs = judged.join(judged, on=[*CELL, DOC, "seed"], suffix="_2").filter(
        pl.col("item_id") < pl.col("item_id_2")
    )
    # Both orders of one pair when the items share them; else the pair across orders.
    same_order = (pl.col("order") == pl.col("order_2")).cast(pl.Int8)
    key = [*CELL, DOC, "seed"]
    pairs = pairs.filter(same_order == same_order.max().over(key))
    t1, t2 = pl.col("target"), pl.col("target_2")
    directional = t1.is_in(["A", "B"]) & t2.is_in(["A", "B"]) & (t1 != t2)
    on_a = pl.when(t1 == "A").then("rank").otherwise("rank_2")  # candidate 1 favoured
    on_b = pl.when(t1 == "A").then("rank_2").otherwise("rank")
    return pairs.group_by([*key, "order"]).agg(
        subset=pl.lit(RELABEL),
        item_id=pl.col(DOC).first().cast(pl.String),
        pairs=pl.len().cast(pl.Int64),
        flip=(pl.col("rank") != pl.col("rank_2")).sum().cast(pl.Int64),
        directed=directional.sum().cast(pl.Int64),
        toward=(directional & (on_a > on_b)).sum().cast(pl.Int64),
        away=(directional & (on_a < on_b)).sum().cast(pl.Int64),
    )


def rhetoric_units(j: pl.LazyFrame, lex: Lexicons) -> pl.LazyFrame:
    """Stereotype intrusion, and cue-aligned praise of an attacked target."""
    text = pl.col("explanation")
    vocab = _attack_words(text, lex)
    attacked = CHANGED_TEXT
    return (
        j.filter(VALID)
        .group_by(KEYS)
        .agg(
            explained=pl.len().cast(pl.Int64),
            stereotype=_mentions(text, lex.stereotype).sum().cast(pl.Int64),
            attacked=attacked.sum().cast(pl.Int64),
            cue_align=(attacked & vocab & (VERDICT == TARGET)).sum().cast(pl.Int64),
        )
    )


def evidence_units(j: pl.LazyFrame) -> pl.LazyFrame:
    """PBP quotes, fabrication and evidence that cannot discriminate; verdict–score agreement.

    ``nondiscriminating``: criteria whose quotes cannot tell the candidates apart (the same for
    both, or none from either candidate: ``protocols.quotes.nondiscriminating``), of
    ``criteria``; ``all_nondiscriminating``: judgments where that holds for every criterion.
    """
    quotes = pl.col("n_quotes")
    criteria, same = pl.col("n_criteria").fill_null(0), pl.col("n_nondiscriminating").fill_null(0)
    return (
        j.filter(VALID)
        .group_by(KEYS)
        .agg(
            quoted=(quotes.fill_null(0) > 0).sum().cast(pl.Int64),
            quotes=quotes.fill_null(0).sum().cast(pl.Int64),
            fabricated=pl.col("n_fabricated").fill_null(0).sum().cast(pl.Int64),
            # explanations that fabricate at least one quote
            fabricating=(pl.col("n_fabricated").fill_null(0) > 0).sum().cast(pl.Int64),
            criteria=criteria.sum().cast(pl.Int64),
            nondiscriminating=same.sum().cast(pl.Int64),
            with_evidence=(criteria > 0).sum().cast(pl.Int64),
            all_nondiscriminating=((criteria > 0) & (same == criteria)).sum().cast(pl.Int64),
            scored=pl.col("verdict_score_agree").is_not_null().sum().cast(pl.Int64),
            agree=pl.col("verdict_score_agree").fill_null(value=False).sum().cast(pl.Int64),
        )
    )


def _target_value(column: str, prefix: str = "") -> pl.Expr:
    """The ``column`` value the cue's target got (``_1`` for A, ``_2`` for B); null otherwise."""
    return (
        pl.when(TARGET == "A")
        .then(pl.col(f"{prefix}{column}_1"))
        .when(TARGET == "B")
        .then(pl.col(f"{prefix}{column}_2"))
    )


def _against_blind(
    j: pl.LazyFrame, column: str, keep: pl.Expr
) -> tuple[pl.LazyFrame, pl.Expr, pl.Expr]:
    """The valid cue judgments with a target that pass ``keep``, joined to their valid Blind twins.

    With them, the target's ``column`` under the cue and under Blind (pairs with both read).
    """
    blind = j.filter((pl.col("condition") == BLIND) & VALID).select(
        *PAIR, **{f"blind_{column}_{k}": pl.col(f"{column}_{k}") for k in (1, 2)}
    )
    now, before = _target_value(column), _target_value(column, "blind_")
    paired = (
        j.filter(PROBE & VALID & TARGET.is_in(["A", "B"]) & keep)
        .join(blind, on=PAIR, how="inner")
        .filter(now.is_not_null() & before.is_not_null())
    )
    return paired, now, before


def score_units(j: pl.LazyFrame, keys: list[str] = KEYS) -> pl.LazyFrame:
    """A pointwise judge's score shift: the target's score under the cue against under Blind.

    Over the cue judgments with a target (A or B) whose Blind twin is valid too (both scores of
    both read): ``shift`` sums (s(target | c) − s(target | Blind)) / (max − min), each pair's
    difference as a share of the scale, in [−1, 1]; ``scored`` counts the pairs and ``span``
    sums their max − min, so the mean shift in the judge's own points is
    Σshift / Σscored × Σspan / Σscored (``registry``: ``score_shift``, scaled by ``span``).
    """
    span = pl.col("score_max") - pl.col("score_min")
    paired, now, before = _against_blind(j, "score", span > 0)
    return paired.group_by(keys).agg(
        shift=((now - before) / span).sum().cast(pl.Float64),
        scored=pl.len().cast(pl.Int64),
        span=span.sum().cast(pl.Float64),
    )


def prob_units(j: pl.LazyFrame, keys: list[str] = KEYS) -> pl.LazyFrame:
    """A log-probability judge's probability shift: P(target | cue) − P(target | Blind).

    Over the cue judgments with a target (A or B) whose Blind twin is valid too, both read from
    log-probabilities (docs/metrics.md, "Probability verdicts"): ``pshift`` sums the differences,
    each in [−1, 1], ``probed`` counts the pairs (``registry``: ``prob_shift``).
    """
    paired, now, before = _against_blind(j, "prob", pl.lit(value=True))
    return paired.group_by(keys).agg(
        pshift=(now - before).sum().cast(pl.Float64), probed=pl.len().cast(pl.Int64)
    )


def wording_units(j: pl.LazyFrame) -> pl.LazyFrame:
    """Each Blind showing of a judge and protocol judged under K ≥ 2 wordings (docs/metrics.md).

    Wording 0 is Blind, wording k its ``BlindWording{k}`` twin (``PAIR``); K is the cell's
    number of wordings. ``showings`` counts every such showing, ``rated`` those with a valid
    verdict under all K, and ``flipped`` the rated ones whose K verdicts are not all equal
    (the wording flip share is flipped / rated). A showing with an Invalid (or a missing
    wording) under any wording is ``dropped``: it leaves the flip share and κ, counted. ``a``,
    ``b`` and ``tie`` count a rated showing's K verdicts per category (Fleiss' κ,
    ``metrics.wording``). The rows carry condition Blind: the agreement is Blind's.
    """
    worded = j.filter((pl.col("condition") == BLIND) | WORDED)
    k = pl.col("condition").n_unique().over("judge", "protocol")
    cells = worded.with_columns(wordings=k).filter(pl.col("wordings") > 1)
    per = cells.group_by(PAIR).agg(
        wordings=pl.col("wordings").first().cast(pl.Int64),
        judged=pl.len(),
        valid=VALID.sum(),
        kinds=VERDICT.filter(VALID).n_unique(),
        a=(VERDICT == "A").sum().cast(pl.Int64),
        b=(VERDICT == "B").sum().cast(pl.Int64),
        tie=(VERDICT == TIE).sum().cast(pl.Int64),
    )
    rated = (pl.col("judged") == pl.col("wordings")) & (pl.col("valid") == pl.col("wordings"))
    return per.select(
        "judge",
        "protocol",
        pl.lit(BLIND).cast(pl.Categorical).alias("condition"),
        *SHOWING,
        "wordings",
        showings=pl.lit(1, dtype=pl.Int64),
        dropped=(~rated).cast(pl.Int64),
        flipped=(rated & (pl.col("kinds") > 1)).cast(pl.Int64),
        rated=rated.cast(pl.Int64),
        **{c: pl.when(rated).then(pl.col(c)).otherwise(0) for c in ("a", "b", "tie")},
    )


def both_orders(j: pl.LazyFrame) -> pl.LazyFrame:
    """Items judged validly in both orders: the verdict under each, ``v12`` and ``v21``.

    One row per cell, document, item and seed (``KEYS`` but the order).
    """
    keys = [k for k in KEYS if k != "order"]
    valid = j.filter(VALID)
    v12 = valid.filter(pl.col("order") == "12").select(*keys, v12=VERDICT)
    v21 = valid.filter(pl.col("order") == "21").select(*keys, v21=VERDICT)
    return v12.join(v21, on=keys, how="inner")


def position_units(j: pl.LazyFrame) -> pl.LazyFrame:
    """Items judged validly in both orders.

    Same verdict in candidate terms (``consistent``)? The first-shown summary chosen both times
    (``first``: A under 12 and B under 21), or the second-shown (``second``)? The unit is the
    item and seed, both orders together; its ``order`` reads ``both``.
    """
    in_12, in_21 = pl.col("v12"), pl.col("v21")  # the verdicts under each order
    return both_orders(j).select(
        pl.exclude("v12", "v21"),
        order=pl.lit("both").cast(pl.Categorical),
        first=((in_12 == "A") & (in_21 == "B")).cast(pl.Int64),
        second=((in_12 == "B") & (in_21 == "A")).cast(pl.Int64),
        swapped=pl.lit(1, dtype=pl.Int64),
        consistent=(in_12 == in_21).cast(pl.Int64),
    )
