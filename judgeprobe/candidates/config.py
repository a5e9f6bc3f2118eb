"""The data set builder's settings: one TOML file or command-line flags, validated."""

from __future__ import annotations

import math
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from judgeprobe.core.files import content_hash
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.runs.config import embedded_judge

Subset = Literal["llm_vs_extractive", "eq_pair", "same_model", "single_relabel", "identical"]
Method = Literal["textrank", "lexrank", "klsum", "sumbasic"]
Attack = Literal["verbosity", "confidence"]
AttackMethod = Literal["llm", "rule"]

#: The paired subsets, in the order rows are written.
SUBSETS: tuple[str, ...] = get_args(Subset)


def _author() -> JudgeConfig:
    return embedded_judge("gemma3-270m")


class CandidatesConfig(BaseModel):
    """Everything that decides a candidate set (with the corpus file's content)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    corpus: str = "bundled:corpus"
    limit: int = Field(default=0, ge=0)  # 0 = every document
    min_tokens: int = Field(default=500, ge=0)  # document length filter (paper: 500–1,200)
    max_tokens: int = Field(default=1200, ge=1)
    judge_context: int = Field(default=0, ge=0)  # 0 = ask the server (llama-server), else skip
    words: int = Field(default=40, ge=10)  # LLM summary word budget (the paper used 500)
    extractive_words: int = Field(default=0, ge=0)  # 0 = match each document's LLM summary
    methods: list[Method] = Field(default_factory=lambda: list(get_args(Method)), min_length=1)
    subsets: list[Subset] = Field(default_factory=lambda: list(get_args(Subset)), min_length=1)
    attacks: list[Attack] = Field(default_factory=lambda: list(get_args(Attack)))
    attack_methods: list[AttackMethod] = Field(default_factory=lambda: list(get_args(AttackMethod)))
    relabel_opponent: Literal["same_model", "textrank", "lexrank", "klsum", "sumbasic"] = (
        "same_model"
    )
    seed: int = 0
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)  # the reference summary
    sample_temperature: float = Field(default=0.8, gt=0.0, le=2.0)  # draws and paraphrases
    similarity_threshold: float = Field(default=0.75, ge=-1.0, le=1.0)
    keep_flagged: bool = False  # keep rewrites that fail the preservation check (flagged)
    author: JudgeConfig = Field(default_factory=_author)
    # The LLM that writes the eq_pair paraphrases (both of them), when not the author: a tiny
    # author's paraphrases add facts and fail the preservation check (judgeprobe/data/candidates).
    paraphraser: JudgeConfig | None = None
    # No re-asks by default: a reply cut at max_tokens is salvaged, and a re-ask would pay the
    # whole generation again; raise it for servers without structured output.
    engine: EngineConfig = Field(default_factory=lambda: EngineConfig(max_reasks=0))

    @model_validator(mode="after")
    def _consistent(self) -> CandidatesConfig:
        if self.min_tokens > self.max_tokens:
            raise ValueError("min_tokens must not exceed max_tokens")
        if self.relabel_opponent != "same_model" and self.relabel_opponent not in self.methods:
            raise ValueError(f"relabel_opponent {self.relabel_opponent} is not among methods")
        if self.paraphraser is not None and self.paraphraser.name == self.author.name:
            # Both are probed and addressed by name: one name would send both roles' requests
            # to one of the two servers.
            raise ValueError("the paraphraser needs a name other than the author's")
        return self

    def digest(self) -> str:
        """Hash of the settings (the author URL excluded: a moved server builds the same set)."""
        body = self.model_dump(exclude={"author", "paraphraser"})
        if self.paraphraser is not None:  # absent: digests from before the option stay
            body["paraphraser"] = self.paraphraser.model_dump(exclude={"url", "urls"})
        body["author"] = self.author.model_dump(exclude={"url", "urls", "url_credentials"})
        return content_hash(body, 16)

    def max_tokens_for(self, kind: str) -> int:
        """The generation budget (``max_tokens``) of an author request.

        The word budget at ~1.3 tokens a word with a quarter's slack, twice that for the verbosity
        attack, plus the JSON around the text.
        """
        tokens = math.ceil(self.words * 1.3 * 1.25) * (2 if kind == "verbosity" else 1)
        return tokens + 16
