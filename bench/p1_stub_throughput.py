"""P1: judgeprobe vs a raw aiohttp flood client against a zero-latency loopback stub.

    python -m bench.p1_stub_throughput [--items 2500] [--concurrency 64]

Both send the same requests (judgeprobe's own, exported as a batch) to a stub that answers
at once from another process. judgeprobe's figure covers its whole live path: planning,
request keys, scheduling, HTTP, reply validation and the durable SQLite write. Targets
(issue 7): throughput ≥ 0.8× the raw client, ≤ 0.7 ms CPU per request.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from bench.common import (
    Stub,
    judgeprobe_sweep,
    raw_client,
    request_bodies,
    sweep_config,
    synthetic_items,
)


async def main_async(n_items: int, concurrency: int) -> int:
    """P1: judgeprobe's throughput and CPU per request against a raw client on the stub."""
    items = synthetic_items(n_items)
    with Stub() as url:
        cfg = sweep_config(url, concurrency)
        bodies = await request_bodies(cfg, items, model="stub", backend="vllm")
        with tempfile.TemporaryDirectory() as tmp:  # warm both clients and the stub up
            await raw_client(url, bodies[:400], concurrency)
            await judgeprobe_sweep(cfg, items[:100], Path(tmp))
        raw = await raw_client(url, bodies, concurrency)
        with tempfile.TemporaryDirectory() as tmp:
            ours = await judgeprobe_sweep(cfg, items, Path(tmp))
    print(raw.line("raw aiohttp client"))
    print(ours.line("judgeprobe"))
    assert ours.requests == raw.requests, "not the same request set"
    ratio = ours.rate / raw.rate
    print(f"P1 throughput ratio judgeprobe/raw: {ratio:.2f}x (target >= 0.80x)")
    print(f"P1 judgeprobe CPU per request: {ours.cpu_ms_per_request:.3f} ms (target <= 0.70 ms)")
    return 0


def main() -> int:
    """Command line of the P1 benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2500, help="items (4 requests each)")
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    return asyncio.run(main_async(args.items, args.concurrency))


if __name__ == "__main__":
    sys.exit(main())
