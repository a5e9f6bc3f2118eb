"""Sharding a sweep across machines: each shard owns a deterministic, hash-based share.

A shard owns the items whose *document* hashes to it, so every judgment of a document, and
with it the server's prompt cache for that document, stays on one machine. The hash is
content-based (BLAKE2b of the document text): every machine agrees without coordination,
and the shards partition the sweep exactly (``python -m judgeprobe.merge`` unites them).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from judgeprobe import JudgeprobeError

_SPEC = re.compile(r"^(\d+)/(\d+)$")


@dataclass(frozen=True, slots=True)
class Shard:
    """One of ``count`` disjoint slices of a sweep, so hosts can split it by document."""

    index: int
    count: int

    @classmethod
    def parse(cls, spec: str) -> Shard:
        """``I/N`` with 0 ≤ I < N, as given to ``--shard``."""
        match = _SPEC.match(spec.strip())
        if not match:
            raise JudgeprobeError(f"--shard {spec!r}: expected I/N, e.g. 0/4")
        index, count = int(match[1]), int(match[2])
        if count < 1 or not 0 <= index < count:
            raise JudgeprobeError(f"--shard {spec!r}: need 0 <= I < N")
        return cls(index, count)

    def owns(self, document: str) -> bool:
        """Whether this shard judges ``document`` (a stable hash keeps its items together)."""
        digest = hashlib.blake2b(document.encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
