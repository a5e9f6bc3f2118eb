"""Flags over a TOML config (``config.with_overrides``), shared by the sweep, the rubric probe
and the candidate-set builder: a merged config is validated again as a whole, a problem is one
line naming field and value, and what the flags leave alone stays exactly as validated."""

from __future__ import annotations

import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.candidates.config import CandidatesConfig
from judgeprobe.cue.config import SweepConfig
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.rubric.config import RubricConfig
from judgeprobe.runs.config import with_overrides


def test_untouched_fields_stay_the_validated_objects() -> None:
    judge = JudgeConfig(name="j", url="http://user:secret@127.0.0.1:9/v1")
    cfg = SweepConfig(judges=[judge])
    changed = with_overrides(cfg, {"limit": 3})
    assert changed.limit == 3
    assert changed.judges[0] is cfg.judges[0]  # credentials as first moved out of the URL
    assert changed.judges[0].url_credentials["http://127.0.0.1:9/v1"].get_secret_value() == (
        "user:secret"
    )
    assert with_overrides(cfg, {}) is cfg


@pytest.mark.parametrize(
    ("cfg", "changes", "message"),
    [
        (SweepConfig(), {"limit": -1}, "command line: limit: Input should be greater than or"),
        (RubricConfig(), {"preset": "fast"}, "command line: preset: Input should be"),
        (
            CandidatesConfig(),
            {"min_tokens": 900, "max_tokens": 10},
            "command line: config: min_tokens must not exceed max_tokens",
        ),
    ],
)
def test_a_bad_flag_is_one_line_naming_field_and_value(
    cfg: SweepConfig | RubricConfig | CandidatesConfig, changes: dict[str, object], message: str
) -> None:
    with pytest.raises(JudgeprobeError) as caught:
        with_overrides(cfg, changes)
    text = str(caught.value)
    assert text.startswith(message)
    assert "\n" not in text
    if "config:" not in text:  # a whole-model check has no single value to name
        assert f"(got {next(iter(changes.values()))!r})" in text
