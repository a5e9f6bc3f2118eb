"""Replicas of one judge: least-outstanding balancing with prefix affinity, and health tracking.

Each replica (a server URL) has its own connection pool and ``concurrency`` slots. A request
goes to the replica that last served its prompt prefix while that replica has a free slot, so
llama.cpp's slot cache and vLLM's prefix cache see the shared prefix again; otherwise to the
healthy replica with the fewest outstanding requests. A replica that fails ``eject_after``
times in a row (connection errors, timeouts, 5xx) is ejected; after a cool-down one probe
(``GET /models``) re-admits it, or doubles the cool-down. With every replica ejected, requests
still go to the least loaded one: the retry backoff then paces them.

An outage is another matter: a replica that refuses the connection itself (the server is
down or restarting) is marked ``down`` at once and probed every ``probe_every_s`` until it
answers; no request goes to it meanwhile. While every replica is down the judge's requests
wait (``wait_reachable``) instead of spending their attempts, each until its own deadline, so
a server restarted mid-sweep costs time, not judgments.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import OrderedDict
from collections.abc import Coroutine, Hashable, Mapping, Sequence

import aiohttp

from judgeprobe.engine.retry import Unreachable

PROBE_TIMEOUT = aiohttp.ClientTimeout(total=10.0)
#: How many prompt prefixes the affinity table remembers (oldest forgotten first).
AFFINITY_SIZE = 4096


class Replica:
    """One server of a judge: its HTTP session, slots and health."""

    def __init__(self, url: str, concurrency: int, session: aiohttp.ClientSession) -> None:
        self.url = url
        self.chat_url = f"{url}/chat/completions"
        self.concurrency = concurrency
        self.session = session
        self.slots = asyncio.Semaphore(concurrency)
        self.outstanding = 0  # picked and not yet answered (waiting for a slot or in flight)
        self.sent = 0
        self.failures = 0  # consecutive replica faults
        self.ejected_until: float | None = None
        self.cooldown_s = 0.0
        self.down = False  # refused a connection; probed until it answers (an outage)

    @property
    def healthy(self) -> bool:
        """Whether the replica takes requests (not ejected after repeated faults)."""
        return self.ejected_until is None


class ReplicaPool:
    """Chooses a replica per attempt and tracks each replica's health."""

    def __init__(
        self,
        urls: Sequence[str],
        concurrency: int,
        headers: dict[str, str],
        timeout_s: float,
        eject_after: int = 3,
        cooldown_s: float = 2.0,
        max_cooldown_s: float = 60.0,
        replica_headers: Mapping[str, Mapping[str, str]] | None = None,
        probe_every_s: float = 1.0,
    ) -> None:
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        own = replica_headers or {}  # per replica (its credentials), on top of ``headers``
        self.replicas = [
            Replica(
                url,
                concurrency,
                aiohttp.ClientSession(
                    headers={**headers, **own.get(url, {})},
                    timeout=timeout,
                    connector=aiohttp.TCPConnector(limit=concurrency, ttl_dns_cache=300),
                ),
            )
            for url in urls
        ]
        self.eject_after = eject_after
        self.base_cooldown_s = cooldown_s
        self.max_cooldown_s = max_cooldown_s
        self._affinity: OrderedDict[Hashable, Replica] = OrderedDict()
        self._turn = itertools.count()
        self._probes: set[asyncio.Task[None]] = set()
        self.probe_every_s = probe_every_s
        self.reachable = asyncio.Event()  # cleared while every replica is down
        self.reachable.set()
        self.outages = 0  # replicas found down in this pool's life

    def pick(self, affinity: Hashable | None = None) -> Replica:
        """The replica for the next attempt of a request whose prompt prefix is ``affinity``."""
        if len(self.replicas) == 1:
            return self.replicas[0]
        self._readmit_due()
        up = [r for r in self.replicas if not r.down] or self.replicas
        pool = [r for r in up if r.healthy] or up
        chosen = self._affinity.get(affinity) if affinity is not None else None
        if (
            chosen is None
            or not chosen.healthy
            or chosen.failures  # a retry tries elsewhere first
            or chosen.outstanding >= chosen.concurrency
        ):
            start = next(self._turn) % len(pool)  # rotate ties so idle replicas share the load
            rotated = pool[start:] + pool[:start]
            chosen = min(rotated, key=lambda r: r.outstanding)
        if affinity is not None:
            self._affinity[affinity] = chosen
            self._affinity.move_to_end(affinity)
            if len(self._affinity) > AFFINITY_SIZE:
                self._affinity.popitem(last=False)
        return chosen

    def succeeded(self, replica: Replica) -> None:
        """Reset a replica's fault run after a good reply."""
        replica.failures = 0

    def failed(self, replica: Replica) -> None:
        """Count a replica fault; eject the replica after ``eject_after`` in a row."""
        replica.failures += 1
        if replica.healthy and replica.failures >= self.eject_after and len(self.replicas) > 1:
            self._eject(replica)

    def _eject(self, replica: Replica) -> None:
        replica.cooldown_s = min(
            self.max_cooldown_s, max(self.base_cooldown_s, 2 * replica.cooldown_s)
        )
        replica.ejected_until = time.monotonic() + replica.cooldown_s

    def _readmit_due(self) -> None:
        now = time.monotonic()
        for replica in self.replicas:
            due = replica.ejected_until
            if due is not None and due <= now:
                replica.ejected_until = float("inf")  # one probe at a time
                self._start(self._probe(replica))

    def _start(self, probe: Coroutine[object, object, None]) -> None:
        task = asyncio.get_running_loop().create_task(probe)
        self._probes.add(task)
        task.add_done_callback(self._probes.discard)

    @staticmethod
    async def _answers(replica: Replica) -> bool:
        """Whether the replica's server answers ``GET /models`` now."""
        try:
            async with replica.session.get(f"{replica.url}/models", timeout=PROBE_TIMEOUT) as resp:
                return resp.status == 200
        except (aiohttp.ClientError, TimeoutError):
            return False

    async def _probe(self, replica: Replica) -> None:
        if await self._answers(replica):
            replica.ejected_until = None
            replica.failures = 0
        else:
            self._eject(replica)

    def unreachable(self, replica: Replica) -> None:
        """The replica refused a connection: hold its requests and probe it until it answers."""
        if replica.down:
            return
        replica.down = True
        self.outages += 1
        if all(r.down for r in self.replicas):
            self.reachable.clear()
        self._start(self._probe_until_up(replica))

    async def _probe_until_up(self, replica: Replica) -> None:
        while not await self._answers(replica):
            await asyncio.sleep(self.probe_every_s)
        replica.down = False
        replica.failures = 0
        self.reachable.set()

    async def wait_reachable(self, deadline: float) -> None:
        """Return once a replica is up; ``Unreachable`` if none is by ``deadline`` (monotonic)."""
        if self.reachable.is_set():
            return
        try:
            await asyncio.wait_for(self.reachable.wait(), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise Unreachable(len(self.replicas)) from None

    async def close(self) -> None:
        """Stop the health probes and close every replica's session."""
        for task in self._probes:
            task.cancel()
        await asyncio.gather(*self._probes, return_exceptions=True)
        for replica in self.replicas:
            await replica.session.close()
