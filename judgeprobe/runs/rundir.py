"""A run directory: its files, its manifest, its exit codes, the checks before it is written.

``RunDir`` is the one place a run directory's file names are written: every stage that writes
or reads a run (sweep, report, card, metrics, annotation, rubric probe, self-test) asks it for
a path, so the directory is an interface with a type. ``Manifest`` is what a reader needs of
``manifest.json``, checked once; whatever else an older or newer run wrote there is kept.

Every command that writes a run (the cue sweep, the rubric probe) checks its output
path and any earlier run there before a server is asked anything, so a bad path or a
mismatched resume never costs a probe or leaves half a run.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from judgeprobe import JudgeprobeError
from judgeprobe.core.cli import PROG
from judgeprobe.core.files import write_json
from judgeprobe.engine.store import Store
from judgeprobe.prompts.task import DEFAULT, Task

EXIT_BAD_INPUT = 2  # one `error:` line on stderr, nothing written
EXIT_INCOMPLETE = 3  # the sweep deadline stopped sending, or batch answers are pending
EXIT_UNRELIABLE = 4  # a judge's Invalid share is above [engine] fail_invalid_rate
EXIT_INTERRUPTED = 130
SKIPPED_LIMIT = 0.01
"""A logs run whose readers skipped more than this share of the logs' rows is unreliable
(exit 4), as a sweep is whose Invalid share is above ``[engine] fail_invalid_rate``: its card
speaks of rows it could not read."""


def skipped_share(skipped: int, rows: int) -> str:
    """The sentence a logs run states wherever it is summed up: how many rows were skipped."""
    share = skipped / rows if rows else 0.0
    above = f", above {SKIPPED_LIMIT:.0%}: unreliable" if share > SKIPPED_LIMIT else ""
    return f"{skipped} of {rows} log rows skipped ({share:.1%}{above})"


def skipped_unreliable(skipped: int, rows: int) -> bool:
    """Whether a logs run skipped more than ``SKIPPED_LIMIT`` of its rows (exit 4)."""
    return rows > 0 and skipped / rows > SKIPPED_LIMIT


def resume_command(command: str, argv: Sequence[str]) -> str:
    """The command line that continues this run: the same arguments with ``--resume``."""
    args = list(argv) if "--resume" in argv else [*argv, "--resume"]
    return shlex.join([PROG, command, *args])


def resumable_note(failed: Counter[str], command: str) -> str:
    """What to say when judgments failed for a reason a resume may clear (exit 3)."""
    reason, n = failed.most_common(1)[0]
    return (
        f"{failed.total()} judgments failed for a reason a resume may clear (most often, {n}×: "
        f"{reason}); they are Invalid until then: {command}"
    )


class Manifest(BaseModel):
    """What a run's readers need of its ``manifest.json``, each field of the type it must have.

    Strict on those, tolerant of every other key (older runs wrote some that are gone, newer
    ones add their own): they are kept, so a manifest read and written again loses nothing.
    Only ``run_id`` and ``created_at`` are in every run ever written; the rest default.
    """

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    run_id: str
    created_at: str
    kind: str = "cue"
    config_digest: str = ""
    config: dict[str, Any] = {}
    seeds: list[int] = []
    determinism: str = ""
    conditions: dict[str, dict[str, Any]] = {}
    judges: list[dict[str, Any]] = []
    items: dict[str, Any] = {}  # the rubric probe's: its source and count
    shard: Any = None  # written by the retired --shard
    spend: dict[str, Any] | None = None  # what the run spent (runs.spend), once it has run
    # A logs run: the rows its readers skipped, of all the rows the logs held (``skipped_share``)
    skipped: int = 0
    rows: int = 0

    @property
    def task(self) -> Task:
        """The task the run's prompts and pages speak of (``prompts.task``; older runs: default)."""
        found = self.config.get("task")
        return DEFAULT if found is None else Task.model_validate(found)

    @property
    def items_source(self) -> str | None:
        """The items the run judged, as its config named them; None when it names none."""
        found = self.config.get("items")
        return None if found is None else str(found)


