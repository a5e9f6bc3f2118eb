"""``judgeprobe selfpref OWN OTHER --out ITEMS.jsonl``: the self-preference items.

OWN and OTHER are candidate sets (``candidates.parquet``) of the same documents: OWN built with
the judge as author, OTHER with another model as author and the judge as paraphraser
(``judgeprobe.selfpref.from_sets``). The items are judged with ``experiments/self-preference.toml``.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import orjson
import polars as pl

from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.core.corpus import read_rows
from judgeprobe.core.files import write_atomic
from judgeprobe.selfpref.from_sets import self_preference_items


def main(argv: list[str] | None = None) -> int:
    """Entry point: two candidate sets in, the self-preference items out."""
    p = command_parser("selfpref", __doc__)
    p.add_argument("own", type=Path, help="candidate set with the judge as author")
    p.add_argument("other", type=Path, help="candidate set by another model, judge as paraphraser")
    p.add_argument("--out", type=Path, required=True, help="items file to write (.jsonl)")
    args = p.parse_args(argv)
    own = pl.DataFrame(read_rows(args.own, "own set", ("parquet", "jsonl")))
    other = pl.DataFrame(read_rows(args.other, "other set", ("parquet", "jsonl")))
    rows = self_preference_items(own, other)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, b"".join(orjson.dumps(r) + b"\n" for r in rows))
    counts = Counter(r["subset"] for r in rows)
    print(f"{len(rows)} items ({', '.join(f'{k} {v}' for k, v in counts.items())}) → {args.out}")
    return 0


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
