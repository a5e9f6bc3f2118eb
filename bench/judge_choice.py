"""Which embedded judge should be the default? Each runs the default sweep; compare the verdicts.

    python bench/judge_choice.py [--judges gemma,qwen05,qwen15] [--order random|both] [--slots 4]

For each judge: start its server (servers/embedded.py, on a port of its own, so a running
`make serve-*` is not disturbed), run the default sweep through the CLI exactly as `make run`
does (bundled sample × Blind/True/Flip/Placebo × Baseline, report included), stop the server,
and read judgments.parquet. Prints one row per judge:

- valid: share of judgments with a schema-conforming verdict (after re-asks); first: share
  whose first reply conformed (no re-ask);
- entropy: Shannon entropy of the valid verdicts A/B/Tie in bits (0 = one answer for
  everything, 1.58 = all three equally often); Tie: Tie share of the valid verdicts;
- first-shown: share of the non-Tie verdicts that picked the summary shown first (0.5 for a
  judge without position preference; 1.0 or 0.0 = it reads only the position);
- moved: share of (item, order) pairs whose verdict under a cue condition differs from Blind's;
  to-cue: share of those moves that went to the cue's target;
- cites: share of explanations that use at least two words (five letters or more, or numbers)
  from the item's texts that the instructions do not contain: explanations that refer to the
  content rather than restate the format;
- s/req: sweep wall time per request (the judge's slots all busy), and the sweep wall time.

One run per judge on a shared, noisy machine: compare judges measured together, not seconds
across runs.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import polars as pl

from judgeprobe.core.corpus import load_items

ROOT = Path(__file__).resolve().parent.parent
LAUNCHER = [sys.executable, str(ROOT / "servers" / "embedded.py")]
TEMPLATES = ROOT / "judgeprobe" / "prompts" / "templates"
WORD = re.compile(r"[A-Za-z]{5,}|\d+(?:\.\d+)?")


def words(text: str) -> set[str]:
    """The content words and numbers of a text, to tell whether a reply cites its document."""
    return {w.lower() for w in WORD.findall(text)}


def sweep_config(
    path: Path, alias: str, url: str, order: str, slots: int, timeout_s: float | None
) -> Path:
    """The default sweep (experiments/default.toml) with this judge, order and timeout."""
    text = (ROOT / "experiments" / "default.toml").read_text()
    head = text.split("[[judges]]")[0]
    head = re.sub(r'(?m)^order = "[^"]*"', f'order = "{order}"', head)
    head = re.sub(r'(?m)^name = "[^"]*"', f'name = "choice-{alias}"', head)
    if timeout_s:
        head = re.sub(r"(?m)^attempt_timeout_s = .*$", f"attempt_timeout_s = {timeout_s}", head)
    judge = f'[[judges]]\nname = "{alias}"\nurl = "{url}"\nconcurrency = {slots}\n'
    path.write_text(head + judge)
    return path


def entropy(counts: Counter[str]) -> float:
    """Shannon entropy of the verdicts in bits: 0 when a judge always says the same."""
    n = sum(counts.values())
    return sum(-c / n * math.log2(c / n) for c in counts.values() if c) if n else 0.0


def share(hits: pl.Series) -> float:
    """The share of true values, NaN when there are none to count."""
    return float(hits.sum()) / hits.len() if hits.len() else math.nan


def summarise(j: pl.DataFrame, wall_s: float, limit: int | None) -> dict[str, float]:
    """The row of the table for one judge's judgments."""
    valid = j.filter(pl.col("verdict") != "Invalid")
    decided = valid.filter(pl.col("verdict") != "Tie")
    counts = Counter(valid["verdict"].to_list())
    instructions = words((TEMPLATES / "baseline_v1.txt").read_text())
    instructions |= words((TEMPLATES / "materials_v1.txt").read_text())
    texts = {
        it.item_id: words(f"{it.document} {it.candidate_1} {it.candidate_2}")
        for it in load_items("bundled:sample", limit or 0)
    }
    cites = [
        len((words(e) & texts[i]) - instructions) >= 2
        for i, e in valid.select("item_id", "explanation").iter_rows()
    ]
    key = ["item_id", "order", "seed"]
    blind = valid.filter(pl.col("condition") == "Blind").select(*key, blind="verdict")
    cued = valid.filter(pl.col("condition") != "Blind").join(blind, on=key)
    moved = cued.filter(pl.col("verdict") != pl.col("blind"))
    n = j.height
    return {
        "n": n,
        "valid": valid.height / n,
        "first": j.filter((pl.col("verdict") != "Invalid") & (pl.col("reasks") == 0)).height / n,
        "entropy": entropy(counts),
        "Tie": counts["Tie"] / max(valid.height, 1),
        "first-shown": share(decided["raw_verdict"] == "[1,2]"),
        "moved": moved.height / cued.height if cued.height else math.nan,
        "to-cue": share(moved["verdict"] == moved["target"]),
        "cites": sum(cites) / len(cites) if cites else math.nan,
        "s/req": wall_s / max(int(j["n_requests"].sum()), 1),
        "wall_s": wall_s,
    }


