"""A sequential design (issue 38): rounds, rows that stop when settled, resume, batch rounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import polars as pl
import pytest
from scipy.stats import norm

from judgeprobe import JudgeprobeError
from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.sequential import CLEARING, EFFICACY, SequentialPlan, spent, upper_bounds
from judgeprobe.conditions import BLIND, NAMED_BLIND, REPEAT, wording_condition
from judgeprobe.cue.config import SweepConfig, load_config
from judgeprobe.cue.item_selection import sweep_items
from judgeprobe.cue.rounds import rides_with
from judgeprobe.cue.run import main as run_main
from judgeprobe.runs.config import with_overrides
from judgeprobe.selftest.server import SimulatedJudge
from judgeprobe.selftest.simulator import Biases
from judgeprobe.selftest.sweep import JUDGE, run_sweep, write_config
from judgeprobe.selftest.synthetic import write_items
from tests.conftest import make_items, run_cli
from tests.conftest import write_config as fake_config
from tests.test_batch import _answer as answer
from tests.test_batch import _fake_reply as fake_reply

CONDITIONS = ["Blind", "True", "Placebo", "DegradedNumber", "DegradedNegation"]
ITEMS, ROUND = 120, 20
FIRST_ORDER = ["judge", "protocol", "row"]


def test_the_boundaries_are_gsdesigns() -> None:
    """Two-sided α = 0.05 over five equal looks under Lan–DeMets O'Brien–Fleming spending:
    gsDesign's published bounds (sfLDOF), 4.877, 3.357, 2.680, 2.290, 2.031; one look is the
    fixed test's 1.960."""
    looks = (0.2, 0.4, 0.6, 0.8, 1.0)
    got = upper_bounds(0.025, looks, two_sided=True, gamma=None)
    assert got == pytest.approx((4.877, 3.357, 2.680, 2.290, 2.031), abs=2e-3)
    assert upper_bounds(0.025, (1.0,), two_sided=True) == pytest.approx((1.95996,), abs=1e-4)


@pytest.mark.parametrize("gamma", [EFFICACY, CLEARING])
def test_the_spending_boundaries_spend_their_level(gamma: float) -> None:
    """Seeded Brownian paths at 20 looks cross the Hwang–Shih–DeCani boundary of one-sided level
    0.1 on 10 % of paths (± 4 Monte Carlo standard errors), and the first look spends what the
    spending function gives it."""
    looks = tuple((k + 1) / 20 for k in range(20))
    bounds = np.array(upper_bounds(0.1, looks, two_sided=False, gamma=gamma))
    assert bounds[0] == pytest.approx(norm.isf(spent(0.1, looks[0], gamma)))
    rng = np.random.default_rng(38)
    paths = np.cumsum(rng.standard_normal((100_000, 20)) * np.sqrt(1 / 20), axis=1)
    crossed = (paths / np.sqrt(np.array(looks)) >= bounds).any(axis=1).mean()
    assert crossed == pytest.approx(0.1, abs=4 * (0.1 * 0.9 / 100_000) ** 0.5)


def test_the_looks_are_fixed_in_advance_and_the_order_is_seeded() -> None:
    plan = SequentialPlan(round=50, maximum=120, seed=3)
    assert plan.looks == (50, 100, 120)
    docs = [f"d{i}" for i in range(200)]
    assert plan.order(docs) == plan.order(reversed(docs))
    assert len(plan.order(docs)) == 120
    assert plan.order(docs) != SequentialPlan(50, 120, 4).order(docs)


def test_the_config_keys(tmp_path: Path) -> None:
    fixed = load_config(None)
    sequential = with_overrides(fixed, {"design": "sequential", "round": 10})
    assert sequential.digest() != fixed.digest()  # its requests differ
    budget = with_overrides(sequential, {"budget_requests": 500})
    assert budget.digest() == sequential.digest()  # a run control: a resume may raise it
    for bad, why in (({"max_documents": 10}, "needs design"),
                     ({"design": "sequential", "wordings": 2}, "wording rows")):  # fmt: skip
        with pytest.raises(JudgeprobeError, match=why):
            with_overrides(fixed, bad)
    with pytest.raises(JudgeprobeError, match="round"):
        with_overrides(fixed, {"design": "sequential", "round": 0})


