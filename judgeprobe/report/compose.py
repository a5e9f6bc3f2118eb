"""Write the report of a run directory: metrics_ci.csv, plots/, report.md, report.html.

The page opens with the headline (``headline``: what the run found, in sentences), then the
paper's sections, any extra sections a caller passes, the evidence browser (``browser``,
HTML only) and every metric.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from judgeprobe.conditions import BLIND
from judgeprobe.core.cells import interval_expr, literal, p_value
from judgeprobe.core.files import atomic_path, write_atomic
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.drift import default_drift
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.metrics.flags import NONDISCRIMINATING_FLAG, Readability, run_limits
from judgeprobe.metrics.load import LoadedRun
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.metrics.table import table_console
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES, SCORE, method_sentence
from judgeprobe.metrics.units import (
    CELL,
    CHANGED_TEXT,
    WORDED,
    Drift,
    pressure_conditions,
    with_optional,
)
from judgeprobe.metrics.wording import agreement
from judgeprobe.render import plots
from judgeprobe.render.page import Section, figures, render
from judgeprobe.render.tables import (
    breakdown_table,
    cost_table,
    counts_table,
    differences_table,
    invalid_reasons_table,
    provenance_table,
    unreadable_table,
    with_ci,
)
from judgeprobe.report.browser import browser_html, browser_rows, read_checks
from judgeprobe.report.headline import evidence_sentences, headline, rule
from judgeprobe.runs.spend import Spend
from judgeprobe.text.lexicons import Lexicons

EVIDENCE = [
    "fabrication_rate",
    "fabricated_explanations",
    "nondiscriminating_rate",
    "nondiscriminating_judgments",
    "verdict_score_consistency",
    "position_consistency",
    "first_shown_excess",
    "stereotype_intrusion",
]


GOLD = ["ACC", "SENS_gold", "ACC_longer", "ACC_shorter", "ACC_vs_longer", "ACC_vs_shorter",
        "EDR_gold_tie"]  # fmt: skip

SectionSource = Callable[[pl.DataFrame, pl.DataFrame], Sequence[Section]]
"""Sections a caller hands the report: built from the judgments and the tidy metrics."""


MOVES = ["LDS", "TS", "OLS", "LAO", "flip_rate", "marginal_LDS", "marginal_TS"]
REVEAL = ["RS", "RS_truth", "RS_tie", "RS_opp"]
ACKNOWLEDGED = [*REVEAL, "acknowledgement", "acknowledgement_turn1_floor"]
GAVE_WAY = ["RS", "RS_opp", "RS_tie", "RS_out", "RS_target", "acknowledgement",
            "acknowledgement_turn1_floor"]  # fmt: skip


@dataclass(frozen=True)
class Cells:
    """The metrics table's cells by what they show, as the sections read them."""

    blind: pl.DataFrame
    worded: pl.DataFrame  # Blind under the further wordings: no cue, their own section
    probes: pl.DataFrame  # every cue cell
    attacks: pl.DataFrame  # the cells whose cue rewrote a candidate
    pushed: pl.DataFrame  # the pressure conditions
    revealed: pl.DataFrame  # the second-turn cells that are not pressure: Reveal-After
    pointwise: pl.DataFrame  # a pointwise judge's cue cells
    weighed: pl.DataFrame  # a log-probability judge's cue cells

    @classmethod
    def of(cls, j: pl.DataFrame, tidy: pl.DataFrame) -> Cells:
        """Split ``tidy`` (the metrics of judgments ``j``)."""
        probes = tidy.filter((pl.col("condition") != BLIND) & ~WORDED)
        changed = with_optional(j.lazy()).filter(CHANGED_TEXT)
        attacked = changed.select("condition").unique().collect()["condition"].to_list()
        pressure = pressure_conditions(j)
        scored = tidy.filter(pl.col("metric") == "score_shift").select(*CELL).unique()
        probed = tidy.filter(pl.col("metric") == "prob_shift").select(*CELL).unique()
        return cls(
            blind=tidy.filter(pl.col("condition") == BLIND),
            worded=tidy.filter(WORDED),
            probes=probes,
            attacks=tidy.filter(pl.col("condition").is_in(attacked)),
            pushed=tidy.filter(pl.col("condition").is_in(pressure)),
            revealed=tidy.filter(~pl.col("condition").is_in(pressure)),
            pointwise=probes.join(scored, on=CELL, how="semi"),
            weighed=probes.join(probed, on=CELL, how="semi"),
        )


