"""judgeprobe against TGI 3.3, through a fake that enforces TGI's own request validation.

The rules the fake copies from text-generation-inference v3.3.6 (``router/src/lib.rs``
``ChatRequest`` and ``try_into_generate``, ``router/src/validation.rs`` ``validate``,
``router/src/server.rs`` routes and error bodies) are listed in ``tests/fake_tgi.py``; the
first tests here pin the ones judgeprobe depends on, so the fake cannot drift into
accepting what TGI refuses.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from judgeprobe.engine.client import ServerInfo, chat_body
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.protocols.replies import PairwiseReply
from tests.conftest import make_items, run_cli, toml_value, write_config
from tests.fake_tgi import FakeTGI
from tests.fake_vllm import FakeVLLM

SCHEMA = PairwiseReply.model_json_schema()


def _post(url: str, body: dict[str, Any]) -> tuple[int, str]:
    """POST a chat request; the status and the body text."""
    req = urllib.request.Request(
        f"{url}/chat/completions", orjson.dumps(body), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _body(**extra: Any) -> dict[str, Any]:
    return {
        "model": "tgi",
        "messages": [{"role": "user", "content": "Which summary is better?"}],
        "max_tokens": 64,
        "response_format": {"type": "json", "value": SCHEMA},
        **extra,
    }


# --- the fake enforces TGI's rules ----------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"top_p": 1.0}, "`top_p` must be > 0.0 and < 1.0"),
        ({"top_p": 0.0}, "`top_p` must be > 0.0 and < 1.0"),
        ({"temperature": -0.5}, "`temperature` must be strictly positive"),
        ({"presence_penalty": -2.0}, "`repetition_penalty` must be strictly positive"),
        ({"max_tokens": 0}, "`max_new_tokens` must be strictly positive"),
        ({"seed": -1}, "Failed to deserialize"),
        (
            {"response_format": {"type": "json_schema", "json_schema": {"schema": SCHEMA}}},
            "missing field `value`",
        ),
        ({"response_format": {"type": "json", "value": {"type": "object"}}}, "'properties'"),
    ],
)
def test_fake_rejects_what_tgi_rejects(extra: dict[str, Any], message: str) -> None:
    with FakeTGI() as tgi:
        status, text = _post(tgi.url, _body(**extra))
    assert status == 422
    assert message in text


@pytest.mark.parametrize(
    "extra",
    [
        {"temperature": 0.0, "seed": 0},
        {"temperature": 1.0, "top_p": 0.95, "presence_penalty": -0.85},
        {"response_format": {"type": "json_object", "value": SCHEMA}},
        {"response_format": {"type": "json_schema", "value": {"name": "v", "schema": SCHEMA}}},
        {"repetition_penalty": 1.15, "chat_template_kwargs": {"x": 1}},  # ignored, not refused
    ],
)
def test_fake_accepts_what_tgi_accepts(extra: dict[str, Any]) -> None:
    with FakeTGI() as tgi:
        status, text = _post(tgi.url, _body(**extra))
        received = tgi.received
    assert status == 200, text
    PairwiseReply.model_validate_json(orjson.loads(text)["choices"][0]["message"]["content"])
    assert received[0]["repetition_penalty"] == pytest.approx(
        1.15 if extra.get("presence_penalty") else 1.0
    )  # a top-level repetition_penalty never reaches the model


def test_fake_checks_the_context_as_tgi_does() -> None:
    with FakeTGI(max_input_tokens=50, max_total_tokens=80) as tgi:
        long = _body(messages=[{"role": "user", "content": "word " * 60}])
        too_long = _post(tgi.url, {**long, "max_tokens": 4})
        no_room = _post(tgi.url, _body(max_tokens=79))
    assert too_long == (422, too_long[1])
    assert "`inputs` must have less than 50" in too_long[1]
    assert no_room[0] == 422
    assert "`max_new_tokens` must be <= 80" in no_room[1]


# --- what judgeprobe sends ------------------------------------------------------------------


def _request(sampling: Sampling) -> Request:
    return Request(
        endpoint="j",
        messages=({"role": "user", "content": "x"},),
        schema_name="pairwise",
        schema=SCHEMA,
        reply_model=PairwiseReply,
        sampling=sampling,
        seed=0,
        fingerprint="f",
    )


def sent_body(backend: str, sampling: Sampling) -> dict[str, Any]:
    info = ServerInfo(backend=backend, model="m", fingerprint="f")
    judge = JudgeConfig(name="j", url="http://127.0.0.1:1/v1")
    req = _request(sampling)
    return chat_body(req, list(req.messages), info, judge)


def test_default_sampling_leaves_top_p_out_on_tgi_only() -> None:
    assert "top_p" not in sent_body("tgi", Sampling())
    assert sent_body("tgi", Sampling(temperature=1.0, top_p=0.9))["top_p"] == 0.9
    for backend in ("vllm", "llama-server", "openai"):
        assert sent_body(backend, Sampling())["top_p"] == 1.0


def test_probe_and_sweep_pass_on_tgi(tmp_path: Path) -> None:
    """The default (greedy) sweep: before the fix every request carried top_p 1.0 and TGI
    refused the start-up probe with HTTP 422."""
    items = make_items(tmp_path / "items.jsonl", 3)
    with FakeTGI() as tgi:
        cfg = write_config(tmp_path / "c.toml", tgi.url, items, protocols=["baseline", "scot"])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        rejected, received = list(tgi.rejected), list(tgi.received)
    assert proc.returncode == 0, proc.stderr
    assert "(tgi," in proc.stderr  # detected from /info
    assert rejected == []
    frame = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert frame.height == 3 * 4 * 2
    assert (frame["verdict"] != "Invalid").all()
    # greedy (temperature 0 → do_sample false), seeded, schema-constrained, no nucleus cut
    assert len(received) >= frame.height
    assert all(r["do_sample"] is False and r["top_p"] == 1.0 for r in received)
    assert all(r["grammar"] == "json" and r["seed"] == 0 for r in received)
    manifest = orjson.loads((tmp_path / "run" / "manifest.json").read_bytes())
    (judge,) = manifest["judges"]
    assert judge["backend"] == "tgi"
    assert "top_p" not in judge["sampling"]["sent"]
    assert any(note.startswith("top_p 1.0 left out") for note in judge["sampling"]["mapped"])


def sweep_config(
    path: Path,
    url: str,
    items: Path,
    judge: dict[str, Any] | None = None,
    sampling: dict[str, Any] | None = None,
    **top: Any,
) -> Path:
    """``write_config`` plus settings of the judge ``fake`` and a ``[sampling]`` table."""
    write_config(path, url, items, **top)
    lines = [f"{k} = {toml_value(v)}" for k, v in (judge or {}).items()]
    if sampling:
        lines += ["", "[sampling]", *(f"{k} = {toml_value(v)}" for k, v in sampling.items())]
    path.write_text(path.read_text() + "\n".join(lines) + "\n")
    return path


PAPER = {"temperature": 1.0, "top_p": 0.95, "repetition_penalty": 1.15}


def test_repetition_penalty_reaches_tgi(tmp_path: Path) -> None:
    """TGI's chat API has no repetition_penalty field and ignores unknown fields: before the
    fix the paper's 1.15 was dropped silently (TGI ran with 1.0)."""
    items = make_items(tmp_path / "items.jsonl", 2)
    with FakeTGI() as tgi:
        cfg = sweep_config(tmp_path / "c.toml", tgi.url, items, sampling=PAPER, seeds=[0, 1])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        received = list(tgi.received)
    assert proc.returncode == 0, proc.stderr
    sweep = [r for r in received if r["schema"]["title"] != "probe"]
    assert len(sweep) == 2 * 4 * 2
    for r in sweep:
        assert r["do_sample"] is True
        assert r["temperature"] == 1.0
        assert r["top_p"] == pytest.approx(0.95)
        assert r["repetition_penalty"] == pytest.approx(1.15)
    assert {r["seed"] for r in sweep} == {0, 1}
    manifest = orjson.loads((tmp_path / "run" / "manifest.json").read_bytes())
    sent = manifest["judges"][0]["sampling"]
    assert sent["sent"] == {
        "temperature": 1.0, "top_p": 0.95, "presence_penalty": -0.85, "seed": [0, 1]
    }  # fmt: skip
    assert any("sent as presence_penalty -0.85" in note for note in sent["mapped"])


