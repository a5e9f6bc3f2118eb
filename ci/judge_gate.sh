#!/usr/bin/env bash
# The judge gate of the CI recipes (action.yml, docs/ci.md): python -m judgeprobe.gate.
# Flags or JUDGE_GATE_* variables say what to run; GITHUB_STEP_SUMMARY and GITHUB_OUTPUT, when
# set, receive the card's summary and the outputs. Exit 0: the gate passes; 1: it fails.
set -euo pipefail
exec "${JUDGEPROBE_PYTHON:-python}" -m judgeprobe.gate "$@"
