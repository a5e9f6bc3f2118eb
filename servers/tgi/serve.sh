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

prog="$(basename "$0")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
toml="${JUDGES_TOML:-$here/../judges.toml}"
if [[ $# -lt 1 ]]; then
  echo "usage: $prog JUDGE [extra text-generation-launcher args...]" >&2
  exit 2
fi
judge="$1"
shift

# Prints shell-quoted assignments; exits non-zero with a one-line message otherwise.
vars="$(python3 - "$toml" "$judge" "$prog" <<'PY'
import shlex, sys
path, name, prog = sys.argv[1:4]
try:
    import tomllib
except ImportError:
    sys.exit(f"{prog}: needs python3 >= 3.11 (tomllib)")
try:
    with open(path, "rb") as f:
        judges = tomllib.load(f)["judges"]
except (OSError, KeyError, tomllib.TOMLDecodeError) as e:
    sys.exit(f"{prog}: cannot read judges from {path}: {e}")
if name not in judges:
    sys.exit(f"{prog}: unknown judge '{name}' (known: {', '.join(judges)})")
j = judges[name]
for key in ("model", "tgi_port", "max_input_tokens", "max_model_len", "dtype"):
    print(f"{key}={shlex.quote(str(j[key]))}")
PY
)"
eval "$vars"

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

if [[ "${SERVE_DRY_RUN:-0}" == 1 ]]; then
  printf '%q ' "${cmd[@]}"
  echo
  exit 0
fi
echo "$prog: $judge -> http://${TGI_HOST:-127.0.0.1}:$tgi_port/v1 (judgeprobe: --judge $judge=http://127.0.0.1:$tgi_port/v1)" >&2
exec "${cmd[@]}"
