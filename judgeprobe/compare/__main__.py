"""``judgeprobe compare RUN RUN… --out DIR``: runs on the same items, each against the first.

Writes compare.csv (compare_K.csv for a further run K), compare.json, compare.md and
compare.html into DIR and prints each row's verdict. Exit 0; 2 with one line for bad input
(fewer than two runs, a missing or unreadable run, runs of different tasks, no shared item).
"""

from __future__ import annotations

import sys
from pathlib import Path

from judgeprobe.compare.entry import JSON, compare, csv_name
from judgeprobe.core.cli import command_parser, main_guard


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe compare``."""
    parser = command_parser("compare", __doc__)
    parser.add_argument(
        "runs", type=Path, nargs="+", help="run directories; the first is the baseline"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder for the comparison")
    parser.add_argument("--lexicons", type=Path, help="override the explanation lexicons (TOML)")
    args = parser.parse_args(argv)
    document = compare(args.runs, out=args.out, lexicons=args.lexicons)
    for c in document.comparisons:
        first, second = document.runs[c.first], document.runs[c.second]
        print(
            f"{second.run_id} against {first.run_id}: {c.shared_items} shared items, "
            f"{c.shared_documents} documents (left out: {c.only_first} + {c.only_second})"
        )
        for r in c.rows:
            diff = "–" if r.diff is None else f"{r.diff:+.3f}"
            bounds = (
                ""
                if r.diff_lo is None or r.diff_hi is None
                else (f" [{r.diff_lo:+.3f}, {r.diff_hi:+.3f}]")
            )
            print(f"  {r.judge} · {r.protocol} · {r.row}: diff {diff}{bounds}  {r.verdict}")
        print(f"wrote {args.out / csv_name(c)}")
    for run in document.runs:
        if run.cost.note:
            print(f"{run.run_id}: {run.cost.note}")
    print(f"wrote {args.out / JSON}, {args.out / 'compare.md'} and {args.out / 'compare.html'}")
    return 0


def cli(argv: list[str] | None = None) -> int:
    """The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""
    return main_guard(lambda: main(argv))


if __name__ == "__main__":
    sys.exit(cli())
