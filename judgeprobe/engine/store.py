"""The durable, append-only result store: one SQLite file in WAL mode.

Two tables: ``results`` caches every request by its content key; ``outcomes`` holds each
judgment's final outcome (a protocol may take several requests). Rows are group-committed:
one transaction per ``commit_every`` rows or ``commit_after_s`` seconds, whichever comes
first (a commit per row costs more CPU than everything else the engine does for a request).
A commit in WAL mode is a single append to the write-ahead log, so a ``kill -9`` at any
moment loses at most the requests still in flight and those answered in the last
``commit_after_s``; resume sends them again. A record is either wholly there or absent (never
torn), and the key is the primary key, so it can never be there twice. Results that may clear
on a later try (retries exhausted, deadline) are stored as ``retryable`` and run again on
resume; final results are skipped. A third table, ``batch_answers``, keeps the lines of
imported batch output files by ``custom_id`` (see judgeprobe.engine.batch).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict

from judgeprobe.core.records import NoVerdict, RubricVerdict, Status, Verdict

Reply = TypeVar("Reply", bound=BaseModel)


class Cost(BaseModel):
    """What a request, or a judgment's requests together, cost and who answered."""

    model_config = ConfigDict(extra="forbid")

    attempts: int = 0
    reasks: int = 0
    escalations: int = 0  # replies cut at max_tokens, asked again with a larger budget
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""


