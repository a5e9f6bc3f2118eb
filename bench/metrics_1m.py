"""Benchmark: every metric with 10,000-resample intervals on 10^6 synthetic judgments.

    python bench/metrics_1m.py [--judgments 1000000] [--resamples 10000] [--per-document 1]

Target (issue 5): ≤ 20 s and ≤ 2 GiB peak memory on a 2-core machine, for the whole analysis
a run directory gets: the tidy table (every metric with its document-level bootstrap
interval, and the paired protocol and judge differences) and the estimates table with its
exact sign tests. Items come ``--per-document`` to a document: 1 is the paper's main design
(one equal-content pair per document); 2 or 4 (single_relabel, llm_vs_extractive) give the
cluster bootstrap more distinct document sums to draw, and cost more (bench/RESULTS.md).
Explanation drift is the lexical one here (embedding 10^6
explanations is a model cost, not an analysis cost). Prints wall and CPU time of the
analysis and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import polars as pl

from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.drift import lexical_drift
from judgeprobe.metrics.estimates import estimates_table
from judgeprobe.text.lexicons import load_lexicons

JUDGES = ["gemma-2-9b", "llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "zephyr-7b"]
PROTOCOLS = ["baseline", "scot", "pbp"]
CONDITIONS = ["Blind", "True", "Flip", "Placebo", "RevealAfter", "Verbosity", "Confidence"]
PHRASES = [
    "Summary 1 is more complete and accurate.",
    "Both summaries are equally faithful to the document.",
    "Summary 2 is clearer and more concise, as expected of an LLM.",
    "The LLM label suggests better fluency; Summary 1 covers more detail.",
    "Neither summary adds facts; the labels were revealed and I keep my verdict.",
    "Summary 2 is more precise and definitive.",
]


def synthetic(n: int, seed: int = 0, per_document: int = 1) -> pl.DataFrame:
    """Synthesize n judgments spread evenly over 5 judges × 3 protocols × 7 conditions.

    Items are grouped ``per_document`` to a document, so the bootstrap has real clusters.
    """
    rng = np.random.default_rng(seed)
    cells = len(JUDGES) * len(PROTOCOLS) * len(CONDITIONS)
    per_cell = n // cells
    idx = np.arange(per_cell * cells)
    cell, item = idx // per_cell, idx % per_cell
    cond = np.array(CONDITIONS)[cell % len(CONDITIONS)]
    proto = np.array(PROTOCOLS)[(cell // len(CONDITIONS)) % len(PROTOCOLS)]
    judge = np.array(JUDGES)[cell // (len(CONDITIONS) * len(PROTOCOLS))]
    verdict = rng.choice(["A", "B", "Tie", "Invalid"], size=idx.size, p=[0.3, 0.25, 0.43, 0.02])
    reveal = cond == "RevealAfter"
    pbp = pl.Series(proto == "pbp")
    return (
        pl.DataFrame(
            {
                "judge": judge,
                "protocol": proto,
                "condition": cond,
                "subset": "eq_pair",
                "item_id": item.astype(str),
                "document_id": (item // per_document).astype(str),
                "order": np.where(item % 2 == 0, "12", "21"),
                "seed": 0,
                "verdict": verdict,
                "target": np.where(cond == "Blind", "none", np.where(cond == "Flip", "B", "A")),
                "explanation": np.array(PHRASES)[rng.integers(0, len(PHRASES), idx.size)],
                "label_1": np.where(np.isin(cond, ["True", "RevealAfter"]), "LLM", ""),
                "label_2": np.where(np.isin(cond, ["True", "RevealAfter"]), "TradML", ""),
                "attack": np.where(
                    cond == "Verbosity",
                    "verbosity",
                    np.where(cond == "Confidence", "confidence", ""),
                ),
                "turn1_verdict": np.where(reveal, rng.choice(["A", "B", "Tie"], idx.size), ""),
                "turn1_target": np.where(reveal, "B", ""),
                "n_quotes": rng.integers(0, 8, idx.size),
                "n_fabricated": rng.integers(0, 2, idx.size),
                "verdict_score_agree": rng.random(idx.size) < 0.9,
                "latency_s": rng.gamma(2.0, 1.5, idx.size),
                "prompt_tokens": rng.integers(600, 1400, idx.size),
                "completion_tokens": rng.integers(20, 900, idx.size),
            }
        )
        .with_columns(pl.when(pbp).then(pl.col(c)).alias(c) for c in ("n_quotes", "n_fabricated"))
        .with_columns(pl.when(pl.col("protocol") != "baseline").then(pl.col("verdict_score_agree")))
    )


def main() -> int:
    """Time the metric and estimates tables on 10^6 synthetic judgments."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judgments", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--per-document", type=int, default=1, help="items per document")
    args = parser.parse_args()
    j = synthetic(args.judgments, per_document=args.per_document)
    lex = load_lexicons()
    start, cpu = time.perf_counter(), time.process_time()
    tidy = compute_metrics(j, lex, lexical_drift, args.resamples, seed=0)
    mid = time.perf_counter()
    estimates = estimates_table(j)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    diffs = tidy["versus"].is_not_null().sum()
    tested = estimates["sign_p"].is_not_null().sum()
    print(f"{j.height} judgments ({args.per_document} items per document): "
          f"{tidy.height} metric rows ({diffs} paired differences) with {args.resamples}-"
          f"resample intervals in {mid - start:.1f} s; estimates table of {estimates.height} cells "
          f"({tested} sign tests) in {elapsed - (mid - start):.1f} s; total {elapsed:.1f} s "
          f"wall, {cpu:.1f} s CPU, peak RSS {peak_mib:.0f} MiB")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
