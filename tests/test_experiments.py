"""Every shipped experiment config parses, and the default one matches the built-in default."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgeprobe.config import SweepConfig, load_config
from judgeprobe.run import _conditions

EXPERIMENTS = sorted((Path(__file__).resolve().parent.parent / "experiments").glob("*.toml"))


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.name)
def test_experiment_config_is_valid(path: Path) -> None:
    cfg = load_config(path)
    assert set(cfg.conditions) <= set(_conditions(cfg))


def test_default_toml_is_the_builtin_default() -> None:
    path = next(p for p in EXPERIMENTS if p.name == "default.toml")
    assert load_config(path).digest() == SweepConfig().digest()
