"""The HTTP views (every authenticated GET), paced per principal like any message
(docs/OPERATIONS.md, "Hostile clients").

A view can cost far more to build than a command: a page of 10,000 stored events is
megabytes of JSON. So that a client fetching views in a loop, from however many
connections, slows down only itself, each principal's views

- count toward its in-flight limit (``principal_in_flight``, shared with its commands and
  subscribes): past it a view is refused with 429 ``busy``, so what waits stays bounded;
- are built (and a streamed page sent) one at a time (:class:`ViewTurns`): the
  principal's other views wait their turn, never the other principals';
- wait for one of the principal's tokens like a websocket message, then pay for what the
  answer weighs (:func:`view_cost`): the principal's next view or message waits for those.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable

from aiohttp import web

from services.actor import error_reply
from services.gateway.auth import Principal
from services.gateway.transport import SLOTS, authenticated, json_view

VIEW_COST_BYTES = 4096
"""A view costs its principal one token (of ``principal_rate``'s 500 a second) per this
many bytes of its answer, beyond the one it waits for. Building and encoding a view costs
from about 10 µs a KiB (a page of stored events) to about 45 (a round's recall, with its
store reads), so a principal viewing at its full rate gets about 2 MiB of views a second,
at most a tenth of a core or so: paging through a night's events runs at thousands of
events a second."""

Key = tuple[str, str]
ViewHandler = Callable[[web.Request, Principal], Awaitable[web.StreamResponse]]


class StreamedView(web.StreamResponse):
    """A view sent as it is built (a page of stored events): it costs what it has written,
    also when its client hangs up before the end."""

    sent = 0

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        self.sent += len(data)
        await super().write(data)


def view_cost(response: web.StreamResponse) -> float:
    """The tokens a built view costs beyond the one it waited for: one per
    :data:`VIEW_COST_BYTES` of its body (what a streamed view wrote, else its body)."""
    if isinstance(response, StreamedView):
        size = response.sent
    elif isinstance(response, web.Response) and isinstance(response.body, bytes):
        size = len(response.body)
    else:
        size = response.content_length or 0
    return float(size // VIEW_COST_BYTES)


class ViewTurns:
    """Each principal's views, built one at a time: :meth:`turn` is the principal's own
    lock, kept only while one of its views is built or waiting."""

    def __init__(self) -> None:
        self._locks: dict[Key, tuple[asyncio.Lock, int]] = {}

    async def turn(self, key: Key) -> Callable[[], None]:
        """Wait for ``key``'s turn; the returned function ends it (call it once)."""
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._leave(key)
            raise
        return lambda: self._end(key, lock)

    def _end(self, key: Key, lock: asyncio.Lock) -> None:
        lock.release()
        self._leave(key)

    def _leave(self, key: Key) -> None:
        lock, users = self._locks[key]
        if users > 1:
            self._locks[key] = (lock, users - 1)
        else:
            del self._locks[key]

    def waiting(self, key: Key) -> int:
        """The principal's views being built or waiting for their turn."""
        return self._locks.get(key, (None, 0))[1]


VIEW_TURNS = web.AppKey("view_turns", ViewTurns)
CLIENT_GONE = 499
"""The status logged for a view whose client closed its connection before its turn came
(nginx's "client closed request"; nobody receives it)."""


def busy_view(retry_after: float) -> web.Response:
    """The 429 answer (``busy``) to a view of a principal with its in-flight limit used."""
    body = error_reply(
        "busy", "this client has too many commands and views in flight; retry after a while"
    )
    headers = {"Retry-After": str(max(1, math.ceil(retry_after)))}
    return json_view(body, status=429, headers=headers)


def paced_view(handler: ViewHandler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """An HTTP view run only for a valid token's principal (401 otherwise, as
    :func:`authenticated` answers), paced as the module says."""

    async def paced(request: web.Request, who: Principal) -> web.StreamResponse:
        slots = request.app[SLOTS]
        key = (who.role, who.sub)
        if slots.full(key):
            return busy_view(slots.burst / slots.rate)
        give_back = slots.take(key)
        try:
            end_turn = await request.app[VIEW_TURNS].turn(key)
            try:
                wait = slots.reserve(key)
                if wait > 0:
                    await asyncio.sleep(wait)
                if request.transport is None or request.transport.is_closing():
                    # Its client hung up while it waited (aiohttp runs a handler to its end
                    # anyway): nobody is left to build the view for.
                    return web.Response(status=CLIENT_GONE)
                response = await handler(request, who)
                slots.reserve(key, view_cost(response))
                return response
            finally:
                end_turn()
        finally:
            give_back()

    return authenticated(paced)
