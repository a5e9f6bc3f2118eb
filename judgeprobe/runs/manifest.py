"""What every run's manifest records of its making: version, revision, packages, templates.

The cue sweep, the rubric probe and the candidate builder each add what is theirs
(``judgeprobe.cue.manifest`` and friends) to ``provenance``. Never a secret.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import time
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from judgeprobe import __version__
from judgeprobe.engine.client import Endpoint
from judgeprobe.prompts import load_template
from judgeprobe.prompts.task import DEFAULT, Task

PACKAGES = (
    "openai",
    "polars",
    "pydantic",
    "tenacity",
    "orjson",
    "rich",
    "asyncio-throttle",
    "httpx",
)


def public_url(url: str) -> str:
    """Drop any user:password@ part of a URL."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def server_record(name: str, endpoint: Endpoint) -> dict[str, Any]:
    """A probed server as the rubric and candidate manifests list it.

    Its name, bare URL, what the server said of itself, and its fingerprint.
    """
    return {
        "name": name,
        "url": public_url(endpoint.judge.url),
        **endpoint.info.details,
        "fingerprint": endpoint.info.fingerprint,
    }


def _git_revision() -> str:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def _versions() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = ""
    return found


def provenance(
    kind: str, config_digest: str, templates: Iterable[str], task: Task = DEFAULT
) -> dict[str, Any]:
    """What made a run of ``kind``.

    When, which judgeprobe (version, revision, packages), on which Python and platform, with
    which config digest and prompt templates (by hash of their text in ``task``'s words).
    """
    return {
        "kind": kind,
        "config_digest": config_digest,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "judgeprobe": __version__,
        "git_revision": _git_revision(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": _versions(),
        "templates": {name: load_template(name, task).sha256 for name in sorted(set(templates))},
    }
