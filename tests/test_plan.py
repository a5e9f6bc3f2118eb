"""``run --plan``: the bill before the first request, and the spend a run records afterwards.

Against the fake servers, each counting prompts as its real server does (vLLM ``/tokenize``,
TGI ``/chat_tokenize``), and one without a tokenizer; once on the real embedded judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from judgeprobe.cue import bill as bill_module
from judgeprobe.cue.bill import LATER_INSTRUCTIONS, Bill, Tally, expected_spend
from judgeprobe.cue.config import load_config, sweep_conditions
from judgeprobe.cue.item_selection import sweep_items
from judgeprobe.cue.run import cli
from judgeprobe.cue.stream import count, protocols_for
from judgeprobe.engine.settings import JudgeConfig, Price
from judgeprobe.engine.speed import Speed
from judgeprobe.engine.store import Result, Store
from judgeprobe.runs.rundir import RunDir
from judgeprobe.runs.spend import earlier_seconds, record_spend, spent
from judgeprobe.text.tokens import approx_tokens
from tests.conftest import make_items, write_config
from tests.fake_tgi import FakeTGI
from tests.fake_vllm import FakeVLLM
from tests.fakeserver import FakeJudge
from tests.test_context import FakeLlamaServer

PRICE = "{ prompt = 0.5, completion = 2.0 }"
ROOT = Path(__file__).resolve().parent.parent


def priced(cfg: Path, price: str = PRICE) -> Path:
    """The config with ``price`` on its judge."""
    cfg.write_text(cfg.read_text() + f"price = {price}\n")
    return cfg


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``judgeprobe run ARGS`` in this process (its imports are paid once): code, out, err."""
    code = cli(["--no-progress", *args])
    said = capsys.readouterr()
    return code, said.out, said.err


def plan(capsys: pytest.CaptureFixture[str], cfg: Path, out: Path) -> dict[str, Any]:
    code, stdout, stderr = run(capsys, "--config", str(cfg), "--out", str(out), "--plan")
    assert code == 0, stderr
    assert "The bill of" in stdout
    assert "In all:" in stdout
    assert not (out / "manifest.json").exists()
    assert not (out / "store.sqlite").exists()
    found: dict[str, Any] = orjson.loads((out / "plan.json").read_bytes())
    return found


def planned_requests(cfg: Path) -> int:
    """The requests the run's own count plans (``cue.stream.count``), before any cache."""
    sweep = load_config(cfg)
    conditions = sweep_conditions(sweep)
    counts = count(sweep, protocols_for(sweep), sweep_items(sweep), conditions)
    return sum(counts.requests.values())


def test_the_bill_is_what_the_run_then_spends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """vLLM: prompts counted by its /tokenize, which is what its usage reports when sent."""
    items = make_items(tmp_path / "items.jsonl", 5)
    out = tmp_path / "run"
    with FakeVLLM() as vllm:
        cfg = priced(write_config(tmp_path / "c.toml", vllm.url, items, protocols=["baseline"]))
        bill = plan(capsys, cfg, out)
        counted = vllm.tokenized
        sent_by_plan = len(vllm.received)
        code, _, stderr = run(capsys, "--config", str(cfg), "--out", str(out))
        assert code == 0, stderr
    assert counted >= 20  # every distinct first prompt (20 judgments)
    # The start-up probe and two timed rounds at the judge's 8 lanes; no judgment.
    assert sent_by_plan == 1 + 2 * 8
    judge = bill["judges"][0]
    assert judge["prompt_tokens_by"].startswith("counted by the judge's tokenizer")
    assert judge["speed"]["lanes_timed"] == 8
    assert judge["wall_floor_s"] <= judge["wall_s"]
    total = bill["total"]
    assert total["requests"] == planned_requests(cfg) == 20
    assert total["judgments"] == 20
    assert len(bill["cells"]) == 4
    spend = orjson.loads((out / "manifest.json").read_bytes())["spend"]
    assert spend["requests"] == total["requests"]
    assert spend["prompt_tokens"] == total["prompt_tokens"]  # one stage: counted exactly
    assert spend["completion_tokens"] <= total["completion_budget"]
    assert total["cost_usd"] == pytest.approx(
        (total["prompt_tokens"] * 0.5 + total["completion_budget"] * 2.0) / 1e6
    )
    assert spend["cost_usd"] == pytest.approx(
        (spend["prompt_tokens"] * 0.5 + spend["completion_tokens"] * 2.0) / 1e6
    )
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"spent {spend['requests']} requests" in report


