# Shared by servers/vllm/serve.sh and servers/tgi/serve.sh (sourced, not run): reading the
# judge's settings from judges.toml, and printing or running the command each script builds.

# serve_judge USAGE_TAIL "$@": sets prog, judge and the judge's judges.toml variables (model,
# dtype, ports, ...; servers/judge_vars.py); a usage line and exit 2 without a JUDGE.
serve_judge() {
  local usage="$1" toml vars
  shift
  prog="$(basename "$0")"
  if [[ $# -lt 1 ]]; then
    echo "usage: $prog JUDGE [$usage]" >&2
    exit 2
  fi
  judge="$1"
  toml="${JUDGES_TOML:-$(dirname "${BASH_SOURCE[0]}")/judges.toml}"
  vars="$(python3 "$(dirname "${BASH_SOURCE[0]}")/judge_vars.py" "$toml" "$judge" "$prog")"
  eval "$vars"
}

# serve_exec HOST PORT: prints "${cmd[@]}" under SERVE_DRY_RUN=1, else says where the judge
# will answer and execs it.
serve_exec() {
  if [[ "${SERVE_DRY_RUN:-0}" == 1 ]]; then
    printf '%q ' "${cmd[@]}"
    echo
    exit 0
  fi
  echo "$prog: $judge -> http://$1:$2/v1 (judgeprobe: --judge $judge=http://127.0.0.1:$2/v1)" >&2
  exec "${cmd[@]}"
}
