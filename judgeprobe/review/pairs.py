"""The preference sample a reviewer labels: a run's blind pairs, in the order each was drawn.

The sample is ``judgeprobe annotate``'s (``annotate.export``): drawn once, seeded and
stratified, kept in ``RUN_DIR/annotation/`` with its unblinding key, so the page and the CSV
form label the same pairs. The page gets the document and the two texts in the order the key
says (``shown_first``) and never the key itself; a label comes back in screen terms (1, 2,
tie) and is stored in the item's (``A``, ``B``, ``Tie``), as ``annotate import`` stores the
CSV form's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from judgeprobe import JudgeprobeError
from judgeprobe.annotate.agreement import SCREEN, read_key
from judgeprobe.annotate.export import export
from judgeprobe.core.corpus import read_rows
from judgeprobe.runs.review import Label, Preferred, now, sample_id
from judgeprobe.runs.rundir import RunDir

SHOWN: dict[str, dict[str, str]] = {
    first: {**{item: screen for screen, item in terms.items()}, "Tie": "tie"}
    for first, terms in SCREEN.items()
}
"""Item terms back to screen terms, by the candidate shown first."""


@dataclass(frozen=True, slots=True)
class BlindPair:
    """One sampled pair as shown, with what unblinds it (kept on the server)."""

    id: str
    context: str
    response_1: str
    response_2: str
    shown_first: str  # "A" or "B": the item's candidate shown as response 1
    document_id: str
    item_ids: tuple[str, ...]

    def label(self, preferred: str, note: str, who: str, sample: str) -> Label:
        """A label given on screen (1, 2 or tie) in the item's terms."""
        item = "Tie" if preferred == "tie" else SCREEN[self.shown_first][preferred]
        return Label(sample=sample, pair_id=self.id, who=who, preferred=cast(Preferred, item),
                     note=note, when=now(), document_id=self.document_id,
                     item_ids=self.item_ids)  # fmt: skip

    def shown_label(self, label: Label) -> dict[str, Any]:
        """A stored label as the page shows it (screen terms)."""
        return {"preferred": SHOWN[self.shown_first][label.preferred], "note": label.note,
                "who": label.who, "when": label.when}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Sample:
    """The drawn sample: its name and its pairs, by id."""

    id: str
    pairs: dict[str, BlindPair]


def load_sample(run_dir: Path, n: int, seed: int, items: str | None = None) -> Sample:
    """The run's sample, drawn now (``n`` pairs, ``seed``) when ``annotate export`` drew none."""
    run = RunDir(run_dir)
    if not run.annotation_key.is_file():
        export(run_dir, n, seed, items)
    key = read_key(run_dir)
    rows = read_rows(run.annotation_pairs, str(run.annotation_pairs), ("csv",))
    shown = {str(r.get("pair_id")): r for r in rows}
    pairs = {}
    for k in key.iter_rows(named=True):
        row = shown.get(k["pair_id"])
        if row is None:
            raise JudgeprobeError(f"{run.annotation_pairs}: no pair {k['pair_id']} of key.csv")
        pairs[k["pair_id"]] = BlindPair(
            id=k["pair_id"], context=str(row["document"]), response_1=str(row["summary_1"]),
            response_2=str(row["summary_2"]), shown_first=k["shown_first"],
            document_id=k["document_id"], item_ids=tuple(k["item_ids"].split(";")),
        )  # fmt: skip
    return Sample(sample_id(run), pairs)