@dataclass(frozen=True, slots=True)
class RunDir:
    """A run directory, by the names of its files (here and nowhere else)."""

    path: Path

    @property
    def judgments(self) -> Path:
        """The judgments table (Parquet), one row a judgment."""
        return self.path / "judgments.parquet"

    @property
    def labels(self) -> Path:
        """Human labels of the run's items (``records.LABEL_SCHEMA``), when it has any."""
        return self.path / "labels.parquet"

    @property
    def manifest_file(self) -> Path:
        """What made the run (``Manifest``)."""
        return self.path / "manifest.json"

    @property
    def plan(self) -> Path:
        """The bill ``run --plan`` wrote before the run (plan.json)."""
        return self.path / "plan.json"

    @property
    def store(self) -> Path:
        """The request cache and outcome store a resume continues from."""
        return self.path / "store.sqlite"

    @property
    def metrics(self) -> Path:
        """The point estimates, one row a cell."""
        return self.path / "metrics.csv"

    @property
    def metrics_ci(self) -> Path:
        """Every metric with its interval, tidy."""
        return self.path / "metrics_ci.csv"

    @property
    def calibrated(self) -> Path:
        """The human-calibrated estimates (``judgeprobe calibrate``), one row a model."""
        return self.path / "calibrated.csv"

    @property
    def controlled(self) -> Path:
        """The cue-controlled model's terms (``metrics --controlled``; win rates beside it)."""
        return self.path / "controlled.csv"

    @property
    def report_md(self) -> Path:
        """The report as Markdown (its charts under ``plots``)."""
        return self.path / "report.md"

    @property
    def report_html(self) -> Path:
        """The report as one self-contained page."""
        return self.path / "report.html"

    @property
    def plots(self) -> Path:
        """The Markdown report's charts."""
        return self.path / "plots"

    @property
    def card_md(self) -> Path:
        """The judge card as Markdown."""
        return self.path / "card.md"

    @property
    def card_html(self) -> Path:
        """The judge card as a page."""
        return self.path / "card.html"

    @property
    def card_csv(self) -> Path:
        """The judge card's rows."""
        return self.path / "card.csv"

    @property
    def card_json(self) -> Path:
        """The judge card as a published document (``card.published``; its schema in docs)."""
        return self.path / "card.json"

    @property
    def card_silent(self) -> Path:
        """The card's silent-cue rows."""
        return self.path / "card_silent.csv"

    @property
    def attack_checks(self) -> Path:
        """The style attacks' preservation checks, one row an item and attack."""
        return self.path / "attack_checks.csv"

    @property
    def degrade_checks(self) -> Path:
        """The sensitivity conditions' degradation checks."""
        return self.path / "degrade_checks.csv"

    @property
    def rubric(self) -> RunDir:
        """The rubric probe's own run beside a cue run (its manifest, judgments, results)."""
        return RunDir(self.path / "rubric")

    @property
    def notes(self) -> Path:
        """The rubric probe's notes, one a line."""
        return self.path / "notes.txt"

    @property
    def annotation(self) -> Path:
        """The human check's folder: the blind form, its key, the agreement."""
        return self.path / "annotation"

    @property
    def annotation_pairs(self) -> Path:
        """The pairs the annotators see, blind."""
        return self.annotation / "pairs.csv"

    @property
    def annotation_key(self) -> Path:
        """What unblinds the pairs: each one's judgment and candidates."""
        return self.annotation / "key.csv"

    @property
    def label_draw(self) -> Path:
        """The items ``calibrate --draw`` asks people to label next (the review page's first)."""
        return self.annotation / "draw.csv"

    @property
    def annotation_form(self) -> Path:
        """The blind form as a page."""
        return self.annotation / "form.html"

    @property
    def agreement(self) -> Path:
        """The annotators' agreement with the judge and each other."""
        return self.annotation / "agreement.csv"

    @property
    def review(self) -> Path:
        """The human review: decisions on generated texts and preference labels (SQLite)."""
        return self.path / "review.sqlite"

    def is_run(self) -> bool:
        """Whether the directory holds a judged run (its judgments and its manifest)."""
        return self.judgments.is_file() and self.manifest_file.is_file()

    def manifest(self) -> Manifest:
        """The run's manifest, checked; one error line when it is missing or malformed."""
        try:
            return Manifest.model_validate_json(self.manifest_file.read_bytes())
        except OSError:
            raise JudgeprobeError(
                f"{self.path}: no manifest.json (is this a run directory?)"
            ) from None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "the file"
            raise JudgeprobeError(
                f"{self.manifest_file}: malformed manifest ({where}: {first['msg']})"
            ) from None

    def manifest_or_none(self) -> Manifest | None:
        """The run's manifest; None when there is none or it is malformed."""
        try:
            return self.manifest()
        except JudgeprobeError:
            return None

    def write_manifest(self, data: Mapping[str, Any]) -> None:
        """Write the manifest as it is built (its keys in their order), checked as it is read."""
        Manifest.model_validate(data, strict=False)
        write_json(self.manifest_file, data)


def check_run_dir(out: Path, *, resume: bool, digest: str, what: str = "run") -> None:
    """Refuse to overwrite a run, or to resume one made with another config."""
    run = RunDir(out)
    if not run.manifest_file.exists():
        return
    if not resume:
        raise JudgeprobeError(
            f"{out} already holds a {what}; pass --resume to continue it or choose another --out"
        )
    previous = run.manifest_or_none()
    if previous is None or previous.config_digest != digest:
        raise JudgeprobeError(
            f"{out} was made with a different config; resume it with the same config "
            "or choose another --out"
        )
    if previous.shard:  # made by the retired --shard
        raise JudgeprobeError(
            f"{out} holds one shard of a sharded run ({previous.shard}); --shard is "
            "retired: rerun the whole sweep with --ray (it reuses nothing of the shard)"
        )


def check_writable_dir(path: Path, what: str) -> None:
    """``path`` is a directory, or can be made one, that this user may write."""
    if path.exists() and not path.is_dir():
        raise JudgeprobeError(f"{what} {path}: exists and is not a directory")
    for parent in (path, *path.parents):
        if not parent.exists():
            continue
        if not parent.is_dir():
            raise JudgeprobeError(f"{what} {path}: {parent} is a file, not a directory")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise JudgeprobeError(f"{what} {path}: {parent} is not writable")
        return


def open_store(out: Path) -> Store:
    """Create the run directory and open its store, with a one-line error if it cannot be."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        return Store(RunDir(out).store)
    except (OSError, sqlite3.Error) as exc:
        raise JudgeprobeError(f"--out {out}: cannot write the run there ({exc})") from None
