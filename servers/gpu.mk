# GPU judge servers (vLLM or Hugging Face TGI, in Docker), one port per judge.
# Included by the top-level Makefile; also works alone:
#   make -f servers/gpu.mk serve-qwen2.5-7b-vllm
# Targets: serve-<judge>-{vllm,tgi}, stop-<judge>-{vllm,tgi},
#          serve-all-{vllm,tgi}, stop-all-{vllm,tgi}
# Judges and ports mirror servers/judges.toml (checked by tests/test_server_configs.py).
# All variables are GPU_-prefixed so they cannot clash with the including Makefile.

GPU_MK_FILE := $(lastword $(MAKEFILE_LIST))
GPU_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)
GPU_MK_DIR := $(patsubst %/,%,$(dir $(GPU_MK_FILE)))

GPU_JUDGES := gemma-2-9b llama-3.1-8b mistral-7b qwen2.5-7b zephyr-7b
GPU_BACKENDS := vllm tgi

GPU_PORT_vllm_gemma-2-9b   := 8101
GPU_PORT_vllm_llama-3.1-8b := 8102
GPU_PORT_vllm_mistral-7b   := 8103
GPU_PORT_vllm_qwen2.5-7b   := 8104
GPU_PORT_vllm_zephyr-7b    := 8105
GPU_PORT_tgi_gemma-2-9b    := 8201
GPU_PORT_tgi_llama-3.1-8b  := 8202
GPU_PORT_tgi_mistral-7b    := 8203
GPU_PORT_tgi_qwen2.5-7b    := 8204
GPU_PORT_tgi_zephyr-7b     := 8205

# All five judges on one GPU: `make serve-all-vllm GPU_COLOCATE=h200` gives each judge the
# memory fraction sized from its model and context (python3 servers/judge_vars.py
# servers/judges.toml --fractions; servers/README.md explains the arithmetic).  vLLM's
# fraction is the judge's own share; TGI's caps the memory in use on the whole GPU, so its
# fractions are cumulative and hold only when the judges start in GPU_JUDGES order.
GPU_COLOCATE ?=
ifneq ($(filter-out h200,$(GPU_COLOCATE)),)
$(error GPU_COLOCATE must be h200 or empty, not '$(GPU_COLOCATE)')
endif
GPU_FRACTION_vllm_gemma-2-9b   := 0.26
GPU_FRACTION_vllm_llama-3.1-8b := 0.17
GPU_FRACTION_vllm_mistral-7b   := 0.16
GPU_FRACTION_vllm_qwen2.5-7b   := 0.14
GPU_FRACTION_vllm_zephyr-7b    := 0.16
GPU_FRACTION_tgi_gemma-2-9b    := 0.29
GPU_FRACTION_tgi_llama-3.1-8b  := 0.48
GPU_FRACTION_tgi_mistral-7b    := 0.66
GPU_FRACTION_tgi_qwen2.5-7b    := 0.81
GPU_FRACTION_tgi_zephyr-7b     := 0.99
GPU_MEMORY_VAR_vllm := VLLM_GPU_MEMORY_UTILIZATION
GPU_MEMORY_VAR_tgi := TGI_CUDA_MEMORY_FRACTION
# $(1)=judge $(2)=backend: the environment that sets the judge's fraction, when co-located
GPU_MEMORY_ENV = $(if $(GPU_COLOCATE),$(GPU_MEMORY_VAR_$(2))=$(GPU_FRACTION_$(2)_$(1)) )

GPU_COMPOSE_vllm := $(GPU_MK_DIR)/vllm/compose.yaml
GPU_COMPOSE_tgi := $(GPU_MK_DIR)/tgi/compose.yaml
GPU_DOCKER_COMPOSE ?= docker compose
GPU_WAIT_SECS ?= 1200
GPU_POLL_SECS ?= 10

# Shell snippet: poll /v1/models until it answers (bounded by GPU_WAIT_SECS),
# fail early with the container log if the container exited.  $(1)=judge $(2)=backend
GPU_WAIT_READY = url=http://127.0.0.1:$(GPU_PORT_$(2)_$(1))/v1; \
	echo "waiting up to $(GPU_WAIT_SECS)s for $(1) ($(2)) at $$url ..."; \
	deadline=$$(( $$(date +%s) + $(GPU_WAIT_SECS) )); \
	until curl -fsS -o /dev/null --max-time 5 "$$url/models" 2>/dev/null; do \
	  if $(GPU_DOCKER_COMPOSE) -f $(GPU_COMPOSE_$(2)) ps -a --status exited --services 2>/dev/null | grep -qx '$(1)'; then \
	    echo "error: $(1) ($(2)) container exited; last log lines:" >&2; \
	    $(GPU_DOCKER_COMPOSE) -f $(GPU_COMPOSE_$(2)) logs --tail 40 $(1) >&2; exit 1; \
	  fi; \
	  if [ "$$(date +%s)" -ge "$$deadline" ]; then \
	    echo "error: $(1) ($(2)) not ready after $(GPU_WAIT_SECS)s; last log lines:" >&2; \
	    $(GPU_DOCKER_COMPOSE) -f $(GPU_COMPOSE_$(2)) logs --tail 40 $(1) >&2; exit 1; \
	  fi; \
	  sleep $(GPU_POLL_SECS); \
	done; \
	echo "$(1) ($(2)) ready; pass: --judge $(1)=$$url"

# $(1)=judge $(2)=backend
define GPU_SERVER_RULES
.PHONY: serve-$(1)-$(2) stop-$(1)-$(2)
serve-$(1)-$(2):
	$$(call GPU_MEMORY_ENV,$(1),$(2))$$(GPU_DOCKER_COMPOSE) -f $$(GPU_COMPOSE_$(2)) up -d $(1)
	@$$(call GPU_WAIT_READY,$(1),$(2))
stop-$(1)-$(2):
	$$(GPU_DOCKER_COMPOSE) -f $$(GPU_COMPOSE_$(2)) stop $(1)
endef
$(foreach b,$(GPU_BACKENDS),$(foreach j,$(GPU_JUDGES),$(eval $(call GPU_SERVER_RULES,$(j),$(b)))))

# Start judges one after another (each waits until ready), so that co-located
# servers size their memory in turn.  On one H200 add GPU_COLOCATE=h200 (above).
.PHONY: serve-all-vllm serve-all-tgi stop-all-vllm stop-all-tgi
serve-all-vllm serve-all-tgi: serve-all-%:
	@set -e; for j in $(GPU_JUDGES); do $(MAKE) --no-print-directory -f $(GPU_MK_FILE) serve-$$j-$*; done
stop-all-vllm stop-all-tgi: stop-all-%:
	$(GPU_DOCKER_COMPOSE) -f $(GPU_COMPOSE_$*) stop

# Do not become the including Makefile's default goal.
.DEFAULT_GOAL := $(GPU_SAVED_DEFAULT_GOAL)