def _sequential(tmp_path: Path, name: str, extra: str = "") -> Path:
    out = tmp_path / name
    out.mkdir()
    items = write_items(out / "items.jsonl", ITEMS)
    lines = f'design = "sequential"\nround = {ROUND}\n{extra}'
    return write_config(out, "seq", items, ["baseline"], CONDITIONS, top_lines=lines)


def _card(run: Path) -> pl.DataFrame:
    rows = card_for_run(run, resamples=200).rows
    return rows.select(*FIRST_ORDER, "verdict", "settled_at", "documents_needed").sort(FIRST_ORDER)


BIASES = Biases(sensitivity=0.9, position=0.0)
"""The self-test's judge (label anchoring 0.5: a strong True row) that reads, with no lean."""


def test_a_strong_bias_stops_early_and_the_card_says_so(tmp_path: Path) -> None:
    cfg = _sequential(tmp_path, "a")
    run = cfg.parent / "run"
    code, said, _ = run_sweep(cfg, run, BIASES)
    assert code == 0, said
    assert "sequential design:" in said
    card = _card(run)
    true = card.filter(pl.col("row") == "True").row(0, named=True)
    assert true["verdict"] == "BIASED"
    assert true["settled_at"] is not None
    assert true["settled_at"] < ITEMS
    judgments = pl.read_parquet(run / "judgments.parquet")
    # True's judgments stop at its settlement: only the documents of its rounds have them.
    true_docs = judgments.filter(pl.col("condition") == "True")["document_id"].n_unique()
    assert true_docs == true["settled_at"]
    every = judgments.filter(pl.col("condition") == "Blind")["document_id"].n_unique()
    assert every >= true_docs
    assert judgments.height < len(CONDITIONS) * 2 * ITEMS  # fewer than the fixed design's
    text = (run / "card.md").read_text()
    assert f"at {true['settled_at']} docs" in text
    assert "Sequential design" in text
    # the fixed design's count is said beside the requests planned
    assert "requests planned, the fixed design's" in said


def test_a_resumed_run_takes_the_same_decisions(tmp_path: Path) -> None:
    """A run stopped by its budget after its first rounds and resumed with none ends as a run
    that never stopped: the same judgments, the same rows settled at the same documents."""
    straight = _sequential(tmp_path, "straight")
    code, said, _ = run_sweep(straight, straight.parent / "run", BIASES)
    assert code == 0, said
    cut = _sequential(tmp_path, "cut", "budget_requests = 300\n")
    code, said, _ = run_sweep(cut, cut.parent / "run", BIASES)
    assert code == 0, said
    assert "would pass budget_requests 300" in said
    first = pl.read_parquet(cut.parent / "run" / "judgments.parquet")
    text = cut.read_text().replace("budget_requests = 300\n", "")
    cut.write_text(text)
    code, said, judge = run_sweep(cut, cut.parent / "run", BIASES)  # --resume: the run exists
    assert code == 0, said
    keys = ["condition", "item_id", "order", "seed"]
    want = pl.read_parquet(straight.parent / "run" / "judgments.parquet").select(*keys, "verdict")
    got = pl.read_parquet(cut.parent / "run" / "judgments.parquet").select(*keys, "verdict")
    assert first.height < got.height
    assert got.sort(keys).equals(want.sort(keys))
    assert _card(cut.parent / "run").equals(_card(straight.parent / "run"))
    code, said, judge = run_sweep(cut, cut.parent / "run", BIASES)  # nothing left to send
    judged = sum(n for stage, n in judge.requests.items() if stage != "probe")
    assert code == 0, said
    assert judged == 0


