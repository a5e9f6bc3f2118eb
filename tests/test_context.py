"""The plan-time context check: a prompt that a judge's served context cannot take is
refused with one line before anything is written, on every backend that reports a context
(TGI ``/info``, vLLM ``max_model_len`` in ``/v1/models``, llama-server ``/props``), by that
server's own rule. Before the check, such a sweep ran and ended those judgments Invalid
with the server's 4xx (TGI 422 "`inputs` must have less than …", vLLM 400 "maximum context
length …"), or cut them short on llama-server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from aiohttp import web

from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.item_selection import sweep_items
from judgeprobe.cue.preflight import first_requests
from judgeprobe.cue.stream import protocols_for
from judgeprobe.engine.context import Limit
from tests.conftest import make_items, run_cli, write_config
from tests.fake_tgi import FakeTGI, tokens
from tests.fake_vllm import FakeVLLM, _template
from tests.fakeserver import FakeJudge


def items_with_a_long_one(path: Path, words: int) -> Path:
    """Three short items and a fourth whose document runs to ``words`` words."""
    make_items(path, 4)
    rows = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    rows[3]["document"] = "The committee met again. " * (words // 4)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def _refusal(proc: Any, out: Path) -> str:
    assert proc.returncode == 2, proc.stderr
    assert not out.exists()  # nothing written
    return str(proc.stderr.strip().splitlines()[-1])


def test_tgi_rule() -> None:
    tgi = Limit(8192, 7168, "TGI", reply_cap=1024)
    assert tgi.fits(7168, 1024)
    assert not tgi.fits(7169, 16)
    assert tgi.fits(7000, 4096)  # TGI counts only the first 1024 of max_tokens
    assert not Limit(8192, None, "vLLM").fits(7000, 1193)


def test_tgi_refuses_a_prompt_over_max_input_tokens(tmp_path: Path) -> None:
    items = items_with_a_long_one(tmp_path / "items.jsonl", 800)
    with FakeTGI(max_input_tokens=500, max_total_tokens=4096) as tgi:
        cfg = write_config(tmp_path / "c.toml", tgi.url, items)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        counted, rejected = tgi.tokenized, list(tgi.rejected)
    line = _refusal(proc, tmp_path / "run")
    assert line.startswith("error: judge fake: 4 of 16 prompts do not fit the context it serves")
    assert "(TGI /info: max_input_tokens 500, max_total_tokens 4096)" in line
    assert "item doc-0003 (baseline, " in line
    assert "approximated" not in line
    assert counted > 0
    assert rejected == []  # counted by TGI's /chat_tokenize, none sent


def test_vllm_refuses_a_prompt_whose_reply_would_not_fit(tmp_path: Path) -> None:
    items = items_with_a_long_one(tmp_path / "items.jsonl", 800)
    with FakeVLLM(max_model_len=1200) as vllm:
        cfg = write_config(tmp_path / "c.toml", vllm.url, items)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    line = _refusal(proc, tmp_path / "run")
    assert "(/v1/models: max_model_len 1200)" in line
    assert "item doc-0003" in line


def _largest_need(cfg: SweepConfig) -> tuple[int, int]:
    """The largest prompt + reply of the sweep: by the fake's tokenizer, and by UTF-8 size."""
    conditions = __import__(
        "judgeprobe.cue.config", fromlist=["sweep_conditions"]
    ).sweep_conditions(cfg)
    reqs = asyncio.run(first_requests(cfg, protocols_for(cfg), sweep_items(cfg), conditions))
    exact = max(len(tokens(_template(r.messages))) + r.max_tokens for r in reqs)
    return exact, max(r.size + r.max_tokens for r in reqs)


def test_prompts_that_fit_are_counted_only_when_their_size_could_not_prove_it(
    tmp_path: Path,
) -> None:
    items = make_items(tmp_path / "items.jsonl", 2)
    cfg_path = write_config(tmp_path / "c.toml", "http://127.0.0.1:1/v1", items)
    exact, by_size = _largest_need(SweepConfig.model_validate({"items": str(items)}))
    assert exact < by_size
    runs = {}
    for name, limit in (("roomy", by_size), ("tight", exact)):
        with FakeVLLM(max_model_len=limit) as vllm:
            cfg = write_config(cfg_path, vllm.url, items)
            proc = run_cli("--config", str(cfg), "--out", str(tmp_path / name))
            runs[name] = (proc.returncode, proc.stderr, vllm.tokenized, list(vllm.rejected))
    assert runs["roomy"][0] == 0, runs["roomy"]
    assert runs["roomy"][2] == 0, runs["roomy"]  # nothing to count
    assert runs["tight"][0] == 0, runs["tight"]
    assert runs["tight"][2] > 0, runs["tight"]  # counted, all fit
    assert runs["tight"][3] == []  # and vLLM took every request
    frame = pl.read_parquet(tmp_path / "tight" / "judgments.parquet")
    assert (frame["verdict"] != "Invalid").all()


class FakeLlamaServer(FakeJudge):
    """llama-server's routes the check uses: ``/props`` (``n_ctx`` per slot),
    ``/apply-template`` and ``/tokenize``; it refuses a prompt of ``n_ctx`` tokens or more
    (400 "the request exceeds the available context size")."""

    def __init__(self, n_ctx: int) -> None:
        super().__init__()
        self.n_ctx = n_ctx

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/props", self._props)
        app.router.add_post("/apply-template", self._apply)
        app.router.add_post("/tokenize", self._tokenize)
        app.router.add_post("/v1/chat/completions", self._llama_chat)
        return app

    async def _props(self, _: web.Request) -> web.Response:
        settings = {"n_ctx": self.n_ctx}
        body = {"default_generation_settings": settings, "build_info": "b0-fake"}
        return web.json_response({**body, "model_path": "/m/fake.gguf", "total_slots": 4})

    async def _apply(self, request: web.Request) -> web.Response:
        messages = orjson.loads(await request.read())["messages"]
        return web.json_response({"prompt": _template(messages)})

    async def _tokenize(self, request: web.Request) -> web.Response:
        found = tokens(orjson.loads(await request.read())["content"])
        return web.json_response({"tokens": list(range(len(found)))})

    async def _llama_chat(self, request: web.Request) -> web.StreamResponse:
        body = orjson.loads(await request.read())
        if len(tokens(_template(body["messages"]))) >= self.n_ctx:
            error = {"code": 400, "message": "the request exceeds the available context size"}
            return web.json_response({"error": error}, status=400)
        return await self._chat(request)


@pytest.mark.parametrize("n_ctx", [1200])
def test_llama_server_refuses_past_its_slot_context(tmp_path: Path, n_ctx: int) -> None:
    items = items_with_a_long_one(tmp_path / "items.jsonl", 800)
    with FakeLlamaServer(n_ctx) as llama:
        cfg = write_config(tmp_path / "c.toml", llama.url, items)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    line = _refusal(proc, tmp_path / "run")
    assert f"(llama-server /props: n_ctx {n_ctx} per slot)" in line
    assert "doc-0003" in line
