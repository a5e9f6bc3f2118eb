"""The card of a judge-logs run: the observed rows (``metrics.observed``), each worded as such.

A log row is what the judge already said; nothing was changed, so every row is an association
in the judge's own traffic, named "(observed)" where a live row says "under the cue". Rows:
position (items judged in both orders, the Blind position row's definitions), position
(randomized) where the log's tool shuffled the shown order itself and it was recovered (an
experiment, not an association: AlpacaEval's weighted and ``_fn`` annotators), length,
self-preference (per own model), agreement with human labels, unreadable, and drift (with a
baseline log). Their exact tests share one Benjamini–Hochberg family. Verdicts:

- position (both kinds), and length and self-preference measured against human labels, get
  the card's verdict rule (BIASED / CLEAR / UNDERPOWERED) with the position threshold
  (position) or the cue threshold (the others): both compare the judge with a reference on
  the same items;
- length against ½, self-preference against the other judges, agreement, unreadable and drift
  are OBSERVED: informational, no exit code (a longer answer may be the better one; another
  judge is no ground truth).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError
from judgeprobe.card import stats
from judgeprobe.card.kinds.base import SIGN_TEST
from judgeprobe.card.kinds.observed import ObservedPositionRow, ObservedRow, RandomizedPositionRow
from judgeprobe.card.pairs import BLIND_VERDICT
from judgeprobe.card.rows import Card
from judgeprobe.card.thresholds import LoadedThresholds
from judgeprobe.conditions import BLIND
from judgeprobe.core.estimate import Estimate, shown
from judgeprobe.metrics import observed
from judgeprobe.metrics.load import load_judgments
from judgeprobe.metrics.observed import Observed
from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.runs.rundir import Manifest, RunDir

INFORMATIONAL = "OBSERVED"
"""The verdict of a row that shows and decides nothing (no exit code)."""
SILENT = ["judge", "protocol", "condition", "item_id", "order", "seed", BLIND_VERDICT, "verdict",
          "explanation"]  # fmt: skip


def _pct(x: object) -> str:
    return f"{x:.1%}" if isinstance(x, float) else "–"


def note(o: Observed) -> str:
    """What the row shows, in words, with the parts behind its effect."""
    q = o.parts
    tests = f"; questions {o.up} vs {o.down}" if o.up is not None else ""
    if o.measure == "position":
        return (f"observed: both orders of the same item in the log; consistency "
                f"{shown(o.consistency)}{tests}"
                " (first-shown vs second-shown)")  # fmt: skip
    if o.measure == "position-randomized":
        kept, switched, undetermined = (
            int(q[k] or 0) for k in ("kept", "switched", "undetermined")
        )
        told = kept + switched
        return (f"randomized by the log's tool (it shuffled which response was shown first): "
                f"first-shown response chosen in {q['first']} of {o.n} decisive verdicts; shown "
                f"order recovered for {told} of {told + undetermined} rows ({switched} switched, "
                f"{kept} not), {undetermined} could not be told and make no position claim"
                f"{tests}")  # fmt: skip
    if o.measure == "length":
        if o.reference == "½":
            return (f"observed: longer response chosen in {_pct(q['L_judge'])} of decisive "
                    f"verdicts on pairs of unequal length, against ½ (no human labels: a longer "
                    f"answer may be the better one){tests}")  # fmt: skip
        return (f"observed: longer chosen by the judge {_pct(q['L_judge'])}, by the human "
                f"labels {_pct(q['L_reference'])} on the same {q['reference_pairs']} decisive "
                f"labelled pairs (judge on all: {_pct(q['L_judge_all'])}){tests}")  # fmt: skip
    if o.measure == "self-preference":
        return (f"observed: win rate (ties ½) under the judge {_pct(q['win_judge'])}, under "
                f"{o.reference} {_pct(q['win_reference'])} on the same items{tests}")  # fmt: skip
    if o.measure == "agreement":
        rates = ", ".join(f"{x} {_pct(q[f'judge_{x}'])}/{_pct(q[f'human_{x}'])}"
                          for x in ("A", "B", "Tie"))  # fmt: skip
        return (
            f"observed: Cohen's κ {shown(o.kappa)} "
            f"(percentile bootstrap over questions); base rates judge/human: {rates}"
        )
    if o.measure == "unreadable":
        return f"observed: {q['invalid']} of {o.n} verdicts are errors or do not parse"
    return (f"observed: toward A {q['to_A']}, toward B {q['to_B']}, into Tie {q['into_tie']}, "
            f"out of Tie {q['out_of_tie']}; left out: {q['system_changed']} items whose texts "
            f"changed (system change), {q['invalid_either']} Invalid on either side; test: into "
            f"vs out of Tie{tests}")  # fmt: skip


Row = ObservedPositionRow | RandomizedPositionRow | ObservedRow


def _row(o: Observed) -> Row:
    """The row of one observed figure, before its q-value and verdict."""
    fields = {
        "judge": o.judge, "protocol": o.protocol, "row": o.row, "n": o.n,
        "documents": o.documents, "effect_name": o.effect_name,
        "effect": Estimate.of(o.effect.value, o.effect.lo, o.effect.hi),
        "test": SIGN_TEST if o.p is not None else "",
        "up": o.up, "down": o.down, "p": o.p, "note": note(o),
    }  # fmt: skip
    if o.measure == "position":
        return ObservedPositionRow.model_validate({**fields, "consistency": o.consistency})
    if o.measure == "position-randomized":
        counts = {k: int(o.parts[k] or 0) for k in ("first", "switched", "kept", "undetermined")}
        return RandomizedPositionRow.model_validate({
            **fields, "first_shown": counts["first"], "switched": counts["switched"],
            "kept": counts["kept"], "undetermined": counts["undetermined"],
        })  # fmt: skip
    return ObservedRow.model_validate({**fields, "kind": f"observed-{o.measure}"})


def _tested(o: Observed) -> bool:
    """Whether the row's test decides a verdict (module docstring)."""
    return o.measure in POSITION or (
        o.measure in ("length", "self-preference") and o.reference == "human labels"
    )