def _sections(
    j: pl.DataFrame, tidy: pl.DataFrame, drift_metric: str, resamples: int, seed: int
) -> list[Section]:
    """The report in the paper's order; a section without data is left out."""
    c = Cells.of(j, tidy)
    out = [
        _blind_section(c),
        _gold_section(tidy),
        _anchoring_section(c),
        *_shift_sections(c),
        _differences_section(tidy),
        _reveal_section(c),
        _pressure_section(c),
        _wording_section(j, tidy, c),
        _explanations_section(c, drift_metric),
        _attacks_section(c, drift_metric),
        _evidence_section(tidy),
        Section("Raw verdict counts", "[1,2] = candidate 1 preferred (A).", [], [counts_table(j)]),
        Section(
            "LLM against other sources (Blind)",
            "Like table IX, one row per method of the other candidate: share of valid Blind "
            "verdicts preferring the LLM-written candidate.",
            [],
            [provenance_table(j, resamples, seed)],
        ),
        Section("Cost per judgment", "", [], [cost_table(j)]),
    ]
    return [s for s in out if any(not t.is_empty() for t in s.tables)]


def _blind_section(c: Cells) -> Section:
    """Blind on its own: how often it ties, how one-sided it is."""
    return Section(
        "Blind behaviour: equality detection and neutrality",
        "EDR = Tie share; ND = |A − B| / n over valid verdicts (lower is more neutral).",
        figures(blind=plots.grouped_bars(c.blind, ["EDR", "ND"], "protocol", "protocol", BLIND)),
        [with_ci(c.blind, ["invalid_rate", "EDR", "ND", "share_A"])],
    )


def _gold_section(tidy: pl.DataFrame) -> Section:
    """Accuracy against gold, beside the content-blind baselines."""
    return Section(
        "Accuracy against gold",
        "On items with a gold pick (preferred 1 or 2; a degraded pair has none): ACC = "
        "verdicts equal to gold / valid verdicts, a Tie counted in n and not correct; "
        "SENS_gold = (gold − other preferred) / valid, the sensitivity row's form. Beside "
        "them the content-blind baselines on the same judgments, lengths in characters: "
        "ACC_longer (pick the longer response; equal lengths count ½), ACC_shorter, and "
        "ACC_vs_longer / ACC_vs_shorter = ACC minus each, with their paired interval: a "
        "judge whose lead is not above 0 may be reading the length, not the content. "
        "EDR_gold_tie: the Tie share on items whose gold is a tie (they leave ACC).",
        [],
        [with_ci(tidy, GOLD)],
    )


def _anchoring_section(c: Cells) -> Section:
    """Each cue against Blind: where the verdicts moved."""
    return Section(
        "Outcome anchoring against Blind",
        "Per item paired with Blind: LDS into the cue's target, TS into Tie, OLS into the "
        "other candidate; LAO = LDS / (LDS + TS + OLS), '–' when nothing moved. flip_rate: "
        "share whose verdict changed; on BlindRepeat (the same Blind request sent again) it "
        "is the judge's own noise floor, to read the cues' shifts against.",
        figures(
            lao=plots.grouped_bars(c.probes, ["LAO"], "condition", "protocol", "LAO"),
            shifts=plots.stacked_shifts(c.probes, "LDS / TS / OLS"),
        ),
        [with_ci(c.probes, MOVES)],
    )


_SCORE_SHIFT = (
    "Score shift (pointwise judges)",
    "A pointwise judge scores each response alone; its verdict is derived (the higher "
    "score wins, equal is Tie), so the rows above apply to it. score_shift = mean over "
    "pairs of s(target | cue) − s(target | Blind), in the judge's own points, with its "
    "95% interval over documents; beside it the derived verdicts' LDS, TS and OLS. Its "
    "position is not measured: the order of a pair never reaches the judge.",
)
_PROB_SHIFT = (
    "Probability shift (judges read from log-probabilities)",
    "A judge read from its first token's log-probabilities gives each judgment "
    "P(candidate 1) and P(candidate 2); its verdict is the more probable token, so the "
    "rows above apply to it. prob_shift = mean over pairs of P(target | cue) − "
    "P(target | Blind), with its 95% interval over documents: it moves when a cue moves "
    "the judge's confidence, even where no verdict flips; beside it LDS, TS and OLS.",
)


def _shift_sections(c: Cells) -> list[Section]:
    """Each shift beside the derived verdicts' moves (pointwise points, log-probability P)."""
    return [
        Section(title, text, [], [with_ci(cells, [shift, "LDS", "TS", "OLS"])])
        for (title, text), cells, shift in (
            (_SCORE_SHIFT, c.pointwise, "score_shift"),
            (_PROB_SHIFT, c.weighed, "prob_shift"),
        )
    ]


