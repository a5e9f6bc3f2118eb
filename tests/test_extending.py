"""The contributor's map holds: a protocol added the documented way runs a whole sweep.

docs/development.md, "Adding a protocol": write the class, call ``register_protocol``. This toy
protocol is registered exactly so (into a copy of the registry, dropped after the test); the
sweep config accepts its name, the plan builds it, the engine judges with it, and the metrics
compare it after the built-in protocols.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.cue.config import load_config
from judgeprobe.cue.run import main
from judgeprobe.protocols import registry
from judgeprobe.protocols.base import Asker, Presentation, Turn, ask_stage, assistant, user
from judgeprobe.protocols.options import ProtocolOptions
from judgeprobe.protocols.registry import ProtocolSetup, protocol_names, register_protocol
from judgeprobe.protocols.replies import PairwiseReply
from tests.conftest import make_items, write_config
from tests.fakeserver import FakeJudge


@dataclass(frozen=True)
class Terse:
    """A toy protocol: one request, the materials and a one-line question."""

    budgets: Mapping[str, int] = field(default_factory=lambda: {"verdict": 256})
    name: str = "terse"
    templates: tuple[str, ...] = ("materials_v1",)
    stages: int = 1

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        messages = [user(f"{p.materials()}\n\nWhich response is better? Answer in JSON.")]
        model = p.reply(PairwiseReply)
        reply, raw = await ask_stage(ask, "verdict", messages, model, self.budgets["verdict"])
        return Turn(reply.verdict, reply.explanation, [*messages, assistant(raw)])


@pytest.fixture
def terse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_protocol("terse", lambda setup: Terse())


@pytest.mark.usefixtures("terse")
def test_a_registered_protocol_runs_a_sweep_beside_the_built_in_ones(tmp_path: Path) -> None:
    assert protocol_names()[-1] == "terse"
    with pytest.raises(ValueError, match="registered already"):
        register_protocol("terse", lambda setup: Terse())
    assert isinstance(registry.build_protocol("terse", ProtocolSetup(ProtocolOptions())), Terse)
    items = make_items(tmp_path / "items.jsonl", 2)
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, protocols=["terse", "baseline"],
                           conditions=["Blind", "True"], order="12")  # fmt: skip
        assert main(["--config", str(cfg), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    judgments = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    terse_rows = judgments.filter(pl.col("protocol") == "terse")
    assert terse_rows.height == 4
    assert set(terse_rows["verdict"]) <= {"A", "B", "Tie"}
    # compared after the built-in protocol, as the registry orders them
    ci = pl.read_csv(tmp_path / "run" / "metrics_ci.csv")
    versus = ci.filter(pl.col("versus").str.starts_with("protocol="))
    assert set(versus["protocol"]) == {"terse"}
    assert set(versus["versus"]) == {"protocol=baseline"}


def test_a_protocol_no_one_registered_is_one_config_error(tmp_path: Path) -> None:
    cfg = write_config(tmp_path / "c.toml", "http://127.0.0.1:9/v1", "bundled:sample",
                       protocols=["terse"])  # fmt: skip
    with pytest.raises(JudgeprobeError, match="protocol 'terse' is not one of baseline"):
        load_config(cfg)
