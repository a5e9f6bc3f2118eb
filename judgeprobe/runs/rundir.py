"""A run directory: its files, its manifest, its exit codes, the checks before it is written.

``RunDir`` is the one place a run directory's file names are written: every stage that writes
or reads a run (sweep, report, card, metrics, annotation, rubric probe, self-test) asks it for
a path, so the directory is an interface with a type. ``Manifest`` declares every key of
``manifest.json``, checked once: keys older versions wrote are dropped by a documented list
(``RETIRED``), any other undeclared key refused in one line.

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
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from judgeprobe import JudgeprobeError
from judgeprobe.core.cli import PROG
from judgeprobe.core.files import write_json
from judgeprobe.engine.store import Store
from judgeprobe.prompts.task import DEFAULT, LOGS, Task

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


RunKind = Literal["cue", "rubric", "candidates", "logs", "selftest-calibrate"]
"""What made a run: the cue sweep, the rubric probe, the candidate builder, ``judgeprobe logs``,
or the self-test's calibration example."""

RETIRED: dict[str, str] = {
    "shard": "written by the retired --shard (a run that has it is refused on resume)",
    "merged_from": "written by the retired judgeprobe merge (the shard directories merged)",
}
"""Keys older versions wrote that no reader needs: accepted on read and dropped (docs/outputs.md,
"manifest.json"). Any other key the model does not declare is refused."""

_MODEL = ConfigDict(extra="forbid", strict=True, frozen=True)


class RandomizedOrder(BaseModel):
    """A judge × protocol whose shown order the log's tool shuffled, as far as it was recovered."""

    model_config = _MODEL

    judge: str
    """The judge (AlpacaEval's annotator)."""
    protocol: str
    """Its protocol."""
    kept: int
    """Rows shown in the order the log lists the pair."""
    switched: int
    """Rows whose second-listed response was shown first."""
    undetermined: int
    """Rows whose shown order could not be told (no position claim on them)."""


class LogsConfig(BaseModel):
    """What ``judgeprobe logs`` was given: the config of a judge-logs run (``kind = "logs"``)."""

    model_config = _MODEL

    sources: list[str] = []
    """The log files read, resolved."""
    formats: dict[str, str] = {}
    """Each file's format, as detected or named."""
    self: list[str] = []
    """``--self``: the judges' own models, for self-preference."""
    map: str = ""
    """``--map``: the generic reader's field map, when one was given."""
    items: str | None = None
    """The items file the run kept the texts in; None when no log carried texts."""
    labels: str | None = None
    """``--labels``: the human labels file."""
    baseline: str | None = None
    """``--baseline``: an earlier logs run of the same items, for drift."""
    skipped: int = 0
    """Rows a log reader skipped (not a judgment), counted."""
    rows: int = 0
    """Every row the logs held, usable or skipped: ``skipped``'s denominator
    (``skipped_share``)."""
    task: Task | None = None
    """Whose nouns the run's pages speak (the formats' task, ``logs.formats.logs_task``); None:
    ``prompts.task.LOGS``, questions and responses."""
    randomized_order: list[RandomizedOrder] = []
    """Each judge × protocol whose shown order the log's tool shuffled (AlpacaEval), and how
    much of it the reader recovered."""
    unmatched_labels: int = 0
    """``--labels`` rows that name no item of the log (counted, printed, in no figure)."""


class SequentialRecord(BaseModel):
    """A sequential design as the manifest keeps it (``card.sequential.SequentialPlan``)."""

    model_config = _MODEL

    round: int
    """Documents per look."""
    maximum: int
    """Documents at most."""
    seed: int
    """Of the document order."""


class RejectedText(BaseModel):
    """A generated text the review rejected, and who said why."""

    model_config = _MODEL

    id: str
    condition: str
    item_id: str
    note: str
    who: str
    when: str


class ReviewRecord(BaseModel):
    """What the manifest records of a run's review (``runs.review.review_state``)."""

    model_config = _MODEL

    decided: int
    """Texts decided."""
    accept: int = 0
    reject: int = 0
    edit: int = 0
    rejected_texts: list[RejectedText] = []
    """Each rejected text, with its reviewer's note."""
    edited_texts: list[str] = []
    """The ids of the texts edited."""
    rejected_judgments: int | None = None
    """The judgments the rejections leave out, when counted."""


