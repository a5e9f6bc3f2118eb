"""The texts a run generated, as a reviewer sees them: each beside its source, check and verdicts.

A run shows its judge texts nobody wrote by hand: a condition's style attack, injected
sentence or degraded copy (``Condition.generated``, one per condition and item), and the
rewrites and paraphrase pairs of a candidate set (``item_generated``, one per item, the
item's in every condition). Each gets a stable id (``text_id``) that its decision is stored
under; the rule check the run recorded (``attack_checks.csv``, ``degrade_checks.csv``, the
candidate set's own ``preserved``/``flag`` columns); and the judge's verdicts on it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.conditions import Condition, Generated, item_generated
from judgeprobe.core.corpus import item_rows
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig, sweep_conditions
from judgeprobe.cue.item_selection import sweep_items
from judgeprobe.metrics.load import load_judgments
from judgeprobe.runs.review import ITEM_TEXT, Decision
from judgeprobe.runs.rundir import Manifest, RunDir


def text_id(kind: str, condition: str, item_id: str) -> str:
    """A generated text's id: stable across runs of one config, unique within a run."""
    return f"{kind}:{condition}:{item_id}"


@dataclass(frozen=True, slots=True)
class GeneratedText:
    """One generated text of a run: what wrote it, from what, and how its rule check went."""

    id: str
    item_id: str
    condition: str  # ITEM_TEXT ("") for a text of the items file (every condition's)
    kind: str  # Generated.kind: rewrite, injected, degraded, paraphrase
    where: str  # where it sits: A (candidate 1), B (candidate 2) or document
    source: str
    text: str  # as generated (an edit is a decision, kept beside it)
    passed: bool | None  # the rule check: None when the run did not measure it
    detail: str


def words(text: str) -> list[str]:
    """A text as words and the whitespace between them, so joined they give it back."""
    return re.findall(r"\s+|[^\s]+", text)


