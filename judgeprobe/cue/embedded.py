"""The embedded CPU judges (``servers/embedded.py``) as the default sweep finds them.

``make serve-gemma && python -m judgeprobe.run`` must judge with whichever embedded judge is
up, not fail because the default one (Qwen 0.5B, chosen by ``bench/judge_choice.py``) is
down. So a sweep run with neither ``--config`` nor ``--judge`` keeps the default judge when it
answers, and otherwise takes the first embedded judge that does, saying so; the run then goes
to its own directory (``runs/default-<judge>``), so runs on different judges never meet.
"""

from __future__ import annotations

import urllib.error
import urllib.request

from judgeprobe.cue.config import SweepConfig
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.runs.config import EMBEDDED, EmbeddedJudge, with_overrides


def answers(url: str, timeout_s: float = 2.0) -> bool:
    """Whether an OpenAI-compatible server answers ``GET {url}/models`` (any 2xx)."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/models", timeout=timeout_s) as reply:
            status: int = reply.status
            return 200 <= status < 300
    except (OSError, ValueError):  # refused, timed out, reset, HTTP error, bad URL
        return False


def running_judge(
    cfg: SweepConfig, embedded: tuple[EmbeddedJudge, ...] = EMBEDDED
) -> tuple[SweepConfig, str]:
    """``cfg`` (the default sweep) on the embedded judge that is up, and what was decided.

    Unchanged when its own judge answers or when no other embedded judge does (the start-up
    probe then says how to start the default one); the message is empty unless the judge
    changed.
    """
    if len(cfg.judges) != 1 or answers(cfg.judges[0].url):
        return cfg, ""
    default = cfg.judges[0]
    for judge in embedded:
        if judge.name != default.name and answers(judge.url):
            base = default.model_dump(exclude={"name", "url", "urls", "url_credentials"})
            picked = JudgeConfig.model_validate(
                {**base, "name": judge.name, "url": judge.url, "serve": judge.serve}
            )
            update = {"name": f"{cfg.name}-{judge.name}", "judges": [picked]}
            message = (
                f"the default judge {default.name} is not running at {default.url}; judging "
                f"with {judge.name}, the embedded judge running at {judge.url} "
                f"(start the default one with `{default.serve or 'make serve'}`)"
            )
            return with_overrides(cfg, update), message
    return cfg, ""
