"""A judge's own prompt as its users send it: its messages, its placeholder names, what fills them.

Three forms (``[[judges]]`` in a sweep config):

- ``prompt`` alone: one user message;
- ``system`` beside ``prompt``: a system message, then the user message;
- ``messages``: a JSON list of ``{role, content}`` messages (several turns allowed, the last
  one the user's), sent as written.

Without ``placeholders`` every text holds judgeprobe's own names (``{CONTEXT}``,
``{RESPONSE_1}``, …; ``LEGACY``). With ``placeholders`` every text is a ``str.format`` template
(as FastChat, Prometheus and inspect_ai fill theirs: ``{{`` is a literal brace) and each of its
placeholders names what fills it:

- a **screen slot** (``PAIRWISE``, ``POINTWISE``): the item's context and the responses and
  their labels in the order this judgment shows them, so the order randomisation and every cue
  apply whatever keys the items file used;
- a **conversation turn** (``turn_K.user``, ``turn_K.response_1``, ``turn_K.response_2``; a
  pointwise judge's ``turn_K.response``): the K-th user message of a conversation item
  (``core.layouts``' MT-Bench layout) and the K-th reply of the response shown first or second;
- any other name: a **field of the item** as the items file writes it (a reference answer, a
  rubric);
- ``{ text = "…" }``: a fixed text.

Every placeholder must be mapped and every mapped name used; the responses must be shown. A
problem is a ``ValueError`` of one line naming the file.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from judgeprobe.core.records import Item
from judgeprobe.prompts import Template, load_prompt_file


class Fixed(BaseModel):
    """A placeholder filled with the same text in every request (``{ text = "…" }``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str


Source = str | Fixed
"""What fills one placeholder: a target (screen slot, conversation turn, item field) or text."""

PAIRWISE = ("context", "response_1", "response_2", "label_1", "label_2")
"""A pairwise judge's screen slots, in screen order."""
POINTWISE = ("context", "response", "label")
"""A pointwise judge's screen slots: the one response it scores and its label."""
LABEL_SLOTS = frozenset({"label_1", "label_2", "label"})
LEGACY = {
    "CONTEXT": "context",
    "RESPONSE_1": "response_1",
    "RESPONSE_2": "response_2",
    "LABEL_1": "label_1",
    "LABEL_2": "label_2",
}
"""judgeprobe's own placeholder names (a prompt without ``placeholders``) and their slots."""
LEGACY_POINTWISE = {"CONTEXT": "context", "RESPONSE": "response", "LABEL": "label"}
TURN = re.compile(r"turn_([1-9][0-9]*)\.(user|response_1|response_2|response)")
"""A conversation-turn target: ``turn_K.user`` or ``turn_K.response_J`` (``turn_K.response``)."""
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
Role = Literal["system", "user", "assistant", "developer"]


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str


@dataclass(frozen=True)
class Part:
    """One message of the judge's prompt: its role and its template."""

    role: str
    template: Template


@dataclass(frozen=True)
class JudgePrompt:
    """A judge's own prompt, checked: its messages, and what fills each placeholder.

    ``sha256`` is the judgments' template hash: the prompt file's own hash for the prompt-only
    form (as before system prompts existed), else a hash of every message's text, its role and
    the placeholders' mapping.
    """

    name: str  # the file a user knows it by: the prompt file or the messages file
    parts: tuple[Part, ...]
    mapping: tuple[tuple[str, Source], ...]
    pointwise: bool
    sha256: str

    @property
    def sources(self) -> dict[str, Source]:
        """Each placeholder's source."""
        return dict(self.mapping)

    @property
    def targets(self) -> frozenset[str]:
        """Every slot, turn and item field a placeholder is filled from."""
        return frozenset(s for s in self.sources.values() if isinstance(s, str))

    @property
    def addressed(self) -> tuple[str, ...]:
        """The targets that are not screen slots (turns and item fields), sorted."""
        slots = POINTWISE if self.pointwise else PAIRWISE
        return tuple(sorted(t for t in self.targets if t not in slots))

    @property
    def turns(self) -> tuple[str, ...]:
        """The conversation-turn targets."""
        return tuple(t for t in self.addressed if TURN.fullmatch(t))

    @property
    def on_screen(self) -> tuple[str, ...]:
        """What a judgment carries besides its screen slots, in screen terms.

        Item fields, and each turn with its response as shown (a pointwise judge's
        ``turn_K.response`` is needed for both responses, one per request).
        """
        out: list[str] = []
        for target in self.addressed:
            turn = TURN.fullmatch(target)
            if turn is not None and turn.group(2) == "response":
                out += [f"{target}_1", f"{target}_2"]
            else:
                out.append(target)
        return tuple(out)

    def first_place(self, slot: str) -> str | None:
        """Where a response first reaches the screen: its slot, or its earliest turn (None)."""
        if slot in self.targets:
            return slot
        turns = [t for t in self.targets if (m := TURN.fullmatch(t)) and m.group(2) == slot]
        return min(turns, key=lambda t: int(t.split(".")[0][5:]), default=None)

    @property
    def labels_in_place(self) -> bool:
        """Whether a placeholder shows a label; else each label sits above its response."""
        return bool(self.targets & LABEL_SLOTS)

    @property
    def user_template(self) -> Template:
        """The last user message's template (the one a wording replaces)."""
        return next(p.template for p in reversed(self.parts) if p.role == "user")

    def fill(self, values: Mapping[str, str]) -> list[dict[str, str]]:
        """The messages sent, each placeholder filled from ``values`` (text by target)."""
        filled = {
            name: source.text if isinstance(source, Fixed) else values[source]
            for name, source in self.mapping
        }
        return [{"role": p.role, "content": p.template.fill(filled)} for p in self.parts]

    @property
    def plain(self) -> bool:
        """The prompt-only ``{CONTEXT}`` form: its hash is the prompt file's own."""
        return len(self.parts) == 1 and self.parts[0].template.style == "upper"

    def record(self) -> dict[str, object]:
        """What the manifest and the config digest record beyond its files' hashes.

        Nothing for the prompt-only ``{CONTEXT}`` form (its records stay as they were).
        """
        if self.plain:
            return {}
        out: dict[str, object] = {"template_hash": self.sha256}
        if self.parts[0].template.style == "format":
            out["placeholders"] = {
                name: source.model_dump() if isinstance(source, Fixed) else source
                for name, source in self.mapping
            }
        return out


def _assembled(
    name: str,
    parts: tuple[Part, ...],
    mapping: tuple[tuple[str, Source], ...],
    *,
    pointwise: bool,
) -> JudgePrompt:
    """A prompt with its hash: the prompt file's own for the prompt-only form, else every part's."""
    if len(parts) == 1 and parts[0].template.style == "upper":
        sha = parts[0].template.sha256
    else:
        body = {
            "messages": [[p.role, p.template.sha256] for p in parts],
            "placeholders": {k: v.model_dump() if isinstance(v, Fixed) else v for k, v in mapping},
        }
        sha = hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return JudgePrompt(name, parts, mapping, pointwise, sha)


def load_messages_file(path: str) -> tuple[Part, ...]:
    """A messages file: a JSON list of ``{role, content}``, the last one a user message.

    Each content is a template, hashed as read; ValueError (one line) when it is not such a list.
    """
    raw = load_prompt_file(path)
    try:
        data = orjson.loads(raw.text)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"messages file {path}: not JSON ({exc})") from None
    if not isinstance(data, list) or not data:
        raise ValueError(f"messages file {path}: must be a non-empty list of {{role, content}}")
    parts = []
    for k, entry in enumerate(data, start=1):
        try:
            msg = _Message.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise ValueError(
                f"messages file {path}: message {k}: {where + ': ' if where else ''}{first['msg']}"
            ) from None
        text = msg.content
        sha = hashlib.sha256(text.encode()).hexdigest()
        parts.append(Part(msg.role, Template(f"{path} message {k}", text, sha)))
    if parts[-1].role != "user":
        raise ValueError(
            f"messages file {path}: the last message must be the user's (the judge replies to it)"
        )
    return tuple(parts)


