"""``judgeprobe compare`` end to end on the real embedded judge: two prompts of one judge.

Qwen2.5-Coder 0.5B Instruct (llama.cpp) judges two items of the bundled Q&A set under the
FastChat pair-v2 format twice, with ``experiments/fastchat-pair.toml``'s system prompt and with
``fastchat-pair-order.toml``'s (the order is random: give the verdict either order would get).
Whatever the small judge decides, the comparison pairs the position row over the shared
documents and writes its files; the row is printed for the record.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.embedded


def test_two_prompts_of_the_embedded_judge_compared(qwen_judge: str, tmp_path: Path) -> None:
    runs = []
    for name in ("fastchat-pair", "fastchat-pair-order"):
        out = tmp_path / name
        proc = run_cli("--config", f"experiments/{name}.toml", "--limit", "2", "--out", str(out),
                       "--judge", f"qwen2.5-coder-0.5b={qwen_judge}", timeout=1500)  # fmt: skip
        assert proc.returncode in (0, 4, 5, 6, 7), proc.stderr  # a card verdict, never a crash
        runs.append(str(out))
    proc = subprocess.run(
        [sys.executable, "-m", "judgeprobe", "compare", *runs, "--out", str(tmp_path / "compared")],
        capture_output=True, text=True, timeout=600, cwd=ROOT, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    document = json.loads((tmp_path / "compared" / "compare.json").read_text())
    (comparison,) = document["comparisons"]
    assert comparison["shared_items"] == 2
    assert (comparison["only_first"], comparison["only_second"]) == (0, 0)
    assert all(run["cost"]["tokens_per_judgment"] for run in document["runs"])
    position = [r for r in comparison["rows"] if r["row"] == "position"]
    print(proc.stdout)
    assert len(position) == 1
