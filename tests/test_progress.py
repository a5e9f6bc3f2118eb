"""The sweep progress shows requests/s beside judgments/s (a PBP judgment is 3 requests)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.store import Outcome


def test_requests_per_second_counts_every_request_of_a_judgment() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False)
    with SweepProgress(3, console) as bar:
        # A PBP judgment: three stages, one of them re-asked; a baseline one; one from store.
        bar.finished(Outcome(key="p", status="valid", verdict="A", attempts=4, reasks=1,
                             request_keys=["lock", "score", "rank"]))  # fmt: skip
        bar.finished(Outcome(key="b", status="invalid", verdict="Invalid", attempts=1,
                             request_keys=["one"]))  # fmt: skip
        bar.skipped()
    assert (bar.requests, bar.valid, bar.invalid, bar.cached) == (5, 1, 1, 1)
    fields = bar._progress.tasks[0].fields
    assert fields["rate"] > 0
    assert fields["req_rate"] == pytest.approx(fields["rate"] * 5 / 2)
    shown = out.getvalue()
    assert "judgments/s" in shown
    assert "req/s" in shown
