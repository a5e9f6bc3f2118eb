"""A run directory: its exit codes, its manifest, and the checks made before it is written.

Every command that writes a run (the cue sweep, the rubric probe) checks its output
path and any earlier run there before a server is asked anything, so a bad path or a
mismatched resume never costs a probe or leaves half a run.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from judgeprobe import JudgeprobeError
from judgeprobe.core.cli import PROG
from judgeprobe.engine.store import Store

EXIT_BAD_INPUT = 2  # one `error:` line on stderr, nothing written
EXIT_INCOMPLETE = 3  # the sweep deadline stopped sending, or batch answers are pending
EXIT_UNRELIABLE = 4  # a judge's Invalid share is above [engine] fail_invalid_rate
EXIT_INTERRUPTED = 130


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


def read_manifest(out: Path) -> dict[str, Any] | None:
    """A run directory's manifest; None when there is none or it is unreadable."""
    try:
        data = orjson.loads((out / "manifest.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def check_run_dir(out: Path, resume: bool, digest: str, what: str = "run") -> None:
    """Refuse to overwrite a run, or to resume one made with another config."""
    if not (out / "manifest.json").exists():
        return
    if not resume:
        raise JudgeprobeError(
            f"{out} already holds a {what}; pass --resume to continue it or choose another --out"
        )
    previous = read_manifest(out) or {}
    if previous.get("config_digest") != digest:
        raise JudgeprobeError(
            f"{out} was made with a different config; resume it with the same config "
            "or choose another --out"
        )
    if previous.get("shard"):  # made by the retired --shard
        raise JudgeprobeError(
            f"{out} holds one shard of a sharded run ({previous['shard']}); --shard is "
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
        return Store(out / "store.sqlite")
    except (OSError, sqlite3.Error) as exc:
        raise JudgeprobeError(f"--out {out}: cannot write the run there ({exc})") from None
