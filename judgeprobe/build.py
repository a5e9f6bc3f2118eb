"""``python -m judgeprobe.build``: turn documents into a candidate set the sweep can judge.

corpus → length filter → LLM summaries, draws, paraphrases and attacks (cached engine requests)
+ extractive summaries (sumy) + rule-based attacks → preservation check → subsets →
``OUT/candidates.parquet`` (set ``items = "OUT/candidates.parquet"`` in a sweep config) and
``OUT/build.json`` (counts, dropped documents, timing). ``OUT/store.sqlite`` caches every
request: rerunning an interrupted or finished build sends only what is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.candidates import preserve
from judgeprobe.candidates.candidate_set import (
    SET_VERSION,
    candidate_frame,
    write_candidate_set,
)
from judgeprobe.candidates.config import BuildConfig
from judgeprobe.candidates.llm import Author
from judgeprobe.candidates.materials import Materials, make_materials
from judgeprobe.candidates.subsets import document_rows
from judgeprobe.candidates.tokens import TokenCounter, approx_tokens
from judgeprobe.cli import main_guard
from judgeprobe.config import load_toml, parse_judge_flag, with_overrides
from judgeprobe.corpus import Document, load_documents
from judgeprobe.engine.request import Sampling
from judgeprobe.files import bytes_hash, write_json
from judgeprobe.prompts import load_template
from judgeprobe.rundir import open_store
from judgeprobe.sweep import probe_judges

SET_FILE = "candidates.parquet"


@dataclass
class BuildReport:
    """What a build did; also written to ``build.json``."""

    path: Path
    documents: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # id → tokens, outside the filter
    token_method: str = ""
    subsets: dict[str, int] = field(default_factory=dict)
    flagged: int = 0
    failed_requests: int = 0
    no_summary: list[str] = field(default_factory=list)
    context_window: int | None = None
    over_context: list[str] = field(default_factory=list)
    sha256: str = ""
    wall_s: float = 0.0

    def as_dict(self, cfg: BuildConfig) -> dict[str, Any]:
        """The build's manifest record, so a candidate set can be traced to its config."""
        return {
            "set_version": SET_VERSION,
            "candidates": str(self.path),
            "sha256": self.sha256,
            "config_digest": cfg.digest(),
            "config": cfg.model_dump(mode="json", exclude={"author": {"api_key_env"}}),
            "documents": self.documents,
            "dropped_by_length": self.dropped,
            "token_method": self.token_method,
            "subsets": self.subsets,
            "items": sum(self.subsets.values()),
            "flagged": self.flagged,
            "failed_requests": self.failed_requests,
            "documents_without_summary": self.no_summary,
            "context_window": self.context_window,
            "items_over_context": self.over_context,
            "wall_s": round(self.wall_s, 1),
        }


def _length_filter(
    docs: list[Document], tokens: list[int], cfg: BuildConfig, report: BuildReport
) -> list[tuple[Document, int]]:
    kept = []
    for doc, n in zip(docs, tokens, strict=True):
        if cfg.min_tokens <= n <= cfg.max_tokens:
            kept.append((doc, n))
        else:
            report.dropped[doc.id] = n
    if not kept:
        raise JudgeprobeError(
            f"no document is {cfg.min_tokens}-{cfg.max_tokens} tokens long "
            f"({len(docs)} measured with the {report.token_method}); change min_tokens/max_tokens"
        )
    return kept


def _checks(materials: list[Materials]) -> list[dict[str, preserve.Preservation]]:
    """Preservation of every rewrite against its summary, embedded in one batch."""
    keys: list[tuple[int, str]] = []
    pairs: list[tuple[str, str]] = []
    for i, m in enumerate(materials):
        if m.summary is None:
            continue
        rewrites = {f"paraphrase_{k}": t for k, t in enumerate(m.paraphrases)}
        rewrites |= {f"{a}_{how}": t for (a, how), t in m.attacks.items()}
        for key, text in rewrites.items():
            keys.append((i, key))
            pairs.append((m.summary.text, text.text))
    out: list[dict[str, preserve.Preservation]] = [{} for _ in materials]
    for (i, key), result in zip(keys, preserve.check(pairs), strict=True):
        out[i][key] = result
    return out


def _judge_prompt_overhead() -> int:
    """Tokens of the judge's own instructions around the document and the two summaries."""
    return sum(approx_tokens(load_template(n).text) for n in ("baseline_v1", "materials_v1"))


