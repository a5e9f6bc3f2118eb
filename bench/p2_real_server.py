"""P2: judgeprobe vs a raw saturating client on the real llama.cpp server (Gemma 3 270M).

    python -m bench.p2_real_server [--items 4] [--slots 4]

The same Baseline requests (judgeprobe's own, exported as a batch) go to a fresh
llama-server each time, ``slots`` always in flight, in plan order for both: this measures
what the orchestrator costs on a real judge, apart from scheduling gains (those are P3).
Target (issue 7): judgeprobe ≥ 0.95× the raw client's throughput.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import aiohttp

from bench.common import judgeprobe_sweep, raw_client, request_bodies, sweep_config
from bench.llama import MODEL, llama_server, prompt_tokens_computed
from judgeprobe.core.corpus import load_items

WARM_UP = b'{"messages": [{"role": "user", "content": "Say ok."}], "max_tokens": 4}'


async def warm_up(url: str) -> None:
    """One tiny unrelated request, as judgeprobe's start-up probe sends one."""
    async with aiohttp.ClientSession() as session:
        headers = {"Content-Type": "application/json"}
        async with session.post(f"{url}/chat/completions", data=WARM_UP, headers=headers) as r:
            await r.read()


async def main_async(n_items: int, slots: int) -> int:
    """P2: judgeprobe against a raw client on a real llama.cpp server."""
    items = load_items("bundled:sample", n_items)
    bodies = await request_bodies(
        sweep_config("http://unused/v1", slots), items, MODEL, "llama-server"
    )
    with llama_server(slots) as url:
        await warm_up(url)
        raw = await raw_client(url, bodies, slots)
        raw_tokens = prompt_tokens_computed(url)
    with llama_server(slots) as url, tempfile.TemporaryDirectory() as tmp:
        ours = await judgeprobe_sweep(
            sweep_config(url, slots), items, Path(tmp), prefix_aware=False
        )
        our_tokens = prompt_tokens_computed(url)
    print(raw.line("raw client") + f", {raw_tokens} prompt tokens computed")
    print(ours.line("judgeprobe") + f", {our_tokens} prompt tokens computed")
    assert ours.requests == raw.requests, "not the same request set"
    print(f"P2 throughput ratio judgeprobe/raw on llama-server: {ours.rate / raw.rate:.2f}x "
          "(target >= 0.95x)")  # fmt: skip
    return 0


def main() -> int:
    """Command line of the P2 benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4, help="bundled items (4 requests each)")
    parser.add_argument("--slots", type=int, default=4)
    args = parser.parse_args()
    return asyncio.run(main_async(args.items, args.slots))


if __name__ == "__main__":
    sys.exit(main())
