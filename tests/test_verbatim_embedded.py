"""The public judge formats in experiments/ end to end on the real embedded judge.

Qwen2.5-Coder 0.5B Instruct (llama.cpp), two items each: FastChat pair (system + its own
placeholder names), pair-math (the item's reference answer), multi-turn (MT-Bench
conversations by turn), Prometheus 2 relative (a fixed rubric, ``[RESULT] A|B``) and
inspect_ai graded QA (``GRADE: C/P/I``, pointwise). Whatever the small judge decides, the
sweep runs unedited prompts on a server that is sent no schema, and every judgment ends valid
or Invalid with its reason; the card rows are printed for the record.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.card.from_run import card_for_run
from tests.conftest import run_cli

EXAMPLES = {
    "fastchat-pair": 2, "fastchat-pair-math": 2, "fastchat-multiturn": 2,
    "prometheus-relative": 2, "inspect-graded-qa": 2,
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_a_public_judge_format_runs_on_the_embedded_judge(
    qwen_judge: str, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "run"
    proc = run_cli("--config", f"experiments/{name}.toml", "--limit", str(EXAMPLES[name]),
                   "--out", str(out), "--judge", f"qwen2.5-coder-0.5b={qwen_judge}",
                   timeout=1500)  # fmt: skip
    assert proc.returncode in (0, 4, 5, 6, 7), proc.stderr  # a card verdict, never a crash
    assert "structured-output" not in proc.stderr
    j = pl.read_parquet(out / "judgments.parquet")
    assert j.height > 0
    assert set(j["protocol"]) == {"own"}
    invalid = j.filter(pl.col("verdict") == "Invalid")
    assert (invalid["invalid_reason"].fill_null("") != "").all()
    if name == "inspect-graded-qa":
        valid = j.filter(pl.col("verdict") != "Invalid")
        grades = set(valid["score_1"].to_list() + valid["score_2"].to_list())
        assert grades <= {0.0, 0.5, 1.0}
        assert set(j["score_min"].drop_nulls()) <= {0.0}
        assert set(j["score_max"].drop_nulls()) <= {1.0}
    reasons = sorted(set(invalid["invalid_reason"].to_list()))
    try:  # a small judge may leave no cue paired with a valid Blind: no card, said so
        rows = card_for_run(out, resamples=200).rows.select("row", "verdict").iter_rows()
        said = "; ".join(f"{r} {v}" for r, v in rows)
    except JudgeprobeError as exc:
        said = f"none ({exc})"
    print(f"{name}: {j.height} judgments, {invalid.height} invalid {reasons}; card {said}")
