"""Headless Chromium for the page tests: a screenshot, and pages driven by Playwright (real mouse
clicks, keys, forms and reloads: ``page``). Nothing downloads a browser: Playwright launches
Debian's ``chromium`` (``executable_path``), never its own.

Debian's ``chromium`` package is used; without it (or without Playwright, from the ``test``
extra) the tests skip, or fail under CI (where ``.ci/run`` installs both).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

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


@dataclass
class Tab:
    """A Playwright page, with the dialogs it opened and the script errors it raised."""

    page: PlaywrightPage
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@contextmanager
def page(width: int = 1400, height: int = 900) -> Iterator[Tab]:
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
