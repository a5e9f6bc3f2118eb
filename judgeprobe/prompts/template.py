"""Prompt templates: versioned files filled at run time, each identified by a content hash.

A template never changes silently: new wording goes into a new file (``baseline_v2.txt``),
and the hash of the text actually used is recorded in the manifest and on every judgment.
Under a label scheme other than numbers (``protocols.names``) a template is read with its
screen names replaced (``load_template``'s ``names``); under numbers it is the file's text.
"""

from __future__ import annotations

import hashlib
import re
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from judgeprobe.prompts.task import DEFAULT, Task

_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
_SCREEN = re.compile(r"(?<=Summary )[12]\b|(?<=summary_)[12]\b|\[1,2\]|\[2,1\]")
"""Where a template names a screen position: "Summary 1", a ``summary_1`` key, a verdict."""


_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FORMATTER = string.Formatter()

Style = Literal["upper", "format"]
"""How a template names its placeholders: ``upper``, judgeprobe's ``{CONTEXT}`` (any other
brace is text); ``format``, Python's ``str.format`` as public judges fill theirs (``{question}``,
``{{`` and ``}}`` for literal braces), so their templates run unedited."""


@dataclass(frozen=True, slots=True)
class Template:
    """A prompt template file and the hash of its exact text."""

    name: str
    text: str
    sha256: str
    style: Style = "upper"

    def fill(self, values: dict[str, str]) -> str:
        """Replace every placeholder in one pass; inserted text is never re-scanned."""
        if self.style == "format":
            return "".join(
                literal + (values[name] if name is not None else "")
                for literal, name, _, _ in _FORMATTER.parse(self.text)
            )

        def sub(match: re.Match[str]) -> str:
            return values[match.group(1)]

        return _PLACEHOLDER.sub(sub, self.text)

    @property
    def placeholders(self) -> frozenset[str]:
        """Every placeholder the text holds (``{NAME}``, or each ``str.format`` field)."""
        if self.style == "format":
            return frozenset(n for _, n, _, _ in _FORMATTER.parse(self.text) if n is not None)
        return frozenset(_PLACEHOLDER.findall(self.text))

    def as_format(self) -> Template:
        """This text read as a ``str.format`` template; ValueError (one line) when it is not one.

        Every field must be a plain name, without conversion or format spec: the judge's own
        placeholders name what fills them, nothing computes on them.
        """
        try:
            fields = list(_FORMATTER.parse(self.text))
        except ValueError as exc:
            raise ValueError(
                f"prompt file {self.name}: not a str.format template ({exc}; write a literal "
                "brace as {{ or }})"
            ) from None
        for _, name, spec, conversion in fields:
            if name is not None and (not _FIELD.fullmatch(name) or spec or conversion):
                shown = (
                    name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
                )
                raise ValueError(
                    f"prompt file {self.name}: placeholder {{{shown}}} is not a plain name "
                    "(write a literal brace as {{ or }})"
                )
        return Template(self.name, self.text, self.sha256, "format")


@cache
def load_template(name: str, task: Task = DEFAULT, names: tuple[str, str] = ("1", "2")) -> Template:
    """Load ``templates/NAME.txt`` from the package, in ``task``'s words (``Task.reword``).

    ``names``: the screen names of a label scheme (``protocols.names``); "Summary 1"/"Summary
    2", the keys ``summary_1``/``summary_2`` and the verdicts ``[1,2]``/``[2,1]`` become the
    scheme's, in one pass, before the task's rewording. The default task and names give the
    file as written; any other text is hashed as read.
    """
    text = resources.files(__package__).joinpath("templates", f"{name}.txt").read_text("utf-8")
    text = task.reword(_renamed(text, names))
    return Template(name=name, text=text, sha256=hashlib.sha256(text.encode()).hexdigest())


def _renamed(text: str, names: tuple[str, str]) -> str:
    """``text`` with its screen positions named ``names`` (unchanged under ``("1", "2")``)."""
    if names == ("1", "2"):
        return text
    first, second = names

    def rename(match: re.Match[str]) -> str:
        found = match.group()
        if found == "[1,2]":
            return f"[{first},{second}]"
        if found == "[2,1]":
            return f"[{second},{first}]"
        return first if found == "1" else second

    return _SCREEN.sub(rename, text)


@cache
def has_template(name: str) -> bool:
    """Whether the package ships ``templates/NAME.txt``."""
    return resources.files(__package__).joinpath("templates", f"{name}.txt").is_file()


@cache
def load_prompt_file(path: str) -> Template:
    """A judge's own prompt file (``[[judges]] prompt``), hashed like a built-in template.

    Read once per run, so the text hashed is the text sent. ValueError when it cannot be read.
    """
    try:
        text = Path(path).read_text("utf-8")
    except FileNotFoundError:
        raise ValueError(f"prompt file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"prompt file {path}: cannot read ({exc})") from None
    return Template(name=path, text=text, sha256=hashlib.sha256(text.encode()).hexdigest())