def diff(source: str, text: str) -> list[dict[str, str]]:
    """Word-level changes from ``source`` to ``text``: runs of equal, inserted, deleted words."""
    a, b = words(source), words(text)
    out: list[dict[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append({"op": "equal", "text": "".join(a[i1:i2])})
            continue
        if i2 > i1:
            out.append({"op": "delete", "text": "".join(a[i1:i2])})
        if j2 > j1:
            out.append({"op": "insert", "text": "".join(b[j1:j2])})
    return out


def run_config(run: RunDir, manifest: Manifest) -> SweepConfig:
    """The sweep config a cue run was made with, as its manifest recorded it."""
    if manifest.kind != "cue":
        raise JudgeprobeError(f"{run.path}: a {manifest.kind} run; review reads cue runs")
    try:
        return SweepConfig.model_validate(manifest.config)
    except ValidationError as exc:
        raise JudgeprobeError(
            f"{run.manifest_file}: its config does not read back ({first_error(exc)})"
        ) from None


def _csv(path: Path) -> pl.DataFrame | None:
    if not path.is_file():
        return None
    try:
        return pl.read_csv(path, infer_schema_length=None)
    except Exception as exc:  # polars raises several unrelated types for bad files
        raise JudgeprobeError(f"{path}: not a readable CSV file ({type(exc).__name__})") from None


def _checks(run: RunDir) -> dict[tuple[str, str], Check]:
    """The run's recorded checks by (condition, item id): passed, and what the check found."""
    out: dict[tuple[str, str], Check] = {}
    attacks = _csv(run.attack_checks)
    if attacks is not None:
        for r in attacks.iter_rows(named=True):
            sim = r.get("similarity")
            parts = [f"similarity {sim:.3f}" if isinstance(sim, float) else "", r.get("flag") or ""]
            detail = "; ".join(p for p in parts if p) or "preserved"
            out[(str(r["condition"]), str(r["item_id"]))] = (r.get("preserved"), detail)
    degraded = _csv(run.degrade_checks)
    if degraded is not None:
        for r in degraded.iter_rows(named=True):
            change = f"{r.get('before') or ''} → {r.get('after') or ''}"
            detail = "; ".join(p for p in (change, r.get("flag") or "") if p)
            out[(str(r["condition"]), str(r["item_id"]))] = (r.get("verified"), detail)
    return out


def _item_check(row: Mapping[str, Any]) -> Check:
    """A candidate set's own check of its rewrite: ``preserved``, ``similarity``, ``flag``."""
    preserved = row.get("preserved")
    sim = row.get("similarity")
    parts = [f"similarity {sim:.3f}" if isinstance(sim, float) else "", str(row.get("flag") or "")]
    return (
        preserved if isinstance(preserved, bool) else None,
        "; ".join(p for p in parts if p) or ("preserved" if preserved else "not checked"),
    )


@dataclass(frozen=True, slots=True)
class RunTexts:
    """A run's generated texts and the judgments on them, read once."""

    run: RunDir
    run_id: str
    texts: tuple[GeneratedText, ...]
    judgments: pl.DataFrame

    def by_id(self) -> dict[str, GeneratedText]:
        """The texts by id."""
        return {t.id: t for t in self.texts}

    def verdicts(self) -> dict[str, list[dict[str, str]]]:
        """The judge's verdicts on each text, by text id: every judgment that showed it."""
        out: dict[str, list[dict[str, str]]] = {t.id: [] for t in self.texts}
        wanted = {(t.condition, t.item_id): t.id for t in self.texts if t.condition != ITEM_TEXT}
        whole = {t.item_id: t.id for t in self.texts if t.condition == ITEM_TEXT}
        cols = ("judge", "protocol", "condition", "item_id", "verdict", "explanation")
        for judge, protocol, condition, item, verdict, explanation in self.judgments.select(
            cols
        ).iter_rows():
            shown = {"judge": judge, "protocol": protocol, "verdict": verdict or "",
                     "explanation": explanation or ""}  # fmt: skip
            found = wanted.get((condition, item))
            if found is not None:
                out[found].append(shown)
            if item in whole:
                out[whole[item]].append({**shown, "protocol": f"{protocol} ({condition})"})
        return out


Check = tuple[bool | None, str]
"""A rule check: passed (None when unmeasured), and what it found."""


def generated_texts(
    items: list[Item], conditions: dict[str, Condition], names: list[str],
    checks: Mapping[tuple[str, str], Check], rows: Mapping[str, Mapping[str, Any]],
) -> list[GeneratedText]:  # fmt: skip
    """Every generated text of a sweep's items under its conditions, items file's first."""
    out: list[GeneratedText] = []

    def add(found: Generated, condition: str, item_id: str, check: Check) -> None:
        key = text_id(found.kind, condition, item_id)
        out.append(GeneratedText(key, item_id, condition, found.kind, found.where, found.source,
                                 found.text, *check))  # fmt: skip

    for item in items:
        found = item_generated(item)
        if found is not None:
            add(found, ITEM_TEXT, item.item_id, _item_check(rows.get(item.item_id, {})))
    for name in names:
        for item in items:
            found = conditions[name].generated(item)
            if found is not None:
                add(found, name, item.item_id, checks.get((name, item.item_id), (None, "")))
    return out


def load_texts(run_dir: Path, items: str | None = None) -> RunTexts:
    """A run's generated texts, from its manifest's config, its check files and judgments.

    ``items``: the run's items file when it moved since the run (else the config's).
    """
    run = RunDir(run_dir)
    if not run_dir.is_dir():
        raise JudgeprobeError(f"{run_dir}: no such directory")
    if not run.is_run():
        raise JudgeprobeError(f"{run_dir}: not a run directory (no judgments or manifest)")
    manifest = run.manifest()
    if manifest.kind == "logs":  # a judge's logs generated no text: only the pairs to label
        return RunTexts(run, manifest.run_id, (), load_judgments(run.judgments))
    cfg = run_config(run, manifest)
    if items is not None:
        cfg = cfg.model_copy(update={"items": items})
    judged = sweep_items(cfg)
    conditions = sweep_conditions(cfg)
    rows = {str(r.get("item_id")): r for _, r in item_rows(cfg.items)}
    texts = generated_texts(judged, conditions, list(cfg.conditions), _checks(run), rows)
    return RunTexts(run, manifest.run_id, tuple(texts), load_judgments(run.judgments))


def shown(
    text: GeneratedText, decision: Decision | None, verdicts: list[dict[str, str]]
) -> dict[str, Any]:
    """A text as the page gets it (``GET /api/texts``): every string data, never markup."""
    current = decision.text if decision is not None and decision.action == "edit" else None
    now = current if current is not None else text.text
    return {
        "id": text.id,
        "item_id": text.item_id,
        "condition": text.condition,
        "kind": text.kind,
        "where": text.where,  # A, B (the verdicts' terms) or document: where the judge saw it
        "source": text.source,
        "text": now,
        "original": text.text,
        "diff": diff(text.source, now),
        "check": {"passed": text.passed, "detail": text.detail},
        "verdicts": verdicts,
        "decision": None if decision is None else decision_json(decision),
    }


def decision_json(decision: Decision) -> dict[str, Any]:
    """A decision as the page gets it."""
    return {"action": decision.action, "text": decision.text, "note": decision.note,
            "who": decision.who, "when": decision.when}  # fmt: skip
