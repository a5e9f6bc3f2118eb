"""Verdicts and scores read from the first token's log-probabilities (``protocols.logprobs``):
the readout, the request form each backend takes (against each fake server, which validates
it as the server does), the start-up refusal, and a whole sweep down to ``prob_shift``."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path

import orjson
import polars as pl
import pytest
from pydantic import BaseModel

from judgeprobe import JudgeprobeError
from judgeprobe.card.from_run import card_for_run
from judgeprobe.engine import client
from judgeprobe.engine.cached import schema_of
from judgeprobe.engine.client import Endpoint, ServerInfo, chat_body, parse_completion
from judgeprobe.engine.probe import probe_endpoint
from judgeprobe.engine.request import Message, Request, Sampling
from judgeprobe.engine.settings import (
    ClusterEngine,
    EngineConfig,
    JudgeConfig,
    ScoreFormat,
    VerdictFormat,
)
from judgeprobe.engine.store import Result
from judgeprobe.engine.validate import ReplyError, parse_reply
from judgeprobe.engine.wire import logprob_fields
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.metrics.units import prob_units
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.logprobs import read_verdict, score_model, verdict_model, weighted_score
from judgeprobe.protocols.pointwise import own_scorer
from judgeprobe.report.headline import prob_sentences
from judgeprobe.runs.ray import check_engines
from judgeprobe.selftest.__main__ import main as selftest_main
from tests.conftest import make_items, run_cli, write_config
from tests.fake_tgi import FakeTGI
from tests.fake_vllm import FakeVLLM
from tests.fakeserver import FIRST_TOKENS, FakeJudge

MM = VerdictFormat.model_validate({"logprobs": {"m": "1", "M": "2"}})
WITH_TIE = VerdictFormat.model_validate({"logprobs": {"A": "1", "B": "2", "C": "tie"}})


def _top(**probs: float) -> tuple[tuple[str, float], ...]:
    return tuple((t.replace("_", " "), math.log(p)) for t, p in probs.items())


def test_whitespace_equal_tokens_are_summed_and_normalised_over_the_verdicts() -> None:
    top = (("M", math.log(0.3)), (" M", math.log(0.1)), ("m", math.log(0.2)), ("The", -1.0))
    got = read_verdict(MM, top, "M")
    assert got["verdict"] == "[2,1]"
    assert got["prob_1"] == pytest.approx(0.2 / 0.6)
    assert got["prob_2"] == pytest.approx(0.4 / 0.6)
    assert got["prob_tie"] is None


def test_a_tie_token_and_equal_probabilities() -> None:
    got = read_verdict(WITH_TIE, _top(A=0.2, B=0.2, C=0.5), "C")
    assert (got["verdict"], got["prob_tie"]) == ("Tie", pytest.approx(0.5 / 0.9))
    even = read_verdict(MM, (("m", -0.7), ("M", -0.7)), "m")
    assert (even["verdict"], even["prob_1"]) == ("Tie", 0.5)  # equal: Tie, whatever was emitted
    # a mapped token absent from the top list counts as 0: P(1) = 1
    alone = read_verdict(MM, (("m", -0.1), ("The", -2.5)), "m")
    assert (alone["verdict"], alone["prob_1"], alone["prob_2"]) == ("[1,2]", 1.0, 0.0)


def test_no_mapped_token_or_no_logprobs_is_invalid_without_a_reask() -> None:
    model = verdict_model(MM)
    with pytest.raises(ReplyError, match=r"none of the tokens 'M', 'm' among the 2") as caught:
        parse_reply("The", model, "length", (("The", -0.1), ("I", -2.0)))
    assert caught.value.final
    assert not caught.value.truncated
    with pytest.raises(ReplyError, match="no log-probabilities in the reply") as none:
        parse_reply("m", model, "length", None)
    assert none.value.final
    # an empty reply text is no failure: the log-probabilities decide
    assert parse_reply("", model, "length", (("m", -0.1),)).model_dump()["verdict"] == "[1,2]"


def test_the_probability_weighted_score() -> None:
    fmt = ScoreFormat.model_validate({"logprobs": "1..5"})
    assert (fmt.min, fmt.max, fmt.max_tokens) == (1, 5, 1)
    top = (("4", math.log(0.5)), (" 5", math.log(0.25)), ("3", math.log(0.25)), ("Score", -0.1))
    assert weighted_score(fmt, top) == pytest.approx(4.0)
    assert parse_reply("4", score_model(fmt, "h"), "length", top).model_dump()["score"] == 4.0


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"logprobs": {"m": "1", " m": "2"}}, "given twice once whitespace is stripped"),
        ({"logprobs": {"m": "1", "x": "tie"}}, "must name a token for each of 1 and 2"),
        ({"logprobs": {"m": "1", "M": "2"}, "pattern": "x"}, "a verdict form of its own"),
        ({"pattern": "x", "map": {"A": "1", "B": "2"}, "max_tokens": 1}, "too small"),
    ],
)
def test_bad_logprob_verdicts_say_what_is_wrong(data: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        VerdictFormat.model_validate(data)


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"logprobs": "1-10"}, "must be a range of integer score tokens"),
        ({"logprobs": "10..1"}, "the range must run upwards"),
        ({"logprobs": "1..10", "min": 0}, "leave min and max out"),
        ({"logprobs": "0..1000000"}, "at most 101 score tokens"),
        ({"pattern": "(x)", "min": 1, "max": 3, "max_tokens": 2}, "too small"),
    ],
)
def test_bad_logprob_scores_say_what_is_wrong(data: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        ScoreFormat.model_validate(data)


def test_the_text_forms_dump_as_before() -> None:
    """``logprobs`` is left out of a text form's dump: its request keys and digests stay."""
    text = VerdictFormat.model_validate({"pattern": "x", "map": {"A": "1", "B": "2"}})
    assert "logprobs" not in text.model_dump(by_alias=True)
    score = ScoreFormat.model_validate({"pattern": "(x)", "min": 1, "max": 3})
    assert "logprobs" not in score.model_dump(by_alias=True)