def run_judge(name: str, port: int, args: argparse.Namespace, out: Path) -> dict[str, float | str]:
    """Start one embedded judge, run the default sweep on it, and summarise its judgments."""
    state = out / f"{name}-servers"
    env = {**os.environ, "JUDGEPROBE_SERVER_DIR": str(state)}
    t0 = time.monotonic()
    up = subprocess.run(
        [*LAUNCHER, "start", name, "--port", str(port), "--slots", str(args.slots)],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    start_s = time.monotonic() - t0
    if up.returncode != 0:
        raise SystemExit(up.stderr.strip())
    try:
        url = up.stdout.strip()
        alias = subprocess.run(
            [sys.executable, "-c", "import json,urllib.request as u;"
             f"print(json.load(u.urlopen('{url}/models'))['data'][0]['id'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        cfg = sweep_config(
            out / f"{name}.toml", alias, url, args.order, args.slots, args.attempt_timeout
        )
        cmd = [sys.executable, "-m", "judgeprobe.run", "--config", str(cfg), "--no-progress"]
        cmd += ["--out", str(out / name)] + (["--limit", str(args.limit)] if args.limit else [])
        t0 = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        wall_s = time.monotonic() - t0
        if proc.returncode != 0:
            raise SystemExit(f"{name}: sweep failed ({proc.returncode}): {proc.stderr[-2000:]}")
    finally:
        subprocess.run([*LAUNCHER, "stop", name], env=env, capture_output=True)
    row = summarise(pl.read_parquet(out / name / "judgments.parquet"), wall_s, args.limit)
    return {"judge": name, "start_s": start_s, **row}


def table(rows: list[dict[str, float | str]]) -> str:
    """The judges' rows as a Markdown table for bench/RESULTS.md."""
    cols = ["judge", "n", "valid", "first", "entropy", "Tie", "first-shown", "moved", "to-cue"]
    cols += ["cites", "s/req", "wall_s", "start_s"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in rows:
        cells = [row[c] if isinstance(row[c], str | int) else f"{row[c]:.2f}" for c in cols]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines)


def main() -> int:
    """Run the candidate default judges one after another and print the comparison table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", default="gemma,qwen05,qwen15")
    parser.add_argument("--order", default="random", choices=["random", "both", "12", "21"])
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--limit", type=int, default=None, help="only the first N items")
    parser.add_argument("--port", type=int, default=8290, help="first port (one per judge)")
    parser.add_argument("--out", type=Path, default=None, help="keep the runs here")
    parser.add_argument(
        "--attempt-timeout", type=float, default=None,
        help="seconds per attempt (default: the default sweep's); raise it on a loaded machine, "
        "where a timed-out request is sent again and the time measures the retries",
    )  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        rows = []
        for i, name in enumerate(args.judges.split(",")):
            rows.append(run_judge(name, args.port + i, args, out))
            print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
        print(f"order = {args.order!r}, {args.slots} slots, load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
