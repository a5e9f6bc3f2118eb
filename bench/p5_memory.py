"""P5: peak memory of planning and running a 10^6-request sweep against the loopback stub.

    python -m bench.p5_memory [--requests 1000000] [--table]

The sweep is 10^6 Baseline requests: items × 4 conditions × 2 orders × 10 seeds, planned as
a stream, scheduled, sent, validated and stored in SQLite. Resident memory is sampled every
second with the number of judgments done, so flatness can be seen, not only the peak.
``--table`` also writes judgments.parquet (chunked) and reports that phase's peak apart.
Target (issue 7): ≤ 500 MB peak for planning and running.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import Stub, peak_rss_mb, rss_mb, sweep_config, synthetic_items
from judgeprobe.conditions import builtin_conditions
from judgeprobe.cue.judgments import judgment_rows, write_judgments
from judgeprobe.cue.run import cue_job_type
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.engine.probe import probe_endpoint
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.store import Store
from judgeprobe.runs.sweep import run_planned

SEEDS = list(range(10))
PER_ITEM = 4 * 2 * len(SEEDS)  # conditions × orders × seeds


class Sampler(threading.Thread):
    """Samples resident memory once a second; keeps the peak per phase."""

    def __init__(self, progress: SweepProgress) -> None:
        super().__init__(daemon=True)
        self.progress = progress
        self.samples: list[tuple[float, int, float]] = []
        self.phase_peak: dict[str, float] = {}
        self.phase = "start"
        self.stop = threading.Event()
        self.start_time = time.monotonic()

    def run(self) -> None:
        """Sample memory every second until stopped."""
        while not self.stop.wait(1.0):
            self.sample()

    def sample(self) -> None:
        """Record the current RSS and the peak of the current phase."""
        mb = rss_mb()
        self.samples.append((time.monotonic() - self.start_time, self.progress.done, mb))
        self.phase_peak[self.phase] = max(self.phase_peak.get(self.phase, 0.0), mb)


async def main_async(n_requests: int, *, table: bool) -> int:
    """P5: peak memory of planning and running 10^6 requests, per phase."""
    n_items = max(1, n_requests // PER_ITEM)
    with Stub() as url, tempfile.TemporaryDirectory() as tmp:
        cfg = sweep_config(url, 64, order="both", seeds=SEEDS)
        endpoint = await probe_endpoint(cfg.judges[0], cfg.engine)
        fingerprints = {"judge": endpoint.info.fingerprint}
        store = Store(Path(tmp) / "store.sqlite")
        progress = SweepProgress(n_items * PER_ITEM, enabled=False)
        sampler = Sampler(progress)
        sampler.start()
        sampler.phase = "plan+run"
        start = time.monotonic()
        items = synthetic_items(n_items)
        kind = cue_job_type(cfg, protocols_for(cfg), items, builtin_conditions(), Path(tmp))
        summary = await run_planned(kind, {"judge": endpoint}, store, cfg.engine, progress=progress)
        store.flush()
        run_s = time.monotonic() - start
        sampler.sample()
        if table:
            sampler.phase = "judgments table"
            rows = judgment_rows(
                "p5",
                cue_jobs(cfg, protocols_for(cfg), items, builtin_conditions(), fingerprints),
                store,
            )
            frame = write_judgments(rows, Path(tmp) / "judgments.parquet", fingerprints)
            assert frame.height == n_items * PER_ITEM
            del frame
            sampler.sample()
        sampler.stop.set()
        store.close()
        await endpoint.close()
    print(
        f"{summary.sent} requests sent and stored in {run_s:.0f}s ({summary.sent / run_s:,.0f}/s)"
    )
    step = max(1, len(sampler.samples) // 12)
    print("   t(s)   judgments done   RSS (MB)")
    for t, done, mb in sampler.samples[::step] + sampler.samples[-1:]:
        print(f"{t:7.0f} {done:16,d} {mb:10.1f}")
    for phase, peak in sampler.phase_peak.items():
        print(f"peak RSS during {phase}: {peak:.0f} MB")
    print(f"P5 process peak RSS (ru_maxrss): {peak_rss_mb():.0f} MB for {summary.sent:,} requests "
          "(target <= 500 MB for 10^6)")  # fmt: skip
    return 0


def main() -> int:
    """Command line of the P5 benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--table", action="store_true", help="also write judgments.parquet")
    args = parser.parse_args()
    return asyncio.run(main_async(args.requests, table=args.table))


if __name__ == "__main__":
    sys.exit(main())
