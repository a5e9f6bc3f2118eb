"""Which card rows let a change through: one rule for the pytest plugin, CI and the PR summary.

The pytest plugin, the CI gate (``judgeprobe.gate``) and the pull-request summary
(``judgeprobe card --summary-md``) read it.

A row's verdict maps to an outcome (``OUTCOMES``, the table docs/ci.md prints): ``fail``
stops a pull request, ``pass`` lets it through, ``skip`` is a row the run could not decide
(UNDERPOWERED: a failure under ``strict``), ``info`` a figure that decides nothing (shown, never
gating). A verdict the table does not know fails: a new verdict must be mapped before a gate
lets it through. The card is read from ``card.json`` through its published model
(``card.published``), so a CI job reads the same typed rows a Python user does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.card.kinds.base import TestedRow
from judgeprobe.card.published import PublishedCard
from judgeprobe.card.record import CardRow, shown
from judgeprobe.core.cells import cell, p_value
from judgeprobe.runs.rundir import RunDir

Outcome = Literal["pass", "fail", "skip", "info"]

OUTCOMES: dict[str, Outcome] = {
    "CLEAR": "pass",
    "STABLE": "pass",
    "SENSITIVE": "pass",
    "REPLACES": "pass",  # alt-test: the judge can stand in for the annotators
    "BIASED": "fail",
    "UNSTABLE": "fail",
    "INSENSITIVE": "fail",
    "DOES-NOT-REPLACE": "fail",  # alt-test: it cannot
    "UNDERPOWERED": "skip",  # fail under strict
    "OBSERVED": "info",
    "NOISY": "info",
}
"""Every verdict a card row can carry → what a gate does with it (unknown verdicts fail)."""

FAILING_EXIT = frozenset({2, 3, 4})
"""Exit codes of a run that could not read its input (2), finish (3) or trust its judge (4):
the gate fails on them whatever a card says."""


def outcome(verdict: str | None, *, strict: bool = False) -> Outcome:
    """What a gate does with a row of this verdict (``strict``: UNDERPOWERED fails too)."""
    found = OUTCOMES.get(verdict or "", "fail")
    return "fail" if strict and found == "skip" else found


def row_name(row: CardRow) -> str:
    """``judge · protocol · row``: how a summary and a test report name a row."""
    return f"{row.judge} · {row.protocol} · {row.row}"


def row_sentence(row: CardRow) -> str:
    """The row in one sentence: verdict, effect with its interval, what it read against.

    Then its kind's own counts (``kind_note``), in brackets.
    """
    parts = [f"{row.verdict}: {row.effect_name or 'effect'} {shown(row.effect)}"]
    if row.threshold is not None:
        parts.append(f"threshold {cell(row.threshold)}")
    if isinstance(row, TestedRow) and row.q is not None:
        parts.append(f"q {p_value(row.q)}")
    if isinstance(row, TestedRow) and row.mde is not None:
        parts.append(f"minimum detectable effect {cell(row.mde)}")
    if row.documents is not None:
        parts.append(f"{row.documents} documents")
    sentence = "; ".join(parts)
    note = row.kind_note()
    return f"{sentence} ({note})" if note else sentence


def row_figures(row: CardRow) -> list[tuple[str, str]]:
    """The row's figures by name, as printed (a test report's properties)."""
    tested = row if isinstance(row, TestedRow) else None
    return [
        ("verdict", row.verdict or ""), ("kind", row.kind), ("effect_name", row.effect_name),
        ("effect", shown(row.effect)), ("threshold", cell(row.threshold)),
        ("q", p_value(None if tested is None else tested.q)),
        ("mde", cell(None if tested is None else tested.mde)), ("documents", cell(row.documents)),
    ]  # fmt: skip


def read_card(path: Path) -> PublishedCard:
    """The card.json of a run directory (or the file itself), read through the typed model."""
    file = RunDir(path).card_json if path.is_dir() else path
    if not file.is_file():
        raise JudgeprobeError(f"{path}: no card.json (run `judgeprobe card {path}` first)")
    try:
        return PublishedCard.model_validate_json(file.read_bytes())
    except ValidationError as exc:
        raise JudgeprobeError(f"{file}: not a judge card: {first_error(exc)}") from None


@dataclass(frozen=True)
class Gate:
    """A card judged by the gate: each row's outcome and whether the change may pass."""

    card: PublishedCard
    strict: bool = False

    def outcome_of(self, row: CardRow) -> Outcome:
        """The row's outcome under this gate."""
        return outcome(row.verdict, strict=self.strict)

    @property
    def failing(self) -> list[CardRow]:
        """The rows that fail the gate, in the card's order."""
        return [r for r in self.card.rows if self.outcome_of(r) == "fail"]

    @property
    def skipped(self) -> list[CardRow]:
        """The rows the run could not decide (UNDERPOWERED, when not strict)."""
        return [r for r in self.card.rows if self.outcome_of(r) == "skip"]

    @property
    def passed(self) -> bool:
        """No failing row."""
        return not self.failing


def verdict_counts(card: PublishedCard) -> dict[str, int]:
    """How many rows got each verdict, in the verdicts' order on ``OUTCOMES``."""
    counts = Counter(r.verdict or "none" for r in card.rows)
    order = {v: i for i, v in enumerate(OUTCOMES)}
    return {v: counts[v] for v in sorted(counts, key=lambda v: (order.get(v, len(order)), v))}


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def summary_markdown(card: PublishedCard, where: str, *, strict: bool = False) -> str:
    """The short pull-request summary: verdict counts, each non-passing row, the full card.

    ``where``: where a reader finds the whole card (the artifact's name in CI, else a path).
    """
    gate = Gate(card, strict)
    counts = ", ".join(f"{n} {v}" for v, n in verdict_counts(card).items()) or "no rows"
    state = "passes" if gate.passed else "fails"
    lines = [
        f"## Judge card: {_cell(card.run_id)}",
        "",
        f"**The gate {state}** ({'strict' if strict else 'UNDERPOWERED rows do not fail'}): "
        f"{counts}; `judgeprobe card` exit code {card.exit_code}.",
        "",
    ]
    shown_rows = gate.failing + gate.skipped
    if shown_rows:
        lines += ["| row | outcome | verdict and interval |", "|---|---|---|"]
        lines += [
            f"| {_cell(row_name(r))} | {gate.outcome_of(r)} | {_cell(row_sentence(r))} |"
            for r in shown_rows
        ]
        lines.append("")
    lines.append(f"The full card: {where}")
    return "\n".join(lines) + "\n"
