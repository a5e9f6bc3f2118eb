#!/usr/bin/env bash
# Serve one GPU judge with Hugging Face TGI, without Docker (same flags as
# servers/tgi/compose.yaml).
#
#   servers/tgi/serve.sh JUDGE [extra text-generation-launcher args...]
#
# Reads servers/judges.toml (needs python3 >= 3.11 for tomllib) and execs
# `text-generation-launcher` on the judge's tgi_port.  Env: TGI_HOST (default
# 127.0.0.1), TGI_CUDA_MEMORY_FRACTION (default 1.0), HF_TOKEN for gated models,
# JUDGES_TOML (alternative config), SERVE_DRY_RUN=1 (print the command, don't run it).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/../serve_common.sh"
serve_judge "extra text-generation-launcher args..." "$@"
shift

cmd=(text-generation-launcher
  --model-id "$model"
  --hostname "${TGI_HOST:-127.0.0.1}"
  --port "$tgi_port"
  --max-input-tokens "$max_input_tokens"
  --max-total-tokens "$max_model_len"
  --dtype "$dtype"
  --cuda-memory-fraction "${TGI_CUDA_MEMORY_FRACTION:-1.0}"
  --usage-stats off)
cmd+=("$@")

serve_exec "${TGI_HOST:-127.0.0.1}" "$tgi_port"