def test_disable_thinking_is_refused_on_tgi(tmp_path: Path) -> None:
    """TGI 3.3's ChatRequest has no chat_template_kwargs: the switch would be dropped."""
    said = refused_on_tgi(tmp_path, {"disable_thinking": True})
    assert said.strip().splitlines()[-1].startswith("error: judge fake: disable_thinking")


def refused_on_tgi(tmp_path: Path, judge: dict[str, Any]) -> str:
    """A one-item sweep of a TGI judge with ``judge``'s settings, refused before any run
    directory exists (exit 2): its stderr."""
    items = make_items(tmp_path / "items.jsonl", 1)
    with FakeTGI() as tgi:
        cfg = sweep_config(tmp_path / "c.toml", tgi.url, items, judge=judge)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    assert proc.returncode == 2
    assert not (tmp_path / "run").exists()
    return proc.stderr


def test_the_servers_readme_smoke_requests_are_valid() -> None:
    """servers/README.md's hand-made requests: the vLLM one (OpenAI's json_schema form) is
    what TGI refuses; the TGI one is TGI's grammar form, accepted as it is."""
    readme = (Path(__file__).resolve().parents[1] / "servers" / "README.md").read_text()
    vllm_body, tgi_body = (orjson.loads(b) for b in re.findall(r"-d '(\{.*?\})'", readme, re.S))
    with FakeTGI() as tgi:
        assert _post(tgi.url, tgi_body)[0] == 200
        assert _post(tgi.url, vllm_body)[0] == 422
    with FakeVLLM() as vllm:
        assert _post(vllm.url, vllm_body)[0] == 200
