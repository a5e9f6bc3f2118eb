"""``judgeprobe compare``: runs on the same items compared row by row (docs/compare.md).

``compare(runs, *, out)`` (``compare.entry``) is imported on first use, so reading the
published model alone (``python -m judgeprobe.compare.published``) loads none of the rest.
"""

from __future__ import annotations

from typing import Any

__all__ = ["compare"]


def __getattr__(name: str) -> Any:
    if name == "compare":
        from judgeprobe.compare.entry import compare

        return compare
    raise AttributeError(name)