def _request(max_tokens: int = 1) -> Request:
    model = verdict_model(MM)
    return Request("j", ({"role": "user", "content": "Which? m or M"},), "own_verdict",
                   schema_of(model), model, Sampling(max_tokens=max_tokens), 0, "f")  # fmt: skip


@pytest.mark.parametrize(("backend", "top"), [("vllm", 20), ("tgi", 5), ("llama-server", 20)])
def test_the_request_asks_each_backend_in_its_form(backend: str, top: int) -> None:
    info = ServerInfo(backend=backend, model="m", fingerprint="f")
    body = chat_body(_request(), [], info, JudgeConfig(name="j", url="http://h/v1"))
    assert (body["logprobs"], body["top_logprobs"], body["max_tokens"]) == (True, top, 1)
    assert "response_format" not in body


def _execute(server: FakeJudge, backend: str) -> tuple[dict[str, object], list[str]]:
    judge = JudgeConfig(name="j", url=server.url)
    info = ServerInfo(backend=backend, model="m", fingerprint="f")

    async def go() -> dict[str, object]:
        endpoint = Endpoint(judge, EngineConfig(max_attempts=1), info)
        try:
            result = await endpoint.execute(_request())
        finally:
            await endpoint.close()
        return result.model_dump()

    return asyncio.run(go()), getattr(server, "rejected", [])


@pytest.mark.parametrize(("fake", "backend"), [(FakeVLLM, "vllm"), (FakeTGI, "tgi"),
                                               (FakeJudge, "openai")])  # fmt: skip
def test_each_fake_server_takes_the_request_and_its_answer_is_read(
    fake: type[FakeJudge], backend: str
) -> None:
    with fake() as server:
        result, rejected = _execute(server, backend)
    assert rejected == []
    assert result["status"] == "valid", result
    reply = result["reply"]
    assert isinstance(reply, dict)
    shown = FIRST_TOKENS[: 5 if backend == "tgi" else 20]
    m = sum(math.exp(lp) for t, lp in shown if t.strip() == "m")
    big = sum(math.exp(lp) for t, lp in shown if t.strip() == "M")
    assert reply["prob_1"] == pytest.approx(m / (m + big))
    assert reply["verdict"] == "[2,1]"
    assert result["escalations"] == 0
    assert result["reasks"] == 0


