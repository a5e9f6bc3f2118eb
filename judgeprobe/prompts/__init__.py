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


@cache
def load_template(name: str) -> Template:
    """Load ``templates/NAME.txt`` from the package."""
    text = resources.files(__package__).joinpath("templates", f"{name}.txt").read_text("utf-8")
    return Template(name=name, text=text, sha256=hashlib.sha256(text.encode()).hexdigest())
