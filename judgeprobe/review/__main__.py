"""``judgeprobe review RUN``: review a run's generated texts and label preferences in the browser.

    judgeprobe review runs/default                  # http://127.0.0.1:8765/
    judgeprobe review runs/default --port 9000 --reviewer ada

Every generated text (style attacks, injected sentences, degraded copies, a candidate set's
rewrites and paraphrase pairs) beside its source, with its rule check and the judge's
verdicts: accept, reject or edit it. Decisions go to ``RUN/review.sqlite``; a rejected text's
judgments leave the metrics, card and report; an edited text is judged on the next
``judgeprobe run --resume``. A blind sample of pairs (``annotate export``'s, drawn now if there
is none) takes preference labels, whose agreement with the judge the report gives.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import getpass
import sys
from pathlib import Path

from aiohttp import web
from rich.console import Console
from rich.markup import escape

from judgeprobe import JudgeprobeError
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.review.server import LOOPBACK, make_app


def _parser() -> argparse.ArgumentParser:
    p = command_parser("review", __doc__)
    p.add_argument("run_dir", type=Path, metavar="RUN")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free one)")
    p.add_argument(
        "--host", default="127.0.0.1",
        help="address to bind (default 127.0.0.1: this machine only)",
    )  # fmt: skip
    p.add_argument("--reviewer", help="who decides (default: the login name)")
    p.add_argument("--pairs", type=int, default=30, help="pairs to label when none are drawn")
    p.add_argument("--seed", type=int, default=0, help="the pair sample's seed")
    p.add_argument("--items", help="the run's items file, when it moved since the run")
    return p


def _reviewer(name: str | None) -> str:
    try:
        found = name if name is not None else getpass.getuser()
    except (KeyError, OSError):
        found = ""
    found = found.strip()
    if not found or len(found) > 200 or not found.isprintable():
        raise JudgeprobeError("--reviewer: give a name (printable, up to 200 characters)")
    return found


async def _serve(app: web.Application, host: str, port: int, console: Console) -> None:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound ({exc.strerror})"
        raise JudgeprobeError(f"--port {port} on {host} {why}; choose another --port") from None
    for address in runner.addresses:
        shown = f"[{address[0]}]" if ":" in str(address[0]) else address[0]
        console.print(f"review at http://{escape(str(shown))}:{address[1]}/ (Ctrl-C to stop)")
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``judgeprobe review``: serve the review page until Ctrl-C."""
    args = _parser().parse_args(argv)
    if not 0 <= args.port <= 65535:
        raise JudgeprobeError(f"--port must be 0 to 65535 (got {args.port})")
    if args.pairs < 1:
        raise JudgeprobeError("--pairs must be at least 1")
    reviewer = _reviewer(args.reviewer)
    console = Console(stderr=True, soft_wrap=True)
    if args.host not in LOOPBACK:
        console.print(f"[yellow]--host {escape(args.host)}: anyone who can reach it can read "
                      "the run and write decisions[/]")  # fmt: skip
    app = make_app(args.run_dir, reviewer, args.pairs, args.seed, args.host, args.items)
    asyncio.run(_serve(app, args.host, args.port, console))
    return 0


cli = guarded(main, "the review is stored; run it again to go on")
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
