"""The run manifest: everything needed to know what produced a run. Never a secret."""

from __future__ import annotations

import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from judgeprobe import __version__
from judgeprobe.conditions import Condition
from judgeprobe.config import SweepConfig
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.session import schema_of
from judgeprobe.engine.wire import sampling_record
from judgeprobe.files import content_hash
from judgeprobe.plan import protocols_for
from judgeprobe.prompts import load_template
from judgeprobe.protocols import replies, templates_hash
from judgeprobe.protocols.reveal import reveal_templates

REPLY_MODELS = (
    replies.PairwiseReply,
    replies.ScotReply,
    replies.LockReply,
    replies.ScoreReply,
    replies.RankReply,
)

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


def new_manifest(
    run_id: str,
    cfg: SweepConfig,
    endpoints: dict[str, Endpoint],
    conditions: dict[str, Condition],
) -> dict[str, Any]:
    """The run's manifest: everything needed to reproduce or audit the sweep."""
    protocols = protocols_for(cfg)
    names = {t for p in protocols.values() for t in p.templates}
    names |= {t for name in protocols for t in reveal_templates(name)}
    return {
        "run_id": run_id,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "judgeprobe": __version__,
        "git_revision": _git_revision(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": _versions(),
        "config_digest": cfg.digest(),
        "config": cfg.model_dump(mode="json"),
        "seeds": cfg.seeds,
        "determinism": cfg.sampling.determinism(
            cfg.seeds[0], all(j.batch_invariant for j in cfg.judges)
        ),  # the level every judge reaches; per judge under judges[]
        "templates": {name: load_template(name).sha256 for name in sorted(names)},
        "protocol_templates": {n: templates_hash(p.templates) for n, p in protocols.items()},
        "budgets": {n: dict(p.budgets) for n, p in protocols.items()},  # max_tokens per stage
        "schemas": {str(schema_of(m)["title"]): content_hash(schema_of(m)) for m in REPLY_MODELS},
        "conditions": {name: conditions[name].model_dump() for name in cfg.conditions},
        "judges": [
            {
                "name": name,
                "url": public_url(ep.judge.url),
                "api_key_env": ep.judge.api_key_env,
                "backend": ep.info.backend,
                "model": ep.info.model,
                "fingerprint": ep.info.fingerprint,
                "server": ep.info.details,
                "sampling": sampling_record(ep.info.backend, cfg.sampling, cfg.seeds),
                "determinism": cfg.sampling.determinism(cfg.seeds[0], ep.judge.batch_invariant),
            }
            for name, ep in endpoints.items()
        ],
    }
