"""``python -m judgeprobe.merge --out DIR SHARD_DIR...``: unite the shards of one sweep.

Each shard (``python -m judgeprobe.run --shard I/N``) holds its own store and judgments
table. Merging checks that every shard ran the same config on the same judge builds and
that shards 0..N-1 are each there exactly once, then writes one run directory: the stores
united (so ``--resume`` on it reuses every result), the judgments tables concatenated, and
the metrics and report over the whole sweep. Mismatched shards are refused, nothing written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.core.cli import main_guard
from judgeprobe.core.files import atomic_path, write_json
from judgeprobe.core.records import never_ran
from judgeprobe.cue.outputs import write_outputs
from judgeprobe.engine.store import Store
from judgeprobe.runs.rundir import EXIT_INCOMPLETE, read_manifest


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m judgeprobe.merge", description=__doc__)
    p.add_argument("shards", nargs="+", type=Path, help="the shard run directories")
    p.add_argument("--out", type=Path, required=True, help="the merged run directory")
    return p


def _judges(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    return [(j.get("name", ""), j.get("fingerprint", "")) for j in manifest.get("judges", [])]


def check_shards(dirs: list[Path]) -> list[dict[str, Any]]:
    """Every shard's manifest, once they are known to form one whole sweep."""
    manifests = []
    for d in dirs:
        manifest = read_manifest(d)
        if manifest is None:
            raise JudgeprobeError(f"{d}: no run manifest (not a judgeprobe run directory)")
        if not isinstance(manifest.get("shard"), dict):
            raise JudgeprobeError(f"{d}: not a shard run (it was run without --shard)")
        if not (d / "store.sqlite").exists() or not (d / "judgments.parquet").exists():
            raise JudgeprobeError(f"{d}: shard has no store or judgments table; did it finish?")
        manifests.append(manifest)
    first, head = manifests[0], dirs[0]
    for d, m in zip(dirs[1:], manifests[1:], strict=True):
        if m.get("config_digest") != first.get("config_digest"):
            raise JudgeprobeError(f"{d} was run with a different config than {head}; not merged")
        if _judges(m) != _judges(first):
            raise JudgeprobeError(
                f"{d} used other judges or server builds than {head} (fingerprints differ)"
            )
    counts = {m["shard"]["count"] for m in manifests}
    if len(counts) != 1:
        raise JudgeprobeError(f"shards split the sweep differently (N = {sorted(counts)})")
    n = counts.pop()
    seen: dict[int, Path] = {}
    for d, m in zip(dirs, manifests, strict=True):
        index = m["shard"]["index"]
        if index in seen:
            raise JudgeprobeError(f"shard {index}/{n} given twice: {seen[index]} and {d}")
        seen[index] = d
    missing = sorted(set(range(n)) - set(seen))
    if missing:
        raise JudgeprobeError(f"shard {missing[0]}/{n} is missing; merge needs all {n}")
    return manifests


def merge(dirs: list[Path], out: Path) -> pl.DataFrame:
    """Combine shard run directories into one run, refusing shards of different sweeps."""
    manifests = check_shards(dirs)
    if (out / "manifest.json").exists():
        raise JudgeprobeError(f"{out} already holds a run; choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    store = Store(out / "store.sqlite")
    try:
        for d in dirs:
            store.absorb(d / "store.sqlite")
    finally:
        store.close()
    frame = pl.concat([pl.read_parquet(d / "judgments.parquet") for d in dirs])
    with atomic_path(out / "judgments.parquet") as tmp:
        frame.write_parquet(tmp)
    manifest = {**manifests[0], "shard": None, "merged_from": [str(d) for d in dirs]}
    write_json(out / "manifest.json", manifest)
    return frame


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m judgeprobe.merge``."""
    args = _parser().parse_args(argv)
    console = Console(stderr=True, soft_wrap=True)
    frame = merge(args.shards, args.out)
    n_invalid = write_outputs(args.out, frame, console)
    not_run = frame.filter(never_ran()).height
    console.print(
        f"merged {len(args.shards)} shards: {frame.height} judgments "
        f"({frame.height - n_invalid} valid, {n_invalid} invalid) → {args.out}"
    )
    if not_run:
        console.print(f"[yellow]{not_run} judgments were not run in their shard; resume it "
                      "and merge again[/]")  # fmt: skip
        return EXIT_INCOMPLETE
    return 0


def cli(argv: list[str] | None = None) -> int:
    """The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""
    return main_guard(lambda: main(argv))


if __name__ == "__main__":
    sys.exit(cli())