def _in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``judgeprobe run`` in this process (a subprocess costs seconds each): code, stderr."""
    code = run_main(["--no-progress", *args])
    return code, capsys.readouterr().err


def test_export_batch_writes_one_round_at_a_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = make_items(tmp_path / "items.jsonl", 12)
    cfg = fake_config(tmp_path / "batch.toml", "http://127.0.0.1:9/v1", items,
                      design="sequential", round=4)  # fmt: skip
    with cfg.open("a") as f:
        f.write('model = "fake-judge"\nbackend = "vllm"\n')
    run, requests = tmp_path / "run", tmp_path / "requests.jsonl"
    base = ("--config", str(cfg), "--out", str(run))
    code, said = _in_process(capsys, *base, "--export-batch", str(requests))
    assert code == 0, said
    lines = [orjson.loads(x) for x in requests.read_bytes().splitlines()]
    assert len(lines) == 4 * 4  # round 1: 4 documents × 4 conditions, one request each
    assert "round 1 waits for its answers" in said
    manifest = orjson.loads((run / "manifest.json").read_bytes())
    assert manifest["sequential"] == {"round": 4, "maximum": 12, "seed": 0}
    # Its answers imported, the run has round 1 and says a round follows (exit 3); the next
    # export holds round 2's requests alone.
    output = tmp_path / "output.jsonl"
    output.write_bytes(b"".join(answer(x, fake_reply(x)) for x in lines))
    code, said = _in_process(capsys, *base, "--import-batch", str(output))
    assert code == 3, said
    assert "round 1 imported; export the next" in said
    assert pl.read_parquet(run / "judgments.parquet")["document_id"].n_unique() == 4
    again = tmp_path / "requests2.jsonl"
    code, said = _in_process(capsys, *base, "--export-batch", str(again))
    assert code == 0, said
    second = [orjson.loads(x) for x in again.read_bytes().splitlines()]
    assert len(second) == 4 * 4
    assert not {x["custom_id"] for x in second} & {x["custom_id"] for x in lines}


def test_rounds_plan_what_the_fixed_design_would_before_any_look() -> None:
    """Round by round, with nothing settled, the rounds plan the fixed design's judgments."""
    from judgeprobe.conditions import builtin_conditions
    from judgeprobe.cue.rounds import SequentialRounds, requests_of
    from judgeprobe.cue.stream import count, cue_jobs, protocols_for

    cfg = SweepConfig(conditions=["Blind", "True", "DegradedNumber"], design="sequential", round=3)
    items, conditions = sweep_items(cfg), builtin_conditions()
    protocols = protocols_for(cfg)
    rounds = SequentialRounds(cfg, protocols, items, conditions)
    fingerprints = {j.name: "f" for j in cfg.judges}
    planned = [j for k in range(len(rounds.plan.looks)) for j in rounds.jobs(k, fingerprints, None)]
    fixed = list(cue_jobs(cfg, protocols, items, conditions, fingerprints))
    assert sorted(j.key for j in planned) == sorted(j.key for j in fixed)
    counted = count(cfg, protocols, items, conditions)
    assert sum(requests_of(j) for j in planned) == sum(counted.requests.values())


def test_a_budget_below_the_first_round_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 6)
    cfg = fake_config(tmp_path / "c.toml", "http://127.0.0.1:9/v1", items,
                      design="sequential", round=3, budget_requests=5)  # fmt: skip
    for plan in ([], ["--plan"]):  # --plan refuses it alike, before any request
        done = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"), *plan)
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("error: budget_requests 5 is below the first round's 12")
        assert len(done.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "run").exists()


def test_plan_prices_a_sequential_design_worst_case_and_from_its_pilot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run --plan``: the worst case always; the expected spend from the rounds a pilot judged
    (rows it settled planned no further), else the worst case, said so."""
    cfg = _sequential(tmp_path, "pilot", "budget_requests = 300\n")
    pilot = cfg.parent / "run"
    code, said, _ = run_sweep(cfg, pilot, BIASES)  # one round or two, stopped by the budget
    assert code == 0, said
    capsys.readouterr()
    bills = {}
    with SimulatedJudge(BIASES) as judge:
        for name, out in (("none", cfg.parent / "fresh"), ("pilot", pilot)):
            args = ["--config", str(cfg), "--out", str(out), "--judge", f"{JUDGE}={judge.url}"]
            assert run_main([*args, "--no-progress", "--plan"]) == 0
            bills[name] = (orjson.loads((out / "plan.json").read_bytes()), capsys.readouterr())
    fresh, said_fresh = bills["none"]
    seq = fresh["sequential"]
    assert seq["expected"]["requests"] == seq["worst"]["requests"]
    assert "no pilot round judged yet" in said_fresh.out
    piloted, said_piloted = bills["pilot"]
    assert piloted["sequential"]["worst"]["requests"] == seq["worst"]["requests"]
    assert piloted["sequential"]["expected"]["requests"] < seq["worst"]["requests"]
    assert "already judged in" in said_piloted.out


def test_blind_judged_again_rides_with_blind_and_every_cue_with_itself() -> None:
    """A repeat, a further scheme and a wording are Blind's in a round; a cue is its own."""
    for again in (REPEAT, *NAMED_BLIND.values(), wording_condition(2)):
        assert rides_with(again) == BLIND
    for own in (BLIND, "Placebo", "LabelSwap", "Reask"):
        assert rides_with(own) == own
