"""The self-test's judges that read and that do not: the card recovers a planted sensitivity
and calls a blind judge (always the first-shown summary, or always Tie) INSENSITIVE, never
CLEAR."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from judgeprobe.core.cli import main_guard
from judgeprobe.selftest.__main__ import main

ITEMS = "40"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main_guard(lambda: main(list(args)))
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).splitlines()


def _checks(lines: list[str], effect: str) -> list[str]:
    return [line for line in lines if line[:4] in ("PASS", "MISS", "SKIP") and effect in line]


def _passed(capsys: pytest.CaptureFixture[str], out: Path, effect: str, *args: str) -> pl.DataFrame:
    """A self-test run into ``out`` whose three ``effect`` checks pass: the card it wrote."""
    code, lines = _run(capsys, "--out", str(out), "--items", ITEMS, *args)
    assert code == 0, "\n".join(lines)
    found = _checks(lines, effect)
    assert len(found) == 3, "\n".join(lines)
    assert all(line.startswith("PASS") for line in found), "\n".join(lines)
    return pl.read_csv(out / "card.csv")


def test_a_planted_sensitivity_is_recovered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "read"
    card = _passed(capsys, out, "sensitivity", "--sensitivity", "0.8")
    assert set(card.filter(pl.col("kind") == "sensitivity")["verdict"]) == {"SENSITIVE"}
    # Another rate planted than the run's: the stored verdicts no longer match it.
    code, lines = _run(capsys, "--out", str(out), "--check-only", "--sensitivity", "0.3")
    assert code == 1, "\n".join(lines)
    assert all(line.startswith("MISS") for line in _checks(lines, "sensitivity")), lines


@pytest.mark.parametrize("mode", ["first", "tie"])
def test_a_blind_judge_is_insensitive_never_clear(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    card = _passed(capsys, tmp_path / mode, "blind judge", "--blind", mode)
    assert set(card.filter(pl.col("kind") == "sensitivity")["verdict"]) == {"INSENSITIVE"}
    assert "CLEAR" not in set(card["verdict"])