def test_the_fakes_refuse_a_form_their_server_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fakes check the form: TGI refuses more than 5, vLLM more than its max_logprobs."""
    with monkeypatch.context() as patched, FakeTGI() as tgi:
        patched.setattr(client, "logprob_fields", lambda _: logprob_fields("vllm"))
        result, rejected = _execute(tgi, "tgi")
    assert result["status"] == "invalid"
    assert rejected
    assert "`top_n_tokens` must be >= 0 and <= 5. Given: 20" in rejected[0]
    assert logprob_fields("tgi")["top_logprobs"] <= 5
    with FakeVLLM() as vllm:
        vllm.max_logprobs = 10
        result, rejected = _execute(vllm, "vllm")
    assert result["status"] == "invalid"
    assert "greater than max allowed: 10" in rejected[0]


def _judge(url: str, tmp_path: Path) -> JudgeConfig:
    prompt = tmp_path / "p.txt"
    prompt.write_text("{CONTEXT}\n(m) {RESPONSE_1}\n(M) {RESPONSE_2}\nAnswer m or M.\n")
    return JudgeConfig(name="j", url=url, prompt=str(prompt), verdict=MM)


def test_a_server_without_logprobs_is_refused_at_start_up_in_one_line(tmp_path: Path) -> None:
    with FakeJudge(logprobs=False) as server:
        with pytest.raises(JudgeprobeError) as caught:
            asyncio.run(probe_endpoint(_judge(server.url, tmp_path), EngineConfig()))
        sent = server.chat_requests
    message = str(caught.value)
    assert "\n" not in message
    assert "returns no log-probabilities" in message
    assert "judge j" in message
    assert sent == 1  # the log-probability probe alone (the schema probe is not counted)
    with FakeJudge() as server:  # one that returns them passes
        endpoint = asyncio.run(probe_endpoint(_judge(server.url, tmp_path), EngineConfig()))
        asyncio.run(endpoint.close())


VERDICT_TOML = """
[[judges]]
name = "mine"
url = "{url}"
prompt = "{prompt}"
verdict = {{ logprobs = {{ m = "1", M = "2" }}, max_tokens = 1 }}
"""


def test_a_sweep_stores_each_probability_and_the_prob_shift(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 4)
    (tmp_path / "p.txt").write_text("{CONTEXT}\n(m) {RESPONSE_1}\n(M) {RESPONSE_2}\nm or M?\n")
    cfg = write_config(tmp_path / "c.toml", "http://127.0.0.1:9/v1", items, protocols=["own"])
    head = cfg.read_text().split("[[judges]]")[0]
    with FakeVLLM() as server:
        cfg.write_text(head + VERDICT_TOML.format(url=server.url, prompt=tmp_path / "p.txt"))
        out = tmp_path / "run"
        proc = run_cli("--config", str(cfg), "--out", str(out))
        bodies = len(server.received)
    assert proc.returncode in (0, 4), proc.stderr
    assert bodies > 0
    frame = pl.read_parquet(out / "judgments.parquet")
    assert set(frame["verdict"]) <= {"A", "B"}
    assert frame["prob_1"].null_count() == 0
    assert frame["prob_tie"].null_count() == frame.height
    assert ((frame["prob_1"] + frame["prob_2"]) - 1.0).abs().max() < 1e-12  # type: ignore[operator]
    tidy = pl.read_csv(out / "metrics_ci.csv", infer_schema_length=None)
    shifts = tidy.filter(pl.col("metric") == "prob_shift")
    assert shifts.height > 0  # the constant fake judge: no shift, but the row is there
    assert shifts["value"].abs().max() == pytest.approx(0.0, abs=1e-12)
    card = card_for_run(out, resamples=200).rows.filter(pl.col("kind") == "cue")
    assert card.height > 0
    assert card["prob_shift"].null_count() == 0
    assert (card["prob_shift_lo"] <= card["prob_shift"]).all()
    assert orjson.loads((out / "manifest.json").read_bytes())["own_prompts"]["mine"]["verdict"][
        "logprobs"
    ] == {"m": "1", "M": "2"}


def test_prob_units_pair_each_cue_judgment_with_its_blind_twin() -> None:
    base = {"judge": "j", "protocol": "own", "document_id": "d", "subset": "s", "item_id": "i",
            "order": "12", "seed": 0, "degraded": "", "turn1_target": ""}  # fmt: skip
    rows = [
        base | {"condition": "Blind", "verdict": "A", "target": "none"} | {"prob_1": 0.6},
        base | {"condition": "True", "verdict": "B", "target": "B"} | {"prob_1": 0.3},
    ]
    rows = [r | {"prob_2": 1 - r["prob_1"]} for r in rows]  # type: ignore[operator]
    units = prob_units(pl.DataFrame(rows).lazy()).collect()
    assert units["pshift"].to_list() == [pytest.approx(0.3)]
    assert units["probed"].to_list() == [1]


def test_selftest_own_logprobs_recovers_the_planted_probabilities(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``selftest --own --logprobs``: every judgment's P(candidate 1), P(candidate 2) and
    verdict, and each cue's probability shift (True and Flip +0.2, Placebo and Verbosity 0)
    come back exactly; another planted shift checked against the same run misses."""
    out = tmp_path / "own-logprobs"
    code = selftest_main(["--own", "--logprobs", "--out", str(out), "--items", "12"])
    lines = capsys.readouterr().out.splitlines()
    checks = [line for line in lines if line[:4] in ("PASS", "MISS")]
    assert code == 0, "\n".join(lines)
    assert all(line.startswith("PASS") for line in checks), "\n".join(checks)
    shifts = {line.split()[4].rstrip(":"): line for line in checks if "prob shift" in line}
    assert set(shifts) == {"True", "Flip", "Placebo", "Verbosity"}, "\n".join(checks)
    assert "table +0.200" in shifts["True"]
    assert "table +0.000" in shifts["Placebo"]
    judgments = pl.read_parquet(out / "judgments.parquet")
    assert judgments["prob_1"].null_count() == 0
    assert set(judgments["verdict"]) <= {"A", "B"}
    code = selftest_main(["--own", "--logprobs", "--out", str(out), "--check-only",
                          "--prob-shift", "0.1"])  # fmt: skip
    missed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("MISS")]
    assert code == 1
    assert any("prob shift" in line for line in missed)
    with pytest.raises(JudgeprobeError, match="--prob-shift goes with --own --logprobs"):
        selftest_main(["--own", "--prob-shift", "0.1"])