def test_every_stage_and_second_turn_is_billed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PBP's three stages, Reveal-After's and a pressure push's second turns: the run's count."""
    items = make_items(tmp_path / "items.jsonl", 3)
    conditions = ["Blind", "True", "RevealAfter", "Challenge"]
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=conditions,
                           protocols=["baseline", "scot", "pbp"])  # fmt: skip
        bill = plan(capsys, cfg, tmp_path / "run")
    assert bill["total"]["requests"] == planned_requests(cfg)
    cells = {(c["protocol"], c["condition"]): c for c in bill["cells"]}
    assert cells["pbp", "Blind"]["requests"] == 3 * cells["pbp", "Blind"]["judgments"]
    assert cells["pbp", "Challenge"]["requests"] == 5 * cells["pbp", "Challenge"]["judgments"]
    assert cells["scot", "RevealAfter"]["requests"] == 2 * cells["scot", "True"]["requests"]
    # A later request carries the first prompt: it costs more prompt tokens than the first.
    first = cells["baseline", "Blind"]["prompt_tokens"]
    assert cells["baseline", "Challenge"]["prompt_tokens"] > 2 * first
    assert bill["total"]["priced"] is False
    assert "no price for fake" in " ".join(bill["notes"])


def test_later_requests_are_counted_between_what_they_show_and_their_budgets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PBP and a second turn, walked dry: the run's prompt tokens (vLLM's usage, its own
    tokenizer) lie between the counted prompts and the counted prompts plus carried budgets."""
    items = make_items(tmp_path / "items.jsonl", 3)
    out = tmp_path / "run"
    with FakeVLLM() as vllm:
        cfg = write_config(tmp_path / "c.toml", vllm.url, items, protocols=["pbp", "scot"],
                           conditions=["Blind", "True", "RevealAfter"])  # fmt: skip
        bill = plan(capsys, cfg, out)
        code, _, stderr = run(capsys, "--config", str(cfg), "--out", str(out))
    assert code == 0, stderr
    assert not any("walked dry" in note for note in bill["notes"])
    total = bill["total"]
    spend = orjson.loads((out / "manifest.json").read_bytes())["spend"]
    assert spend["requests"] == total["requests"] == planned_requests(cfg)
    assert total["prompt_carried"] > 0
    shown = total["prompt_tokens"] - total["prompt_carried"]
    assert shown <= spend["prompt_tokens"] <= total["prompt_tokens"]


def test_past_the_count_limit_a_sample_is_counted_and_the_rest_scaled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    items = make_items(tmp_path / "items.jsonl", 6)
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, protocols=["baseline"])
        exact = plan(capsys, cfg, tmp_path / "all")
        monkeypatch.setattr(bill_module, "COUNT_LIMIT", 8)
        sampled = plan(capsys, cfg, tmp_path / "sample")
    how = sampled["judges"][0]["prompt_tokens_by"]
    assert " of 24 distinct prompts counted by the judge's tokenizer; the rest scaled" in how
    assert exact["judges"][0]["prompt_tokens_by"].startswith("counted by the judge's")
    want, got = exact["total"]["prompt_tokens"], sampled["total"]["prompt_tokens"]
    assert abs(got - want) <= 0.05 * want


