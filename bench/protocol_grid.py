"""Protocols on the embedded instruct judge: the grid-smoke sweep, summarised per protocol.

    python -m bench.protocol_grid [--model qwen05] [--port 8190] [--slots 2]
    python -m bench.protocol_grid --url http://127.0.0.1:8190/v1     # a judge already up
    python -m bench.protocol_grid --summarise runs/grid-smoke         # an existing run only

Starts the embedded judge on a port of its own (state in a temporary directory, so no other
server is touched), runs ``experiments/grid-smoke.toml`` through ``python -m judgeprobe.run``
as a user would, stops the server and prints, per protocol: valid share, requests sent per
judgment (stages, re-asks, escalations and retries all counted), mean completion tokens per
judgment, escalations, re-asks, fabricated-quote share (PBP), seconds of judge time per
judgment and the commonest Invalid reasons; then the judge's measured characters per
completion token, the verbosity the stage budgets are sized at. ``--repo`` runs the sweep
with another checkout's code (e.g. ``git worktree add /tmp/before <commit>``) for a
before/after comparison with the same measurement. ``--attempt-timeout`` raises the
per-request timeout for a slow, shared machine (a timed-out request is sent again, which
would measure the machine, not the protocols).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import polars as pl

from judgeprobe.metrics.flags import invalid_reasons

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "experiments" / "grid-smoke.toml"
LAUNCHER = ROOT / "servers" / "embedded.py"


@contextmanager
def embedded_judge(model: str, port: int, slots: int) -> Iterator[str]:
    """The embedded judge on ``port``, stopped on exit; its pid file in a directory of ours."""
    with tempfile.TemporaryDirectory(prefix="grid-judge-") as state:
        env = {**os.environ, "JUDGEPROBE_SERVER_DIR": state}
        launch = [sys.executable, str(LAUNCHER)]
        up = subprocess.run(
            [*launch, "start", model, "--port", str(port), "--slots", str(slots), "--wait", "600"],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
        if up.returncode != 0:
            raise SystemExit(f"error: {model} did not start: {up.stderr.strip()}")
        try:
            yield up.stdout.strip()
        finally:
            subprocess.run([*launch, "stop", model], env=env, capture_output=True, check=False)


def with_timeout(config: Path, timeout_s: float | None, tmp: Path) -> Path:
    """``config`` with ``[engine] attempt_timeout_s`` (and a request deadline to match)."""
    if timeout_s is None:
        return config
    text = config.read_text(encoding="utf-8")
    if "[engine]" in text:
        raise SystemExit(f"error: {config} has an [engine] table; drop --attempt-timeout")
    engine = f"attempt_timeout_s = {timeout_s}\nrequest_deadline_s = {3 * timeout_s}\n"
    path = tmp / config.name
    path.write_text(f"{text}\n[engine]\n{engine}", encoding="utf-8")
    return path


def sweep(url: str, config: Path, out: Path, repo: Path, limit: int | None) -> float:
    """Run the sweep with ``repo``'s code against ``url``; its wall seconds."""
    cmd = [sys.executable, "-m", "judgeprobe.run", "--config", str(config), "--out", str(out)]
    cmd += ["--judge", f"judge={url}", "--no-progress"]
    cmd += ["--limit", str(limit)] if limit is not None else []
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    if proc.returncode not in (0, 3):
        raise SystemExit(f"error: the sweep failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall


def chars_per_token(store: Path) -> tuple[float, float, int]:
    """Characters per completion token over replies that took one request.

    Returns the mean over all of them, the 5th percentile of the per-reply ratio, and how many
    such replies there were.
    """
    with sqlite3.connect(store) as db:
        rows = [orjson.loads(r[0]) for r in db.execute("SELECT data FROM results")]
    single = [r for r in rows if r.get("attempts") == 1 and r.get("completion_tokens", 0) > 0]
    if not single:
        return float("nan"), float("nan"), 0
    ratios = pl.Series([len(r["raw"]) / r["completion_tokens"] for r in single])
    mean = sum(len(r["raw"]) for r in single) / sum(r["completion_tokens"] for r in single)
    return mean, float(ratios.quantile(0.05) or float("nan")), len(single)


def summary(j: pl.DataFrame) -> pl.DataFrame:
    """One row per protocol: the figures issue 16 asks for."""
    for column in ("escalations", "reasks", "attempts", "n_quotes", "n_fabricated"):
        if column not in j.columns:  # a judgments table from before the column existed
            j = j.with_columns(pl.lit(None, dtype=pl.Int64).alias(column))
    valid = pl.col("verdict") != "Invalid"
    return (
        j.group_by("protocol")
        .agg(
            judgments=pl.len(),
            valid_share=valid.mean(),
            requests_per_judgment=pl.col("attempts").mean(),
            completion_tokens=pl.col("completion_tokens").mean(),
            escalations=pl.col("escalations").sum(),
            reasks=pl.col("reasks").sum(),
            quotes=pl.col("n_quotes").sum(),
            fabricated_share=pl.col("n_fabricated").sum() / pl.col("n_quotes").sum(),
            judge_s_per_judgment=pl.col("latency_s").sum() / pl.len(),
        )
        .sort("protocol")
    )


def report(run_dir: Path, wall_s: float | None) -> None:
    """Print what the grid measured: per-protocol validity and cost, Invalid reasons, budgets."""
    j = pl.read_parquet(run_dir / "judgments.parquet")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, float_precision=3):
        print(summary(j))
        reasons = invalid_reasons(j, top=3).select("protocol", "n", "reason")
        if not reasons.is_empty():
            with pl.Config(fmt_str_lengths=110):
                print(reasons)
    if wall_s is not None:
        print(f"wall {wall_s:.0f} s for {j.height} judgments: {wall_s / j.height:.1f} s each")
    manifest = orjson.loads((run_dir / "manifest.json").read_bytes())
    print("budgets:", manifest.get("budgets", "(not recorded)"))
    mean, low, n = chars_per_token(run_dir / "store.sqlite")
    print(f"characters per completion token over {n} one-request replies: mean {mean:.2f}, "
          f"5th percentile {low:.2f}")  # fmt: skip


def main() -> int:
    """Run every protocol on one embedded judge and report what each costs."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="qwen05", help="embedded judge to start (servers/)")
    p.add_argument("--port", type=int, default=8190)
    p.add_argument("--slots", type=int, default=2, help="server slots (issue 16 measured 2)")
    p.add_argument("--url", help="use this judge instead of starting one")
    p.add_argument("--config", type=Path, default=CONFIG)
    p.add_argument("--out", type=Path, help="run directory (default: a temporary one)")
    p.add_argument("--repo", type=Path, default=ROOT, help="checkout whose code runs the sweep")
    p.add_argument("--limit", type=int, help="only the first N items")
    p.add_argument("--attempt-timeout", type=float, help="seconds per request attempt")
    p.add_argument("--summarise", type=Path, metavar="RUN_DIR", help="only summarise a run")
    args = p.parse_args()
    if args.summarise:
        report(args.summarise, None)
        return 0
    with tempfile.TemporaryDirectory(prefix="grid-") as tmp:
        out = (args.out or Path(tmp) / "run").resolve()
        config = with_timeout(args.config.resolve(), args.attempt_timeout, Path(tmp))
        if args.url:
            wall = sweep(args.url, config, out, args.repo, args.limit)
        else:
            with embedded_judge(args.model, args.port, args.slots) as url:
                wall = sweep(url, config, out, args.repo, args.limit)
        print(f"{args.config.name} on {args.url or args.model}, code from {args.repo}")
        report(out, wall)
    return 0


if __name__ == "__main__":
    sys.exit(main())
