"""Static checks of the GPU judge server definitions under servers/.

No network, no Docker, no GPU: parse servers/judges.toml and both compose
files, dry-run the serve.sh scripts and `make -n` the gpu.mk targets, and
check they all agree with each other and with the paper's judge table.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ROOT / "servers"
BACKENDS = ("vllm", "tgi")
CONTAINER_PORT = {"vllm": 8000, "tgi": 80}

# The paper's judges: name -> (HF model id, vLLM port, TGI port).
EXPECTED = {
    "gemma-2-9b": ("google/gemma-2-9b-it", 8101, 8201),
    "llama-3.1-8b": ("meta-llama/Llama-3.1-8B-Instruct", 8102, 8202),
    "mistral-7b": ("mistralai/Mistral-7B-Instruct-v0.3", 8103, 8203),
    "qwen2.5-7b": ("Qwen/Qwen2.5-7B-Instruct", 8104, 8204),
    "zephyr-7b": ("HuggingFaceH4/zephyr-7b-beta", 8105, 8205),
}
GATED = {"gemma-2-9b", "llama-3.1-8b", "mistral-7b"}


def load_toml() -> dict[str, Any]:
    with open(SERVERS / "judges.toml", "rb") as f:
        return tomllib.load(f)


CONFIG = load_toml()
JUDGES: dict[str, dict[str, Any]] = CONFIG["judges"]


def load_compose(backend: str) -> dict[str, Any]:
    with open(SERVERS / backend / "compose.yaml", encoding="utf-8") as f:
        compose: dict[str, Any] = yaml.safe_load(f)
    return compose


COMPOSE = {b: load_compose(b) for b in BACKENDS}


def parse_args(command: list[Any]) -> tuple[list[str], dict[str, str]]:
    """Split a compose `command` list into positionals and --flag values.

    Accepts both `--flag=value` and `--flag value`; a flag given twice fails.
    """
    assert isinstance(command, list), "command must be a YAML list (exec form)"
    items = [str(x) for x in command]
    positional: list[str] = []
    flags: dict[str, str] = {}
    i = 0
    while i < len(items):
        item = items[i]
        if item.startswith("--"):
            if "=" in item:
                key, value = item[2:].split("=", 1)
            elif i + 1 < len(items) and not items[i + 1].startswith("--"):
                key, value = item[2:], items[i + 1]
                i += 1
            else:
                key, value = item[2:], ""
            assert key not in flags, f"flag --{key} given twice"
            flags[key] = value
        else:
            positional.append(item)
        i += 1
    return positional, flags


def host_port(service: dict[str, Any], backend: str) -> int:
    ports = service["ports"]
    assert len(ports) == 1, ports
    # "${JUDGE_BIND_ADDR:-127.0.0.1}:8101:8000": the address itself contains ':'.
    _addr, host, container = str(ports[0]).rsplit(":", 2)
    assert int(container) == CONTAINER_PORT[backend]
    return int(host)


# --- judges.toml ------------------------------------------------------------


def test_toml_matches_paper_judge_table() -> None:
    assert set(JUDGES) == set(EXPECTED)
    for name, (model, vllm_port, tgi_port) in EXPECTED.items():
        j = JUDGES[name]
        assert j["model"] == model, name
        assert j["vllm_port"] == vllm_port, name
        assert j["tgi_port"] == tgi_port, name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_toml_judge_fields(name: str) -> None:
    j = JUDGES[name]
    assert j["max_model_len"] == 8192
    assert 0 < j["max_input_tokens"] < j["max_model_len"]
    assert j["dtype"] == "bfloat16"
    assert j["gated"] is (name in GATED)
    assert isinstance(j["notes"], str)
    assert j["notes"]
    # Only Mistral v0.3 ships mistral_common tokenizer files.
    assert j.get("tokenizer_mode") == ("mistral" if name == "mistral-7b" else None)


def test_images_are_pinned() -> None:
    images = CONFIG["images"]
    assert images["vllm"].startswith("vllm/vllm-openai:v")
    assert images["tgi"].startswith("ghcr.io/huggingface/text-generation-inference:")
    for ref in images.values():
        tag = ref.rsplit(":", 1)[1]
        assert re.fullmatch(r"v?\d+\.\d+\.\d+(-cu\d+)?", tag), f"unpinned image {ref}"
    # vLLM's unsuffixed tags are CUDA 13.0 builds (driver >= 580): pin the CUDA 12.9 build
    assert images["vllm"].endswith("-cu129")


def image_of(backend: str) -> str:
    """What a compose service's image resolves to (vLLM's may be overridden: VLLM_IMAGE)."""
    pin = CONFIG["images"][backend]
    return f"${{VLLM_IMAGE:-{pin}}}" if backend == "vllm" else pin


# --- compose files -------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_compose_has_one_service_per_judge(backend: str) -> None:
    assert set(COMPOSE[backend]["services"]) == set(JUDGES)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_compose_service_common(backend: str, name: str) -> None:
    svc = COMPOSE[backend]["services"][name]
    assert svc["image"] == image_of(backend)
    assert host_port(svc, backend) == JUDGES[name][f"{backend}_port"]

    devices = svc["deploy"]["resources"]["reservations"]["devices"]
    assert len(devices) == 1
    assert devices[0]["driver"] == "nvidia"
    assert "gpu" in devices[0]["capabilities"]
    assert ("count" in devices[0]) != ("device_ids" in devices[0])

    health = " ".join(svc["healthcheck"]["test"])
    assert f"127.0.0.1:{CONTAINER_PORT[backend]}/health" in health

    env = svc["environment"]
    if isinstance(env, dict):
        token = env["HF_TOKEN"]
        assert re.fullmatch(r"\$\{HF_TOKEN(:?[-?][^}]*)?\}", str(token)), token
    else:
        # Bare name: compose passes the shell's value through, or leaves it unset.
        assert "HF_TOKEN" in env
        assert not any(str(e).startswith("HF_TOKEN=") for e in env)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_vllm_service(name: str) -> None:
    j = JUDGES[name]
    svc = COMPOSE["vllm"]["services"][name]
    assert svc["ipc"] == "host"
    assert "${HF_HOME:-~/.cache/huggingface}:/root/.cache/huggingface" in svc["volumes"]
    positional, flags = parse_args(svc["command"])
    # The image's entrypoint is `vllm serve`, so the model is the only positional.
    assert positional == [j["model"]]
    assert flags["served-model-name"] == name
    assert int(flags["max-model-len"]) == j["max_model_len"]
    assert flags["seed"] == "0"
    assert flags["dtype"] == j["dtype"]
    assert flags["generation-config"] == "vllm"
    assert flags.get("tokenizer-mode") == j.get("tokenizer_mode")
    assert "model" not in flags
    assert "port" not in flags
    assert "VLLM_BATCH_INVARIANT=${VLLM_BATCH_INVARIANT:-0}" in svc["environment"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_tgi_service(name: str) -> None:
    j = JUDGES[name]
    svc = COMPOSE["tgi"]["services"][name]
    assert str(svc["shm_size"]) == "1g"
    positional, flags = parse_args(svc["command"])
    assert positional == []
    assert flags["model-id"] == j["model"]
    assert int(flags["max-input-tokens"]) == j["max_input_tokens"]
    assert int(flags["max-total-tokens"]) == j["max_model_len"]
    assert flags["dtype"] == j["dtype"]
    assert flags["port"] == "80"


# Where each image keeps the Hugging Face cache (HF_HOME inside the container): TGI's
# Dockerfile (v3.3.6) sets `ENV HF_HOME=/data`; the vLLM image sets none, so huggingface_hub
# uses its default ~/.cache/huggingface of the root user.
IMAGE_HF_HOME = {"tgi": "/data", "vllm": "/root/.cache/huggingface"}


def host_hub(service: dict[str, Any], backend: str) -> str:
    """The host directory that holds the container's hub cache ($HF_HOME/hub inside)."""
    inside = f"{IMAGE_HF_HOME[backend]}/hub"
    env = [str(e) for e in service.get("environment", [])]
    assert not any(
        e.startswith(("HF_HOME=", "HF_HUB_CACHE=", "HUGGINGFACE_HUB_CACHE=")) for e in env
    )
    for volume in service["volumes"]:
        source, target = str(volume).rsplit(":", 1)
        if inside == target or inside.startswith(target + "/"):
            return source + inside[len(target) :]
    raise AssertionError(f"{backend}: no volume holds {inside}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_vllm_and_tgi_share_one_weights_cache(name: str) -> None:
    """Mounting $HF_HOME/hub on TGI's /data put its cache in $HF_HOME/hub/hub: every model
    was downloaded twice."""
    hubs = {b: host_hub(COMPOSE[b]["services"][name], b) for b in BACKENDS}
    assert hubs == dict.fromkeys(BACKENDS, "${HF_HOME:-~/.cache/huggingface}/hub")


def test_host_ports_unique_across_all_services() -> None:
    ports = [
        host_port(svc, backend)
        for backend in BACKENDS
        for svc in COMPOSE[backend]["services"].values()
    ]
    assert len(ports) == 2 * len(EXPECTED)
    assert len(set(ports)) == len(ports), sorted(ports)
    toml_ports = {j[f"{b}_port"] for j in JUDGES.values() for b in BACKENDS}
    assert set(ports) == toml_ports


def test_no_literal_secrets_in_servers() -> None:
    for path in SERVERS.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"\bhf_[A-Za-z0-9]{20,}", text), path
            assert not re.search(r"HF_TOKEN\s*[=:]\s*['\"]?hf_", text), path


