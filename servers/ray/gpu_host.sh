#!/usr/bin/env bash
# One GPU host, no Kubernetes: a local Ray runs one in-cluster vLLM judge (Qwen2.5-7B) over
# the bundled sample, to check the in-cluster path end to end before a cluster run.
# Not run here (no GPU). Needs: an NVIDIA GPU with ~24 GB, network to fetch the weights.
#   bash servers/ray/gpu_host.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-runs/ray-gpu-smoke}
python -m venv .venv-ray
# ray[llm] pins the vLLM that this Ray's vLLM processor was built against (0.29.0)
.venv-ray/bin/pip install -q -e '.[ray]' 'ray[llm]==2.60.0'
mkdir -p "$(dirname "$OUT")"
cat > "$OUT.toml" <<'TOML'
name = "ray-gpu-smoke"
protocols = ["baseline", "pbp"]
conditions = ["Blind", "Flip", "RevealAfter"]
limit = 10

[[judges]]
name = "qwen2.5-7b"
model = "Qwen/Qwen2.5-7B-Instruct"
backend = "vllm"

[judges.cluster]
engine_kwargs = { max_model_len = 8192, dtype = "bfloat16", enable_prefix_caching = true }
replicas = 1
TOML
.venv-ray/bin/python -m judgeprobe.run --config "$OUT.toml" --out "$OUT" --ray --resume
echo "judgments: $OUT/judgments.parquet, report: $OUT/report.html"