POSITION = ("position", "position-randomized")
"""The rows read against the position threshold, in either direction."""


def randomized_cells(manifest: Manifest | None) -> dict[tuple[str, str], dict[str, int]]:
    """The judge × protocol cells whose order the log's tool shuffled, and the recovery counts.

    Read from ``LogsConfig.randomized_order``, which ``judgeprobe logs`` writes.
    """
    found = manifest.logs.randomized_order if manifest is not None and manifest.logs else []
    return {
        (c.judge, c.protocol): {"kept": c.kept, "switched": c.switched,
                                "undetermined": c.undetermined}
        for c in found
    }  # fmt: skip


TEXT_KEYS = ["document", "candidate_1", "candidate_2"]


def _texts(manifest: Manifest | None) -> pl.DataFrame | None:
    """The run's item texts (its items file, written by ``judgeprobe logs``), if it kept any."""
    source = manifest.items_source if manifest is not None else None
    if source is None or not Path(source).is_file():
        return None
    try:
        return pl.read_parquet(source, columns=["item_id", *TEXT_KEYS])
    except Exception:  # polars raises several types for a bad file
        raise JudgeprobeError(f"{source}: not the items file judgeprobe logs wrote") from None


def _baseline(manifest: Manifest | None) -> tuple[pl.DataFrame | None, set[str]]:
    """The baseline log's judgments, and the items whose texts differ between the two logs."""
    found = manifest.logs.baseline if manifest is not None and manifest.logs else None
    if not found:
        return None, set()
    base = RunDir(Path(str(found)))
    if not base.judgments.is_file():
        raise JudgeprobeError(f"baseline {found}: no judgments.parquet (run judgeprobe logs on it)")
    now, before = _texts(manifest), _texts(base.manifest_or_none())
    changed: set[str] = set()
    if now is not None and before is not None:
        both = now.join(before, on="item_id", suffix="_before")
        differ = pl.any_horizontal(pl.col(k) != pl.col(f"{k}_before") for k in TEXT_KEYS)
        changed = set(both.filter(differ)["item_id"].to_list())
    return load_judgments(base.judgments), changed


