#!/usr/bin/env python3
"""Judge settings from judges.toml, for the serve scripts and the memory arithmetic.

    eval "$(python3 servers/judge_vars.py judges.toml JUDGE PROG)"   # shell assignments
    python3 servers/judge_vars.py judges.toml --fractions            # co-location table

Exits non-zero with a one-line message for an unknown judge or an unreadable file.

``--fractions`` sizes each judge's share of one GPU from its model and context
(``memory_plan``): weights (2 bytes a parameter in bf16) + KV cache for ``[colocate]
kv_tokens`` tokens (2 x layers x kv_heads x head_dim x 2 bytes a token) + ``overhead_gib``.
vLLM's ``--gpu-memory-utilization`` is a per-instance budget, so each judge gets its share;
TGI's ``--cuda-memory-fraction`` caps the memory in use on the whole GPU, other servers'
included, and TGI fills ``tgi_wiggle_room`` of it with KV cache (``get_free_memory`` in
text_generation_server), so the k-th TGI judge started needs the sum of the first k shares.
Fractions are rounded up to 0.01; servers/gpu.mk holds the results.
"""

import math
import shlex
import sys
import tomllib
from typing import Any

DEFAULTS = {"tokenizer_mode": "", "max_input_tokens": ""}
GIB = 2**30
BF16 = 2  # bytes a parameter, and a KV-cache element


def load(path: str, prog: str) -> dict[str, Any]:
    """The embedded judges' TOML, exiting with one line when it cannot be read."""
    try:
        with open(path, "rb") as f:
            config = tomllib.load(f)
        config["judges"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as e:
        sys.exit(f"{prog}: cannot read judges from {path}: {e}")
    return config


def _up(x: float) -> float:
    return math.ceil(round(x * 100, 6)) / 100


def memory_plan(config: dict[str, Any]) -> list[dict[str, Any]]:
    """Per judge, in judges.toml order (the order serve-all starts them).

    Its share of the GPU in GiB and the vLLM and TGI fractions that give it that share.
    """
    colo = config["colocate"]
    total, tgi_budget = colo["gpu_gib"], colo["gpu_gib"] * colo["tgi_wiggle_room"]
    rows, used = [], 0.0
    for name, j in config["judges"].items():
        weights = j["params"] * BF16 / GIB
        kv_token = 2 * j["layers"] * j["kv_heads"] * j["head_dim"] * BF16
        kv = colo["kv_tokens"] * kv_token / GIB
        share = weights + kv + j["overhead_gib"]
        used += share
        rows.append(
            {
                "judge": name,
                "weights_gib": weights,
                "kv_bytes_per_token": kv_token,
                "kv_gib": kv,
                "share_gib": share,
                "vllm": _up(share / total),
                "tgi": _up(used / tgi_budget),
            }
        )
    return rows


def _fractions(config: dict[str, Any]) -> None:
    colo = config["colocate"]
    print(f"{colo['gpu']} ({colo['gpu_gib']} GiB), KV cache for {colo['kv_tokens']} tokens a judge")
    print(
        f"{'judge':14} {'weights':>8} {'KV/token':>9} {'KV':>7} {'share':>7} {'vLLM':>5} {'TGI':>5}"
    )
    for r in memory_plan(config):
        print(
            f"{r['judge']:14} {r['weights_gib']:7.2f}G {r['kv_bytes_per_token'] // 1024:6d}KiB "
            f"{r['kv_gib']:6.2f}G {r['share_gib']:6.2f}G {r['vllm']:5.2f} {r['tgi']:5.2f}"
        )


def main() -> int:
    """Print a judge's settings as shell assignments for the Makefile (or the KV fractions)."""
    if len(sys.argv) == 3 and sys.argv[2] == "--fractions":
        _fractions(load(sys.argv[1], "judge_vars.py"))
        return 0
    path, name, prog = sys.argv[1:4]
    judges = load(path, prog)["judges"]
    if name not in judges:
        sys.exit(f"{prog}: unknown judge '{name}' (known: {', '.join(judges)})")
    for key, value in {**DEFAULTS, **judges[name]}.items():
        if isinstance(value, str | int | float):
            print(f"{key}={shlex.quote(str(value))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
