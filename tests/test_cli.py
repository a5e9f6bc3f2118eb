"""main_guard: user errors and Ctrl-C become one line and an exit code, saying how to go on."""

from __future__ import annotations

import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.core.cli import EXIT_INTERRUPTED, EXIT_USER_ERROR, RESUME, main_guard
from judgeprobe.runs.rundir import resume_command


def _interrupted() -> int:
    raise KeyboardInterrupt


def _bad_input() -> int:
    raise JudgeprobeError("items x.jsonl: no such file")


def test_a_user_error_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main_guard(_bad_input) == EXIT_USER_ERROR
    assert capsys.readouterr().err == "error: items x.jsonl: no such file\n"


@pytest.mark.parametrize(
    ("hint", "said"),
    [
        (None, "interrupted: run the command again\n"),  # a table or report command
        (RESUME, "interrupted: results so far are stored; rerun with --resume\n"),  # a sweep
    ],
)
def test_ctrl_c_says_how_this_command_goes_on(
    hint: str | None, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main_guard(_interrupted) if hint is None else main_guard(_interrupted, hint)
    assert code == EXIT_INTERRUPTED
    assert capsys.readouterr().err == said


def test_the_resume_hint_names_the_command_as_a_user_types_it() -> None:
    assert resume_command("run", ["--config", "my sweep.toml"]) == (
        "judgeprobe run --config 'my sweep.toml' --resume"
    )
    assert resume_command("run", ["--resume", "--out", "r"]) == "judgeprobe run --resume --out r"
