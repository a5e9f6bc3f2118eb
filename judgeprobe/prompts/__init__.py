"""Prompt templates: versioned files filled at run time, each identified by a content hash.

A template never changes silently: new wording goes into a new file (``baseline_v2.txt``),
and the hash of the text actually used is recorded in the manifest and on every judgment.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from judgeprobe.prompts.task import DEFAULT, Task

_PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Template:
    """A prompt template file and the hash of its exact text."""

    name: str
    text: str
    sha256: str

    def fill(self, values: dict[str, str]) -> str:
        """Replace every ``{NAME}`` in one pass; inserted text is never re-scanned."""

        def sub(match: re.Match[str]) -> str:
            return values[match.group(1)]

        return _PLACEHOLDER.sub(sub, self.text)

    @property
    def placeholders(self) -> frozenset[str]:
        """Every ``{NAME}`` the text holds."""
        return frozenset(_PLACEHOLDER.findall(self.text))


@cache
def load_template(name: str, task: Task = DEFAULT) -> Template:
    """Load ``templates/NAME.txt`` from the package, in ``task``'s words (``Task.reword``).

    The default task's is the file as written; another task's text is hashed as reworded.
    """
    text = resources.files(__package__).joinpath("templates", f"{name}.txt").read_text("utf-8")
    text = task.reword(text)
    return Template(name=name, text=text, sha256=hashlib.sha256(text.encode()).hexdigest())


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