def judge_prompt(
    prompt: Template | None,
    system: Template | None,
    messages: Sequence[Part],
    placeholders: Mapping[str, Source],
    *,
    pointwise: bool,
) -> JudgePrompt:
    """The judge's prompt from its files, checked; ValueError (one line) naming what is wrong.

    Give ``prompt`` (with an optional ``system``) or ``messages``.
    """
    if prompt is not None:
        parts = ((Part("system", system),) if system is not None else ()) + (Part("user", prompt),)
        name = prompt.name
    else:
        parts = tuple(messages)
        name = parts[0].template.name.rsplit(" message ", 1)[0]
    if not placeholders:
        return _legacy(name, parts, pointwise=pointwise)
    parts = tuple(Part(p.role, p.template.as_format()) for p in parts)
    used: dict[str, str] = {}
    for part in parts:
        for placeholder in sorted(part.template.placeholders):
            used.setdefault(placeholder, part.template.name)
            if placeholder not in placeholders:
                raise ValueError(
                    f"prompt file {part.template.name}: placeholder {{{placeholder}}} is not "
                    "mapped: add it to placeholders (a screen slot, a conversation turn, an item "
                    'field, or { text = "…" })'
                )
    for placeholder, source in placeholders.items():
        if placeholder not in used:
            raise ValueError(
                f"placeholders: {{{placeholder}}} is in no text of the judge's prompt ({name})"
            )
        if isinstance(source, str):
            _check_target(placeholder, source, pointwise=pointwise)
    mapping = tuple(sorted(placeholders.items()))
    joined = _assembled(name, parts, mapping, pointwise=pointwise)
    _check_shown(joined, name, pointwise=pointwise)
    return joined


