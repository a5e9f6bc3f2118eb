"""The CI recipe's gate (``ci/judge_gate.sh`` → ``python -m judgeprobe.gate``), run as GitHub runs
it: its summary in ``$GITHUB_STEP_SUMMARY``, its outputs in ``$GITHUB_OUTPUT``, its exit status
the gate's, on planted runs (``tests/planted.py``); and ``judgeprobe card --summary-md``, whose
text the gate puts on the job's summary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from judgeprobe.card.__main__ import main as card_main
from judgeprobe.card.gate import OUTCOMES, Gate, read_card, row_name, row_sentence, verdict_counts
from judgeprobe.core.cli import main_guard
from judgeprobe.gate import _parser
from tests.planted import simulated_run

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "ci" / "judge_gate.sh"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CLEAR run, a BIASED one and an UNDERPOWERED one."""
    base = tmp_path_factory.mktemp("gate")
    return {
        "clear": simulated_run(base / "clear", "null"),
        "biased": simulated_run(base / "biased", "label"),
        "small": simulated_run(base / "small", "null", 40),
    }


def _gate(tmp_path: Path, **variables: str) -> tuple[int, str, dict[str, str], str]:
    """Exit status, the job summary, the outputs, stderr: the script as a GitHub step runs it."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    env = {
        **os.environ, "PYTHONPATH": str(ROOT), "JUDGEPROBE_PYTHON": sys.executable,
        "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs),
        **{f"JUDGE_GATE_{k.upper()}": v for k, v in variables.items()},
    }  # fmt: skip
    done = subprocess.run(["bash", str(SCRIPT)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    pairs = [line.split("=", 1) for line in outputs.read_text().splitlines()]
    return done.returncode, summary.read_text(), dict(pairs), done.stderr


def test_the_gate_fails_a_biased_run(runs: dict[str, Path], tmp_path: Path) -> None:
    code, summary, outputs, _ = _gate(tmp_path, run_dir=str(runs["biased"]), artifact="judge-card")
    card = read_card(runs["biased"])
    assert code == 1
    assert outputs["passed"] == "false"
    assert outputs["card-exit-code"] == "5"
    assert outputs["card-json"] == str(runs["biased"] / "card.json")
    assert "**The gate fails**" in summary
    assert "the `judge-card` artifact (card.html)" in summary
    failing = Gate(card).failing
    assert {r.verdict for r in failing} == {"BIASED", "INSENSITIVE"}
    for row in failing:  # each by its name, with its sentence (verdict, effect and interval)
        assert f"| {row_name(row)} | fail | {row_sentence(row)} |" in summary
    assert ", ".join(f"{n} {v}" for v, n in verdict_counts(card).items()) in summary


def test_the_gate_passes_a_clear_run(runs: dict[str, Path], tmp_path: Path) -> None:
    code, summary, outputs, stderr = _gate(tmp_path, run_dir=str(runs["clear"]))
    assert code == 0, stderr
    assert outputs["passed"] == "true"
    assert outputs["card-exit-code"] == "0"
    assert "**The gate passes**" in summary
    assert "CLEAR" in summary
    assert "| row | outcome |" not in summary  # no row to list
    assert f"The full card: {runs['clear'] / 'card.html'}" in summary


def test_underpowered_fails_only_under_strict(runs: dict[str, Path], tmp_path: Path) -> None:
    code, summary, outputs, _ = _gate(tmp_path / "a", run_dir=str(runs["small"]))
    assert code == 0
    assert outputs["card-exit-code"] == "6"
    assert "| skip |" in summary
    assert "minimum detectable effect" in summary
    code, summary, outputs, _ = _gate(tmp_path / "b", run_dir=str(runs["small"]), strict="true")
    assert code == 1
    assert outputs["passed"] == "false"
    assert "| fail | UNDERPOWERED" in summary


def test_a_run_that_cannot_read_its_input_fails_the_gate(tmp_path: Path) -> None:
    code, summary, outputs, stderr = _gate(tmp_path, config="no-such.toml", out="runs/x")
    assert code == 1
    assert outputs["exit-code"] == "2"
    assert outputs["card-exit-code"] == ""
    assert "could not read its input (exit 2)" in summary
    assert "error:" in stderr
    assert "Traceback" not in stderr
    code, summary, outputs, stderr = _gate(tmp_path / "b", run_dir=str(tmp_path / "nowhere"))
    assert code == 1
    assert outputs["exit-code"] == "2"
    assert f"`judgeprobe card {tmp_path / 'nowhere'}` could not read its input" in summary


def test_card_summary_md(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "pr" / "summary.md"
    code = main_guard(lambda: card_main([str(runs["biased"]), "--resamples", "200",
                                         "--summary-md", str(out)]))  # fmt: skip
    assert code == 5
    text = out.read_text()
    assert text.startswith("## Judge card: biased")
    assert f"The full card: {runs['biased'] / 'card.html'}" in text
    assert "BIASED" in text
    code = main_guard(lambda: card_main([str(runs["biased"]), "--summary-md", str(tmp_path)]))
    assert code == 2
    assert "--summary-md" in capsys.readouterr().err


def test_the_action_calls_the_script_with_the_gates_flags() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    steps = action["runs"]["steps"]
    gate = next(s for s in steps if s.get("id") == "gate")
    assert gate["run"] == 'bash "$GITHUB_ACTION_PATH/ci/judge_gate.sh"'
    flags = {a.dest for a in _parser()._actions}
    for name in gate["env"]:  # every variable the step sets is a flag of the gate
        assert name.removeprefix("JUDGE_GATE_").lower() in flags
    upload = next(s for s in steps if "upload-artifact" in s.get("uses", ""))
    assert upload["if"].startswith("${{ always()")  # uploaded when the gate fails too
    assert "card.html" in upload["with"]["path"]
    assert "card.json" in upload["with"]["path"]
    outputs = action["outputs"]
    assert outputs["card-exit-code"]["value"] == "${{ steps.gate.outputs.card-exit-code }}"


def test_the_docs_table_is_the_rule() -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    section = text.split("## The rule", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| ")]
    table = {v.strip(): o.strip() for v, o in rows[1:]}  # past the header
    assert table == OUTCOMES
