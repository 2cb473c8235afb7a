"""The connections each principal holds open to this server process, at most
``principal_connections`` (docs/OPERATIONS.md, "Hostile clients").

Everything else a client may have is bounded per connection (1 MiB unsent on a websocket,
one catch-up page, one view in the kernel's send buffer) or per principal (16 in flight,
500 tokens a second); without a bound on its connections, one token could still open as
many as the process has file descriptors, each holding its own buffers. A connection
counts from the first request a principal sends on it (a websocket's upgrade, an HTTP
view or command) until it is closed, by either side.
"""

from __future__ import annotations

import asyncio
import weakref

from aiohttp import web

Key = tuple[str, str]

SWEEP_EVERY = 1024
"""New connections admitted between two sweeps of the principals holding none (memory)."""


class PrincipalConnections:
    """Counts each principal's open connections (its transports, held weakly: a closed
    connection is forgotten with its transport) and admits at most ``limit`` at once."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[Key, weakref.WeakSet[asyncio.BaseTransport]] = {}
        self._admitted = 0

    def admit(self, key: Key, transport: asyncio.BaseTransport) -> bool:
        """Count ``transport`` as one of ``key``'s connections (once, however many
        requests it carries); False, and not counted, when ``key`` already holds
        ``limit`` other open ones."""
        held = self._open.get(key)
        if held is None:
            held = self._open[key] = weakref.WeakSet()
        elif transport in held:
            return True
        for gone in [t for t in held if t.is_closing()]:
            held.discard(gone)
        if len(held) >= self.limit:
            return False
        held.add(transport)
        self._admitted += 1
        if not self._admitted % SWEEP_EVERY:
            self._sweep()
        return True

    def held(self, key: Key) -> int:
        """The principal's connections open now."""
        held = self._open.get(key, ())
        return sum(1 for t in held if not t.is_closing())

    def _sweep(self) -> None:
        for key, held in list(self._open.items()):
            if not any(not t.is_closing() for t in held):
                del self._open[key]


CONNECTIONS = web.AppKey("principal_connections", PrincipalConnections)
