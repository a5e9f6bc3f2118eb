"""A fresh embedded llama.cpp server (Gemma 3 270M) per measured run, and its counters.

Each run gets its own server so no run inherits another's prompt cache. ``--metrics``
exposes the server's token counters: how many prompt tokens it really computed
(``prompt_tokens_total``) against how many it was sent, which shows cache hits directly.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bench.common import free_port
from servers import embedded

MODEL = "gemma3-270m"


@contextmanager
def llama_server(
    slots: int = 4, extra: Sequence[str] = (), server: str = "xllamacpp"
) -> Iterator[str]:
    """Serve a benchmark from the server build ``server`` with ``slots`` parallel slots.

    The build is xllamacpp or native (servers/embedded.py); yields its /v1 URL, then stops it.
    """
    port = free_port()
    threads = os.cpu_count() or 2
    cmd = embedded.server_command("gemma", port, server, slots, threads, ("--metrics", *extra))
    log = tempfile.NamedTemporaryFile(prefix="llama-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=embedded.server_env()
    )
    try:
        deadline = time.monotonic() + 300
        while not embedded.answers(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama-server did not start; see {log.name}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        log.close()
        Path(log.name).unlink(missing_ok=True)


def prompt_tokens_computed(url: str) -> int:
    """Prompt tokens the server actually evaluated (cache hits excluded)."""
    root = url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    match = re.search(r"^llamacpp:prompt_tokens_total\s+([0-9.e+]+)", text, re.MULTILINE)
    return int(float(match[1])) if match else -1