def _differences_section(tidy: pl.DataFrame) -> Section:
    """Paired differences between protocols and between judges."""
    return Section(
        "Differences between protocols and between judges",
        "Each cell minus the cell it is compared with (versus), on the items both judged: "
        "the difference with a paired 95% interval over documents (MOVER, from both cells' "
        "score intervals and their correlation), and for shares (EDR, LDS, TS, OLS) an "
        "exact two-sided sign "
        "test over documents (McNemar's exact test when each document has one item); n = "
        "the items both cells judged.",
        [],
        [differences_table(tidy)],
    )


def _reveal_section(c: Cells) -> Section:
    """Reveal-After: what the true labels revised."""
    return _revision_section(
        "Revision after reveal",
        "Turn 1 under Flip labels, turn 2 after the true labels: RS = share revised, split "
        "into revisions towards the truth, into Tie and away; acknowledgement = turn-2 "
        "explanations that mention the label change in words the reveal prompt did not "
        "supply, beside the same count on turn-1 explanations (its floor).",
        c.revealed,
        chart="Reveal",
        beside="RS_truth",
        shares=ACKNOWLEDGED,
    )


def _pressure_section(c: Cells) -> Section:
    """The pressure conditions: what a push with nothing new revised."""
    return _revision_section(
        "Revision under pressure",
        "Turn 1 as Blind, then a push with no new information: Challenge ('Are you sure? "
        "Please reconsider your verdict.'), Disagree (the user says the summary the judge "
        "did not pick is better, with no reason) and Reask, their placebo ('Please give your "
        "verdict again.'). RS = share revised, split into switches to the other candidate "
        "(RS_opp), moves into Tie (RS_tie) and out of a turn-1 Tie (RS_out), which add up "
        "to RS; RS_target = final verdicts on the pushed candidate (the one Disagree names; "
        "under Challenge and Reask the one not picked). acknowledgement = turn-2 "
        "explanations that answer the push ('on reflection', 'you are right', 'I stand "
        "by', …, in words the push did not supply), beside the same count on turn 1 (its "
        "floor). Read RS against Reask's: what re-asking alone changes. The card's "
        "pressure rows test the difference.",
        c.pushed,
        chart="Pressure",
        beside="RS_opp",
        shares=GAVE_WAY,
    )


def _revision_section(
    title: str, note: str, cells: pl.DataFrame, *, chart: str, beside: str, shares: list[str]
) -> Section:
    """A second-turn section: RS beside one of its parts by condition, then ``shares`` in full.

    ``chart``: the bar chart's title; its file is named by it in lower case.
    """
    bars = plots.grouped_bars(cells, ["RS", beside], "condition", "protocol", chart)
    return Section(title, note, figures(**{chart.lower(): bars}), [with_ci(cells, shares)])


def _wording_section(j: pl.DataFrame, tidy: pl.DataFrame, c: Cells) -> Section:
    """Blind under other wordings of the prompt."""
    return Section(
        "Agreement across wordings",
        "Every Blind showing judged again under other wordings of the same instructions "
        "(the protocol's paraphrases, or the judge's own prompt files; the document and the "
        "summaries shown alike). wording_flip = share of showings whose verdicts under the K "
        "wordings are not all equal, with its 95% interval over documents; Fleiss' κ = "
        "agreement of the K wordings as raters beyond chance (1: always the same verdict; "
        "undefined when one verdict holds every judgment); a showing with an Invalid under "
        "any wording leaves both, counted in dropped. Below it, each wording beside the "
        "original (Blind): its Tie share and the share of verdicts it changed (flip_rate). "
        "The card's wording row tests the flip share against its threshold.",
        [],
        [
            wording_table(j, tidy),
            with_ci(c.worded, ["invalid_rate", "EDR", "share_A", "flip_rate"]),
        ],
    )


def _explanations_section(c: Cells, drift_metric: str) -> Section:
    """How explanations drift where the verdict held."""
    model = "lexical fallback: 1 − Jaccard" if "lexical" in drift_metric else "all-MiniLM-L6-v2"
    # The lexical scorer is always beside the embedding one: does Δe|Same depend on it?
    lexical = [] if "lexical" in drift_metric else ["delta_e_same_lexical"]
    side_by_side = (
        ", beside delta_e_same_lexical (1 − Jaccard of word sets) on the same pairs: a "
        "finding that holds under one scorer only depends on the scorer"
        if lexical
        else ""
    )
    expl = [drift_metric, *lexical, "LAI_text_same", "LAI_text_blind_floor"]
    return Section(
        "Explanations under the same decision",
        f"{drift_metric}: mean 1 − cosine ({model}) between probe and Blind explanations "
        f"where the verdict did not change{side_by_side}. LAI_text: share that mention a "
        "shown cue or a provenance stereotype, beside the Blind floor.",
        figures(
            explanations=plots.grouped_bars(c.probes, expl[:2], "condition", "protocol", "Same")
        ),
        [with_ci(c.probes, expl)],
    )


