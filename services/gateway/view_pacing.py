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
  answer weighs (:class:`ViewBill`): the principal's next view or message waits for those;
- are sent within their turn (:func:`send_view`), so that what a principal's views hold in
  the server's buffers is one view's at most: a client that takes nothing of its answer
  for :data:`VIEW_STALL_SECONDS` has its connection aborted.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from services.actor import error_reply
from services.gateway.auth import Principal
from services.gateway.transport import (
    CATCH_UP_STALL_SECONDS,
    SLOTS,
    PrincipalSlots,
    authenticated,
    json_view,
)

VIEW_COST_BYTES = 4096
"""A view costs its principal one token (of ``principal_rate``'s 500 a second) per this
many bytes of its answer, beyond the one it waits for. Building and encoding a view costs
from about 10 µs a KiB (a page of stored events) to about 45 (a round's recall, with its
store reads), so a principal viewing at its full rate gets about 2 MiB of views a second,
at most a tenth of a core or so: paging through a night's events runs at thousands of
events a second."""

Key = tuple[str, str]
ViewHandler = Callable[[web.Request, Principal], Awaitable[web.StreamResponse]]


VIEW_STALL_SECONDS = CATCH_UP_STALL_SECONDS
"""How long a view's write may wait while its client takes nothing of it before the
connection is aborted (as a websocket catch-up waits, 10 s): the principal's turn is held
meanwhile, so this bounds how long a client that does not read holds up its own views. A
client that reads, however slowly, is waited for."""
STALL_LOOKS = 10
"""How many times in ``VIEW_STALL_SECONDS`` a waiting write looks whether its client took
anything since the last look."""


@dataclass(slots=True)
class ViewBill:
    """What a view weighs so far: the bytes of its answer written or handed to the
    connection, charged to its principal when the view ends, however it ends (whole, cut
    short by its client, or failed midway)."""

    sent: int = 0

    def tokens(self) -> float:
        """The tokens owed beyond the one the view waited for: one per
        :data:`VIEW_COST_BYTES`."""
        return float(self.sent // VIEW_COST_BYTES)


BILL = web.RequestKey("view_bill", ViewBill)


class StreamedView(web.StreamResponse):
    """A view sent as it is built (a page of stored events): each write goes on the
    request's :class:`ViewBill`, so it costs what it has written, also when its client
    hangs up before the end or its handler fails midway."""

    def __init__(self, request: web.Request) -> None:
        super().__init__()
        self.bill = request.get(BILL) or ViewBill()

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        self.bill.sent += len(data)
        await super().write(data)


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


def busy_view(slots: PrincipalSlots, key: Key) -> web.Response:
    """The 429 answer (``busy``) to a view of a principal with its in-flight limit used;
    ``Retry-After`` is when its views already answered are paid for (1 s at least)."""
    body = error_reply(
        "busy", "this client has too many commands and views in flight; retry after a while"
    )
    headers = {"Retry-After": str(max(1, math.ceil(slots.owed_seconds(key))))}
    return json_view(body, status=429, headers=headers)


async def sent_in_time(request: web.Request, sending: Awaitable[None]) -> bool:
    """Await ``sending`` (a write of a view, which waits while the client has not taken
    what is buffered); False when its client is gone, or took nothing of it for
    :data:`VIEW_STALL_SECONDS` (its connection is then aborted)."""
    writing = asyncio.ensure_future(sending)
    transport = request.transport
    look = VIEW_STALL_SECONDS / STALL_LOOKS
    unsent: int | None = None
    idle_looks = 0
    try:
        while True:
            done, _ = await asyncio.wait((writing,), timeout=look)
            if done:
                writing.result()
                return True
            now_unsent = transport.get_write_buffer_size() if transport is not None else 0
            taken = unsent is not None and now_unsent < unsent
            idle_looks = 0 if taken else idle_looks + 1
            unsent = now_unsent
            if transport is None or transport.is_closing() or idle_looks >= STALL_LOOKS:
                break
    except ConnectionError:
        return False
    finally:
        if not writing.done():
            writing.cancel()
    if transport is not None:
        transport.abort()
    with contextlib.suppress(asyncio.CancelledError, ConnectionError):
        await writing
    return False


async def send_view(request: web.Request, response: web.StreamResponse) -> None:
    """Send a built view now (its status, headers and body), within the stall limit, and
    put its body on the request's bill; aiohttp then finds it sent. A view a handler has
    already sent (streamed) is left as it is."""
    if response.prepared:
        return
    if isinstance(response, web.Response) and isinstance(response.body, bytes):
        request[BILL].sent += len(response.body)

    async def whole() -> None:
        await response.prepare(request)
        await response.write_eof()  # which drains

    await sent_in_time(request, whole())


def paced_view(handler: ViewHandler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """An HTTP view run only for a valid token's principal (401 otherwise, as
    :func:`authenticated` answers), paced and sent as the module says."""

    async def paced(request: web.Request, who: Principal) -> web.StreamResponse:
        slots = request.app[SLOTS]
        key = (who.role, who.sub)
        if slots.full(key):
            return busy_view(slots, key)
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
                bill = request[BILL] = ViewBill()
                try:
                    response = await handler(request, who)
                    await send_view(request, response)
                    return response
                finally:
                    slots.reserve(key, bill.tokens())
            finally:
                end_turn()
        finally:
            give_back()

    return authenticated(paced)
