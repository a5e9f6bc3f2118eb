"""Headless Chromium for the page tests: a screenshot, a page driven by real mouse clicks over
the DevTools protocol (aiohttp's websocket client), and Playwright pointed at the same browser
for the review page's keyboard, forms and reloads (``playwright_page``). Nothing downloads a
browser: Playwright launches Debian's ``chromium`` (``executable_path``), never its own.

Debian's ``chromium`` package is used; without it (or without Playwright, from the ``test``
extra) the tests skip, or fail under CI (where ``.ci/run`` installs both).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Dialog, Error
    from playwright.sync_api import Page as PlaywrightPage

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


@dataclass
class Tab:
    """A Playwright page, with the dialogs it opened and the script errors it raised."""

    page: PlaywrightPage
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@contextmanager
def playwright_page(width: int = 1400, height: int = 900) -> Iterator[Tab]:
    """A Playwright page in Debian's headless Chromium, its dialogs dismissed and recorded."""
    path = browser()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(
                "playwright is not installed (the test extra has it: pip install -e .[test])"
            )
        pytest.skip("playwright not installed: `pip install -e .[test]` to run this check")
    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=path, args=FLAGS)
        try:
            tab = Tab(chrome.new_page(viewport={"width": width, "height": height}))

            def dialog(d: Dialog) -> None:
                tab.dialogs.append(f"{d.type}: {d.message}")
                d.dismiss()

            def error(e: Error) -> None:
                tab.errors.append(str(e))

            tab.page.on("dialog", dialog)
            tab.page.on("pageerror", error)
            yield tab
        finally:
            chrome.close()
