"""The self-test's battery design plants a battery cue and a self-preference and recovers both;
the default design's biases keep their digest (its stored runs and figures are untouched)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgeprobe.core.cli import main_guard
from judgeprobe.protocols.base import Presentation
from judgeprobe.selftest.__main__ import main
from judgeprobe.selftest.simulator import OWN_STYLE, Biases, decide

ITEMS = "100"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main_guard(lambda: main(list(args)))
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).splitlines()


def test_battery_design_recovers_the_planted_cue_and_self_preference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "battery"
    code, lines = _run(capsys, "--battery", "--out", str(out), "--items", ITEMS)
    checks = [line for line in lines if line[:4] in ("PASS", "MISS", "SKIP")]
    assert code == 0, "\n".join(lines)
    labels = [c for c in checks if "label anchoring" in c]
    for condition in ("SelfID:", "SelfIDFlip:", "SelfOwn:", "SelfOther:"):
        (line,) = [c for c in labels if condition in c]
        assert line.startswith("PASS"), line
    assert "LDS − SelfIDPlacebo" in next(c for c in labels if "SelfID:" in c)
    (self_line,) = [c for c in checks if "self-preference" in c]
    assert self_line.startswith("PASS"), self_line
    report = (out / "report.md").read_text()
    assert "## Self-preference" in report
    assert "## Cue battery" in report
    assert "## Cue-controlled win rate" in report
    # planted values changed after the sweep: the self-preference line misses
    code, lines = _run(capsys, "--battery", "--out", str(out), "--check-only",
                       "--self-preference", "0.05")  # fmt: skip
    assert code == 1
    assert any(line.startswith("MISS") and "self-preference" in line for line in lines)


def test_the_added_biases_leave_the_default_digest_and_decisions() -> None:
    assert Biases().digest() == Biases(self_preference=0.0).digest()
    assert Biases().digest() != Biases(self_preference=0.3).digest()
    own = f"The plan was approved. {OWN_STYLE}, that was it."
    other = "The plan was approved by the board. In brief, that was it."
    p = Presentation("A document.", other, own, "", "")
    always = Biases(tie_rate=0, position=0, verbosity=0, self_preference=1.0)
    assert decide(p, always).winner == 2
    assert decide(p, always).evidence == 2  # a taste, not a cue: Blind has it too
    never = Biases(tie_rate=0, position=0, verbosity=0)
    assert decide(p, never).winner == decide(p, never).taste
