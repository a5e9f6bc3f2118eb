"""``--labels`` in any format ``logs`` reads: a log's verdicts as votes on the same items.

Counted from the raw FastChat file (tests/fixtures/real_logs/SOURCES.md), never through the
reader: each call whose winner FastChat's show_result.py can read (model_1, model_2, tie) is
one vote; error calls are not votes.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe.logs.__main__ import cli as logs_cli
from judgeprobe.runs.rundir import RunDir

PAIR = (
    Path(__file__).parent
    / "fixtures"
    / "real_logs"
    / "fastchat"
    / "stefanstud"
    / "model_judgment"
    / "gpt-4_pair.jsonl"
)
READABLE = {"model_1", "model_2", "tie"}


def test_a_fastchat_pair_log_is_a_labels_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [orjson.loads(x) for x in PAIR.read_bytes().splitlines() if x.strip()]
    votes = sum(x[f"{g}_winner"] in READABLE for x in lines for g in ("g1", "g2"))
    out = tmp_path / "run"
    assert logs_cli([str(PAIR), "--labels", str(PAIR), "--out", str(out), "--resamples", "0",
                     "--no-report"]) != 2  # fmt: skip
    printed = capsys.readouterr().out
    assert f"{votes} human labels" in printed
    assert "match no item" not in printed
    labels = pl.read_parquet(RunDir(out).labels)
    assert labels.height == votes
    manifest = json.loads(RunDir(out).manifest_file.read_text())
    assert manifest["config"]["unmatched_labels"] == 0
