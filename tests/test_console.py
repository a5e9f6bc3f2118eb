"""The one ``judgeprobe`` console script: every command as a subcommand, with its own help."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from judgeprobe.__main__ import COMMANDS
from tests.conftest import ROOT

ASKED = {"run", "metrics", "report", "card", "annotate", "candidates", "rubric", "selftest"}


def _judgeprobe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe", *args],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip


def test_the_console_script_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"] == {"judgeprobe": "judgeprobe.__main__:main"}
    assert set(COMMANDS) >= ASKED


def test_help_lists_every_command() -> None:
    done = _judgeprobe("--help")
    assert done.returncode == 0
    assert all(name in done.stdout for name in COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_has_its_own_help_and_usage_named_as_typed(command: str) -> None:
    done = _judgeprobe(command, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: judgeprobe {command} ")
    assert "python -m" not in done.stdout.split("\n\n")[0]  # the usage block
    bad = _judgeprobe(command, "--no-such-flag")
    assert bad.returncode == 2
    assert f"usage: judgeprobe {command} " in bad.stderr
    assert f"judgeprobe {command}: error: " in bad.stderr
    assert "python -m" not in bad.stderr


def test_an_unknown_command_is_one_usage_error() -> None:
    done = _judgeprobe("judge")
    assert done.returncode == 2
    assert "invalid choice: 'judge'" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_is_the_cue_sweep_with_its_errors() -> None:
    done = _judgeprobe("run", "--config", "no-such.toml")
    legacy = subprocess.run(
        [sys.executable, "-m", "judgeprobe.run", "--config", "no-such.toml"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == legacy.returncode == 2
    assert done.stderr == legacy.stderr
    assert done.stderr.startswith("error: ")
    assert done.stderr.count("\n") == 1
