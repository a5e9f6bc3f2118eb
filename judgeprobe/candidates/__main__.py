"""``judgeprobe candidates``: turn documents into a candidate set the sweep can judge.

corpus → length filter → LLM summaries, draws, paraphrases and attacks (cached engine requests)
+ extractive summaries (sumy) + rule-based attacks → preservation check → subsets →
``OUT/candidates.parquet`` (set ``items = "OUT/candidates.parquet"`` in a sweep config) and
``OUT/build.json`` (counts, dropped documents, timing). ``OUT/store.sqlite`` caches every
request and every written document: rerunning an interrupted or finished build sends only what
is missing. When the sweep deadline or the author's circuit breaker stops it first, no set is
written and the command exits 3.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from judgeprobe.candidates.assemble import BuildIncomplete, make_candidate_set
from judgeprobe.candidates.config import CandidatesConfig
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.runs.config import JUDGE_FLAG, judge_from_flag, load_toml, with_overrides
from judgeprobe.runs.rundir import EXIT_INCOMPLETE


def _parser() -> argparse.ArgumentParser:
    p = command_parser("candidates", __doc__)
    p.add_argument("--config", type=Path, help="candidate-set config (TOML); flags override it")
    p.add_argument(
        "--corpus", help="bundled:corpus (default), a .jsonl/.csv/.parquet file or a folder"
    )
    p.add_argument("--out", type=Path, default=Path("runs/candidates"), help="output folder")
    p.add_argument("--author", metavar=JUDGE_FLAG, help="the LLM that writes (default: embedded)")
    p.add_argument("--paraphraser", metavar=JUDGE_FLAG, help="the LLM that writes the paraphrases")
    p.add_argument("--limit", type=int, help="only the first N documents")
    p.add_argument("--words", type=int, help="LLM summary word budget")
    p.add_argument("--seed", type=int, help="base seed of every sampled text")
    p.add_argument("--min-tokens", type=int, help="shortest document kept (tokens)")
    p.add_argument("--max-tokens", type=int, help="longest document kept (tokens)")
    p.add_argument("--keep-flagged", action="store_true", default=None,
                   help="keep rewrites that fail the preservation check (flagged)")  # fmt: skip
    return p


def _changes(args: argparse.Namespace, base: CandidatesConfig) -> dict[str, object]:
    """The config fields the flags set (``with_overrides`` puts them over ``base``)."""
    names = ("corpus", "limit", "words", "seed", "min_tokens", "max_tokens", "keep_flagged")
    found: dict[str, object] = {n: getattr(args, n) for n in names if getattr(args, n) is not None}
    if args.author:  # keeps the config's author settings, under the name and URLs given
        found["author"] = judge_from_flag(args.author, option="--author", default=base.author)
    if args.paraphraser:
        found["paraphraser"] = judge_from_flag(
            args.paraphraser, option="--paraphraser",
            default={"concurrency": base.author.concurrency},
        )  # fmt: skip
    return found


def main(argv: list[str] | None = None) -> int:
    """Entry point of the candidate-set builder: config and flags in, candidates out."""
    args = _parser().parse_args(argv)
    base = load_toml(args.config, CandidatesConfig)
    cfg = with_overrides(base, _changes(args, base))
    console = Console(stderr=True, soft_wrap=True)
    try:
        stats = asyncio.run(make_candidate_set(cfg, args.out, console))
    except BuildIncomplete as exc:
        console.print(f"[yellow]incomplete: {escape(str(exc))}[/]")
        return EXIT_INCOMPLETE
    if stats.dropped:
        console.print(f"{len(stats.dropped)} documents outside the token range were left out")
    if stats.over_context:
        console.print(
            f"[yellow]warning: {len(stats.over_context)} items may not fit the judge's context "
            f"window of {stats.context_window} tokens (e.g. {stats.over_context[0]})[/]"
        )
    if stats.failed_requests:
        console.print(f"[yellow]{stats.failed_requests} generation requests ended Invalid[/]")
    counts = ", ".join(f"{k} {v}" for k, v in stats.subsets.items())
    console.print(
        f"{sum(stats.subsets.values())} items from {stats.documents} documents ({counts}); "
        f"{stats.flagged} rewrites flagged by the preservation check"
        f"{' (kept)' if cfg.keep_flagged else ' (left out)'}; "
        f"wrote {stats.path} in {stats.wall_s:.1f}s"
    )
    return 0


cli = guarded(main, "every text written so far is stored; rerun the same command")
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