class Manifest(BaseModel):
    """A run's ``manifest.json``, every key it may hold declared with the type it must have.

    Only ``run_id`` and ``created_at`` are in every run ever written; the rest default. Keys
    older versions wrote (``RETIRED``) are dropped on read; any other undeclared key is refused
    (``RunDir.manifest``: one line). A judge-logs run's ``config`` reads as ``LogsConfig``
    (``logs``); the other kinds' ``config`` is their own config model as dumped (the sweep's
    ``cue.config.SweepConfig``, the rubric probe's, the builder's), validated by it where read.
    """

    model_config = _MODEL

    run_id: str
    created_at: str
    kind: RunKind = "cue"
    config_digest: str = ""
    config: dict[str, Any] = {}
    """The run's config as its kind's model wrote it ({} for a logs run: see ``logs``)."""
    logs: LogsConfig | None = None
    """A judge-logs run's config (the file's ``config`` of a ``kind = "logs"`` run)."""
    seeds: list[int] = []
    determinism: str = ""
    conditions: dict[str, dict[str, Any]] = {}
    judges: list[dict[str, Any]] = []
    items: dict[str, Any] = {}  # the rubric probe's: its source and count
    spend: dict[str, Any] | None = None  # what the run spent (runs.spend), once it has run
    sequential: SequentialRecord | None = None
    """A sequential run's design (``design = "sequential"``); None for a fixed design."""
    review: ReviewRecord | None = None
    """The run's human review, once one was made."""
    retired: tuple[str, ...] = ()
    """The ``RETIRED`` keys the file held (dropped; a shard run is refused on resume)."""
    # provenance (``runs.manifest.provenance``)
    judgeprobe: str = ""
    git_revision: str | None = None
    python: str = ""
    platform: str = ""
    packages: dict[str, Any] = {}
    templates: dict[str, str] = {}
    # the cue sweep's (``cue.manifest.new_manifest``)
    protocol_templates: dict[str, Any] = {}
    budgets: dict[str, Any] = {}
    schemas: dict[str, str] = {}
    wording_templates: dict[str, Any] = {}
    own_prompts: dict[str, Any] = {}
    label_schemes: dict[str, Any] = {}
    ray: bool = False  # swept with --ray
    # the rubric probe's and the candidate builder's
    sampling: dict[str, Any] = {}
    set_version: str | None = None
    documents: int | None = None
    writers: list[dict[str, Any]] = []

    @model_validator(mode="before")
    @classmethod
    def _read_older(cls, data: Any) -> Any:
        """Retired keys dropped (and noted); a logs run's ``config`` read as ``LogsConfig``."""
        if not isinstance(data, dict):
            return data
        found = tuple(k for k in RETIRED if data.get(k))
        data = {k: v for k, v in data.items() if k not in RETIRED}
        if found:
            data["retired"] = found
        if data.get("kind") == "logs" and "config" in data:
            data["logs"] = data.pop("config")
        return data

    @property
    def task(self) -> Task:
        """The task the run's prompts and pages speak of (``prompts.task``).

        A logs run's is its formats' (older logs runs: questions and responses); an older live
        run's, the paper's.
        """
        if self.kind == "logs":
            return (self.logs.task if self.logs is not None else None) or LOGS
        found = self.config.get("task")
        return DEFAULT if found is None else Task.model_validate(found)

    @property
    def items_source(self) -> str | None:
        """The items the run judged, as its config named them; None when it names none."""
        found = self.logs.items if self.logs is not None else self.config.get("items")
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
    def win_rates(self) -> Path:
        """Each model's win rate as the log's own tool counts it (a logs run; CSV)."""
        return self.path / "win_rates.csv"

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
        """The human-calibrated estimates (``judgeprobe calibrate``) for people, one row a model.

        The card and report read ``calibrated_json``.
        """
        return self.path / "calibrated.csv"

    @property
    def calibrated_json(self) -> Path:
        """The same estimates typed (``metrics.calibrated.CalibratedFile``): what the card reads."""
        return self.path / "calibrated.json"

    @property
    def alttest(self) -> Path:
        """The alternative annotator test (``judgeprobe alttest``), one row a judge × ε."""
        return self.path / "alttest.csv"

    @property
    def alttest_annotators(self) -> Path:
        """The alt-test's per-annotator tests, one row a judge × ε × annotator."""
        return self.path / "alttest_annotators.csv"

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
            if first["type"] == "extra_forbidden":
                raise JudgeprobeError(
                    f"{self.manifest_file}: unknown key {where} (not one this judgeprobe "
                    "writes or knows as retired; written by a newer version?)"
                ) from None
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
    if "shard" in previous.retired:  # made by the retired --shard
        raise JudgeprobeError(
            f"{out} holds one shard of a sharded run; --shard is "
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
