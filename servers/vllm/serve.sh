#!/usr/bin/env bash
# Serve one GPU judge with vLLM, without Docker (same flags as servers/vllm/compose.yaml).
#
#   servers/vllm/serve.sh JUDGE [extra `vllm serve` args...]
#
# Reads servers/judges.toml (needs python3 >= 3.11 for tomllib) and execs
# `vllm serve` on the judge's vllm_port.  Env: VLLM_HOST (default 127.0.0.1),
# VLLM_GPU_MEMORY_UTILIZATION (default 0.90), VLLM_BATCH_INVARIANT (default 0; 1 =
# batch-invariant kernels, see servers/README.md), HF_TOKEN for gated models,
# JUDGES_TOML (alternative config), SERVE_DRY_RUN=1 (print the command, don't run it).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../serve_common.sh"
serve_judge "extra vllm serve args..." "$@"
shift

batch_invariant="${VLLM_BATCH_INVARIANT:-0}"
if [[ "$batch_invariant" != 0 && "$batch_invariant" != 1 ]]; then
  echo "$prog: VLLM_BATCH_INVARIANT must be 0 or 1, not '$batch_invariant'" >&2
  exit 2
fi

cmd=(env "VLLM_BATCH_INVARIANT=$batch_invariant" vllm serve "$model"
  --served-model-name "$judge"
  --host "${VLLM_HOST:-127.0.0.1}"
  --port "$vllm_port"
  --max-model-len "$max_model_len"
  --seed 0
  --dtype "$dtype"
  --generation-config vllm
  --gpu-memory-utilization "${VLLM_GPU_MEMORY_UTILIZATION:-0.90}")
if [[ -n "$tokenizer_mode" ]]; then
  cmd+=(--tokenizer-mode "$tokenizer_mode")
fi
cmd+=("$@")

serve_exec "${VLLM_HOST:-127.0.0.1}" "$vllm_port"
