"""The preference sample a reviewer labels: a run's blind pairs, in the order each was drawn.

The sample is ``judgeprobe annotate``'s (``annotate.export``): drawn once, seeded and
stratified, kept in ``RUN_DIR/annotation/`` with its unblinding key, so the page and the CSV
form label the same pairs. The page gets the document and the two texts in the order the key
says (``shown_first``) and never the key itself; a label comes back in screen terms (1, 2,
tie) and is stored in the item's (``A``, ``B``, ``Tie``), as ``annotate import`` stores the
CSV form's.

Items ``calibrate --draw`` asked for (``RUN/annotation/draw.csv``) come first, each its own
pair under the sample ``DRAW_SAMPLE`` (a drawn item already in the blind sample moves that
pair to the front instead), so the labels a calibrated estimate needs next are given first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from judgeprobe import JudgeprobeError
from judgeprobe.annotate.agreement import SCREEN, read_key
from judgeprobe.annotate.export import export, run_items
from judgeprobe.core.corpus import read_rows
from judgeprobe.runs.review import DRAW_SAMPLE, Label, Preferred, now, read_draw, sample_id
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
    sample: str  # the blind sample's id, or DRAW_SAMPLE

    def label(self, preferred: str, note: str, who: str) -> Label:
        """A label given on screen (1, 2 or tie) in the item's terms."""
        item = "Tie" if preferred == "tie" else SCREEN[self.shown_first][preferred]
        return Label(sample=self.sample, pair_id=self.id, who=who,
                     preferred=cast(Preferred, item),
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

    @property
    def samples(self) -> tuple[str, ...]:
        """The samples its pairs' labels are stored under."""
        return tuple(sorted({p.sample for p in self.pairs.values()}))


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
            sample=sample_id(run),
        )  # fmt: skip
    return Sample(sample_id(run), {**_drawn(run_dir, pairs, items), **pairs})


def _drawn(run_dir: Path, sampled: dict[str, BlindPair], items: str | None) -> dict[str, BlindPair]:
    """The pairs of the items ``calibrate --draw`` asked for, in its order (see the module)."""
    drawn = read_draw(RunDir(run_dir))
    if not drawn:
        return {}
    in_sample = {i: p for p in sampled.values() for i in p.item_ids}
    _, run_items_list = run_items(run_dir, items)
    by_id = {i.item_id: i for i in run_items_list}
    out: dict[str, BlindPair] = {}
    for d in drawn:
        if d.item_id in in_sample:
            pair = in_sample[d.item_id]
            out[pair.id] = pair
            continue
        item = by_id.get(d.item_id)
        if item is None:
            raise JudgeprobeError(f"{RunDir(run_dir).label_draw}: item {d.item_id!r} is not in "
                                  "the run's items file")  # fmt: skip
        first, second = ((item.candidate_1, item.candidate_2) if d.shown_first == "A"
                         else (item.candidate_2, item.candidate_1))  # fmt: skip
        out[d.pair_id] = BlindPair(
            id=d.pair_id, context=item.document, response_1=first, response_2=second,
            shown_first=d.shown_first, document_id=item.document_id, item_ids=(item.item_id,),
            sample=DRAW_SAMPLE,
        )  # fmt: skip
    return out
