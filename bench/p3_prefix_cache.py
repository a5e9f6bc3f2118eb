"""P3: prefix-aware vs shuffled request order on llama-server with its prompt cache on.

    python -m bench.p3_prefix_cache [--items 4] [--slots 4] [--cache-ram 0]

The same judgments (each of the project's corpus documents, about 1,000 tokens, judged under
4 conditions × 2 orders, so 8 requests share its prefix) run twice through judgeprobe, each
time on a fresh server: grouped by document, one lane per slot (the default), and shuffled.
``--cache-ram 0`` keeps only the per-slot caches, as when a sweep's documents far outnumber
what the server can keep (10^5 documents against llama.cpp's default 8 GiB host cache);
``--cache-ram -1`` leaves the server's default. Target (issue 7): prefix-aware ≥ 1.5× shuffled.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from bench.common import Measure, corpus_items, judgeprobe_sweep, sweep_config
from bench.llama import llama_server, prompt_tokens_computed
from judgeprobe.core.records import Item


async def one_run(
    items: list[Item], slots: int, extra: list[str], *, grouped: bool
) -> tuple[Measure, int]:
    """One sweep on a fresh server, grouped by prefix or shuffled, with prompt tokens computed."""
    with llama_server(slots, extra) as url, tempfile.TemporaryDirectory() as tmp:
        cfg = sweep_config(url, slots, order="both")
        measure = await judgeprobe_sweep(
            cfg, items, Path(tmp), prefix_aware=grouped, shuffle_seed=None if grouped else 0
        )
        return measure, prompt_tokens_computed(url)


async def main_async(n_items: int, slots: int, cache_ram: int) -> int:
    """P3: how much prefix-aware ordering gains from the server's prompt cache."""
    items = corpus_items(n_items)
    extra = [] if cache_ram < 0 else ["--cache-ram", str(cache_ram)]
    shuffled, shuffled_tokens = await one_run(items, slots, extra, grouped=False)
    grouped, grouped_tokens = await one_run(items, slots, extra, grouped=True)
    print(shuffled.line("shuffled") + f", {shuffled_tokens} prompt tokens computed")
    print(grouped.line("prefix-aware") + f", {grouped_tokens} prompt tokens computed")
    setting = "server default" if cache_ram < 0 else f"--cache-ram {cache_ram}"
    print(f"P3 throughput ratio prefix-aware/shuffled ({setting}): "
          f"{grouped.rate / shuffled.rate:.2f}x (target >= 1.5x)")  # fmt: skip
    return 0


def main() -> int:
    """Command line of the P3 benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4, help="corpus documents (8 requests each)")
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--cache-ram", type=int, default=0, help="MiB; -1 = server default")
    args = parser.parse_args()
    return asyncio.run(main_async(args.items, args.slots, args.cache_ram))


if __name__ == "__main__":
    sys.exit(main())
