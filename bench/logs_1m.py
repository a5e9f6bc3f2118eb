"""Benchmark: ``judgeprobe logs`` on 10^6 MT-Bench pair-judgment lines, up to the card.

    python bench/logs_1m.py [--lines 1000000] [--out /tmp/logs-bench] [--resamples 10000]

Targets (issues 36 and 42): ``logs --no-report`` (read the log rows, write the card) in
≤ 30 s, and one ``logs`` call with the report in ≤ 45 s, both ≤ 2 GiB. The log is
synthetic FastChat ``model_judgment`` JSONL (one line = two judging calls, g1 and g2, so 10^6
lines are 2·10^6 judgments) of 8 judges over the same items (6 models, every pair, two turns),
with its ``model_answer/`` folder (the texts, hence lengths) and human labels on 5 % of the
items; written first (not timed), then read by ``judgeprobe logs``
in a child process, whose wall time and peak resident memory are printed: first with
``--no-report``, then the whole run in one call (judgments, items, labels, metrics, the card,
metrics_ci and the report) into a second directory, then ``judgeprobe report`` on the first.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson
import polars as pl

MODELS = ["alpha-7b", "beta-13b", "gamma-70b", "delta-8b", "eps-3b", "gpt-4"]
JUDGES = ["gpt-4", "gpt-4-turbo", "claude-3", "llama-3-70b", "qwen-2-72b", "mistral-large",
          "gemini-pro", "command-r"]  # fmt: skip
WINNERS = np.array(["model_1", "model_2", "tie", "error"])


def write_logs(folder: Path, lines: int, seed: int = 0) -> list[str]:
    """The pair log, the answers folder and the labels; the ``judgeprobe logs`` arguments."""
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for i, a in enumerate(MODELS) for b in MODELS[i + 1 :]]
    per_question = len(pairs) * 2 * len(JUDGES)  # two turns, every judge
    questions = -(-lines // per_question)
    idx = np.arange(questions * per_question)[:lines]
    q = idx // per_question
    rest = idx % per_question
    judge = np.array(JUDGES)[rest % len(JUDGES)]
    pair = (rest // len(JUDGES)) // 2
    turn = (rest // len(JUDGES)) % 2 + 1
    m1 = np.array([a for a, _ in pairs])[pair]
    m2 = np.array([b for _, b in pairs])[pair]
    p = [0.38, 0.32, 0.28, 0.02]
    frame = pl.DataFrame({
        "question_id": q, "model_1": m1, "model_2": m2,
        "g1_winner": WINNERS[rng.choice(4, size=idx.size, p=p)],
        "g2_winner": WINNERS[rng.choice(4, size=idx.size, p=p)],
        "judge": pl.Series(judge).map_elements(lambda j: [j, "pair-v2"],
                                               return_dtype=pl.List(pl.String)),
        "g1_judgment": "Assistant A is more helpful. [[A]]",
        "g2_judgment": "Assistant B follows the question better. [[B]]", "turn": turn,
    })  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "gpt-4_pair.jsonl"
    frame.write_ndjson(log)
    answers = folder / "model_answer"
    answers.mkdir(exist_ok=True)
    for model in MODELS:
        lengths = rng.integers(40, 1500, size=(questions, 2))
        rows = [{"question_id": i, "model_id": model,
                 "choices": [{"index": 0, "turns": ["x" * int(a), "y" * int(b)]}]}
                for i, (a, b) in enumerate(lengths.tolist())]  # fmt: skip
        (answers / f"{model}.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    labelled = frame.unique(["question_id", "model_1", "model_2", "turn"]).sample(
        fraction=0.05, seed=seed
    )
    votes = labelled.select(
        "question_id", "turn", model_a="model_1", model_b="model_2",
        winner=pl.Series(rng.choice(["model_a", "model_b", "tie"], size=labelled.height)),
        judge=pl.lit("expert_0"),
    )  # fmt: skip
    labels = folder / "human.jsonl"
    votes.write_ndjson(labels)
    return [str(log), "--answers", str(answers), "--labels", str(labels)]


def main() -> int:
    """Write the logs, then time ``judgeprobe logs`` on them in a child process."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/logs-bench"))
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    if (args.out / "run").exists() or (args.out / "whole").exists():
        print(f"{args.out} holds a run; choose another --out", file=sys.stderr)
        return 2
    started = time.perf_counter()
    logs = write_logs(args.out / "logs", args.lines)  # the same lines again: seeded
    print(f"wrote {args.lines:,} log lines in {time.perf_counter() - started:.1f} s")
    run = str(args.out / "run")
    resamples = ["--resamples", str(args.resamples)]
    steps = {
        "judgeprobe logs --no-report (read, judgments, metrics.csv, card)": [
            "logs", *logs, "--out", run, *resamples, "--no-report"],
        "judgeprobe logs (one call: the same, and the report and metrics_ci.csv)": [
            "logs", *logs, "--out", str(args.out / "whole"), *resamples],
        "judgeprobe report (the report and metrics_ci.csv, on the first run)": [
            "report", run, *resamples],
    }  # fmt: skip
    for what, command in steps.items():
        print(f"{what}: {_child([sys.executable, '-m', 'judgeprobe', *command])}", flush=True)
    judgments = pl.scan_parquet(args.out / "run" / "judgments.parquet").select(pl.len()).collect()
    print(f"{args.lines:,} log lines, {judgments.item():,} judgments")
    return 0


def _child(command: list[str]) -> str:
    """Run one command in a child process: its wall and CPU time and its own peak memory.

    ``os.wait4`` gives the child's own resource usage (``RUSAGE_CHILDREN`` would give the
    largest of every child so far).
    """
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 5, 6):
            err.seek(0)
            raise SystemExit(f"{command[3]} failed ({code}): {err.read()[-2000:].decode()}")
    cpu = usage.ru_utime + usage.ru_stime
    return f"{wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {usage.ru_maxrss / 2**20:.2f} GiB"


if __name__ == "__main__":
    sys.exit(main())