def test_a_pointwise_judge_is_billed_two_scorings_that_carry_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the config names its prompt file from the repository root
    with FakeJudge(free_text="Score: [[7]]") as judge:
        code, _, stderr = run(capsys, "--config", "experiments/own-judge-score.toml", "--limit",
                              "2", "--judge", f"qwen2.5-coder-0.5b={judge.url}", "--out",
                              str(tmp_path / "run"), "--plan")  # fmt: skip
    assert code == 0, stderr
    bill = orjson.loads((tmp_path / "run" / "plan.json").read_bytes())
    assert not any("walked dry" in note for note in bill["notes"])
    for cell in bill["cells"]:
        assert cell["requests"] == 2 * cell["judgments"]
        assert cell["prompt_carried"] == 0


def test_tgi_counts_with_its_chat_tokenizer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = make_items(tmp_path / "items.jsonl", 3)
    with FakeTGI() as tgi:
        cfg = write_config(tmp_path / "c.toml", tgi.url, items, protocols=["baseline"])
        bill = plan(capsys, cfg, tmp_path / "run")
        counted = tgi.tokenized
    assert counted >= 12
    assert bill["judges"][0]["prompt_tokens_by"].startswith("counted by the judge's tokenizer")


def test_llama_server_counts_its_templated_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = make_items(tmp_path / "items.jsonl", 3)
    with FakeLlamaServer(n_ctx=8192) as llama:
        cfg = write_config(tmp_path / "c.toml", llama.url, items, protocols=["baseline"])
        bill = plan(capsys, cfg, tmp_path / "run")
    judge = bill["judges"][0]
    assert judge["backend"] == "llama-server"
    assert judge["prompt_tokens_by"].startswith("counted by the judge's tokenizer")


def test_a_server_without_a_tokenizer_is_estimated_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = make_items(tmp_path / "items.jsonl", 3)
    with FakeJudge(tokenizer=False) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, protocols=["baseline"])
        bill = plan(capsys, cfg, tmp_path / "run")
    assert bill["judges"][0]["prompt_tokens_by"].startswith("estimated (1.3 tokens a word")


BAD_PRICES = [
    ("{ prompt = -1, completion = 2 }", "greater than or equal to 0"),
    ('{ prompt = "cheap", completion = 2 }', "prompt"),
    ("{ prompt = 1 }", "completion"),
    ("{ prompt = 1, completion = 2, cached = 0.1 }", "cached"),
]


def test_a_bad_price_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = make_items(tmp_path / "items.jsonl", 2)
    for k, (price, said) in enumerate(BAD_PRICES):
        cfg = write_config(tmp_path / f"c{k}.toml", "http://127.0.0.1:9/v1", items)
        code, _, stderr = run(capsys, "--config", str(priced(cfg, price)), "--out",
                              str(tmp_path / "run"), "--plan")  # fmt: skip
        lines = stderr.strip().splitlines()
        assert code == 2
        assert len(lines) == 1, stderr
        assert lines[0].startswith("error:")
        assert said in lines[0], lines[0]
        assert not (tmp_path / "run").exists()


def test_expected_spend_under_a_stopping_profile() -> None:
    """The sequential design's hook: worst case = every round; expected = weighted by open."""
    one = Tally(judgments=10, requests=10, prompt_tokens=1000, completion_budget=400, cost_usd=1)
    rounds = [{"Blind": one, "True": one}, {"Blind": one, "True": one}, {"Blind": one, "True": one}]
    worst, expected = expected_spend(rounds, {"True": [1.0, 0.5, 0.25]})
    assert worst.requests == 60
    assert worst.cost_usd == 6
    assert expected.requests == 30 + 10 * (1 + 0.5 + 0.25)
    always, _ = expected_spend(rounds, {})
    assert expected_spend(rounds, {})[1] == always
    with pytest.raises(ValueError, match="not in"):
        expected_spend(rounds, {"True": [1.0, 1.5]})


