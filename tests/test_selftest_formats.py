"""``selftest --own FORMAT``: each public judge's shape, planted, recovered exactly end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.selftest.__main__ import main
from judgeprobe.selftest.formats import PUBLIC
from judgeprobe.selftest.server import Unreadable, reply
from judgeprobe.selftest.simulator import Biases


@pytest.mark.parametrize("fmt", sorted(PUBLIC))
def test_each_public_format_is_recovered_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    out = tmp_path / fmt
    code = main(["--own", fmt, "--out", str(out), "--items", "4"])
    lines = capsys.readouterr().out.splitlines()
    checks = [line for line in lines if line[:4] in ("PASS", "MISS", "SKIP")]
    assert code == 0, "\n".join(lines)
    assert not [line for line in checks if line.startswith("MISS")]
    assert any("judgments" in line and line.startswith("PASS") for line in checks)
    config = (out / "selftest.toml").read_text()
    assert "[judges.placeholders]" in config
    assert ("system = " in config) == bool(PUBLIC[fmt].system)
    if PUBLIC[fmt].pointwise:  # graded: one grade (0.5 points) up for the favoured label
        assert any("planted +0.500 points, table +0.500" in line for line in checks)


def test_the_planted_judge_reads_only_its_own_system_message() -> None:
    """A request without the format's system message is unreadable: the recovery above proves
    the system prompt was sent."""
    style = PUBLIC["fastchat"].style
    body = {"messages": [{"role": "user", "content": "[User Question]\nq"}]}
    with pytest.raises(Unreadable, match="system message"):
        reply(body, Biases(), ["[User Question]\n{CONTEXT}"], style)


def test_a_format_without_ties_refuses_a_planted_tie_rate(tmp_path: Path) -> None:
    with pytest.raises(JudgeprobeError, match="no tie verdict"):
        main(["--own", "prometheus", "--tie-rate", "0.2", "--out", str(tmp_path / "p")])