async def build_set(cfg: BuildConfig, out: Path, console: Console | None = None) -> BuildReport:
    """Build the candidate set into ``out`` (a folder) and return what was done."""
    console = console or Console(stderr=True, quiet=True)
    start = time.monotonic()
    docs = load_documents(cfg.corpus, cfg.limit)
    report = BuildReport(path=out / SET_FILE)
    endpoint = (await probe_judges([cfg.author], cfg.engine, console))[cfg.author.name]
    counter = TokenCounter(endpoint)
    para_endpoint = None
    try:
        if cfg.paraphraser is not None:
            found = await probe_judges([cfg.paraphraser], cfg.engine, console)
            para_endpoint = found[cfg.paraphraser.name]
        report.token_method = counter.method
        kept = _length_filter(docs, await counter.count([d.text for d in docs]), cfg, report)
        report.documents = len(kept)
        report.context_window = cfg.judge_context or await counter.context_window()
        console.print(
            f"{len(kept)} of {len(docs)} documents are {cfg.min_tokens}-{cfg.max_tokens} tokens "
            f"({counter.method}); author {endpoint.info.model} "
            f"(fingerprint {endpoint.info.fingerprint})"
        )
        store = open_store(out)
        try:
            author = Author(endpoint, store)
            paraphraser = Author(para_endpoint, store) if para_endpoint else None
            materials = await _generate([d for d, _ in kept], author, cfg, console, paraphraser)
            report.failed_requests = author.invalid + (paraphraser.invalid if paraphraser else 0)
        finally:
            store.close()
    finally:
        await counter.close()
        await endpoint.close()
        if para_endpoint is not None:
            await para_endpoint.close()
    rows: list[dict[str, Any]] = []
    for m, checks in zip(materials, _checks(materials), strict=True):
        if m.summary is None:
            report.no_summary.append(m.doc.id)
        doc_rows, flagged = document_rows(m, checks, endpoint.info.fingerprint, cfg)
        rows += doc_rows
        report.flagged += flagged
    if not rows:
        raise JudgeprobeError("the build produced no items (every LLM summary failed?)")
    _check_context(rows, dict((d.id, n) for d, n in kept), report)
    frame = candidate_frame(rows)
    write_candidate_set(frame, report.path)
    report.sha256 = bytes_hash(report.path.read_bytes())
    report.subsets = dict(sorted(Counter(frame["subset"].to_list()).items()))
    report.wall_s = time.monotonic() - start
    write_json(out / "build.json", report.as_dict(cfg))
    return report


async def _generate(
    docs: list[Document], author: Author, cfg: BuildConfig, console: Console,
    paraphraser: Author | None = None,
) -> list[Materials]:  # fmt: skip
    """Every document's texts, a few documents at a time, in corpus order."""
    slots = asyncio.Semaphore(max(1, cfg.author.concurrency))
    done = 0
    step = max(1, len(docs) // 20)

    async def one(doc: Document) -> Materials:
        nonlocal done
        async with slots:
            m = await make_materials(doc, author, cfg, paraphraser)
        done += 1
        if done % step == 0 or done == len(docs):
            console.print(f"documents {done}/{len(docs)}")
        return m

    return list(await asyncio.gather(*(one(d) for d in docs)))


def _check_context(
    rows: list[dict[str, Any]], doc_tokens: dict[str, int], report: BuildReport
) -> None:
    """Items whose judge prompt (plus a default reply) would not fit the judge's context."""
    if report.context_window is None:
        return
    budget = report.context_window - Sampling().max_tokens - _judge_prompt_overhead()
    for row in rows:
        size = doc_tokens[row["doc_id"]] + approx_tokens(row["candidate_1"])
        if size + approx_tokens(row["candidate_2"]) > budget:
            report.over_context.append(row["item_id"])


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m judgeprobe.build", description=__doc__)
    p.add_argument("--config", type=Path, help="build config (TOML); flags override it")
    p.add_argument(
        "--corpus", help="bundled:corpus (default), a .jsonl/.csv/.parquet file or a folder"
    )
    p.add_argument("--out", type=Path, default=Path("runs/candidates"), help="output folder")
    p.add_argument("--author", metavar="NAME=URL", help="the LLM that writes (default: embedded)")
    p.add_argument("--paraphraser", metavar="NAME=URL", help="the LLM that writes the paraphrases")
    p.add_argument("--limit", type=int, help="only the first N documents")
    p.add_argument("--words", type=int, help="LLM summary word budget")
    p.add_argument("--seed", type=int, help="base seed of every sampled text")
    p.add_argument("--min-tokens", type=int, help="shortest document kept (tokens)")
    p.add_argument("--max-tokens", type=int, help="longest document kept (tokens)")
    p.add_argument("--keep-flagged", action="store_true", default=None,
                   help="keep rewrites that fail the preservation check (flagged)")  # fmt: skip
    return p


def _changes(args: argparse.Namespace, base: BuildConfig) -> dict[str, object]:
    """The config fields the flags set (``with_overrides`` puts them over ``base``)."""
    names = ("corpus", "limit", "words", "seed", "min_tokens", "max_tokens", "keep_flagged")
    found: dict[str, object] = {n: getattr(args, n) for n in names if getattr(args, n) is not None}
    if args.author:
        name, url = parse_judge_flag(args.author)
        found["author"] = {**base.author.model_dump(), "name": name, "url": url}
    if args.paraphraser:
        name, url = parse_judge_flag(args.paraphraser)
        found["paraphraser"] = {"name": name, "url": url, "concurrency": base.author.concurrency}
    return found


def main(argv: list[str] | None = None) -> int:
    """Entry point of the candidate-set builder: config and flags in, candidates out."""
    args = _parser().parse_args(argv)
    base = load_toml(args.config, BuildConfig)
    cfg = with_overrides(base, _changes(args, base))
    console = Console(stderr=True, soft_wrap=True)
    report = asyncio.run(build_set(cfg, args.out, console))
    if report.dropped:
        console.print(f"{len(report.dropped)} documents outside the token range were left out")
    if report.over_context:
        console.print(
            f"[yellow]warning: {len(report.over_context)} items may not fit the judge's context "
            f"window of {report.context_window} tokens (e.g. {report.over_context[0]})[/]"
        )
    if report.failed_requests:
        console.print(f"[yellow]{report.failed_requests} generation requests ended Invalid[/]")
    counts = ", ".join(f"{k} {v}" for k, v in report.subsets.items())
    console.print(
        f"{sum(report.subsets.values())} items from {report.documents} documents ({counts}); "
        f"{report.flagged} rewrites flagged by the preservation check"
        f"{' (kept)' if cfg.keep_flagged else ' (left out)'}; "
        f"wrote {report.path} in {report.wall_s:.1f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
