"""What every protocol shares: the presentation it judges, the asker it calls, what it returns."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel

from judgeprobe.engine.store import Reply, Result
from judgeprobe.prompts import Template, load_template
from judgeprobe.prompts.judge import JudgePrompt
from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.protocols.names import NUMBERS, Names
from judgeprobe.protocols.replies import ScreenVerdict, named

Message = dict[str, str]
R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Presentation:
    """The texts in *screen* order, with the labels shown beside them.

    ``names``: what the screen calls the two positions (``protocols.names``; "1" and "2" by
    default); every template and reply schema of the judgment follows them.
    """

    document: str
    text_1: str
    text_2: str
    label_1: str
    label_2: str
    names: Names = NUMBERS
    # What a judge's own placeholders name besides the screen slots, in screen terms: item
    # fields and conversation turns (``prompts.judge``), by name. Empty for every other judge.
    addressed: tuple[tuple[str, str], ...] = ()

    def template(self, name: str, task: Task = DEFAULT) -> Template:
        """Template ``name`` in ``task``'s words under this presentation's screen names."""
        return load_template(name, task, self.names)

    def reply(self, model: type[R]) -> type[R]:
        """Reply model ``model`` as the judge is asked for it under these screen names."""
        return named(model, self.names)

    def materials(self, *, labels: bool = True, task: Task = DEFAULT) -> str:
        """The context and both responses, as every protocol shows them (in ``task``'s words)."""
        return self.template("materials_v1", task).fill(
            {
                "DOC_TEXT": self.document,
                "SUM1": self.text_1,
                "SUM2": self.text_2,
                "LABEL_1": f" (label = {self.label_1})" if labels and self.label_1 else "",
                "LABEL_2": f" (label = {self.label_2})" if labels and self.label_2 else "",
            }
        )


class Asker(Protocol):
    """Sends one stage's messages (cached by content key) and returns its stored result."""

    def __call__(
        self, messages: Sequence[Message], reply_model: type[BaseModel], max_tokens: int
    ) -> Awaitable[Result]:
        """Send one stage and return its result (stored, so a resume never re-sends it)."""


class StageFailed(Exception):
    """A stage ended Invalid; the whole judgment is Invalid with this stage's reason."""

    def __init__(self, stage: str, result: Result) -> None:
        super().__init__(f"{stage}: {result.invalid_reason}")
        self.stage = stage
        self.result = result


@dataclass(slots=True)
class Turn:
    """A protocol's answer, in screen terms; ``messages`` can be continued (Reveal-After)."""

    verdict: ScreenVerdict
    explanation: str
    messages: list[Message]
    details: dict[str, Any] = field(default_factory=dict)


class Budgeted(Protocol):
    """A judge's own reply format: it sets the reply's token budget."""

    @property
    def max_tokens(self) -> int:
        """The budget of one reply."""


F = TypeVar("F", bound=Budgeted)


@dataclass(frozen=True)
class OwnPrompted(Generic[F]):
    """Protocol ``own`` for one judge: its own prompt file, its reply read by its own format.

    The base of the pairwise (``protocols.own.OwnJudge``) and the pointwise
    (``protocols.pointwise.OwnScorer``) forms; each says its ``stage`` and how it runs.
    """

    prompt: JudgePrompt = field(repr=False)  # in the key by its hash (``prompt_sha256``)
    fmt: F
    name: str = "own"
    templates: tuple[str, ...] = ()  # no packaged template: the prompt file is hashed apart
    stages: int = 1
    stage: ClassVar[str]  # the budget's stage name

    @property
    def prompt_sha256(self) -> str:
        """The prompt's hash, its judgments' template hash (the prompt-only form: the file's)."""
        return self.prompt.sha256

    @property
    def budgets(self) -> Mapping[str, int]:
        """Each reply's budget, as the judge's format sets it."""
        return {self.stage: self.fmt.max_tokens}


def labelled(text: str, label: str, *, inline: bool) -> str:
    """A response as a judge's own prompt shows it.

    Under ``inline`` (the prompt has no label placeholder) its label goes on the line above it,
    so the cue still reaches the screen.
    """
    return f"(label = {label})\n{text}" if inline and label else text


def user(content: str) -> Message:
    """A user turn of a stage's conversation."""
    return {"role": "user", "content": content}


def assistant(content: str) -> Message:
    """An assistant turn, to continue a conversation after the judge's own reply."""
    return {"role": "assistant", "content": content}


async def ask_stage(
    ask: Asker, stage: str, messages: list[Message], reply_model: type[Reply], max_tokens: int
) -> tuple[Reply, str]:
    """Run one stage; return its reply as ``reply_model`` and the raw text, or raise StageFailed."""
    result = await ask(messages, reply_model, max_tokens)
    reply = result.reply_as(reply_model)
    if reply is None:
        raise StageFailed(stage, result)
    return reply, result.raw


class JudgeProtocol(Protocol):
    """What the sweep needs of a protocol."""

    @property
    def name(self) -> str:
        """The protocol's name as the config and the judgments table spell it."""

    @property
    def templates(self) -> tuple[str, ...]:
        """The prompt templates it uses, hashed into the manifest."""

    @property
    def stages(self) -> int:
        """Requests per judgment, for the plan's cost estimate."""

    @property
    def budgets(self) -> Mapping[str, int]:
        """``max_tokens`` per stage, sized from its reply schema or configured."""
        ...

    async def run(self, p: Presentation, ask: Asker) -> Turn:
        """Judge one presentation through ``ask`` (which caches every stage) into a verdict."""


def templates_hash(
    names: tuple[str, ...], task: Task = DEFAULT, screen: tuple[str, str] = ("1", "2")
) -> str:
    """One hash over the exact text of every template a protocol uses, in ``task``'s words.

    ``screen``: the screen names the templates are read under (``protocols.names``).
    """
    digest = hashlib.sha256()
    for name in sorted(names):
        digest.update(f"{name}:{load_template(name, task, screen).sha256}\n".encode())
    return digest.hexdigest()
