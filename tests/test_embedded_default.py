"""The default sweep judges with whichever embedded judge is up (``make serve-gemma && run``)."""

from __future__ import annotations

import socket

from judgeprobe.cue.config import SweepConfig, load_config
from judgeprobe.cue.embedded import answers, running_judge
from judgeprobe.runs.config import EMBEDDED, EmbeddedJudge
from servers import embedded as launcher
from tests.fakeserver import FakeJudge


def _closed_url() -> str:
    """A local URL nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _on(cfg: SweepConfig, url: str) -> SweepConfig:
    """``cfg`` with its one judge at ``url``."""
    return cfg.model_copy(update={"judges": (cfg.judges[0].model_copy(update={"url": url}),)})


def test_answers_tells_a_server_from_a_closed_port() -> None:
    with FakeJudge() as judge:
        assert answers(judge.url)
    assert not answers(_closed_url())
    assert not answers("not a url")


def test_the_default_judge_is_kept_when_it_answers() -> None:
    cfg = load_config(None)
    with FakeJudge() as judge:
        up = _on(cfg, judge.url)
        other = EmbeddedJudge("gemma3-270m", judge.url, "make serve-gemma")
        kept, message = running_judge(up, (other,))
    assert kept is up
    assert message == ""


def test_another_running_embedded_judge_replaces_a_stopped_default() -> None:
    cfg = load_config(None)
    down = _on(cfg, _closed_url())
    with FakeJudge() as judge:
        listed = (
            EmbeddedJudge("qwen2.5-coder-1.5b", _closed_url(), "make serve-qwen15"),
            EmbeddedJudge("gemma3-270m", judge.url, "make serve-gemma"),
        )
        picked, message = running_judge(down, listed)
    assert [(j.name, j.url) for j in picked.judges] == [("gemma3-270m", judge.url)]
    assert picked.judges[0].concurrency == cfg.judges[0].concurrency  # the default's settings
    assert picked.name == "default-gemma3-270m"  # its own run directory
    assert picked.digest() != cfg.digest()
    assert "not running" in message
    assert "gemma3-270m" in message


def test_nothing_running_leaves_the_default_for_the_probe_to_explain() -> None:
    cfg = load_config(None)
    down = _on(cfg, _closed_url())
    listed = (EmbeddedJudge("gemma3-270m", _closed_url(), "make serve-gemma"),)
    assert running_judge(down, listed) == (down, "")


def test_the_list_matches_the_launcher_and_the_default_config() -> None:
    served = {m.alias: (f"http://127.0.0.1:{m.port}/v1", f"make serve-{key}")
              for key, m in launcher.MODELS.items()}  # fmt: skip
    assert {j.name: (j.url, j.serve) for j in EMBEDDED} == served
    default = load_config(None).judges[0]
    assert (default.name, default.url) == (EMBEDDED[0].name, EMBEDDED[0].url)