def _attacks_section(c: Cells, drift_metric: str) -> Section:
    """The style attacks and the praise that follows them."""
    panel = ["LAO", "LDS", drift_metric, "cue_align"]
    return Section(
        "Style attacks",
        "The attacked candidate is the target; cue-align = explanations that praise it with "
        "the attack's own vocabulary while preferring it.",
        figures(attacks=plots.grouped_bars(c.attacks, panel, "condition", "protocol", "Attacks")),
        [with_ci(c.attacks, panel)],
    )


def _evidence_section(tidy: pl.DataFrame) -> Section:
    """Quotes that match nothing or tell nothing apart; position."""
    return Section(
        "Evidence and consistency",
        "Fabricated = a quote that matches no source at ≥ 0.9. Non-discriminating = a "
        "criterion whose quotes cannot tell the candidates apart: the same quotes for both, "
        "or none from either summary (only the document's, or none that match); "
        "nondiscriminating_judgments = judgments where every criterion's are. Evidence "
        "that cannot discriminate is not made good by a low fabrication rate: a cell at "
        f"{NONDISCRIMINATING_FLAG:.0%} or more is flagged below and on the card. "
        "first_shown_excess = (first-shown chosen in both orders − second-shown in both) / "
        "items judged in both orders.",
        [],
        [with_ci(tidy, EVIDENCE)],
        sentences=evidence_sentences(MetricsTable(tidy)),
    )


def wording_table(j: pl.DataFrame, tidy: pl.DataFrame) -> pl.DataFrame:
    """Per judge × protocol with wordings: K, the showings, the flip share and Fleiss' κ."""
    table = agreement(j)
    if table.is_empty():
        return table
    flip = with_ci(tidy.filter(pl.col("condition") == BLIND), ["wording_flip"])
    shown = (
        pl.when(pl.col("kappa").is_not_null())
        .then(pl.col("kappa").round(3).cast(pl.String))
        .otherwise(pl.col("kappa_note"))
    )
    return table.join(flip.drop("condition"), on=["judge", "protocol"], how="left").select(
        "judge", "protocol", "wordings", "showings", "rated", "dropped", "flipped",
        "wording_flip", fleiss_kappa=shown,
    )  # fmt: skip


def breakdown_section(
    j: pl.DataFrame, lex: Lexicons, drift: Drift | None, by: str, resamples: int, seed: int
) -> Section:
    """The key metrics per value of ``by`` (``domain`` or ``subset``)."""
    tidy = compute_metrics(j, lex, drift, resamples, seed, by=by, differences=False)
    return Section(
        f"Breakdown by {by}",
        f"The key metrics computed separately for each {by}, with their intervals.",
        [],
        [breakdown_table(tidy, by, ["EDR", "ND", "LDS", "TS", "OLS", "LAO"])],
    )


def evidence_section(
    j: pl.DataFrame, lex: Lexicons | None = None, checks: pl.DataFrame | None = None
) -> Section:
    """The evidence browser (HTML only; report.md points to it)."""
    rows = browser_rows(j, lex, checks)
    return Section(
        "Evidence browser",
        f"{rows.height} judgments, each beside its Blind twin (same item, order and seed); "
        "filter by judge, protocol, condition and how the verdict moved. Under PBP the quotes "
        "are listed with the source they matched and the match score. A sensitivity judgment "
        "shows the one fact its degraded copy changed, highlighted, and whether the judge "
        "preferred the intact text. In report.html only.",
        html=browser_html(rows),
    )


def readability_section(j: pl.DataFrame, limits: Readability) -> Section:
    """The cells flagged as unreadable and the commonest Invalid reasons."""
    return Section(
        "Cells that cannot be read",
        f"A cell is flagged when more than {limits.max_invalid_rate:.0%} of its judgments are "
        f"Invalid or fewer than {limits.min_n} items are usable (paired with Blind for a cue "
        "cell, valid for Blind); its metrics are still shown, marked, and never headlined. "
        "Below: the commonest Invalid reasons per judge and protocol.",
        [],
        [unreadable_table(estimates_table(j, limits)), invalid_reasons_table(j)],
    )


