"""Fault injection: every request ends valid or Invalid-with-reason, within the deadline."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from judgeprobe.engine.batch import custom_id
from judgeprobe.engine.client import Completion, converse
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.retry import HTTPStatusError, is_retryable
from judgeprobe.engine.settings import EngineConfig
from judgeprobe.engine.validate import ReplyError, parse_reply
from judgeprobe.protocols.replies import PairwiseReply
from tests.conftest import make_items, run_cli, write_config
from tests.fakeserver import FAULTS, FakeJudge


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
def test_clearable_statuses_are_retried(status: int) -> None:
    assert is_retryable(HTTPStatusError(status, "boom"))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_never_retried(status: int) -> None:
    assert not is_retryable(HTTPStatusError(status, "boom"))


@pytest.mark.parametrize(
    ("text", "finish", "reason"),
    [
        ('{"verdict": "[1,2]", "expl', "length", "truncated JSON"),
        ("Summary 1 is better.", "stop", "not JSON"),
        ('{"winner": 1}', "stop", "schema"),
        ("", "stop", "empty reply"),
    ],
)
def test_nonconforming_replies_name_the_problem(text: str, finish: str, reason: str) -> None:
    with pytest.raises(ReplyError, match=reason):
        parse_reply(text, PairwiseReply, finish)


def test_reasoning_scratchpad_and_fences_are_stripped() -> None:
    text = (
        '<think>{"verdict": "[2,1]"}</think>\n'
        '```json\n{"verdict": "[1, 2]", "explanation": "x"}\n```'
    )
    reply = parse_reply(text, PairwiseReply, "stop")
    assert reply.model_dump() == {"verdict": "[1,2]", "explanation": "x"}


def test_sweep_under_twenty_percent_faults(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 30)
    with FakeJudge(fault_rate=0.2, seed=7, stall_s=3.0) as judge:
        cfg = write_config(
            tmp_path / "c.toml", judge.url, items, engine={"sweep_deadline_s": 90.0}, order="both"
        )
        start = time.monotonic()
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        elapsed = time.monotonic() - start
        injected = dict(judge.injected)
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 90.0 + 30.0
    assert set(injected) == set(FAULTS), injected  # every kind of fault really happened
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert j.height == 30 * 4 * 2
    assert j.select(pl.struct("condition", "item_id", "order").is_unique().all()).item()
    assert set(j["verdict"].unique()) <= {"A", "B", "Tie", "Invalid"}
    invalid = j.filter(pl.col("verdict") == "Invalid")
    assert (invalid["invalid_reason"].str.len_chars() > 0).all()
    assert not invalid["invalid_reason"].str.starts_with("not run").any()
    valid = j.filter(pl.col("verdict") != "Invalid")
    assert (valid["invalid_reason"] == "").all()
    assert valid.height >= 0.9 * j.height  # retries and re-asks recover almost everything
    assert (j["attempts"] > 1).any()
    assert (j["reasks"] > 0).any()


def test_client_error_is_not_retried_and_is_recorded(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 2)
    with FakeJudge(fixed_status=400) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        sent = judge.chat_requests
    assert proc.returncode == 4, proc.stderr  # every judgment Invalid: the run is refused
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert (j["verdict"] == "Invalid").all()
    assert j["invalid_reason"].str.contains("HTTP 400").all()
    assert (j["attempts"] == 1).all()
    assert sent == j.height


def test_stuck_server_cannot_hang_the_sweep(tmp_path: Path) -> None:
    # A server that never answers, and attempts that would wait an hour each: only the
    # sweep deadline (2 s) can end this run before the CLI's own 5-minute limit kills it
    # (a limit far from any timing the machine's load could reach).
    items = make_items(tmp_path / "items.jsonl", 3)
    with FakeJudge(hang=True) as judge:
        cfg = write_config(
            tmp_path / "c.toml", judge.url, items,
            engine={"attempt_timeout_s": 3600.0, "sweep_deadline_s": 2.0},
        )  # fmt: skip
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"), timeout=300)
    assert proc.returncode == 3, proc.stderr
    j = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert j.height == 12
    assert (j["verdict"] == "Invalid").all()
    assert j["invalid_reason"].str.starts_with("not run").all()
    # The deadline says it covers sending only, before the tables and the report are made.
    said = proc.stderr.index("the deadline covers sending only")
    assert "sweep deadline (2s) reached: sending stopped" in proc.stderr
    assert said < proc.stderr.index("report: ")
    assert (tmp_path / "run" / "report.html").is_file()


# --- truncation: escalated once, never re-asked or re-sent unchanged ---------------------------


def _overlong(tmp_path: Path, reply_tokens: int, **engine: Any) -> tuple[pl.DataFrame, list[Any]]:
    """A Baseline sweep (2 items, Blind, budget 100) against a judge whose every reply takes
    ``reply_tokens``: the judgments and every chat request the judge received."""
    items = make_items(tmp_path / "items.jsonl", 2)
    with FakeJudge(reply_tokens=reply_tokens) as judge:
        engine = {"fail_invalid_rate": 1.0, **engine}  # all Invalid here is the point
        cfg = write_config(tmp_path / "c.toml", judge.url, items, engine=engine,
                           conditions=["Blind"], order="12")  # fmt: skip
        cfg.write_text(cfg.read_text() + "\n[protocol]\nbaseline_max_tokens = 100\n")
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        bodies = list(judge.bodies)
    assert proc.returncode == 0, proc.stderr
    return pl.read_parquet(tmp_path / "run" / "judgments.parquet"), bodies


def _sent_once(bodies: list[Any]) -> None:
    """No request went out twice unchanged, and none was a re-ask (one user turn each)."""
    sent = [orjson.dumps([b["messages"], b["max_tokens"]]) for b in bodies]
    assert len(set(sent)) == len(sent)
    assert all(len(b["messages"]) == 1 for b in bodies)


def test_overlong_json_is_escalated_once_with_a_larger_budget(tmp_path: Path) -> None:
    j, bodies = _overlong(tmp_path, reply_tokens=150)
    assert sorted(b["max_tokens"] for b in bodies) == [100, 100, 200, 200]
    _sent_once(bodies)
    assert (j["verdict"] != "Invalid").all()
    assert j.select("escalations", "reasks", "attempts").unique().rows() == [(1, 0, 2)]
    assert (j["completion_tokens"] == 100 + 150).all()  # the cut reply's tokens count too
    costs = (tmp_path / "run" / "report.md").read_text()
    assert "escalations" in costs
    assert "reasks" in costs


def test_a_reply_cut_again_after_escalation_is_invalid(tmp_path: Path) -> None:
    j, bodies = _overlong(tmp_path, reply_tokens=1000)
    assert sorted(b["max_tokens"] for b in bodies) == [100, 100, 200, 200]
    _sent_once(bodies)
    assert (j["verdict"] == "Invalid").all()
    assert j["invalid_reason"].str.contains("truncated JSON").all()
    assert j["invalid_reason"].str.ends_with("at 200 tokens, after one escalation").all()
    assert j.select("escalations", "reasks", "attempts").unique().rows() == [(1, 0, 2)]


def test_a_budget_at_the_cap_is_not_escalated(tmp_path: Path) -> None:
    j, bodies = _overlong(tmp_path, reply_tokens=150, max_tokens_cap=100)
    assert [b["max_tokens"] for b in bodies] == [100, 100]
    assert j["invalid_reason"].str.ends_with("the cap; not escalated").all()
    assert j.select("escalations", "reasks", "attempts").unique().rows() == [(0, 0, 1)]


def test_converse_escalates_the_same_conversation_and_names_its_batch_line() -> None:
    calls: list[tuple[list[dict[str, str]], int, int]] = []

    async def send(messages: list[dict[str, str]], round_: int, max_tokens: int) -> Completion:
        calls.append(([dict(m) for m in messages], round_, max_tokens))
        if max_tokens < 200:
            return Completion('{"verdict": "[1,2]", "expla', "length", 50, 100)
        return Completion('{"verdict": "[1,2]", "explanation": "x"}', "stop", 50, 30)

    schema = PairwiseReply.model_json_schema()
    req = Request("e", ({"role": "user", "content": "Judge."},), "pairwise_verdict", schema,
                  PairwiseReply, Sampling(max_tokens=100), 0, "fp")  # fmt: skip
    result = asyncio.run(converse(req, send, EngineConfig(), "m", "e"))
    assert [(round_, budget) for _, round_, budget in calls] == [(0, 100), (0, 200)]
    assert calls[0][0] == calls[1][0] == [{"role": "user", "content": "Judge."}]
    assert (result.status, result.escalations, result.reasks, result.attempts) == ("valid", 1, 0, 2)
    assert result.completion_tokens == 130
    assert custom_id(req.key, 0, 200) == f"{req.key}.max200"  # a batch line of its own