def test_an_in_cluster_judge_read_from_logprobs_is_refused_under_ray(tmp_path: Path) -> None:
    """Ray's in-cluster engine returns no log-probabilities: refused before anything runs."""
    prompt = _judge("http://h/v1", tmp_path).prompt
    judge = JudgeConfig(name="j", model="m", cluster=ClusterEngine(), prompt=prompt, verdict=MM)
    with pytest.raises(JudgeprobeError, match="not read from an in-cluster engine yet"):
        check_engines([judge], ray=True)


def test_a_pointwise_judge_scores_each_response_by_its_weighted_score(tmp_path: Path) -> None:
    """``score = { logprobs = "1..5" }``: each response's Σ s·p(s), the verdict derived."""
    prompt = tmp_path / "s.txt"
    prompt.write_text("{CONTEXT}\n{RESPONSE}\nScore 1-5, one digit.\n")
    fmt = ScoreFormat.model_validate({"logprobs": "1..5"})
    judge = JudgeConfig(name="j", url="http://h/v1", kind="score", prompt=str(prompt), score=fmt)
    tops = {"first": _top(**{"4": 0.6, "5": 0.2, "The": 0.1}), "second": _top(**{"_2": 0.5})}

    async def ask(
        messages: Sequence[Message], reply_model: type[BaseModel], max_tokens: int
    ) -> Result:
        assert max_tokens == 1
        top = tops["first" if "first" in messages[0]["content"] else "second"]
        parsed = parse_reply("x", reply_model, "length", top)
        return Result(key="k", status="valid", reply=parsed.model_dump(), raw="x")

    shown = Presentation("doc", "the first text", "the other text", "", "")
    turn = asyncio.run(own_scorer(judge).run(shown, ask))
    point = turn.details["pointwise"]
    assert point["summary_1"] == pytest.approx((4 * 0.6 + 5 * 0.2) / 0.8)
    assert point["summary_2"] == pytest.approx(2.0)  # " 2" is the token 2
    assert turn.verdict == "[1,2]"


@pytest.mark.parametrize(
    ("logprobs", "top"),
    [
        (None, None),
        ({"content": None}, None),
        ({"content": [{"token": "m", "top_logprobs": "x"}]}, None),
        ({"content": [{"top_logprobs": [{"tok": "m"}, {"token": "M", "logprob": -1}]}]},
         (("M", -1.0),)),
    ],
)  # fmt: skip
def test_odd_logprobs_never_fail_a_completion(logprobs: object, top: object) -> None:
    """A server's odd ``logprobs`` field is read as far as it goes, never a transport error."""
    choice = {"message": {"content": "ok"}, "finish_reason": "stop", "logprobs": logprobs}
    assert parse_completion({"choices": [choice]}).top == top


def test_the_headline_names_a_probability_shift_whose_interval_excludes_zero() -> None:
    row = {"judge": "j", "protocol": "own", "metric": "prob_shift", "n": 30, "versus": None}
    tidy = pl.DataFrame(
        [
            row | {"condition": "True", "value": 0.2, "lo": 0.05, "hi": 0.33},
            row | {"condition": "Placebo", "value": 0.01, "lo": -0.1, "hi": 0.12},
        ]
    )
    (said,) = prob_sentences(MetricsTable(tidy))
    assert "0.20 more probability under True than under Blind" in said
    assert "+0.200 [+0.050, +0.330], 30 pairs" in said
