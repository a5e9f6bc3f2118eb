"""Rubric probe configuration: one TOML file (``experiments/rubric-*.toml``) or the defaults.

With no file: the bundled rubric sample, both perturbations from the provided texts, the
deterministic preset, TF-IDF and embedding classifiers, against the embedded judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from judgeprobe.core.files import content_hash
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.runs.config import default_judges, load_toml

Classifier = Literal["tfidf", "embedding", "transformer"]


class RubricConfig(BaseModel):
    """The rubric probe's settings (judges, items, rewrites, classifiers), read from TOML."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="rubric", pattern=r"^[A-Za-z0-9._-]+$")
    items: str = "bundled:rubric"  # or a .jsonl / .csv file
    limit: int = Field(default=0, ge=0)  # 0 = every item
    preset: Literal["deterministic", "paper"] = "deterministic"
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    max_tokens: int = Field(default=160, ge=16)
    perturbations: list[Literal["response", "criterion"]] = ["response", "criterion"]
    reversal: Literal["provided", "llm"] = "provided"
    negation: Literal["provided", "llm", "rule"] = "provided"
    classifiers: list[Classifier] = ["tfidf", "embedding"]
    transformer_dir: str = ""  # a local fine-tunable model directory; never downloaded
    resamples: int = Field(default=DEFAULT_RESAMPLES, ge=0)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    judges: list[JudgeConfig] = Field(default_factory=default_judges, min_length=1)

    def digest(self) -> str:
        """Hash of what decides each judgment.

        Judge URLs, analysis options and ``limit`` are left out: a resume may change them (a larger
        limit extends the run; job keys hash the item contents, so nothing is mixed up).
        """
        body = self.model_dump(
            exclude={"judges", "classifiers", "transformer_dir", "resamples", "engine", "limit"}
        )
        body["judges"] = [j.name for j in self.judges]
        return content_hash(body, 16)


def load_rubric_config(path: Path | None) -> RubricConfig:
    """Read and validate a rubric probe config."""
    return load_toml(path, RubricConfig)