def observed_rows(
    run: RunDir, judgments: pl.DataFrame, resamples: int, seed: int
) -> list[Observed]:
    """Every observed figure of the run (labels, ``--self`` and baseline from its directory)."""
    manifest = run.manifest_or_none()
    labels = pl.read_parquet(run.labels) if run.labels.is_file() else None
    own = manifest.logs.self if manifest is not None and manifest.logs else []
    blind = judgments.filter(pl.col("condition") == BLIND)
    found = observed.position(blind)
    found += observed.randomized_position(blind, randomized_cells(manifest))
    found += observed.length(blind, labels)
    found += observed.self_preference(blind, labels, own)
    found += observed.agreement(blind, labels, resamples, seed) + observed.unreadable(blind)
    baseline, changed = _baseline(manifest)
    if baseline is not None:
        found += observed.drift(blind, baseline, changed)
    return found


def observed_card(
    run: RunDir, judgments: pl.DataFrame, thresholds: LoadedThresholds, resamples: int,
    seed: int, task: Task = DEFAULT,
) -> Card:  # fmt: skip
    """The card of a logs run: observed rows, one BH family, verdicts (module docstring)."""
    t = thresholds.values
    found = observed_rows(run, judgments, resamples, seed)
    rows = [_row(o) for o in found]
    q_values = stats.bh_qvalues([o.p for o in found])
    tests = sum(o.p is not None for o in found)
    records: list[Row] = []
    for o, row, q in zip(found, rows, q_values, strict=True):
        if not _tested(o):
            records.append(row.model_copy(update={"q": q, "verdict": INFORMATIONAL}))
            continue
        threshold = t.position_effect if o.measure in POSITION else t.cue_effect
        assert threshold is not None
        background = float(o.parts.get("background") or 2 * (o.down or 0) / max(o.documents, 1))
        mde = stats.mde(o.documents, background, t.alpha, t.power, tests)
        if mde is not None and o.measure == "position-randomized":
            mde /= 2  # share − ½ is half the paired first − second difference
        verdict = stats.verdict(q, o.effect.value, o.effect.bounds, mde, threshold, t.fdr,
                                either_direction=o.measure in POSITION)  # fmt: skip
        records.append(
            row.model_copy(
                update={"q": q, "mde": mde, "mde_documents": o.documents, "background": background,
                        "threshold": threshold, "verdict": verdict}
            )
        )  # fmt: skip
    silent = pl.DataFrame(schema={c: pl.String for c in SILENT})
    notes = self_notes(run, judgments, found)
    return Card(tuple(records), silent, thresholds, task, observed=True, notes=notes)


def self_notes(run: RunDir, judgments: pl.DataFrame, found: list[Observed]) -> tuple[str, ...]:
    """Why a generator ``--self`` named has no self-preference row: one sentence each."""
    manifest = run.manifest_or_none()
    own = manifest.logs.self if manifest is not None and manifest.logs else []
    shown = {o.row.removeprefix("self-preference (observed): ").lower() for o in found
             if o.measure == "self-preference"}  # fmt: skip
    generators = {str(g).lower() for c in ("generator_1", "generator_2") for g in judgments[c]}
    judges = judgments["judge"].n_unique()
    notes = []
    for model in own:
        if model.lower() in shown:
            continue
        if model.lower() not in generators:
            why = "no judgment in the logs is of a pair it generated"
        elif not run.labels.is_file() and judges < 2:
            why = ("it needs a reference on the same items: human labels (--labels) or a "
                   "second judge in the logs, and this run has neither")  # fmt: skip
        else:
            why = "no item of it is judged by the reference (the labels or another judge)"
        notes.append(f"--self {model}: no self-preference row: {why}")
    return tuple(notes)
