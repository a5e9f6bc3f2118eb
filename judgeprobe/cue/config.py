"""Sweep configuration: one TOML file (``experiments/*.toml``), validated with pydantic.

With no file the defaults below are the default sweep: the bundled sample under Blind (every
item also in the other order, for the position row), True and DegradedNumber (the sensitivity
row) with the Baseline protocol, against the embedded judge at its default URL.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import BLIND, Condition, builtin_conditions, parse_conditions
from judgeprobe.engine.request import Sampling
from judgeprobe.engine.settings import RUN_CONTROL, EngineConfig, JudgeConfig, own_records
from judgeprobe.metrics.flags import Readability
from judgeprobe.prompts.task import Task
from judgeprobe.protocols.names import Scheme
from judgeprobe.protocols.options import ProtocolOptions
from judgeprobe.protocols.registry import protocol_names
from judgeprobe.protocols.wording import wordings_of
from judgeprobe.runs.config import default_judges, load_toml


class SweepConfig(BaseModel):
    """A whole sweep: items × judges × protocols × conditions × orders × seeds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(default="default", pattern=r"^[A-Za-z0-9._-]+$")
    items: str = "bundled:sample"  # or a path to a .jsonl / .parquet candidate set
    subsets: list[str] = Field(default_factory=list)  # keep only these subsets; [] = all
    # Registered protocols (protocols.registry): baseline, scot, pbp and "own", each judge
    # under its own prompt and verdict format ([[judges]] prompt, verdict)
    protocols: list[str] = Field(default=["baseline"], min_length=1)
    # The default sweep: the label (True) and the sensitivity control (DegradedNumber: does the
    # judge read?). Flip and Placebo are left to the paper configs, so that the position share
    # and the sensitivity row fit the demo's ten-minute budget.
    conditions: list[str] = Field(
        default_factory=lambda: [BLIND, "True", "DegradedNumber"], min_length=1
    )
    order: Literal["random", "12", "21", "both"] = "random"
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    limit: int = Field(default=0, ge=0)  # 0 = every item
    # Share of Blind judgments sent again under fresh cache keys (condition BlindRepeat): the
    # judge's own flip rate, the noise floor an anchoring effect is read against.
    repeat: float = Field(default=0.0, ge=0.0, le=1.0)
    # Share of Blind items (per item and seed, seeded) judged in the other presentation order
    # too, on top of order "random", "12" or "21": the card's position row (first-shown
    # excess, McNemar over documents) on every run. No effect with order "both" (every item is
    # judged both ways already) or without Blind.
    swap: float = Field(default=1.0, ge=0.0, le=1.0)
    # What the screen calls the two candidates (protocols.names): "numbers" (Summary 1/2, the
    # paper's prompts), "letters" (Summary A/B) or "ids" (two random IDs per item). A list
    # judges the whole sweep under its first scheme and Blind again, in both orders, under each
    # further one (condition BlindLetters, BlindIds, BlindNumbers): the card's position row per
    # scheme.
    names: Scheme | list[Scheme] = "numbers"
    # Wordings of each built-in protocol's prompt every Blind showing is judged under (the
    # card's wording row): the original and the first wordings − 1 paraphrases
    # (protocols.wording), in both orders wherever Blind has both. 1 = the original only. A
    # judge's own prompt (protocol own) lists its paraphrases on the judge ([[judges]] wordings).
    wordings: int = Field(default=1, ge=1)
    # How many documents are judged (docs/sequential.md). "fixed": every document under every
    # condition. "sequential": documents in rounds of ``round``, in a seeded order, up to
    # ``max_documents`` (0: the items file's); after each round every card row is tested under
    # a group-sequential rule (card.sequential), and a settled row's conditions stop. The run
    # stops when every row is settled, the documents run out, or the next round would pass
    # ``budget_requests`` (0: no budget).
    design: Literal["fixed", "sequential"] = "fixed"
    round: int = Field(default=50, ge=1)
    max_documents: int = Field(default=0, ge=0)
    budget_requests: int = Field(default=0, ge=0)
    sampling: Sampling = Field(default_factory=Sampling)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    protocol: ProtocolOptions = Field(default_factory=ProtocolOptions)
    report: Readability = Field(default_factory=Readability)  # when a cell is flagged unreadable
    judges: list[JudgeConfig] = Field(default_factory=default_judges, min_length=1)
    cues: dict[str, dict[str, Any]] = Field(default_factory=dict)  # user-defined conditions
    # The task's nouns and SCoT/PBP criteria (``prompts.task``): a preset name or a table.
    task: Task = Field(default_factory=Task)

    @model_validator(mode="before")
    @classmethod
    def _weights_of_the_task(cls, data: Any) -> Any:
        """Equal weights over the task's criteria where the config gives none."""
        if not isinstance(data, dict) or "task" not in data:
            return data
        protocol = data.get("protocol") or {}
        if not isinstance(protocol, dict) or "weights" in protocol:
            return data
        try:
            criteria = Task.model_validate(data["task"]).criteria
        except ValidationError:
            return data  # the field's own validation names the problem
        return {**data, "protocol": {**protocol, "weights": dict.fromkeys(criteria, 1.0)}}

    @model_validator(mode="after")
    def _known_criteria(self) -> SweepConfig:
        unknown = set(self.protocol.weights) - set(self.task.criteria)
        if unknown:
            raise ValueError(
                f"protocol.weights: unknown criterion {sorted(unknown)[0]!r} (the task's: "
                f"{', '.join(self.task.criteria)})"
            )
        return self

    @field_validator("protocols")
    @classmethod
    def _registered(cls, protocols: list[str]) -> list[str]:
        known = protocol_names()
        for name in protocols:
            if name not in known:
                raise ValueError(f"protocol {name!r} is not one of {', '.join(known)}")
        return protocols

    @field_validator("judges")
    @classmethod
    def _unique_names(cls, judges: list[JudgeConfig]) -> list[JudgeConfig]:
        names = [j.name for j in judges]
        if len(set(names)) != len(names):
            raise ValueError("judge names must be unique")
        return judges

    @model_validator(mode="after")
    def _repeat_needs_blind(self) -> SweepConfig:
        if self.repeat and BLIND not in self.conditions:
            raise ValueError("repeat re-sends Blind judgments: add Blind to conditions")
        return self

    @model_validator(mode="after")
    def _own_needs_prompts(self) -> SweepConfig:
        bare = [j.name for j in self.judges if not j.has_prompt]
        if "own" in self.protocols and bare:
            raise ValueError(
                f"protocol own judges each judge under its own prompt: judge {bare[0]} has "
                "none (give it prompt and verdict)"
            )
        return self

    @model_validator(mode="after")
    def _names_known(self) -> SweepConfig:
        schemes = self.schemes
        if not schemes:
            raise ValueError("names: give at least one scheme (numbers, letters or ids)")
        if len(set(schemes)) != len(schemes):
            raise ValueError("names: each scheme once")
        if len(schemes) > 1 and BLIND not in self.conditions:
            raise ValueError("names with further schemes judges Blind under each: add Blind "
                             "to conditions")  # fmt: skip
        if "own" in self.protocols and schemes != ["numbers"]:
            raise ValueError("names: protocol own shows a judge's own prompt, which names "
                             "the candidates itself; label schemes apply to the built-in "
                             "protocols")  # fmt: skip
        return self

    @property
    def schemes(self) -> list[Scheme]:
        """The label schemes, the sweep's own first (``names`` as a list)."""
        return [self.names] if isinstance(self.names, str) else list(self.names)

    @field_validator("wordings", mode="before")
    @classmethod
    def _a_count(cls, value: Any) -> Any:
        if isinstance(value, list):
            raise ValueError(
                "a list of prompt files is a judge's own prompt's wordings: put it on the judge "
                "([[judges]] wordings = [...]); the sweep's wordings counts the built-in "
                "protocols' wordings (wordings = 3)"
            )
        return value

    @model_validator(mode="after")
    def _wordings_shipped(self) -> SweepConfig:
        """``wordings`` within what every built-in protocol ships; each wording judges Blind."""
        builtin = [p for p in self.protocols if p != "own"]
        worded = self.wordings > 1 or any(j.wordings for j in self.judges)
        if worded and BLIND not in self.conditions:
            raise ValueError("wordings re-judge the Blind showings: add Blind to conditions")
        if self.wordings > 1 and not builtin:
            raise ValueError(
                f"wordings = {self.wordings} counts the built-in protocols' wordings, and the "
                "sweep has none: protocol own's wordings are its judges' ([[judges]] wordings)"
            )
        for name in builtin:
            if self.wordings > (have := wordings_of(name)):
                raise ValueError(
                    f"wordings = {self.wordings}: protocol {name} ships {have} (the original "
                    f"and {have - 1} paraphrases)"
                )
        listed = [j.name for j in self.judges if j.wordings]
        if listed and "own" not in self.protocols:
            raise ValueError(
                f"judge {listed[0]}'s wordings are paraphrases of its own prompt, judged under "
                "protocol own: add own to protocols"
            )
        return self

    @model_validator(mode="after")
    def _sequential_rows(self) -> SweepConfig:
        """A sequential design settles the tested rows; the wording rows have no sequential rule."""
        worded = self.wordings > 1 or any(j.wordings for j in self.judges)
        if self.design == "sequential" and worded:
            raise ValueError(
                'design = "sequential" settles the card\'s tested rows round by round; the '
                "wording rows have no sequential rule: judge wordings under a fixed design"
            )
        fixed_only = [k for k in ("max_documents", "budget_requests") if getattr(self, k)]
        if self.design == "fixed" and fixed_only:
            raise ValueError(f'{fixed_only[0]} needs design = "sequential"')
        return self

    @property
    def texts_only(self) -> frozenset[str]:
        """The judges the sweep never sends a schema: every protocol reads their free text.

        Only under protocol ``own`` alone, for a judge whose own format is a pattern (a
        built-in protocol or a JSON verdict is sent a schema); their start-up probe asks for a
        reply, not for schema enforcement.
        """
        if any(p != "own" for p in self.protocols):
            return frozenset()
        return frozenset(j.name for j in self.judges if j.own_reads_text)

    @property
    def swaps(self) -> float:
        """The share of Blind items judged in the other order too: 0 where ``swap`` adds none."""
        return self.swap if self.order != "both" and BLIND in self.conditions else 0.0

    def digest(self) -> str:
        """Hash of everything that decides the requests (judge URLs excluded: swappable)."""
        # Digests from before repeat, swap and wordings existed, where they change nothing.
        unset = ({"repeat"} if not self.repeat else set()) | ({"swap"} if not self.swaps else set())
        unset |= {"wordings"} if self.wordings == 1 else set()
        unset |= {"task"} if self.task.is_default else set()  # digests from before the task
        unset |= {"names"} if self.schemes == ["numbers"] else set()  # from before names existed
        if self.design == "fixed":  # digests from before sequential designs
            unset |= {"design", "round", "max_documents"}
        unset |= {"budget_requests"}  # a run control: a resume may raise the budget
        body = self.model_dump(exclude={"judges", "report"} | unset)
        body["judges"] = [j.name for j in self.judges]
        own = own_records(self.judges)
        if own:  # a judge's own prompt and verdict format decide its requests
            body["own_prompts"] = own
        for knob in RUN_CONTROL:  # resumable either way
            body["engine"].pop(knob)
        return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def load_config(path: Path | None) -> SweepConfig:
    """The sweep config in ``path``, or the default sweep."""
    return load_toml(path, SweepConfig)


def sweep_conditions(cfg: SweepConfig) -> dict[str, Condition]:
    """Every condition the config may name: the bundled ones and its own ``[cues.NAME]``."""
    conditions = {**builtin_conditions(), **parse_conditions(cfg.cues, "config cues")}
    unknown = [c for c in cfg.conditions if c not in conditions]
    if unknown:
        raise JudgeprobeError(
            f"unknown condition {unknown[0]!r} (known: {', '.join(sorted(conditions))}; "
            "define new ones under [cues.NAME] in the config)"
        )
    return conditions
