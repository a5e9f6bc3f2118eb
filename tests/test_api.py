"""The public API (``judgeprobe.api``): the notebook page's code runs unchanged inside a running
event loop and the card shows itself; a sweep against a live server reports its progress to a
callback; errors are the commands' one-line ``JudgeprobeError``s.

The notebook example is read from docs/api.md itself, so the page and this test cannot drift.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

import judgeprobe
from judgeprobe import JudgeprobeError, JudgeUnreliable, RunIncomplete
from judgeprobe.api import CalibratedRow, Card, ProgressUpdate, Run
from judgeprobe.card.record import shown
from judgeprobe.core.cli import main_guard
from judgeprobe.metrics.calibrated import CALIBRATED_SCHEMA
from judgeprobe.selftest.server import SimulatedJudge
from judgeprobe.selftest.simulator import Biases
from judgeprobe.selftest.sweep import JUDGE, default_config

PAGE = Path(__file__).resolve().parent.parent / "docs" / "api.md"
TRUE_WIN_RATE = 0.506  # model-a's human win rate in the calibrate self-test's simulated run


def example() -> str:
    """The page's simulated example: the Python block after its marker."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(r"<!-- simulated-example -->\s*```python\n(.*?)```", text, re.DOTALL)
    assert found, "docs/api.md lost its simulated example"
    return found.group(1)


async def test_the_notebook_page_runs_inside_a_running_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.get_running_loop()  # as in a notebook cell: a loop is running
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JUDGEPROBE_DRIFT", "lexical")  # no embedding model in a unit test
    names: dict[str, object] = {}
    exec(compile(example(), str(PAGE), "exec"), names)
    card = names["card"]
    assert isinstance(card, Card)
    assert card.exit_code == 5
    assert card.verdict_counts["BIASED"] >= 1
    assert names["biased"]
    page = card._repr_html_()
    assert "<table" in page
    assert "data:image/png;base64," in page  # the forest plot
    for row in card.rows:  # the table holds every row with its interval
        assert row.row in page
        assert shown(row.effect).replace("−", "-") in page.replace("−", "-")
    assert (tmp_path / "runs" / "notebook" / "card.html").is_file()
    estimates = names["estimates"]
    assert isinstance(estimates, list)
    a = estimates[0]
    assert isinstance(a, CalibratedRow)
    assert a.lo is not None
    assert a.hi is not None
    assert a.lo <= TRUE_WIN_RATE <= a.hi
    assert not (a.lo <= a.judge_only <= a.hi)  # type: ignore[operator]
    run = names["labelled"].run  # type: ignore[attr-defined]
    assert isinstance(run, Run)
    assert "<td>selftest-calibrate</td>" in run._repr_html_()


def test_calibration_records_hold_every_column_of_calibrated_csv() -> None:
    fields = set(CalibratedRow.model_fields) | {"lo", "hi"}  # the interval's ends as properties
    assert set(CALIBRATED_SCHEMA) <= fields
    assert {p for p in dir(CalibratedRow) if p in {"lo", "hi"}} == {"lo", "hi"}


async def test_a_live_sweep_reports_progress_to_a_callback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGEPROBE_DRIFT", "lexical")
    config = default_config(tmp_path / "config", 4)
    updates: list[ProgressUpdate] = []
    with SimulatedJudge(Biases()) as judge:
        run = judgeprobe.run(
            config, out=tmp_path / "run", judges=[f"{JUDGE}={judge.url}"], progress=updates.append
        )
    assert run.check() is run
    assert run.exit_code == 0
    assert run.manifest.run_id.startswith("selftest-")
    assert run.spend is not None
    judged = sum(n for kind, n in judge.requests.items() if kind != "probe")  # not the start-up's
    assert run.spend.requests == judged
    assert "spend" in run._repr_html_()
    assert updates
    assert updates[-1].done == updates[-1].total > 0
    card = await judgeprobe.acard(run)  # the async twin, from a coroutine
    assert card.rows
    assert card.to_json() == judgeprobe.read_card(run).to_json()
    assert card.find(JUDGE, "baseline", "True") is not None


def test_errors_are_the_commands_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from judgeprobe.card.__main__ import main as card_command

    with pytest.raises(JudgeprobeError) as raised:
        judgeprobe.api.card(tmp_path)
    assert main_guard(lambda: card_command([str(tmp_path)])) == 2
    assert capsys.readouterr().err.strip() == f"error: {raised.value}"
    with pytest.raises(JudgeprobeError, match=r"no card\.json"):
        judgeprobe.read_card(tmp_path)
    with pytest.raises(JudgeprobeError, match="no option"):
        judgeprobe.api.selftest(tmp_path / "x", no_such_flag=1)
    with pytest.raises(JudgeprobeError, match="not one of"):
        judgeprobe.read_logs(tmp_path / "a.jsonl", out=tmp_path / "out", log_format="nope")
    with pytest.raises(RunIncomplete):
        Run(tmp_path, 3).check()
    with pytest.raises(JudgeUnreliable) as unreliable:
        Run(tmp_path, 4).check()
    assert unreliable.value.exit_code == 4
