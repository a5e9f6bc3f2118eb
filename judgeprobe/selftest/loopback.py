"""An aiohttp server on loopback, run in a background thread: the simulated judge's host.

The self-test and the test suite's fake servers (fault injection, TGI's and vLLM's validation)
all need the same thing: an OpenAI-compatible app on a free port of 127.0.0.1, started and
stopped around a block while the caller's own code (a subprocess, another event loop) talks
to it. Subclasses say only which app to serve.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Self

from aiohttp import web


class LoopbackServer:
    """``with Server() as s:`` serves ``s.app()`` at ``s.url`` (an OpenAI base URL, …/v1)."""

    start_timeout_s = 30.0

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.port = 0  # 0: any free port; set it before starting to serve on that one

    def app(self) -> web.Application:
        """The application to serve; every subclass builds its own routes."""
        raise NotImplementedError

    @property
    def url(self) -> str:
        """The API base, as a sweep config names a server."""
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(self.start_timeout_s)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(self.start_timeout_s)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self._loop.close()

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.app(), handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.base_events.Server)
        self.port = server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        # Requests still hanging (a stalled fake) are cancelled, so the server can close.
        current = asyncio.current_task()
        for task in asyncio.all_tasks():
            if task is not current:
                task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
