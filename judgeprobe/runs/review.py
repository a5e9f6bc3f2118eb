"""A run's human review: decisions on its generated texts and preference labels, one SQLite file.

Every stage that honours the review reads it here: the sweep (an edited text is judged under
its own key, a rejected one is counted), the metrics, card and report of a run (a rejected
text's judgments leave them), ``judgeprobe review`` (the page that writes it) and
``judgeprobe annotate`` (its CSV files land in the same labels table).

Crash-safe as the run's store is (``engine.store``): WAL mode, and every write is its own
committed transaction, so a ``kill -9`` loses nothing acknowledged and never leaves half a
record. ``decisions`` holds the current decision per generated text; ``decision_log`` every
decision ever made (who changed what, when), append-only; ``labels`` one label per
(sample, pair, annotator), in the item's own terms (``A`` = candidate 1 preferred).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict

from judgeprobe import JudgeprobeError
from judgeprobe.runs.rundir import RunDir

Action = Literal["accept", "reject", "edit"]
ACTIONS: tuple[Action, ...] = ("accept", "reject", "edit")
Preferred = Literal["A", "B", "Tie"]
DRAW_SAMPLE = "calibrate-draw"
"""The ``sample`` of a label on an item ``calibrate --draw`` asked for: the item names the pair,
so the label never goes stale (unlike a blind sample's, which a redraw replaces)."""
ITEM_TEXT = ""
"""The ``condition`` of a text the items file carries (a paraphrase pair, a prepared rewrite):
it is the item's in every condition, so its decision is too."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS decisions (id TEXT PRIMARY KEY, condition TEXT NOT NULL, "
    "item_id TEXT NOT NULL, action TEXT NOT NULL, text TEXT, note TEXT NOT NULL, "
    "who TEXT NOT NULL, at TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS decision_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
    "id TEXT NOT NULL, condition TEXT NOT NULL, item_id TEXT NOT NULL, action TEXT NOT NULL, "
    "text TEXT, note TEXT NOT NULL, who TEXT NOT NULL, at TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS labels (sample TEXT NOT NULL, pair_id TEXT NOT NULL, "
    "who TEXT NOT NULL, preferred TEXT NOT NULL, note TEXT NOT NULL, at TEXT NOT NULL, "
    "document_id TEXT NOT NULL, item_ids TEXT NOT NULL, origin TEXT NOT NULL, "
    "PRIMARY KEY (sample, pair_id, who)) WITHOUT ROWID",
)


def now() -> str:
    """When a decision or label is made: UTC, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class Decision(BaseModel):
    """A reviewer's decision on one generated text; ``text`` is the edit (for ``edit`` only)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    condition: str  # ITEM_TEXT for a text of the items file
    item_id: str
    action: Action
    text: str | None = None
    note: str = ""
    who: str
    when: str


class Label(BaseModel):
    """A person's preference on one sampled pair, in the item's own terms."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sample: str  # the sample the pair belongs to (a redrawn sample's labels stop counting)
    pair_id: str
    who: str
    preferred: Preferred
    note: str = ""
    when: str
    document_id: str
    item_ids: tuple[str, ...]
    origin: str = "review"  # "review" (the page) or the CSV file ``annotate import`` read


class StoreBusy(JudgeprobeError):
    """Another connection held the review store's write lock for the whole busy timeout."""


BUSY_TIMEOUT_S = 5.0
"""How long a write waits for another process's write lock (a command; the page waits less)."""


class ReviewStore:
    """The review file of a run directory (created on the first write).

    ``timeout``: how long a write waits for another connection's write lock before it raises
    ``StoreBusy``. ``threads``: whether another thread may use the connection (the review
    server runs its store calls off the event loop, one at a time).
    """

    def __init__(
        self, path: Path, timeout: float = BUSY_TIMEOUT_S, *, threads: bool = False
    ) -> None:
        self.path = path
        try:
            self._db = sqlite3.connect(path, isolation_level=None, timeout=timeout,
                                       check_same_thread=not threads)  # fmt: skip
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # a person's work: fsync every commit
            with self._db:
                self._db.execute("BEGIN")
                for statement in _SCHEMA:
                    self._db.execute(statement)
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise StoreBusy(f"{path}: the review file is busy (another process is writing "
                                "it); try again") from None  # fmt: skip
            raise JudgeprobeError(f"{path}: cannot open the review file ({exc})") from None
        except sqlite3.Error as exc:
            raise JudgeprobeError(f"{path}: cannot open the review file ({exc})") from None

    def _write(self, statements: Callable[[sqlite3.Connection], None]) -> None:
        """One write transaction, all or nothing; ``StoreBusy`` when the lock never came."""
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                statements(self._db)
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise StoreBusy(
                    f"{self.path}: the review file is busy (another process is writing it); "
                    "try again"
                ) from None
            raise

    @classmethod
    def of(cls, run: RunDir) -> ReviewStore:
        """The review store of a run (created when it has none)."""
        return cls(run.review)

    def close(self) -> None:
        """Close the database (every write is committed already)."""
        self._db.close()

    def __enter__(self) -> ReviewStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def decide(self, decision: Decision) -> Decision:
        """Record a decision (replacing the text's earlier one), and log it; all or nothing."""
        row = decision.model_dump()
        values = [row[k] for k in ("id", "condition", "item_id", "action", "text", "note", "who",
                                   "when")]  # fmt: skip

        def statements(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR REPLACE INTO decisions (id, condition, item_id, action, text, note, "
                "who, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )
            db.execute(
                "INSERT INTO decision_log (id, condition, item_id, action, text, note, who, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                values,
            )

        self._write(statements)
        return decision

    def decisions(self) -> dict[str, Decision]:
        """The current decision of every text decided, by text id."""
        rows = self._db.execute(
            "SELECT id, condition, item_id, action, text, note, who, at FROM decisions"
        ).fetchall()
        fields = ("id", "condition", "item_id", "action", "text", "note", "who", "when")
        return {r[0]: Decision.model_validate(dict(zip(fields, r, strict=True))) for r in rows}

    def history(self) -> int:
        """How many decisions were ever made (the log, every change counted)."""
        return int(self._db.execute("SELECT count(*) FROM decision_log").fetchone()[0])

    def label(self, label: Label) -> Label:
        """Record a label (replacing the same person's earlier one on that pair)."""
        self.put_labels([label])
        return label

    def put_labels(self, labels: Iterable[Label], replace_who: str | None = None) -> None:
        """Record labels, all or none.

        ``replace_who`` first drops that person's labels on the labels' sample (a file that is
        their whole answer).
        """
        labels = list(labels)

        def statements(db: sqlite3.Connection) -> None:
            for sample in sorted({x.sample for x in labels} if replace_who is not None else ()):
                db.execute("DELETE FROM labels WHERE who = ? AND sample = ?", (replace_who, sample))
            db.executemany(
                "INSERT OR REPLACE INTO labels (sample, pair_id, who, preferred, note, at, "
                "document_id, item_ids, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (x.sample, x.pair_id, x.who, x.preferred, x.note, x.when, x.document_id,
                     ";".join(x.item_ids), x.origin)
                    for x in labels
                ],
            )  # fmt: skip

        self._write(statements)

    def labels(self, sample: str) -> list[Label]:
        """Every label of a sample, by pair then person."""
        rows = self._db.execute(
            "SELECT sample, pair_id, who, preferred, note, at, document_id, item_ids, origin "
            "FROM labels WHERE sample = ? ORDER BY pair_id, who",
            (sample,),
        ).fetchall()
        return [
            Label(sample=r[0], pair_id=r[1], who=r[2], preferred=r[3], note=r[4], when=r[5],
                  document_id=r[6], item_ids=tuple(r[7].split(";")), origin=r[8])
            for r in rows
        ]  # fmt: skip


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite gave up waiting for another connection's lock."""
    return "locked" in str(exc) or "busy" in str(exc)


DRAW_FIELDS = ("pair_id", "item_id", "shown_first")


@dataclass(frozen=True, slots=True)
class Drawn:
    """An item ``calibrate --draw`` asked people to label, as the review page shows it."""

    pair_id: str  # opaque: the page never sees the item id (it may name the models)
    item_id: str
    shown_first: Literal["A", "B"]  # the candidate shown as response 1


def read_draw(run: RunDir) -> list[Drawn]:
    """The items to label next, in order; none when nothing was drawn."""
    path = run.label_draw
    if not path.is_file():
        return []
    try:
        frame = pl.read_csv(path, schema=dict.fromkeys(DRAW_FIELDS, pl.String))
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise JudgeprobeError(f"{path}: not a draw written by `calibrate --draw` ({exc})") from None
    if (
        frame["shown_first"].is_in(["A", "B"]).not_().any()
        or frame.null_count().sum_horizontal()[0]
    ):
        raise JudgeprobeError(f"{path}: not a draw written by `calibrate --draw`")
    return [
        Drawn(r["pair_id"], r["item_id"], r["shown_first"]) for r in frame.iter_rows(named=True)
    ]


def read_decisions(run: RunDir) -> dict[str, Decision]:
    """A run's decisions; none when it was never reviewed (no file is created to say so)."""
    if not run.review.is_file():
        return {}
    with ReviewStore(run.review) as store:
        return store.decisions()


def sample_id(run: RunDir) -> str:
    """The drawn preference sample's name: its key's hash; "" when none was drawn.

    The sample is ``annotate export``'s; a redrawn sample's labels stop counting.
    """
    if not run.annotation_key.is_file():
        return ""
    return hashlib.sha256(run.annotation_key.read_bytes()).hexdigest()[:16]


def read_labels(run: RunDir) -> list[Label]:
    """A run's labels on its current sample; none when it has no sample or no review."""
    sample = sample_id(run)
    if not sample or not run.review.is_file():
        return []
    with ReviewStore(run.review) as store:
        return store.labels(sample)


def edits(decisions: Mapping[str, Decision]) -> dict[tuple[str, str], str]:
    """The edited texts by (condition, item id): what the next resume judges instead."""
    return {
        (d.condition, d.item_id): d.text
        for d in decisions.values()
        if d.action == "edit" and d.text is not None
    }


def rejected(decisions: Mapping[str, Decision]) -> list[Decision]:
    """The rejected texts' decisions, in id order."""
    return sorted((d for d in decisions.values() if d.action == "reject"), key=lambda d: d.id)


def is_rejected(decisions: Mapping[str, Decision]) -> pl.Expr:
    """Whether a judgments-table row judged a rejected text (its item's, or its condition's)."""
    found = rejected(decisions)
    items = [d.item_id for d in found if d.condition == ITEM_TEXT]
    pairs = [f"{d.condition}\x00{d.item_id}" for d in found if d.condition != ITEM_TEXT]
    cell = pl.concat_str(pl.col("condition"), pl.lit("\x00"), pl.col("item_id"))
    return pl.col("item_id").is_in(items) | cell.is_in(pairs)


def without_rejected(frame: pl.DataFrame, decisions: Mapping[str, Decision]) -> pl.DataFrame:
    """The judgments that count: every row but those of a rejected text."""
    if not any(d.action == "reject" for d in decisions.values()):
        return frame
    return frame.filter(~is_rejected(decisions))


def reviewed_judgments(run: RunDir, frame: pl.DataFrame) -> pl.DataFrame:
    """A run's judgments as its review leaves them (``frame`` read from ``run``)."""
    return without_rejected(frame, read_decisions(run))


def review_state(
    decisions: Mapping[str, Decision], frame: pl.DataFrame | None = None
) -> dict[str, Any]:
    """What the manifest records of a run's review: counts, the rejected texts and why.

    With the judgments ``frame``, also how many judgments the rejections leave out.
    """
    actions = Counter(d.action for d in decisions.values())
    state: dict[str, Any] = {
        "decided": len(decisions),
        **{a: actions.get(a, 0) for a in ACTIONS},
        "rejected_texts": [
            {"id": d.id, "condition": d.condition, "item_id": d.item_id, "note": d.note,
             "who": d.who, "when": d.when}
            for d in rejected(decisions)
        ],
        "edited_texts": sorted(d.id for d in decisions.values() if d.action == "edit"),
    }  # fmt: skip
    if frame is not None:
        state["rejected_judgments"] = int(frame.filter(is_rejected(decisions)).height)
    return state


def review_sentences(decisions: Mapping[str, Decision], left_out: int) -> list[str]:
    """What a reader of the report or card is told of the review ([] when none was made).

    ``left_out``: the judgments of rejected texts that the tables and the card leave out.
    """
    if not decisions:
        return []
    state = review_state(decisions)
    out = [
        f"{state['decided']} generated texts reviewed: {state['accept']} accepted, "
        f"{state['reject']} rejected, {state['edit']} edited."
    ]
    if state["reject"]:
        why = Counter(d.note.strip() or "no reason given" for d in rejected(decisions))
        reasons = "; ".join(f"{n}× {note}" for note, n in why.most_common(5))
        n = state["reject"]
        out.append(
            f"Rejected texts ({n}) leave {left_out} judgment{'' if left_out == 1 else 's'} out "
            f"of every table and the card (why: {reasons})."
        )
    if state["edit"]:
        out.append(
            f"Edited texts ({state['edit']}) are judged under their own keys by "
            "`judgeprobe run --resume` (the texts as generated are no longer in the plan)."
        )
    return out
