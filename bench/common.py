"""What the scale benchmarks share.

Synthetic items, the loopback stub, the raw client, and judgeprobe's own sweep wiring
(``judgeprobe.run.run_sweep``), measured the same way.

Every benchmark prints a ratio of two runs made in the same process minutes apart: this
machine is shared and noisy, so only ratios measured together mean anything.
"""

from __future__ import annotations

import asyncio
import dataclasses
import resource
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from judgeprobe.conditions import builtin_conditions
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.job import run_job
from judgeprobe.cue.run import cue_job_type
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.engine.batch import BatchEndpoint, walk
from judgeprobe.engine.probe import probe_endpoint
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.engine.store import Store
from judgeprobe.runs.sweep import run_planned

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "judgeprobe" / "data" / "corpus" / "documents.jsonl"
SENTENCE = "The regional council met on Tuesday and agreed a revised budget for road repairs. "


def corpus_items(n: int) -> list[Item]:
    """N items on the project's corpus documents (about 1,000 tokens each).

    The two "summaries" are the document's first and last sentences (the judge's verdict is not what
    is measured).
    """
    rows = [orjson.loads(line) for line in CORPUS.read_bytes().splitlines()][:n]
    return [
        Item(
            item_id=row["id"],
            subset="corpus",
            document=row["text"],
            candidate_1=row["text"].split(". ")[0] + ".",
            candidate_2=row["text"].rstrip().rsplit(". ", 1)[-1],
            source_1="LLM",
            source_2="TradML",
        )
        for row in rows
    ]


def synthetic_items(n: int, doc_sentences: int = 18) -> list[Item]:
    """N items with distinct documents of about ``doc_sentences`` sentences (~1.5 kB)."""
    return [
        Item(
            item_id=f"doc-{i:07d}",
            subset="synthetic",
            document=f"Report {i}. " + SENTENCE * doc_sentences,
            candidate_1=f"Summary one of report {i}: the council agreed a budget.",
            candidate_2=f"Summary two of report {i}: a road budget was agreed.",
            source_1="LLM",
            source_2="TradML",
        )
        for i in range(n)
    ]


def free_port() -> int:
    """A free loopback port for a server a benchmark starts."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Stub:
    """The zero-latency stub (bench/stub.py) in its own process: its CPU is not ours."""

    def __enter__(self) -> str:
        port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.stub", str(port)], cwd=ROOT, stdout=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return f"http://127.0.0.1:{port}/v1"
            except OSError:
                time.sleep(0.05)
        self.proc.kill()
        raise RuntimeError("stub server did not start")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(5)


# ---------------------------------------------------------------- measuring


@dataclass
class Measure:
    """One timed run: requests, wall and CPU time, tokens, for the comparison lines."""

    requests: int
    wall_s: float
    cpu_s: float
    completion_tokens: int = 0  # what the judge generated: equal work shows as equal counts

    @property
    def rate(self) -> float:
        """Requests per wall-clock second, the throughput the targets compare."""
        return self.requests / self.wall_s

    @property
    def cpu_ms_per_request(self) -> float:
        """Client CPU per request, the overhead judgeprobe adds."""
        return 1000 * self.cpu_s / self.requests

    def line(self, name: str) -> str:
        """The measurement as one printed result line."""
        return (
            f"{name:>18}: {self.requests} requests in {self.wall_s:.2f}s = {self.rate:,.4g} req/s,"
            f" {self.cpu_ms_per_request:.3f} ms CPU/request, {self.completion_tokens} tokens out"
        )


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """Current resident memory of this process (MiB), sampled during a run."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def sweep_config(url: str, concurrency: int, **top: Any) -> SweepConfig:
    """A one-judge sweep config against ``url``, as the benchmarks run it."""
    judge = JudgeConfig(name="judge", url=url, concurrency=concurrency)
    return SweepConfig(judges=[judge], **top)


async def request_bodies(
    cfg: SweepConfig, items: list[Item], model: str, backend: str
) -> list[bytes]:
    """The exact chat bodies the sweep sends (via batch export), for the raw client."""
    judge = cfg.judges[0].model_copy(update={"model": model, "backend": backend})
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "s.sqlite")
        endpoint = BatchEndpoint(judge, cfg.engine, store, importing=False)
        out = Path(tmp) / "requests.jsonl"
        with out.open("wb") as f:
            jobs = cue_jobs(
                cfg,
                protocols_for(cfg),
                items,
                builtin_conditions(),
                {"judge": endpoint.info.fingerprint},
            )
            await walk(jobs, lambda job: run_job(job, endpoint, store), store, f)
        await endpoint.close()
        store.close()
        return [orjson.dumps(orjson.loads(line)["body"]) for line in out.read_bytes().splitlines()]


async def raw_client(url: str, bodies: list[bytes], concurrency: int) -> Measure:
    """A bare aiohttp flood: ``concurrency`` requests always in flight, replies JSON-parsed."""
    chat = f"{url}/chat/completions"
    it: Iterator[bytes] = iter(bodies)
    headers = {"Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        generated = 0

        async def worker() -> None:
            nonlocal generated
            for body in it:
                async with session.post(chat, data=body) as resp:
                    reply = orjson.loads(await resp.read())
                    assert reply["choices"][0]["message"]["content"]
                    generated += reply["usage"]["completion_tokens"]

        cpu, start = time.process_time(), time.monotonic()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall, used = time.monotonic() - start, time.process_time() - cpu
        return Measure(len(bodies), wall, used, generated)


async def judgeprobe_sweep(
    cfg: SweepConfig, items: list[Item], store_dir: Path, *, prefix_aware: bool = True,
    shuffle_seed: int | None = None,
) -> Measure:  # fmt: skip
    """Time judgeprobe's live path (plan → scheduler → engine → validation → store).

    The clock runs from the first planned job to the last durable write.
    """
    import random

    endpoint = await probe_endpoint(cfg.judges[0], cfg.engine)
    fingerprints = {"judge": endpoint.info.fingerprint}
    store = Store(store_dir / "store.sqlite")
    try:
        cpu, start = time.process_time(), time.monotonic()
        kind = cue_job_type(
            cfg,
            protocols_for(cfg),
            items,
            builtin_conditions(),
            store_dir,
            prefix_aware=prefix_aware,
        )
        if shuffle_seed is not None:
            jobs = list(
                cue_jobs(cfg, protocols_for(cfg), items, builtin_conditions(), fingerprints)
            )
            random.Random(shuffle_seed).shuffle(jobs)
            kind = dataclasses.replace(kind, plan=lambda _: jobs)
        with SweepProgress(0, enabled=False) as progress:
            summary = await run_planned(
                kind, {"judge": endpoint}, store, cfg.engine, progress=progress
            )
        store.flush()
        wall, used = time.monotonic() - start, time.process_time() - cpu
        requests = store.count("results")
        generated = store.total("results", "completion_tokens")
    finally:
        store.close()
        await endpoint.close()
    assert summary.sent
    assert not summary.deadline_hit
    return Measure(requests, wall, used, generated)
