"""Every shipped experiment config is valid; paper-scale and smoke-scale twins ask the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.config import SweepConfig, load_config
from judgeprobe.corpus import load_items
from judgeprobe.run import _conditions, sweep_items

ROOT = Path(__file__).resolve().parent.parent / "experiments"
EXPERIMENTS = sorted(ROOT.rglob("*.toml"))
GROUPS = sorted(p.stem for p in (ROOT / "paper").glob("*.toml"))
PAPER_JUDGES = {"gemma-2-9b", "llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "zephyr-7b"}
# One config per paper table or figure group.
PAPER_GROUPS = {"blind", "cue-labels", "same-model", "identical", "llm-vs-extractive",
                "verbosity", "confidence", "reveal-after"}  # fmt: skip


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_experiment_config_is_valid(path: Path) -> None:
    cfg = load_config(path)
    assert set(cfg.conditions) <= set(_conditions(cfg))


def test_every_paper_group_has_a_config() -> None:
    assert set(GROUPS) == PAPER_GROUPS


@pytest.mark.parametrize("group", GROUPS)
def test_smoke_twin_asks_what_the_paper_scale_asks(group: str) -> None:
    paper = load_config(ROOT / "paper" / f"{group}.toml")
    smoke = load_config(ROOT / "smoke" / f"{group}.toml")
    same = ("protocols", "conditions", "subsets", "order", "cues")
    assert {k: getattr(paper, k) for k in same} == {k: getattr(smoke, k) for k in same}
    assert {j.name for j in paper.judges} == PAPER_JUDGES
    assert [j.name for j in smoke.judges] == ["gemma3-270m"]
    assert 0 < smoke.limit <= 5
    # The smoke set is bundled and holds the subsets the group needs.
    subsets = {item.subset for item in load_items(smoke.items)}
    assert set(smoke.subsets) <= subsets


def test_default_toml_is_the_builtin_default() -> None:
    assert load_config(ROOT / "default.toml").digest() == SweepConfig().digest()


def test_subsets_select_items_before_the_limit() -> None:
    cfg = load_config(ROOT / "smoke" / "verbosity.toml")
    items = sweep_items(cfg)
    assert len(items) == cfg.limit
    assert {i.subset for i in items} == {"identical"}
    # The bundled set lists llm_vs_extractive first: the filter, not the order, chose these.
    assert load_items(cfg.items)[0].subset != "identical"
    with pytest.raises(JudgeprobeError, match="no item in subsets nope"):
        sweep_items(cfg.model_copy(update={"subsets": ["nope"]}))
