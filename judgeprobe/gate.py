"""``python -m judgeprobe.gate``: gate a pull request on a judge card (the CI recipes' step).

``ci/judge_gate.sh`` runs it; the GitHub Action (``action.yml``) and the GitLab example
(docs/ci.md) call that script. It runs ``judgeprobe run`` (``--config``/``--judge``) or
``judgeprobe logs`` (``--logs``) into ``--out``, or takes a finished run (``--run-dir``), then
``judgeprobe card --summary-md`` on it, and:

- appends the summary to ``$GITHUB_STEP_SUMMARY`` (the job's summary page) when it is set, and
  prints it otherwise;
- writes ``exit-code`` (the run's or logs command's), ``card-exit-code`` (``judgeprobe card``'s,
  empty when no card was made), ``passed``, ``card-json``, ``card-html`` and ``summary-md`` to
  ``$GITHUB_OUTPUT`` when it is set;
- exits 0 when the gate passes, 1 when it fails: on a row the rule fails (``card.gate``: BIASED,
  UNSTABLE, INSENSITIVE, DOES-NOT-REPLACE; UNDERPOWERED too with ``--strict``) and on a run that
  could not read its input, finish or trust its judge (exit 2, 3, 4). The pytest plugin applies
  the same rule to the same rows.

Every flag also reads an environment variable (``JUDGE_GATE_CONFIG`` …, listed in ``--help``),
so a CI job can set variables instead of composing a command line.
"""

from __future__ import annotations

import argparse
import glob
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from judgeprobe.__main__ import main as console
from judgeprobe.card.gate import FAILING_EXIT, Gate, read_card
from judgeprobe.runs.rundir import RunDir

ENV = "JUDGE_GATE_"
SUMMARY = "card_summary.md"
"""The pull-request summary, written beside the card (``judgeprobe card --summary-md``)."""
MEANING = {2: "could not read its input", 3: "did not finish", 4: "found its judge unreliable"}


def _env(name: str) -> str | None:
    return os.environ.get(ENV + name.upper().replace("-", "_")) or None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m judgeprobe.gate", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip

    def add(flag: str, **kw: object) -> None:
        env = ENV + flag.upper().replace("-", "_")
        kw["help"] = f"{kw.get('help', '')} (env {env})"
        p.add_argument(f"--{flag}", **kw)  # type: ignore[arg-type]

    add("config", type=Path, default=_env("config"), help="sweep config: judgeprobe run")
    add("judges", default=_env("judges") or "",
        help="judge flags NAME=URL, whitespace-separated: judgeprobe run --judge")  # fmt: skip
    add("limit", type=int, default=_env("limit"), help="judgeprobe run --limit")
    add("logs", default=_env("logs") or "",
        help="judge log files or globs, whitespace-separated: judgeprobe logs")  # fmt: skip
    add("labels", type=Path, default=_env("labels"), help="judgeprobe logs --labels")
    add("format", default=_env("format"), help="judgeprobe logs --format")
    add("run-dir", type=Path, default=_env("run-dir"), help="a finished run: only the card")
    add("out", type=Path, default=_env("out") or "runs/judge-gate", help="the run directory")
    add("artifact", default=_env("artifact"),
        help="the artifact the full card is uploaded as (the summary names it)")  # fmt: skip
    add("strict", action="store_true", default=(_env("strict") or "").lower() == "true",
        help="UNDERPOWERED rows fail the gate too")  # fmt: skip
    return p


def _command(args: argparse.Namespace) -> list[str] | None:
    """The judgeprobe command that makes the run; None when the run is given (``--run-dir``)."""
    if args.run_dir is not None:
        return None
    if args.logs:
        paths = [m for p in shlex.split(args.logs) for m in sorted(glob.glob(p)) or [p]]
        extra = (["--labels", str(args.labels)] if args.labels else []) + (
            ["--format", args.format] if args.format else []
        )
        return ["logs", *paths, "--out", str(args.out), *extra]
    command = ["run", "--no-progress", "--out", str(args.out)]
    command += ["--config", str(args.config)] if args.config else []
    command += [part for j in shlex.split(args.judges) for part in ("--judge", j)]
    return command + (["--limit", str(args.limit)] if args.limit is not None else [])


def _append(variable: str, text: str, fallback: Callable[[str], object] | None = None) -> None:
    """Append ``text`` to the file GitHub names in ``variable``; else hand it to ``fallback``."""
    target = os.environ.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(text)
    elif fallback is not None:
        fallback(text)


def _failed(command: str, code: int, why: str) -> str:
    """The summary's head when a command failed: which, how, and where to look."""
    return (f"## Judge card\n\n**The gate fails**: `judgeprobe {command}` {why} (exit {code}); "
            "its log says why.\n\n")  # fmt: skip


def gate(args: argparse.Namespace) -> int:
    """Make the run, card it, write the summary and the outputs; 0 when the gate passes."""
    command = _command(args)
    code = 0 if command is None else console(command)
    run = RunDir(args.run_dir or args.out)
    if command is None and not run.judgments.is_file():
        print(f"error: --run-dir {run.path}: no {run.judgments.name}", file=sys.stderr)
        code = 2
    where = f"the `{args.artifact}` artifact (card.html)" if args.artifact else str(run.card_html)
    summary = run.path / SUMMARY
    card_code: int | None = None
    summary.unlink(missing_ok=True)  # never an earlier run's summary
    if run.judgments.is_file():
        card_args = ["card", str(run.path), "--summary-md", str(summary), "--summary-where", where]
        card_code = console(card_args + (["--summary-strict"] if args.strict else []))
    failed_run = code in FAILING_EXIT
    made = card_code is not None and card_code not in FAILING_EXIT  # a card was written
    text = summary.read_text(encoding="utf-8") if made and summary.is_file() else ""
    if failed_run:
        shown = " ".join(command) if command else f"card {run.path}"
        text = _failed(shown, code, MEANING[code]) + text
    elif not made:
        text = _failed(f"card {run.path}", card_code or 2, "could not make a card")
    passed = not failed_run and made
    if passed:
        passed = Gate(read_card(run.card_json), args.strict).passed
    _append("GITHUB_STEP_SUMMARY", text, lambda t: print(t, end=""))
    outputs = {
        "exit-code": code if command is not None or card_code is None else card_code,
        "card-exit-code": "" if card_code is None else card_code,
        "passed": str(passed).lower(),
        "card-json": run.card_json if made else "",
        "card-html": run.card_html if made else "",
        "summary-md": summary if made else "",
    }
    _append("GITHUB_OUTPUT", "".join(f"{k}={v}\n" for k, v in outputs.items()))
    print(f"judge gate {'passed' if passed else 'FAILED'}", file=sys.stderr)
    return 0 if passed else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m judgeprobe.gate``."""
    return gate(_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
