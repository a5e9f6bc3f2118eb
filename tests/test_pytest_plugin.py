"""The pytest plugin: ``pytest --judge-card RUN`` makes every card row a test whose outcome is
the gate's rule, with one JUnit case per row, ids unique across runs, and a fixture.

Each check runs pytest as a user would (a subprocess in an empty folder, the plugin loaded by
``-p``, as the ``pytest11`` entry point loads it once judgeprobe is installed) on planted runs
(``tests/planted.py``: the self-test's simulated judges)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import get_args

import pytest

from judgeprobe.card.gate import OUTCOMES, outcome, read_card, row_sentence
from judgeprobe.card.record import RowVerdict, shown
from judgeprobe.pytest_plugin import escape
from tests.planted import simulated_run

ROOT = Path(__file__).resolve().parent.parent
JUNIT_OUTCOME = {"failure": "fail", "skipped": "skip"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CLEAR run, a BIASED one, an UNDERPOWERED one, and one whose judge's name needs escaping."""
    base = tmp_path_factory.mktemp("cards")
    return {
        "clear": simulated_run(base / "clear", "null"),
        "biased": simulated_run(base / "biased", "label"),
        "small": simulated_run(base / "small", "null", 40),
        "odd": simulated_run(base / "odd" / "clear", "null", 40, name="acme/judge::v2 · β"),
    }


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-p", "judgeprobe.pytest_plugin",
               "-p", "no:cacheprovider", "-q", *args]  # fmt: skip
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def _cases(report: Path) -> dict[str, tuple[str, ET.Element]]:
    """JUnit case id → (outcome, the case)."""
    found = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kinds = [JUNIT_OUTCOME[c.tag] for c in case if c.tag in JUNIT_OUTCOME]
        found[f"{case.get('classname')}::{case.get('name')}"] = (
            kinds[0] if kinds else "pass",
            case,
        )
    return found


def test_every_verdict_has_an_outcome() -> None:
    assert set(get_args(RowVerdict)) <= set(OUTCOMES)
    assert outcome("UNDERPOWERED") == "skip"
    assert outcome("UNDERPOWERED", strict=True) == "fail"
    assert outcome("REPLACES") == "pass"
    assert outcome("DOES-NOT-REPLACE") == "fail"
    assert outcome("SOMETHING NEW") == "fail"
    assert outcome(None) == "fail"


def test_one_junit_case_per_row_with_the_gates_outcome(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    report = tmp_path / "r.xml"
    pattern = str(runs["clear"].parent / "*")  # a glob: clear, biased, small (odd is deeper)
    done = _pytest(tmp_path / "suite", "--judge-card", pattern, "--junitxml", str(report))
    assert done.returncode == 1, done.stdout + done.stderr  # the BIASED run's rows fail
    cases = _cases(report)
    expected = {}
    for name in ("biased", "clear", "small"):
        card = read_card(runs[name])
        for row in card.rows:
            case_id = f"judge_card[{name}]::{row.judge}|{row.protocol}|{escape(row.row)}"
            expected[case_id] = (outcome(row.verdict), row)
    assert set(cases) == set(expected)  # one case per row, none else
    assert len(cases) == sum(len(read_card(runs[n]).rows) for n in ("biased", "clear", "small"))
    for case_id, (want, row) in expected.items():
        got, case = cases[case_id]
        assert got == ("pass" if want == "info" else want), case_id
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties["verdict"] == row.verdict
        assert properties["effect"] == shown(row.effect)
        if want in ("fail", "skip"):  # the row's sentence, with its interval, is the message
            message = next(c for c in case if c.tag in JUNIT_OUTCOME).get("message") or ""
            assert row_sentence(row) in message
            assert shown(row.effect) in message
    verdicts = {row.verdict: cases[k][0] for k, (_, row) in expected.items()}
    assert verdicts["BIASED"] == "fail"
    assert verdicts["INSENSITIVE"] == "fail"
    assert verdicts["CLEAR"] == "pass"
    assert verdicts["SENSITIVE"] == "pass"
    assert verdicts["UNDERPOWERED"] == "skip"
    assert verdicts["NOISY"] == "pass"


def test_a_clear_card_passes_and_strict_fails_underpowered(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    clear = _pytest(tmp_path / "a", "--judge-card", str(runs["clear"]), "-rA")
    assert clear.returncode == 0, clear.stdout + clear.stderr
    assert "NOISY: flip rate" in clear.stdout  # an informational row's figures in the report
    small = _pytest(tmp_path / "b", "--judge-card", str(runs["small"]))
    assert small.returncode == 0, small.stdout
    assert "skipped" in small.stdout
    assert "failed" not in small.stdout
    strict = _pytest(tmp_path / "c", "--judge-card", str(runs["small"]), "--judge-card-strict")
    assert strict.returncode == 1, strict.stdout
    assert "UNDERPOWERED" in strict.stdout
    assert "failed" in strict.stdout


def test_ids_are_unique_across_runs_and_escaped(runs: dict[str, Path], tmp_path: Path) -> None:
    args = ["--collect-only", "--judge-card", str(runs["small"]), "--judge-card",
            str(runs["odd"]), "--judge-card", str(runs["small"] / "card.json")]  # fmt: skip
    done = _pytest(tmp_path, *args)
    ids = [line for line in done.stdout.splitlines() if line.startswith("judge_card[")]
    small, odd = read_card(runs["small"]).rows, read_card(runs["odd"]).rows
    assert len(ids) == len(set(ids)) == len(small) + len(odd)  # the same card given twice: once
    judge = "acme%2Fjudge%3A%3Av2 %C2%B7 %CE%B2"
    assert sum(i.startswith(f"judge_card[clear]::{judge}|") for i in ids) == len(odd)
    assert all(i.count("::") == 1 for i in ids)


def test_runs_sharing_a_name_keep_apart(runs: dict[str, Path], tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--collect-only", "--judge-card", str(runs["clear"]),
                   "--judge-card", str(runs["odd"]))  # fmt: skip
    ids = [line for line in done.stdout.splitlines() if line.startswith("judge_card[")]
    assert len(ids) == len(set(ids))
    assert {i.split("::")[0] for i in ids} == {
        f"judge_card[{escape(str(runs['clear']))}]",
        f"judge_card[{escape(str(runs['odd']))}]",
    }


def test_the_fixture_loads_a_card(runs: dict[str, Path], tmp_path: Path) -> None:
    suite = tmp_path / "own"
    suite.mkdir()
    (suite / "test_judge.py").write_text(
        "def test_position_is_clear(judge_card):\n"
        "    card = judge_card()\n"
        "    assert card.find('null', 'baseline', 'position').verdict == 'CLEAR'\n"
        "    assert card.exit_code == 0 and card.verdict_counts['CLEAR'] >= 2\n"
        f"def test_named(judge_card):\n"
        f"    assert judge_card({str(runs['biased'])!r}).exit_code == 5\n"
    )
    done = _pytest(
        suite, "--judge-card", str(runs["clear"]), "test_judge.py", "-m", "not judge_card"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_a_bad_card_is_one_line(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "--judge-card", str(tmp_path / "nowhere"))
    assert done.returncode == 4
    assert "--judge-card" in done.stderr
    assert "matches no run directory" in done.stderr
    assert "Traceback" not in done.stderr
    (tmp_path / "empty").mkdir()
    done = _pytest(tmp_path, "--judge-card", str(tmp_path / "empty"))
    assert done.returncode == 4
    assert "no card.json" in done.stderr