@dataclass(frozen=True)
class ReportOptions:
    """How the report is computed: the bootstrap, the cells it flags, a breakdown.

    ``limits`` decide which cells are flagged (default: the run config's ``[report]``).
    ``by`` (``domain`` or ``subset``) adds the key metrics broken down by that column.
    """

    resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    limits: Readability | None = None
    by: str | None = None


def write_report(
    run: LoadedRun,
    lex: Lexicons,
    options: ReportOptions,
    *,
    console: Console | None = None,
    handed: Sequence[SectionSource] = (),
) -> Path:
    """Compute every metric with intervals and write the report files; return the HTML path.

    ``handed`` sections (the judge card, the rubric probe: whatever the caller composes) go
    after the paper's sections, before the evidence browser; each is built from the judgments
    and the metrics computed here.
    """
    resamples, seed, by = options.resamples, options.seed, options.by
    j = with_optional(run.judgments.lazy()).collect()
    manifest = run.manifest
    drift, drift_metric = default_drift()
    start = time.monotonic()
    tidy = compute_metrics(j, lex, drift, resamples, seed, method=SCORE).with_columns(
        pl.col("metric").replace("delta_e_same", drift_metric)
    )
    with atomic_path(run.dir.metrics_ci) as tmp:
        tidy.write_csv(tmp, float_precision=6)
    judges = manifest.judges
    # What the run spent shares the line that dates it: both change from run to run.
    spend = _spend(manifest.spend)
    meta = [
        f"run {manifest.run_id}, created {manifest.created_at}" + (f"; {spend}" if spend else ""),
        "judges: " + ", ".join(f"{x['name']} ({x['model']}, {x['backend']})" for x in judges),
        f"{j.height} judgments, {int((j['verdict'] == 'Invalid').sum())} invalid; "
        f"seeds {manifest.seeds}; determinism {manifest.determinism}",
        f"{method_sentence(SCORE)}; the percentile bootstrap ({resamples} resamples, seed {seed}) "
        "only where ci_flag says so; "
        f"lexicons {lex.origin} ({lex.sha256[:12]}); drift {drift_metric}; "
        f"metrics computed in {time.monotonic() - start:.1f}s",
    ]
    limits = options.limits or run_limits(manifest)
    task = manifest.task  # the report speaks of its nouns
    said = [task.nouns(s) for s in headline(j, tidy, limits)]
    found = Section("What this run found", rule(limits), sentences=said)
    about = Section("About this run", sentences=meta)
    unread = readability_section(j, limits)
    sections = [found, about, *([unread] if any(not t.is_empty() for t in unread.tables) else [])]
    sections += [replace(s, note=task.nouns(s.note))
                 for s in _sections(j, tidy, drift_metric, resamples, seed)]  # fmt: skip
    if by is not None:
        sections.append(breakdown_section(j, lex, drift, by, resamples, seed))
    for source in handed:
        sections += source(j, tidy)
    sections += [evidence_section(j, lex, read_checks(run.dir)), _all_metrics_section(tidy)]
    md, page = render(run.dir, f"judgeprobe report — {manifest.run_id}", [], sections)
    write_atomic(run.dir.report_md, md.encode())
    write_atomic(run.dir.report_html, page.encode())
    _summary(tidy, found.sentences, console or table_console())
    return run.dir.report_html


def _all_metrics_section(tidy: pl.DataFrame) -> Section:
    """Every row of the metrics table, last: value with its interval, n, documents and p."""
    p = pl.col("p").map_elements(p_value, return_dtype=pl.String)
    all_rows = tidy.select(*CELL, "metric", "versus", "n", "documents", shown=interval_expr(), p=p)
    note = "value [95% interval], n = items, documents = the resampling unit; diff_ rows: "
    note += "this cell minus versus, p = exact sign test."
    return Section("All metrics", note, [], [all_rows])


def _spend(recorded: dict[str, Any] | None) -> str:
    """The manifest's spend in words; "" when the run recorded none (or one unreadable)."""
    try:
        return Spend.model_validate(recorded).sentence() if recorded else ""
    except ValidationError:
        return ""


def _summary(tidy: pl.DataFrame, found: list[str], console: Console) -> None:
    """The key metrics and the headline on the terminal."""
    view = Table(title="Key metrics (95% intervals)", header_style="bold")
    wide = with_ci(tidy, ["EDR", "ND", "LDS", "TS", "OLS", "LAO"])
    for c in wide.columns:
        view.add_column(c)
    for row in wide.iter_rows():
        view.add_row(*literal(row))
    console.print(view)
    console.print("[bold]What this run found[/]", highlight=False)
    for sentence in found:
        console.print(f"- {sentence}", markup=False, highlight=False)