class Usage(BaseModel):
    """What a judge's stored requests took: requests, HTTP attempts and tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Result(Cost):
    """What one request ended as: a valid reply, or Invalid with its reason."""

    key: str
    status: Status
    reply: dict[str, Any] | None = None
    raw: str = ""
    invalid_reason: str = ""
    retryable: bool = False
    finish_reason: str = ""
    endpoint: str = ""
    completed_at: float = 0.0

    def reply_as(self, model: type[Reply]) -> Reply | None:
        """The reply as ``model``, or None when the request ended Invalid.

        The store keeps replies as plain data (the engine validated them when they came);
        callers that read fields get them typed back with one validation.
        """
        if self.status != "valid" or self.reply is None:
            return None
        return model.model_validate(self.reply)


class Outcome(Cost):
    """What one judgment ended as, in candidate terms (``A`` = candidate 1 preferred).

    A rubric judgment's verdict is ``satisfied`` or ``violated`` (Invalid when it failed). A
    job that judges nothing (one document of the candidate builder) has the empty verdict when
    valid; its result is in ``details``.
    """

    key: str
    status: Status
    verdict: Verdict | RubricVerdict | NoVerdict
    raw_verdict: str = ""  # in screen terms: "[1,2]" | "[2,1]" | "Tie"
    explanation: str = ""
    invalid_reason: str = ""
    retryable: bool = False
    details: dict[str, Any] = {}
    turn1_verdict: Verdict | Literal[""] = ""  # Reveal-After's first turn
    turn1_explanation: str = ""
    request_keys: list[str] = []


TABLES = ("results", "outcomes")
CHECKPOINT_PAGES = 16_384  # about 64 MB of write-ahead log


class Store:
    """Request results and judgment outcomes by key. Used from the event loop's thread.

    Reads see every write at once (one connection); ``flush`` makes them durable now, and
    ``close`` flushes. Outside an event loop every write is committed at once.
    """

    def __init__(self, path: Path, commit_every: int = 512, commit_after_s: float = 0.1) -> None:
        self.path = path
        self.commit_every = commit_every
        self.commit_after_s = commit_after_s
        self._pending = 0
        self._timer: asyncio.TimerHandle | None = None
        self._db = sqlite3.connect(path, isolation_level=None)
        with self._db:  # the tables appear together: a reader never sees half a schema
            self._db.execute("BEGIN")
            for table in TABLES:
                self._db.execute(
                    f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, "
                    "retryable INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID"
                )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS batch_answers (custom_id TEXT PRIMARY KEY, "
                "data BLOB NOT NULL) WITHOUT ROWID"
            )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        # Checkpoints (the only fsyncs in WAL mode) block the event loop: fewer, larger ones.
        self._db.execute(f"PRAGMA wal_autocheckpoint={CHECKPOINT_PAGES}")

    def put_answers(self, answers: Iterable[tuple[str, bytes]]) -> None:
        """Keep batch output lines by custom_id, all or none (a newer line replaces one)."""
        self.flush()
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR REPLACE INTO batch_answers (custom_id, data) VALUES (?, ?)", answers
            )

    def get_answer(self, custom_id: str) -> bytes | None:
        """A batch answer imported for ``custom_id``, or None when the batch has not answered it."""
        row = self._db.execute(
            "SELECT data FROM batch_answers WHERE custom_id = ?", (custom_id,)
        ).fetchone()
        return None if row is None else bytes(row[0])

    def _put(self, table: str, key: str, *, retryable: bool, data: BaseModel) -> None:
        if not self._db.in_transaction:
            self._db.execute("BEGIN")
        self._db.execute(
            f"INSERT OR REPLACE INTO {table} (key, retryable, data) VALUES (?, ?, ?)",
            (key, int(retryable), orjson.dumps(data.model_dump())),
        )
        self._pending += 1
        if self._pending >= self.commit_every:
            self.flush()
        elif self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                self.flush()
                return
            self._timer = loop.call_later(self.commit_after_s, self.flush)

    def flush(self) -> None:
        """Commit every write so far."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._db.in_transaction:
            self._db.execute("COMMIT")
        self._pending = 0

    def _get(self, table: str, key: str) -> dict[str, Any] | None:
        row = self._db.execute(f"SELECT data FROM {table} WHERE key = ?", (key,)).fetchone()
        return None if row is None else dict(orjson.loads(row[0]))

    def put(self, result: Result) -> None:
        """Store one request result (replacing a retryable one of the same key).

        It is durable once its group commits (``flush``).
        """
        self._put("results", result.key, retryable=result.retryable, data=result)

    def get(self, key: str) -> Result | None:
        """The stored result of a request, for resume; None when it was never sent."""
        data = self._get("results", key)
        return None if data is None else Result.model_validate(data)

    def put_outcome(self, outcome: Outcome) -> None:
        """Store a judgment's outcome (replacing a retryable one of the same key)."""
        self._put("outcomes", outcome.key, retryable=outcome.retryable, data=outcome)

    def get_outcome(self, key: str) -> Outcome | None:
        """The stored outcome of a judgment, so a resumed sweep skips it."""
        data = self._get("outcomes", key)
        return None if data is None else Outcome.model_validate(data)

    def is_final(self, key: str) -> bool:
        """True when the judgment ``key`` has an outcome that resume must not redo."""
        row = self._db.execute("SELECT retryable FROM outcomes WHERE key = ?", (key,)).fetchone()
        return row is not None and not row[0]

    def count(self, table: str) -> int:
        """Rows in one of the store's tables, for progress and tests."""
        if table not in TABLES:
            raise ValueError(table)
        return int(self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def total(self, table: str, field: str) -> int:
        """Sum of one numeric field over a table (token counts for reports and benchmarks)."""
        if table not in TABLES or not field.isidentifier():
            raise ValueError(f"{table}.{field}")
        query = f"SELECT coalesce(sum(json_extract(data, '$.{field}')), 0) FROM {table}"
        return int(self._db.execute(query).fetchone()[0])

    def usage(self) -> dict[str, Usage]:
        """Per judge (a result's endpoint): its stored requests, their attempts and tokens.

        ``attempts`` counts HTTP calls (retries, re-asks and escalations included); a result
        replaced on resume counts once, as its last try.
        """
        self.flush()
        rows = self._db.execute(
            "SELECT json_extract(data, '$.endpoint'), count(*), "
            "sum(json_extract(data, '$.attempts')), "
            "sum(json_extract(data, '$.prompt_tokens')), "
            "sum(json_extract(data, '$.completion_tokens')) FROM results GROUP BY 1"
        ).fetchall()
        return {
            str(name or ""): Usage(requests=int(n), attempts=int(attempts or 0),
                                   prompt_tokens=int(prompt or 0),
                                   completion_tokens=int(completion or 0))
            for name, n, attempts, prompt, completion in rows
        }  # fmt: skip

    def close(self) -> None:
        """Commit what is pending and close the database."""
        self.flush()
        self._db.close()
