"""The durable, append-only result store: one SQLite file in WAL mode.

Each result is committed on its own as it arrives. A commit in WAL mode is a single append
to the write-ahead log, so a ``kill -9`` at any moment loses at most the requests still in
flight: a record is either wholly there or absent (never torn), and the key is the primary
key, so it can never be there twice. Results that may clear on a later try (retries exhausted,
deadline) are stored as ``retryable`` and run again on resume; final results are skipped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict


class Result(BaseModel):
    """What one request ended as: a valid reply, or Invalid with its reason."""

    model_config = ConfigDict(extra="forbid")

    key: str
    status: str  # "valid" | "invalid"
    reply: dict[str, Any] | None = None
    raw: str = ""
    invalid_reason: str = ""
    retryable: bool = False
    attempts: int = 0
    reasks: int = 0
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    model: str = ""
    endpoint: str = ""
    completed_at: float = 0.0


_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT PRIMARY KEY,
    retryable INTEGER NOT NULL,
    data BLOB NOT NULL
) WITHOUT ROWID
"""


class Store:
    """Results keyed by request key. Single-threaded: used from the event loop's thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def is_final(self, key: str) -> bool:
        """True when ``key`` holds a result that resume must not redo."""
        row = self._db.execute("SELECT retryable FROM results WHERE key = ?", (key,)).fetchone()
        return row is not None and not row[0]

    def put(self, result: Result) -> None:
        """Store one result durably (replacing a retryable one of the same key)."""
        self._db.execute(
            "INSERT OR REPLACE INTO results (key, retryable, data) VALUES (?, ?, ?)",
            (result.key, int(result.retryable), orjson.dumps(result.model_dump())),
        )

    def get(self, key: str) -> Result | None:
        row = self._db.execute("SELECT data FROM results WHERE key = ?", (key,)).fetchone()
        return None if row is None else Result.model_validate(orjson.loads(row[0]))

    def __iter__(self) -> Iterator[Result]:
        for (data,) in self._db.execute("SELECT data FROM results ORDER BY key"):
            yield Result.model_validate(orjson.loads(data))

    def __len__(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM results").fetchone()[0])

    def close(self) -> None:
        self._db.close()