# --- serve.sh ------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_serve_script_syntax_and_mode(backend: str) -> None:
    script = SERVERS / backend / "serve.sh"
    assert os.access(script, os.X_OK), f"{script} is not executable"
    subprocess.run(["bash", "-n", str(script)], check=True)


def dry_run(backend: str, *args: str, **extra_env: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SERVE_DRY_RUN": "1"}
    for var in ("JUDGES_TOML", "VLLM_HOST", "TGI_HOST", "VLLM_BATCH_INVARIANT"):
        env.pop(var, None)
    env.update(extra_env)
    return subprocess.run(
        ["bash", str(SERVERS / backend / "serve.sh"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_vllm_serve_script_flags(name: str) -> None:
    j = JUDGES[name]
    proc = dry_run("vllm", name, "--enforce-eager")
    assert proc.returncode == 0, proc.stderr
    argv = proc.stdout.split()
    assert argv[:5] == ["env", "VLLM_BATCH_INVARIANT=0", "vllm", "serve", j["model"]]
    _, flags = parse_args(argv[5:])
    assert flags["served-model-name"] == name
    assert flags["port"] == str(j["vllm_port"])
    assert flags["host"] == "127.0.0.1"
    assert flags["max-model-len"] == str(j["max_model_len"])
    assert flags["seed"] == "0"
    assert flags["dtype"] == j["dtype"]
    assert flags["generation-config"] == "vllm"
    assert flags.get("tokenizer-mode") == j.get("tokenizer_mode")
    assert argv[-1] == "--enforce-eager"  # extra args are passed through


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_tgi_serve_script_flags(name: str) -> None:
    j = JUDGES[name]
    proc = dry_run("tgi", name)
    assert proc.returncode == 0, proc.stderr
    argv = proc.stdout.split()
    assert argv[0] == "text-generation-launcher"
    _, flags = parse_args(argv[1:])
    assert flags["model-id"] == j["model"]
    assert flags["port"] == str(j["tgi_port"])
    assert flags["max-input-tokens"] == str(j["max_input_tokens"])
    assert flags["max-total-tokens"] == str(j["max_model_len"])
    assert flags["dtype"] == j["dtype"]


def test_vllm_serve_script_batch_invariance() -> None:
    proc = dry_run("vllm", "qwen2.5-7b", VLLM_BATCH_INVARIANT="1")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:3] == ["env", "VLLM_BATCH_INVARIANT=1", "vllm"]
    proc = dry_run("vllm", "qwen2.5-7b", VLLM_BATCH_INVARIANT="yes")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "VLLM_BATCH_INVARIANT must be 0 or 1" in proc.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_serve_script_unknown_judge(backend: str) -> None:
    proc = dry_run(backend, "no-such-judge")
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "unknown judge 'no-such-judge'" in lines[0], proc.stderr
    assert proc.stdout == ""


# --- gpu.mk --------------------------------------------------------------------

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make not installed")


def make_n(*targets: str) -> str:
    proc = subprocess.run(
        ["make", "--no-print-directory", "-f", "servers/gpu.mk", "-n", *targets],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@needs_make
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_gpu_mk_serve_and_stop_targets(backend: str, name: str) -> None:
    port = JUDGES[name][f"{backend}_port"]
    out = make_n(f"serve-{name}-{backend}")
    assert f"docker compose -f servers/{backend}/compose.yaml up -d {name}\n" in out
    assert f"http://127.0.0.1:{port}/v1" in out
    assert "/models" in out
    assert f"--judge {name}=" in out
    out = make_n(f"stop-{name}-{backend}")
    assert f"docker compose -f servers/{backend}/compose.yaml stop {name}" in out


@needs_make
@pytest.mark.parametrize("backend", BACKENDS)
def test_gpu_mk_serve_all(backend: str) -> None:
    out = make_n(f"serve-all-{backend}")
    for name in EXPECTED:
        assert f"compose.yaml up -d {name}\n" in out
        assert f"127.0.0.1:{JUDGES[name][f'{backend}_port']}/v1" in out


def test_gpu_mk_variables_are_prefixed() -> None:
    text = (SERVERS / "gpu.mk").read_text(encoding="utf-8")
    assigned = re.findall(r"^([A-Za-z_.][\w.-]*)\s*(?::=|\?=|\+=|=)", text, re.M)
    defined = re.findall(r"^define\s+(\S+)", text, re.M)
    names = set(assigned + defined) - {".DEFAULT_GOAL"}
    assert names, "no variables found"
    assert all(n.startswith("GPU_") for n in names), sorted(names)


# --- GPU memory: fractions sized from the model and its context ------------------------------


def _judge_vars() -> ModuleType:
    spec = importlib.util.spec_from_file_location("judge_vars", SERVERS / "judge_vars.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PLAN = _judge_vars().memory_plan(CONFIG)
MK = (SERVERS / "gpu.mk").read_text(encoding="utf-8")


def test_memory_plan_arithmetic() -> None:
    """Gemma-2-9B by hand: 9,241,705,984 bf16 parameters = 17.21 GiB; KV per token
    2 x 42 layers x 8 KV heads x 256 x 2 bytes = 336 KiB, x 49,152 tokens = 15.75 GiB;
    + 3 GiB overhead = 35.96 GiB = 0.26 of 139 GiB. The old uniform 0.17 (23.6 GiB) left it
    about 3.4 GiB of KV cache: some 10,000 tokens, barely one full context."""
    gemma = next(r for r in PLAN if r["judge"] == "gemma-2-9b")
    assert gemma["kv_bytes_per_token"] == 336 * 1024
    assert gemma["share_gib"] == pytest.approx(35.96, abs=0.01)
    assert gemma["vllm"] == 0.26
    colo = CONFIG["colocate"]
    left = (
        0.17 * colo["gpu_gib"]
        - gemma["weights_gib"]
        - CONFIG["judges"]["gemma-2-9b"]["overhead_gib"]
    )
    assert 9_000 < left * 2**30 / gemma["kv_bytes_per_token"] < 12_000


def test_every_judge_fits_one_h200_with_its_kv_cache() -> None:
    colo = CONFIG["colocate"]
    assert colo["kv_tokens"] >= max(j["max_model_len"] for j in JUDGES.values())
    assert sum(r["vllm"] for r in PLAN) <= 0.95  # vLLM: per-instance budgets side by side
    assert PLAN[-1]["tgi"] <= 1.0  # TGI: the last judge's cap covers all five
    for r in PLAN:  # each fraction holds the judge's weights, KV target and overhead
        assert r["vllm"] * colo["gpu_gib"] >= r["share_gib"]


def test_gpu_mk_holds_the_computed_fractions() -> None:
    listed = re.search(r"^GPU_JUDGES := (.*)$", MK, re.M)
    assert listed, "gpu.mk sets no GPU_JUDGES"
    judges = listed.group(1).split()
    assert judges == [r["judge"] for r in PLAN]  # TGI's cumulative fractions follow this order
    for r in PLAN:
        for backend in BACKENDS:
            found = re.search(
                rf"^GPU_FRACTION_{backend}_{re.escape(r['judge'])}\s*:= (\S+)$", MK, re.M
            )
            assert found, (backend, r["judge"])
            assert float(found.group(1)) == r[backend], (backend, r["judge"])


@needs_make
@pytest.mark.parametrize("backend", BACKENDS)
def test_gpu_mk_colocate_sets_each_judges_fraction(backend: str) -> None:
    var = {"vllm": "VLLM_GPU_MEMORY_UTILIZATION", "tgi": "TGI_CUDA_MEMORY_FRACTION"}[backend]
    out = make_n(f"serve-all-{backend}", "GPU_COLOCATE=h200")
    for r in PLAN:
        up = f"docker compose -f servers/{backend}/compose.yaml up -d {r['judge']}\n"
        assert f"{var}={r[backend]} {up}" in out
    assert var not in make_n(f"serve-all-{backend}")  # without it: the env or compose default


def test_mistral_version_choice_is_stated() -> None:
    notes = JUDGES["mistral-7b"]["notes"]
    assert "v0.3" in notes
    assert "paper" in notes
    readme = (SERVERS / "README.md").read_text(encoding="utf-8")
    assert "Mistral-7B-Instruct-v0.3" in readme
    assert "names only" in readme
