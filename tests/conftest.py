"""Shared helpers: synthetic items, config files, the fake judge server, the review server."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.fakeserver import FakeJudge

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = [sys.executable, str(ROOT / "servers" / "embedded.py")]


def make_items(path: Path, n: int) -> Path:
    """Write n synthetic candidate items (JSONL) and return the path."""
    rows = [
        {
            "item_id": f"doc-{i:04d}",
            "subset": "synthetic",
            "document": f"Document {i}. " + "The committee met and agreed on a budget. " * 5,
            "candidate_1": f"Summary one of document {i}: the committee agreed a budget.",
            "candidate_2": f"Summary two of document {i}: a budget was agreed.",
            "source_1": "LLM",
            "source_2": "TradML",
        }
        for i in range(n)
    ]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


TOWNS = [("Leeds", 42, 3, "Jane Smith"), ("York", 17, 8, "Omar Khan"),
         ("Bath", 65, 12, "Ruth Lee"), ("Hull", 23, 5, "Tom Ward")]  # fmt: skip


def town_items(path: Path, extra: str = "") -> Path:
    """Four items with numbers and names (so a degraded copy has a fact to change); ``extra``
    ends every document and candidate."""
    rows = []
    for i, (town, homes, budget, mayor) in enumerate(TOWNS):
        rows.append({
            "item_id": f"doc-{i}", "subset": "towns",
            "document": f"{town} council met on Tuesday. It approved {homes} new homes and a "
                        f"budget of {budget} million pounds. The mayor, {mayor}, said the plan "
                        f"would not raise taxes. Work starts in {2020 + i}.{extra}",
            "candidate_1": f"The council approved {homes} new homes and a {budget} million pound "
                           f"budget; {mayor} said taxes would not rise.{extra}",
            "candidate_2": f"{town} council backed new homes and a budget, the mayor said.{extra}",
            "source_1": "LLM", "source_2": "TradML",
        })  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def toml_value(value: Any) -> str:
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return str(value)


def write_config(
    path: Path, judge_url: str, items: Path | str, engine: dict[str, Any] | None = None, **top: Any
) -> Path:
    """A sweep config against one judge called ``fake``.

    Unless a test says otherwise, the four cue conditions in one order per item (no ``swap``):
    the design these tests count judgments in, whatever the default sweep's is.
    """
    top = {"conditions": ["Blind", "True", "Flip", "Placebo"], "swap": 0.0, **top}
    lines = [f"items = {toml_value(str(items))}"]
    lines += [f"{k} = {toml_value(v)}" for k, v in top.items()]
    lines += ["", "[engine]"]
    engine = {
        "attempt_timeout_s": 1.0,
        "backoff_base_s": 0.01,
        "backoff_cap_s": 0.2,
        **(engine or {}),
    }
    lines += [f"{k} = {toml_value(v)}" for k, v in engine.items()]
    lines += [
        "",
        "[[judges]]",
        'name = "fake"',
        f"url = {toml_value(judge_url)}",
        "concurrency = 8",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``python -m judgeprobe.run`` as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe.run", "--no-progress", *args],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )  # fmt: skip


@pytest.fixture
def fake_judge() -> Iterator[FakeJudge]:
    with FakeJudge() as judge:
        yield judge


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(name: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start an embedded judge on a spare port with the launcher `make serve-NAME` uses."""
    state = tmp_path_factory.mktemp("servers")
    env = {"JUDGEPROBE_SERVER_DIR": str(state), "PATH": "/usr/bin:/bin"}
    up = subprocess.run(
        [*LAUNCHER, "start", name, "--port", str(_free_port()), "--wait", "600"],
        capture_output=True, text=True, env=env, timeout=660,
    )  # fmt: skip
    assert up.returncode == 0, f"embedded judge {name} did not start: {up.stderr}"
    try:
        yield up.stdout.strip()
    finally:
        subprocess.run([*LAUNCHER, "stop", name], env=env, capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def embedded_judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Gemma 3 270M: the fastest embedded judge, for the plumbing tests (its verdicts are
    nearly all Tie, which those tests do not need to be otherwise)."""
    yield from _serve("gemma", tmp_path_factory)


@pytest.fixture(scope="session")
def qwen_judge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Qwen2.5-Coder 0.5B Instruct: an embedded judge that gives real verdicts."""
    yield from _serve("qwen05", tmp_path_factory)


@contextmanager
def review_server(run: Path, reviewer: str = "ada") -> Iterator[str]:
    """``judgeprobe review RUN`` on a free port until the block ends; its URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgeprobe", "review", str(run), "--port", str(port),
         "--reviewer", reviewer],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(600):
            if proc.poll() is not None:
                raise AssertionError(f"judgeprobe review exited: {proc.communicate()[1][-2000:]}")
            try:
                with urllib.request.urlopen(url, timeout=5) as reply:
                    assert reply.status == 200
                    break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        else:
            raise AssertionError("judgeprobe review did not answer in 60 s")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