def _check_target(placeholder: str, target: str, *, pointwise: bool) -> None:
    """A target names a slot of this kind of judge, a conversation turn, or an item field."""
    mine, other = (POINTWISE, PAIRWISE) if pointwise else (PAIRWISE, POINTWISE)
    where = f"placeholders: {{{placeholder}}} = {target!r}"
    kind = "a pointwise" if pointwise else "a pairwise"
    if target in other and target not in mine:
        raise ValueError(f"{where}: {kind} judge's screen slots are {', '.join(mine)}")
    turn = TURN.fullmatch(target)
    if turn and (turn.group(2) == "response") != pointwise and turn.group(2) != "user":
        wanted = "response" if pointwise else "response_1 or response_2"
        raise ValueError(f"{where}: {kind} judge's turns are turn_K.user and turn_K.{wanted}")
    if target.startswith("turn_") and not turn:
        raise ValueError(
            f"{where}: a conversation turn is turn_K.user or turn_K.response… (K from 1)"
        )
    if not _FIELD.fullmatch(target):
        raise ValueError(f"{where}: not a screen slot, a conversation turn or an item field name")


def _check_shown(prompt: JudgePrompt, name: str, *, pointwise: bool) -> None:
    """Every response reaches the judge: its slot, or one of its conversation turns."""
    for slot in ("response",) if pointwise else ("response_1", "response_2"):
        turned = any(TURN.fullmatch(t) and t.endswith(f".{slot}") for t in prompt.targets)
        if slot not in prompt.targets and not turned:
            raise ValueError(
                f"prompt file {name}: no placeholder is filled from {slot}: the judge would "
                "not see it"
            )


def _legacy(name: str, parts: tuple[Part, ...], *, pointwise: bool) -> JudgePrompt:
    """The project's own form: ``{CONTEXT}``, ``{RESPONSE_1}``… in every text, nothing mapped."""
    names = LEGACY_POINTWISE if pointwise else LEGACY
    found: set[str] = set()
    for part in parts:
        unknown = sorted(part.template.placeholders - set(names))
        if unknown:
            known = " ".join(f"{{{p}}}" for p in names)
            kind = "a pointwise judge's prompt has " if pointwise else ""
            raise ValueError(
                f"prompt file {part.template.name}: unknown placeholder {{{unknown[0]}}} "
                f"({kind}{known})"
            )
        found |= part.template.placeholders
    shown = ("RESPONSE",) if pointwise else ("RESPONSE_1", "RESPONSE_2")
    missing = [p for p in shown if p not in found]
    if missing:
        raise ValueError(f"prompt file {name}: no {{{missing[0]}}}: the judge would not see it")
    mapping = tuple((p, names[p]) for p in sorted(found))
    return _assembled(name, parts, mapping, pointwise=pointwise)


def turn_text(item: Item, target: str, *, swap: bool) -> str | None:
    """The text of a conversation-turn target (screen terms) for ``item``; None when it has none.

    ``turn_K.user``: the K-th user message of the first candidate's conversation (a
    conversation item's questions are shared); ``turn_K.response_J``: the K-th assistant
    message of the response shown J-th (``swap``: candidate 2 is shown first).
    """
    found = TURN.fullmatch(target)
    if found is None:
        return None
    k, what = int(found.group(1)), found.group(2)
    shown = int(what[-1]) if what != "user" else 1
    candidate = 3 - shown if swap and what != "user" else shown
    conversation = item.conversation_1 if candidate == 1 else item.conversation_2
    role = "user" if what == "user" else "assistant"
    said = [m.content for m in conversation if m.role == role]
    return said[k - 1] if k <= len(said) else None


def addressed_texts(names: Sequence[str], item: Item, *, swap: bool) -> tuple[tuple[str, str], ...]:
    """What fills each of ``names`` (``JudgePrompt.on_screen``) for ``item`` shown ``swap``-ped.

    KeyError naming the first one the item lacks (``missing`` says so before anything is sent).
    """
    out = []
    for name in names:
        text = turn_text(item, name, swap=swap) if TURN.fullmatch(name) else item.field(name)
        if text is None:
            raise KeyError(name)
        out.append((name, text))
    return tuple(out)


def missing(prompt: JudgePrompt, item: Item) -> str | None:
    """The first target ``item`` cannot fill (a field it lacks, a turn it does not have)."""
    try:
        addressed_texts(prompt.on_screen, item, swap=False)
    except KeyError as exc:
        return str(exc.args[0])
    return None
