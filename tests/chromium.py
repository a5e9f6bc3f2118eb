"""Headless Chromium for the report tests: a screenshot, and a page driven by real mouse
clicks over the DevTools protocol (aiohttp's websocket client; no browser download).

Debian's ``chromium`` package is used; without it the tests skip, or fail under CI (where
``.ci/run`` installs it).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("chromium not installed: `apt-get install chromium` to run this check")
    return found


def screenshot(page: Path, png: Path) -> None:
    """Open the page and screenshot it; any failure fails the test."""
    proc = subprocess.run(
        [
            browser(), *FLAGS, f"--user-data-dir={png.parent / 'chromium-profile'}",
            "--window-size=1200,2000", f"--screenshot={png}", page.resolve().as_uri(),
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert png.stat().st_size > 20_000  # a rendered page, not a blank one
    assert "ERR_" not in proc.stderr  # no failed resource loads


class Page:
    """One tab: navigate, evaluate JavaScript, click an element with the mouse."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.ids = itertools.count(1)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One DevTools command and its result (events arriving meanwhile are dropped)."""
        n = next(self.ids)
        await self.ws.send_json({"id": n, "method": method, "params": params})
        while True:
            msg = await asyncio.wait_for(self.ws.receive_json(), 30)
            if msg.get("id") == n:
                assert "error" not in msg, msg
                result: dict[str, Any] = msg["result"]
                return result

    async def open(self, url: str) -> None:
        await self.send("Page.navigate", url=url)
        for _ in range(200):  # until the page and its scripts have run
            if await self.evaluate("document.readyState") == "complete":
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{url} did not finish loading")

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        assert "exceptionDetails" not in reply, reply["exceptionDetails"]
        return reply["result"].get("value")

    async def click(self, selector: str) -> None:
        """A real left click in the middle of the element (scrolled into view first)."""
        box = await self.evaluate(
            f"(() => {{ const e = document.querySelector({selector!r}); e.scrollIntoView();"
            " const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            await self.send(
                "Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1
            )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def page(profile: Path) -> AsyncIterator[Page]:
    """A headless Chromium with one tab under DevTools control; stopped on exit."""
    port = _free_port()
    proc = subprocess.Popen(
        [browser(), *FLAGS, f"--user-data-dir={profile}", f"--remote-debugging-port={port}",
         "--window-size=1200,1600", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        async with aiohttp.ClientSession() as http:
            targets: list[dict[str, Any]] = []
            for _ in range(300):
                try:
                    async with http.get(f"http://127.0.0.1:{port}/json/list") as r:
                        targets = [t for t in await r.json() if t.get("type") == "page"]
                    if targets:
                        break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
            assert targets, "chromium did not open its DevTools port"
            async with http.ws_connect(targets[0]["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                yield Page(ws)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