def test_a_sequential_design_is_priced_by_round() -> None:
    """``Bill.price_sequential``: rounds of documents, cells that stop, beside the fixed bill."""
    one = Tally(judgments=2, requests=2, prompt_tokens=200, completion_budget=100, cost_usd=0.5)
    blind, cue = ("j", "baseline", "Blind"), ("j", "baseline", "True")
    docs = [f"d{k}" for k in range(6)]
    by_document = {(d, cell): one for d in docs for cell in (blind, cue)}
    cells = {blind: Tally(), cue: Tally()}
    for cell in cells:
        for _d in docs:
            cells[cell].add(one)
    bill = Bill("c", "0", 6, docs, [], cells, by_document, [])
    rounds = [docs[:2], docs[2:4], docs[4:]]
    assert [r[cue].requests for r in bill.rounds(rounds)] == [4, 4, 4]
    worst, expected = bill.price_sequential(rounds, {cue: [1.0, 0.0]})  # settled after round 1
    assert worst.requests == 24  # the fixed design over the maximum
    assert expected.requests == 12 + 4
    assert bill.record()["sequential"]["expected"]["requests"] == 16


def test_wall_time_from_the_timed_probe() -> None:
    speed = Speed(request_s=0.5, token_s=0.01, lanes=4, prompt_tokens=300, sent=8)
    assert speed.wall_s(100, 10_000, 4, 0.0) == pytest.approx((100 * 0.5 + 10_000 * 0.01) / 4)
    assert speed.wall_s(100, 0, 50, 2.0) == 50.0  # the rate limit bounds it


def test_later_instructions_cover_every_template() -> None:
    templates = Path(__file__).resolve().parent.parent / "judgeprobe" / "prompts" / "templates"
    for path in sorted(templates.glob("*.txt")):
        assert approx_tokens(path.read_text(encoding="utf-8")) <= LATER_INSTRUCTIONS, path.name


@pytest.mark.embedded
def test_the_bill_on_the_real_embedded_judge(
    embedded_judge: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """llama-server counts with /apply-template + /tokenize; the timed probe times it."""
    items = make_items(tmp_path / "items.jsonl", 2)
    engine = {"attempt_timeout_s": 300.0}  # a CPU judge under load
    cfg = write_config(tmp_path / "c.toml", embedded_judge, items, engine, protocols=["baseline"])
    cfg.write_text(cfg.read_text().replace("concurrency = 8", "concurrency = 2"))
    priced(cfg)
    bill = plan(capsys, cfg, tmp_path / "run")
    judge = bill["judges"][0]
    assert judge["backend"] == "llama-server"
    assert judge["prompt_tokens_by"].startswith("counted by the judge's tokenizer")
    assert judge["speed"]["lanes_timed"] == 2
    assert judge["speed"]["request_s"] > 0
    assert judge["wall_s"] > 0
    assert bill["total"]["requests"] == 8
    assert bill["total"]["cost_usd"] > 0


def test_the_spend_is_read_from_the_store_and_added_up_over_sessions(tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite")
    for key, judge, attempts, prompt, completion in (("a", "j", 2, 10, 5), ("b", "j", 1, 20, 7),
                                                     ("c", "k", 1, 4, 1)):  # fmt: skip
        store.put(Result(key=key, status="valid", endpoint=judge, attempts=attempts,
                         prompt_tokens=prompt, completion_tokens=completion))  # fmt: skip
    price = Price(prompt=1.0, completion=2.0)
    j = JudgeConfig(name="j", url="http://127.0.0.1:1/v1", price=price)
    k = JudgeConfig(name="k", url="http://127.0.0.1:2/v1")
    spend = spent(store, [j, k], 12.5)
    store.close()
    assert (spend.requests, spend.attempts, spend.prompt_tokens) == (3, 4, 34)
    assert spend.judges[0].cost_usd == pytest.approx((30 * 1.0 + 12 * 2.0) / 1e6)
    assert spend.cost_usd is None  # k has no price: the total is not known
    run = RunDir(tmp_path)
    assert earlier_seconds(run) == 0.0
    run.write_manifest({"run_id": "r", "created_at": "2026-01-01T00:00:00Z"})
    record_spend(run, spend)
    assert earlier_seconds(run) == 12.5
    assert "spent 3 requests (4 HTTP attempts), 34 prompt + 13 completion tokens" in (
        spend.sentence()
    )
