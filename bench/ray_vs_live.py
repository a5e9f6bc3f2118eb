"""P6: the same sweep through the live engine and through ``--ray`` on one machine.

    python -m bench.ray_vs_live [--items 300] [--judge URL]

Both run ``python -m judgeprobe.run`` as a user would (process start, probe, sweep, tables),
against the zero-latency loopback stub (default) or a judge server given by ``--judge``
(the embedded one: ``make serve``, then ``--judge http://127.0.0.1:8082/v1``). The sweep is
Baseline under Blind and RevealAfter, so Ray runs two rounds (turn 1, then turn 2). Printed:
both wall times and their ratio, Ray's start, and each round's time beside what the live
engine took for as many requests: the difference is Ray's overhead per round.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from bench.common import ROOT, Stub, synthetic_items

ROUND = re.compile(r"round (\d+): (\d+) requests in ([\d.]+)s")
READY = re.compile(r"Ray \(.*\) ready in ([\d.]+)s")


def _config(tmp: Path, url: str, n_items: int, concurrency: int) -> Path:
    items = tmp / "items.jsonl"
    rows = [item.model_dump(exclude_none=True) for item in synthetic_items(n_items)]
    items.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    cfg = tmp / "bench.toml"
    cfg.write_text(
        f'name = "ray-vs-live"\nitems = "{items}"\nconditions = ["Blind", "RevealAfter"]\n'
        f'order = "12"\n\n[[judges]]\nname = "judge"\nurl = "{url}"\n'
        f"concurrency = {concurrency}\n"
    )
    return cfg


def _run(cfg: Path, out: Path, *extra: str) -> tuple[float, str]:
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "judgeprobe.run", "--no-progress", "--config", str(cfg),
         "--out", str(out), *extra],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    took = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(extra) or 'live'} exited {proc.returncode}: {proc.stderr}")
    return took, proc.stderr


def _sending_s(run: Path) -> tuple[int, float]:
    """A live run's requests and the span of their answers (the engine's sending time)."""
    with sqlite3.connect(run / "store.sqlite") as db:
        n, first, last = db.execute(
            "SELECT count(*), min(json_extract(data, '$.completed_at') - "
            "json_extract(data, '$.latency_s')), max(json_extract(data, '$.completed_at')) "
            "FROM results"
        ).fetchone()
    return int(n), float(last - first)


def measure(url: str, n_items: int, concurrency: int) -> None:
    """Run both, print the comparison lines."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = _config(Path(tmp), url, n_items, concurrency)
        live_s, _ = _run(cfg, Path(tmp) / "live")
        requests, sending_s = _sending_s(Path(tmp) / "live")
        ray_s, err = _run(cfg, Path(tmp) / "ray", "--ray")
    rounds = [(int(n), float(s)) for _, n, s in ROUND.findall(err)]
    ready = READY.search(err)
    start_s = float(ready.group(1)) if ready else 0.0
    print(f"live: {live_s:.1f}s wall for {n_items * 2} judgments, {requests} requests sent "
          f"in {sending_s:.1f}s ({requests / sending_s:.0f} req/s)")  # fmt: skip
    print(f"ray:  {ray_s:.1f}s wall: Ray start {start_s:.1f}s, {len(rounds)} rounds "
          f"({sum(t for _, t in rounds):.1f}s)")  # fmt: skip
    print(
        f"ratio ray/live: wall {ray_s / live_s:.2f}x, sending "
        f"{(start_s + sum(t for _, t in rounds)) / sending_s:.1f}x (Ray start and rounds)"
    )
    per_request = sending_s / requests
    for index, (n, took) in enumerate(rounds, 1):
        print(f"round {index}: {n} requests in {took:.1f}s; the live engine sends as many in "
              f"{n * per_request:.1f}s; Ray's overhead {took - n * per_request:.1f}s")  # fmt: skip


def main() -> int:
    """Command line of P6."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--judge", help="a judge server's API base (default: the stub)")
    args = parser.parse_args()
    if args.judge:
        measure(args.judge, args.items, args.concurrency)
    else:
        with Stub() as url:
            measure(url, args.items, args.concurrency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
