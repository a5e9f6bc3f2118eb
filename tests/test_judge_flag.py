"""One ``--judge NAME=URL[,URL…]`` parser for every command that takes a judge: replicas
everywhere, a known judge keeping its settings, and every bad form one line naming the flag."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.candidates import __main__ as candidates_cli
from judgeprobe.candidates.config import CandidatesConfig
from judgeprobe.cue import run as run_cli
from judgeprobe.cue.config import SweepConfig
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.rubric import __main__ as rubric_cli
from judgeprobe.rubric.config import RubricConfig
from judgeprobe.runs.config import judge_from_flag, parse_judge_flag

A, B = "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"


@pytest.mark.parametrize(
    ("flag", "parsed"),
    [
        (f"j={A}", ("j", (A,))),
        (f"j={A},{B}", ("j", (A, B))),
        (f"j={A}, {B}", ("j", (A, B))),  # a space after the comma, as a shell list may have
    ],
)
def test_name_and_replicas(flag: str, parsed: tuple[str, tuple[str, ...]]) -> None:
    assert parse_judge_flag(flag) == parsed


@pytest.mark.parametrize(
    "flag", ["nourl", "=http://a/v1", "j=", f"j={A},", f"j=,{A}", f"j={A},,{B}"]
)
def test_bad_forms_name_the_flag_and_the_form(flag: str) -> None:
    with pytest.raises(JudgeprobeError, match=r"^--author '.*': expected NAME=URL\[,URL…\]$"):
        parse_judge_flag(flag, "--author")


def test_a_known_judge_keeps_its_settings_with_the_new_replicas() -> None:
    known = {"j": JudgeConfig(name="j", url="http://old/v1", concurrency=7, model="m")}
    judge = judge_from_flag(f"j={A},{B}", known)
    assert (judge.replicas, judge.concurrency, judge.model) == ((A, B), 7, "m")
    other = judge_from_flag(f"k={A}", known, default={"concurrency": 2})
    assert (other.replicas, other.concurrency, other.model) == ((A,), 2, "")


@pytest.mark.parametrize(
    ("flag", "needle"),
    [(f"j={A},ftp://h/v1", "ftp://h/v1"), (f"j={A},{A}", "repeat"), (f"bad name={A}", "name")],
)
def test_values_the_judge_refuses_are_one_line(flag: str, needle: str) -> None:
    with pytest.raises(JudgeprobeError) as refused:
        judge_from_flag(flag, option="--paraphraser")
    assert str(refused.value).startswith(f"--paraphraser {flag!r}: ")
    assert needle in str(refused.value)
    assert "\n" not in str(refused.value)


def test_every_command_takes_replicas() -> None:
    sweep = run_cli._apply_flags(SweepConfig(), [f"j={A},{B}"], None)
    assert [j.replicas for j in sweep.judges] == [(A, B)]
    args = rubric_cli._parser().parse_args(["--judge", f"j={A},{B}"])
    rubric = RubricConfig.model_validate(
        {**dict(RubricConfig()), **rubric_cli._changes(RubricConfig(), args)}
    )
    assert [j.replicas for j in rubric.judges] == [(A, B)]
    args = candidates_cli._parser().parse_args(
        ["--author", f"w={A},{B}", "--paraphraser", f"p={B}"]
    )
    changes = candidates_cli._changes(args, CandidatesConfig())
    built = CandidatesConfig.model_validate({**dict(CandidatesConfig()), **changes})
    assert built.author.replicas == (A, B)
    assert built.paraphraser is not None
    assert built.paraphraser.replicas == (B,)


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        (run_cli.cli, ["--judge", f"j={A},"]),
        (rubric_cli.cli, ["--judge", "nourl"]),
        (candidates_cli.cli, ["--author", "nourl"]),
        (candidates_cli.cli, ["--paraphraser", f"p={A},,{B}"]),
    ],
)
def test_a_bad_flag_is_one_error_line_before_anything_runs(
    command: Callable[[list[str]], int],
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "run"
    assert command([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"error: {argv[0]} ")
    assert "expected NAME=URL[,URL…]" in err
    assert not out.exists()
