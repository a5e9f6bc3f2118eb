"""Batch export/import: OpenAI batch JSONL out, a simulated batch run's output back in."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from tests.conftest import make_items, run_cli, write_config
from tests.fakeserver import FakeJudge, reply_for

COLUMNS = ["condition", "item_id", "order", "seed", "verdict", "explanation"]


def _batch_config(tmp_path: Path, items: Path) -> Path:
    cfg = write_config(tmp_path / "batch.toml", "http://127.0.0.1:9/v1", items)
    with cfg.open("a") as f:  # batch mode asks no server: model and backend are declared
        f.write('model = "fake-judge"\nbackend = "vllm"\n')
    return cfg


def _batch(cfg: Path, run: Path, flag: str, path: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("--config", str(cfg), "--out", str(run), flag, str(path))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def _answer(request: dict[str, Any], content: str | None, status: int = 200) -> bytes:
    """One line of a batch output file, as ``vllm run-batch`` writes it."""
    body = {
        "id": "chatcmpl-batch",
        "object": "chat.completion",
        "model": request["body"]["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100},
    }  # fmt: skip
    record = {
        "id": f"batch-{request['custom_id'][:8]}",
        "custom_id": request["custom_id"],
        "response": {
            "status_code": status,
            "request_id": "r",
            "body": body if status == 200 else None,
        },
        "error": None if status == 200 else {"code": "server_error", "message": "overloaded"},
    }
    return orjson.dumps(record) + b"\n"


def _fake_reply(request: dict[str, Any]) -> str:
    """What the fake judge would answer live to the same request."""
    body = request["body"]
    schema = body["response_format"]["json_schema"]["schema"]
    return reply_for(orjson.dumps(body["messages"][:1]).decode(), schema)


def test_batch_round_trip_equals_a_live_run(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 5)
    cfg = _batch_config(tmp_path, items)
    run, requests = tmp_path / "run", tmp_path / "requests.jsonl"

    exported = _batch(cfg, run, "--export-batch", requests)
    assert exported.returncode == 0, exported.stderr
    lines = _lines(requests)
    assert len(lines) == 5 * 4
    assert len({x["custom_id"] for x in lines}) == 20
    first = lines[0]
    assert first["method"] == "POST"
    assert first["url"] == "/v1/chat/completions"
    assert first["body"]["model"] == "fake-judge"
    assert first["body"]["temperature"] == 0.0
    assert first["body"]["response_format"]["type"] == "json_schema"

    # The batch runner answers: one reply does not conform, one line failed.
    output = tmp_path / "output.jsonl"
    output.write_bytes(
        _answer(lines[0], "I prefer the first summary.")
        + _answer(lines[1], None, status=503)
        + b"".join(_answer(x, _fake_reply(x)) for x in lines[2:])
    )
    imported = _batch(cfg, run, "--import-batch", output)
    assert imported.returncode == 3, imported.stderr  # two judgments still wait
    j = pl.read_parquet(run / "judgments.parquet")
    assert j.height == 20
    assert (j["verdict"] != "Invalid").sum() == 18

    # The next export holds exactly the re-ask and the failed line.
    again = tmp_path / "requests2.jsonl"
    assert _batch(cfg, run, "--export-batch", again).returncode == 0
    round2 = {x["custom_id"]: x for x in _lines(again)}
    assert set(round2) == {lines[0]["custom_id"] + ".reask1", lines[1]["custom_id"]}
    reask = round2[lines[0]["custom_id"] + ".reask1"]["body"]["messages"]
    assert [m["role"] for m in reask] == ["user", "assistant", "user"]
    assert "not JSON" in reask[2]["content"]
    output2 = tmp_path / "output2.jsonl"
    output2.write_bytes(b"".join(_answer(x, _fake_reply(x)) for x in round2.values()))
    done = _batch(cfg, run, "--import-batch", output2)
    assert done.returncode == 0, done.stderr

    with FakeJudge() as judge:
        live_cfg = write_config(tmp_path / "live.toml", judge.url, items)
        live = run_cli("--config", str(live_cfg), "--out", str(tmp_path / "live"))
        assert live.returncode == 0, live.stderr
    got = pl.read_parquet(run / "judgments.parquet")
    want = pl.read_parquet(tmp_path / "live" / "judgments.parquet")
    assert got.select(COLUMNS).sort(COLUMNS).equals(want.select(COLUMNS).sort(COLUMNS))
    row = got.filter(pl.col("request_key") == got["request_key"][0])
    assert row["n_requests"].item() == 1
    assert got["reasks"].sum() == 1


def test_import_errors_are_one_line(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 2)
    cfg = _batch_config(tmp_path, items)
    run = tmp_path / "run"
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text('{"custom_id": "nope", "response": {"status_code": 200, "body": {}}}\n')
    never = _batch(cfg, run, "--import-batch", bogus)
    assert never.returncode == 2
    assert "export a batch" in never.stderr

    requests = tmp_path / "requests.jsonl"
    assert _batch(cfg, run, "--export-batch", requests).returncode == 0
    stranger = _batch(cfg, run, "--import-batch", bogus)
    assert stranger.returncode == 2
    assert "no answer matches" in stranger.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    bad = _batch(cfg, run, "--import-batch", broken)
    assert bad.returncode == 2
    assert "broken.jsonl:1" in bad.stderr

    auto = write_config(tmp_path / "auto.toml", "http://127.0.0.1:9/v1", items)
    undeclared = _batch(auto, tmp_path / "r2", "--export-batch", requests)
    assert undeclared.returncode == 2
    assert "backend=" in undeclared.stderr
