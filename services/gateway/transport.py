"""The gateway's transport: connections, clients, subscriptions and catch-up, the send
path, the websocket handler, the HTTP command path and the per-principal fairness slots.

Commands go to :func:`services.gateway.commands.submit_command`, one dispatch for the
websocket and HTTP paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
import types
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import msgspec
import structlog
from aiohttp import WSCloseCode, WSMsgType, web

from events.base import registered
from events.codec import decode, to_json
from events.envelope import Envelope
from services.actor import Reply, error_reply
from services.aggregates import raffle_of, raffle_stream, table_stream
from services.bell_jars.views import shown_to_players
from services.broker import LOG
from services.cluster.tail import InOrder
from services.dashboard import DASHBOARD_KEY, DASHBOARD_READERS
from services.gateway.auth import (
    DEAL_READERS,
    AuthError,
    Principal,
    may_read,
    may_read_bankroll,
    may_read_sheet,
    verify,
)
from services.gateway.commands import dispatch, submit_command, submit_frame
from services.gateway.connections import CONNECTIONS
from services.gateway.protocol import (
    STREAM_OPS,
    ProtocolError,
    check_request,
    log_types_field,
    parse_json,
    request_id,
    since_log_id,
    since_seq,
    text_field,
)
from services.gateway.protocol import (
    field as req_field,
)
from services.runtime import VIEWS, Runtime, ViewListener
from services.tasks import CALLBACK_CONTEXT

log = structlog.get_logger(__name__)

RUNTIME = web.AppKey("runtime", Runtime)
FRAME_CACHE_SIZE = 8192
"""Encoded event frames kept so one event is encoded once for all its subscribers."""
CATCH_UP_PAGE = 250
"""Stored events one catch-up reads from the store at a time (its memory while it sends)."""
CATCH_UP_READERS = 64
"""Catch-up page reads the whole server runs at once: half the Redis client's 128
connections, so that subscribers never take them all from the commands (fewer makes
subscriptions queue behind each other when many tablets subscribe at once)."""
CATCH_UP_YIELD_EVERY = 8
"""A catch-up hands the event loop to others after this many stored frames."""
CATCH_UP_STALL_SECONDS = 10.0
"""How long a catch-up waits for a client that reads nothing before dropping it (1013)."""
SLOW_CLOSE_SECONDS = 2.0
"""How long a slow client's close handshake may take before its connection is aborted."""
BUCKETS_KEPT = 10_000
"""Principals' rate buckets kept before the idle ones are forgotten (memory bound)."""
DRAIN_POLL_SECONDS = 0.005
"""How often catch-up looks whether a client's send buffer has drained."""
CATCH_UP_BACKLOG = 10_000
"""Live events one subscription may hold back while it catches up before it is dropped."""


def dumps(obj: Any) -> str:
    """Compact JSON (the standard library's: every character past ASCII escaped)."""
    return json.dumps(obj, separators=(",", ":"))


_ENCODER = msgspec.json.Encoder()


def encode(obj: Any) -> bytes:
    """Compact JSON as UTF-8, as every frame and reply is sent: msgspec's encoder (keys
    in the order given, text as UTF-8 rather than ``\\u`` escapes), or the standard one
    for what msgspec will not write (a lone surrogate, echoed in an ``re``, say)."""
    try:
        return _ENCODER.encode(obj)
    except (TypeError, ValueError, OverflowError):  # UnicodeEncodeError is a ValueError
        return dumps(obj).encode()


def ws_frame(payload: bytes) -> bytes:
    """A complete websocket text frame as a server sends it (FIN, unmasked, RFC 6455 5.2),
    of UTF-8 ``payload``.

    Server frames are never masked, so one frame's bytes serve every subscriber."""
    n = len(payload)
    if n < 126:
        return bytes((0x81, n)) + payload
    if n < 65_536:
        return b"\x81\x7e" + n.to_bytes(2, "big") + payload
    return b"\x81\x7f" + n.to_bytes(8, "big") + payload


def reply_frame(re: Any, reply: Reply) -> bytes:
    """The frame of a reply ``{"re": re, "ok": ..., ...}``."""
    return ws_frame(encode({"re": re, **reply}))


class FrameCache:
    """The websocket frame of each recent event, encoded once for all its subscribers."""

    def __init__(self, size: int = FRAME_CACHE_SIZE) -> None:
        self.size = size
        self._frames: OrderedDict[str, bytes] = OrderedDict()

    def frame(self, env: Envelope) -> bytes:
        """A live event's frame, encoded once and kept for its other subscribers."""
        key = env.id
        cached = self._frames.get(key)
        if cached is None:
            cached = ws_frame(encode({"ev": to_json(env)}))
            self._frames[key] = cached
            if len(self._frames) > self.size:
                self._frames.popitem(last=False)
        return cached

    def stored_frame(self, env: Envelope) -> bytes:
        """A stored event's frame for one catch-up: from the cache if there, else encoded
        without keeping it (a catch-up must not push the live events' frames out)."""
        cached = self._frames.get(env.id)
        return cached if cached is not None else ws_frame(encode({"ev": to_json(env)}))


def _log_position(log_id: str) -> tuple[int, int]:
    ms, _, seq = log_id.partition("-")
    return int(ms), int(seq or 0)


@dataclass(eq=False)
class Subscription:
    """One client's subscription to one stream: catch-up from the store, then live."""

    stream: str
    client: Client
    position: Any = 0
    """Last seq sent (aggregate streams) or last org-log position (the log)."""
    buffering: bool = True
    pending: list[Envelope] = field(default_factory=list)
    reply: tuple[Any, dict[str, Any]] = (None, {})
    """The ``re`` and result of the subscribe's reply, sent as its catch-up starts."""

    types: frozenset[str] | None = None
    """The log's ``types`` filter: only events of these types are sent (None: every one).
    The position still moves past the others, so a resume never sends them."""

    order: InOrder | None = None
    """An aggregate stream's events in seq order (``services.cluster.tail``: they reach
    this process from its actor and from the org log's tail); None for the log."""

    def _newer(self, env: Envelope) -> bool:
        assert self.stream == LOG
        if env.log_id is None:
            return False
        pos = _log_position(env.log_id)
        return bool(pos > self.position)

    def _due(self, env: Envelope) -> list[Envelope]:
        """What to send now that ``env`` came: itself, and those it was the gap before."""
        if self.stream == LOG:
            if not self._newer(env):
                return []
            self.position = _log_position(env.log_id or "0-0")
            return [env] if self.types is None or env.type in self.types else []
        if self.order is None:
            self.order = InOrder(self.position)
        due: list[Envelope] = self.order.offer(env.seq, env)
        self.position = self.order.position
        if len(self.order.ahead) > CATCH_UP_BACKLOG:
            self.client.drop("fell behind while its stream changed owner")
        return due

    def deliver(self, env: Envelope) -> None:
        if self.types is not None and env.type not in self.types:
            return  # the log's position moves with the next event sent
        if self.buffering:
            # Live events during catch-up wait here; a client that falls this far behind
            # while catching up is as slow as one whose queue is full.
            self.pending.append(env)
            if len(self.pending) > CATCH_UP_BACKLOG:
                self.client.drop("fell behind while catching up")
            return
        for due in self._due(env):
            self.client.push(self.client.frames.frame(due))

    async def catch_up(self, env: Envelope) -> None:
        """Send a stored event, waiting while the client's buffer is full."""
        for due in self._due(env):
            await self.client.push_when_drained(self.client.frames.stored_frame(due))


class FrameTransport(Protocol):
    """What a client's connection offers for writing (asyncio's and uvloop's transports)."""

    def write(self, data: bytes) -> None: ...

    def get_write_buffer_size(self) -> int: ...

    def is_closing(self) -> bool: ...

    def abort(self) -> None: ...


class DueWrites:
    """The connections with frames gathered, each written in one call: at the next turn of
    the event loop, or sooner, when an actor has answered a batch (the runtime's
    ``after_batch``: that batch's replies and events go out in the turn they were made,
    not a turn later, a few milliseconds when the loop is busy). One callback for all the
    connections due in a turn rather than one each."""

    __slots__ = ("_due", "_scheduled")

    def __init__(self) -> None:
        self._due: list[Client] = []
        self._scheduled = False

    def add(self, client: Client) -> None:
        """``client`` has its first frame of this turn gathered."""
        self._due.append(client)
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._at_turn, context=CALLBACK_CONTEXT)

    def _at_turn(self) -> None:
        self._scheduled = False
        self.write()

    def write(self) -> None:
        """Write what every due connection has gathered (one connection's fault is logged
        and stops no other's write)."""
        due, self._due = self._due, []
        for client in due:
            try:
                client.flush()
            except Exception:
                log.exception("write_failed", sub=client.who.sub)


class Client:
    """One websocket connection: a principal, its subscriptions, and its send buffer.

    Everything sent to the client, replies and events alike, is written to the
    connection's transport (as aiohttp's own writer does), no task in between: the frames
    due in one turn of the event loop are gathered, in order, and go out in one write
    (:class:`DueWrites`: at the end of the actor batch that made them, else at the start
    of the next turn), so a batch costs one system call, not one per frame. The bound is
    what is unsent, gathered or in the transport's buffer: a client whose unsent bytes
    exceed ``send_buffer_bytes`` is too slow and is dropped (1013), so one stuck tablet
    never stalls a table nor grows the server.
    """

    def __init__(
        self,
        ws: web.WebSocketResponse,
        who: Principal,
        runtime: Runtime,
        frames: FrameCache,
        transport: FrameTransport,
        readers: asyncio.Semaphore,
        due: DueWrites,
    ) -> None:
        self.ws = ws
        self.due = due
        """Where the connection is put when it has frames gathered to write."""
        self.who = who
        self.runtime = runtime
        self.frames = frames
        self.transport = transport
        self.limit = runtime.settings.send_buffer_bytes
        self.subs: dict[str, Subscription] = {}
        self.views: dict[tuple[str, str], ViewListener] = {}
        self.catching_up: dict[str, asyncio.Task[None]] = {}
        """The running catch-up of each subscription still catching up, by stream."""
        self.readers = readers
        """The server's catch-up page reads (``CATCH_UP_READERS`` at once)."""
        self.catch_up_turn = asyncio.Lock()
        """One catch-up at a time per connection: they share one socket anyway, and so a
        connection holds at most one page of stored events in memory."""
        self.caught_up_frames = 0
        self.gathered: list[bytes] = []
        """Frames due this turn, written together by :meth:`flush`."""
        self.gathered_bytes = 0
        self.too_slow = False
        self.ended = False
        """The token expired or was revoked: nothing more is sent; the socket is closing."""

    @property
    def writable(self) -> bool:
        return (
            not self.too_slow
            and not self.ended
            and not self.ws.closed
            and not self.transport.is_closing()
        )

    def unsent(self) -> int:
        """Bytes sent but not yet written to the socket: gathered this turn, or waiting in
        the transport's buffer."""
        return self.gathered_bytes + self.transport.get_write_buffer_size()

    def send(self, frame: bytes) -> None:
        """Send a frame (a reply or an event) with the others due this turn; drop the
        client if its unsent bytes are over the limit."""
        if not self.writable:
            return
        if self.unsent() > self.limit:
            self.drop("send buffer full")
            return
        if not self.gathered:
            self.due.add(self)
        self.gathered.append(frame)
        self.gathered_bytes += len(frame)

    push = send

    def flush(self) -> None:
        """Write the frames gathered (one write), unless the connection ended meanwhile: a
        closing websocket sends nothing after its close frame."""
        frames = self.gathered
        if not frames:
            return
        self.gathered = []
        self.gathered_bytes = 0
        if self.writable:
            self.transport.write(frames[0] if len(frames) == 1 else b"".join(frames))

    async def push_when_drained(self, frame: bytes) -> None:
        """Send a stored event during catch-up, first waiting until the buffer is below half
        the limit (flow control, which leaves room for live events and replies). A client
        that reads nothing for ``CATCH_UP_STALL_SECONDS`` is dropped."""
        # The public transport API offers no "drained" event to await (only aiohttp's
        # private protocol does): poll, as catch-up is not latency critical.
        self.caught_up_frames += 1
        if not self.caught_up_frames % CATCH_UP_YIELD_EVERY:
            await asyncio.sleep(0)  # let the others have the loop between stored frames
        waited = 0.0
        while self.writable and self.unsent() > self.limit // 2:
            if waited >= CATCH_UP_STALL_SECONDS:
                self.drop("catch-up stalled: the client reads nothing")
                return
            await asyncio.sleep(DRAIN_POLL_SECONDS)
            waited += DRAIN_POLL_SECONDS
        self.send(frame)

    def answer(self, re: Any, reply: Reply) -> None:
        """Send the reply to the request ``re``, through the same bounded path as events."""
        self.send(reply_frame(re, reply))

    def drop(self, reason: str) -> None:
        """Disconnect a client that cannot keep up (close code 1013, try again later)."""
        if self.too_slow:
            return
        self.too_slow = True
        self.drop_subscriptions()
        self.runtime.metrics.slow_disconnects.inc()
        log.warning("client_too_slow", sub=self.who.sub, reason=reason)
        self.runtime.alert(
            "client_dropped",
            self.who.sub,
            f"{self.who.role} {self.who.sub} dropped (1013): {reason}",
        )
        asyncio.get_running_loop().create_task(
            self._close(WSCloseCode.TRY_AGAIN_LATER, b"too slow; resubscribe")
        )

    def end(self, reason: str) -> None:
        """The token expired or was revoked: send nothing more, close with 1008."""
        if self.ended:
            return
        self.ended = True
        self.drop_subscriptions()
        log.info("client_token_ended", sub=self.who.sub, role=self.who.role, reason=reason)
        asyncio.get_running_loop().create_task(
            self._close(WSCloseCode.POLICY_VIOLATION, reason.encode())
        )

    async def _close(self, code: int, message: bytes) -> None:
        with contextlib.suppress(TimeoutError, ConnectionError):
            await asyncio.wait_for(self.ws.close(code=code, message=message), SLOW_CLOSE_SECONDS)
        if self.too_slow:
            self.transport.abort()  # its buffers are full: the close frame may never go out

    def unsubscribe(self, stream: str) -> None:
        sub = self.subs.pop(stream, None)
        if sub is not None:
            self.runtime.broker.remove(stream, sub.deliver)
        task = self.catching_up.pop(stream, None)
        if task is not None:
            task.cancel()

    def drop_subscriptions(self) -> None:
        for stream in list(self.subs):
            self.unsubscribe(stream)
        for task in self.catching_up.values():
            task.cancel()
        self.catching_up.clear()
        for (kind, key), listener in self.views.items():
            self.runtime.unwatch(kind, key, listener)
        self.views.clear()

    @property
    def subscriptions(self) -> int:
        return len(self.subs) + len(self.views)


MESSAGE_COST_BYTES = 256
"""A message costs one token of its principal's rate per this many bytes (at least one):
parsing and checking a message costs time in proportion to its size, so a client sending
large frames is paced by what they cost, not by their count."""


def message_cost(data: str | bytes) -> float:
    """How many of its principal's tokens a message takes (:data:`MESSAGE_COST_BYTES`)."""
    return float(1 + len(data) // MESSAGE_COST_BYTES)


class PrincipalSlots:
    """What each principal (a token's role and sub) may have going, across all its
    connections: at most ``limit`` messages in flight at once (a principal at its limit
    waits for room, :meth:`room`), and messages read at most at ``rate`` a second with
    bursts of ``burst`` (:meth:`reserve`). Its sockets are not read while it waits, so TCP
    paces the flooder and nobody else."""

    def __init__(
        self,
        limit: int,
        rate: float = 500.0,
        burst: int = 200,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._count: dict[tuple[str, str], int] = {}
        self._room: dict[tuple[str, str], asyncio.Event] = {}
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}
        """Principal -> (tokens left, when counted): a token bucket per principal."""

    def reserve(self, key: tuple[str, str], cost: float = 1.0) -> float:
        """Take a message's tokens (``cost``: 1, more for a long message, see
        :func:`message_cost`); the seconds to wait before reading it (0: none).

        Tokens may go below zero: each message waits for its own, so a principal reading
        from many connections at once waits in proportion."""
        now = self.clock()
        tokens, then = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate) - cost
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > BUCKETS_KEPT:
            self._forget_idle(now)
        return 0.0 if tokens >= 0 else -tokens / self.rate

    def owed_seconds(self, key: tuple[str, str]) -> float:
        """How long until the principal's tokens are out of debt (0: they are not)."""
        now = self.clock()
        tokens, then = self._buckets.get(key, (float(self.burst), now))
        tokens += (now - then) * self.rate
        return 0.0 if tokens >= 0 else -tokens / self.rate

    def _forget_idle(self, now: float) -> None:
        """Drop the buckets that have refilled (their principals were idle long enough);
        a bucket still owing tokens (a large view's, say) is kept."""
        for key, (tokens, then) in list(self._buckets.items()):
            if tokens + (now - then) * self.rate >= self.burst:
                del self._buckets[key]

    def full(self, key: tuple[str, str]) -> bool:
        return self._count.get(key, 0) >= self.limit

    async def room(self, key: tuple[str, str]) -> None:
        """Wait until the principal has fewer than ``limit`` in flight."""
        while self.full(key):
            event = self._room.get(key)
            if event is None:
                event = self._room[key] = asyncio.Event()
            await event.wait()

    def take(self, key: tuple[str, str]) -> Callable[[], None]:
        """Count one more in flight; the returned function gives it back (once)."""
        self._count[key] = self._count.get(key, 0) + 1
        return _Slot(self, key)

    def give_back(self, key: tuple[str, str]) -> None:
        """One fewer in flight for ``key``; a message waiting for room goes on."""
        left = self._count[key] - 1
        if left:
            self._count[key] = left
        else:
            del self._count[key]
        event = self._room.pop(key, None)
        if event is not None:
            event.set()

    def in_flight(self, key: tuple[str, str]) -> int:
        return self._count.get(key, 0)


class _Slot:
    """One message's slot of :meth:`PrincipalSlots.take`; calling it gives the slot back,
    once. (An object rather than a closure: one allocation per message, not four.)"""

    __slots__ = ("given", "key", "slots")

    def __init__(self, slots: PrincipalSlots, key: tuple[str, str]) -> None:
        self.slots = slots
        self.key = key
        self.given = False

    def __call__(self) -> None:
        if not self.given:
            self.given = True
            self.slots.give_back(self.key)


WS_SUBPROTOCOL = "casino-night.v1"
"""The websocket subprotocol the server speaks; a browser offers it with its token as
``bearer.<token>`` (a browser cannot set a websocket's ``Authorization`` header, and a
token on the URL would be logged where URLs are)."""
BEARER_SUBPROTOCOL = "bearer."


def bearer_subprotocol(request: web.Request) -> str:
    """The token a browser offers as the subprotocol ``bearer.<token>`` ("" when none)."""
    for offered in request.headers.getall("Sec-WebSocket-Protocol", ()):
        for name in offered.split(","):
            name = name.strip()
            if name.startswith(BEARER_SUBPROTOCOL):
                return name[len(BEARER_SUBPROTOCOL) :]
    return ""


def principal_of(request: web.Request) -> Principal:
    """Who sends an HTTP request or opens a websocket: its bearer token (the
    ``Authorization`` header, else the ``token`` query, else a websocket's ``bearer.``
    subprotocol), verified and not revoked (AuthError)."""
    runtime = request.app[RUNTIME]
    if "Authorization" in request.headers:
        # The header wins when both are given, whatever it holds.
        scheme, _, credentials = request.headers["Authorization"].strip().partition(" ")
        token = credentials.strip() if scheme.lower() == "bearer" else ""
    else:
        token = request.query.get("token", "") or bearer_subprotocol(request)
    if not token:
        raise AuthError("no token")
    who = verify(runtime.secret, token, now=int(time.time()))
    if runtime.revocations.is_revoked(who.jti):
        raise AuthError("token revoked")
    return who


def unauthorized(reason: str) -> web.Response:
    """The 401 answer (``unauthorized``) with the token's refusal."""
    body = {"ok": False, "error": {"code": "unauthorized", "message": reason}}
    return web.json_response(body, status=401)


def json_view(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """An HTTP answer of JSON, encoded as frames are (:func:`encode`): on a large view
    msgspec takes a fifth of the standard library's time (a recall of a 3,000-bet round:
    5.8 ms against 33 ms), and that time holds the event loop for everyone."""
    return web.Response(
        body=encode(data),
        status=status,
        headers=headers,
        content_type="application/json",
        charset="utf-8",
    )


def too_many_connections(limit: int, retry_after: float) -> web.Response:
    """The 429 answer (``busy``) to a principal's request on a connection past its
    ``limit`` open ones (an HTTP request, or a websocket's upgrade, refused before it);
    the connection is then closed, so it does not count either."""
    body = error_reply(
        "busy", f"this client has {limit} connections open; close one or retry after a while"
    )
    response = json_view(
        body, status=429, headers={"Retry-After": str(max(1, math.ceil(retry_after)))}
    )
    response.force_close()
    return response


def admitted(request: web.Request, who: Principal) -> web.Response | None:
    """None when the request's connection is one the principal may hold (counted from
    now on, docs/OPERATIONS.md "Hostile clients"), else the 429 to answer it with."""
    connections = request.app[CONNECTIONS]
    transport = request.transport
    if transport is None or connections.admit((who.role, who.sub), transport):
        return None
    request.app[RUNTIME].metrics.refused("busy")
    # A connection the client lost without closing is found by the heartbeat (a
    # websocket's) or the keep-alive timeout (an HTTP connection's).
    return too_many_connections(connections.limit, request.app[RUNTIME].settings.heartbeat_seconds)


def forbidden(message: str) -> web.Response:
    """The 403 answer (``forbidden``)."""
    body = {"ok": False, "error": {"code": "forbidden", "message": message}}
    return json_view(body, status=403)


def end_revoked(app: web.Application, jti: str) -> None:
    """Close every socket opened with the revoked token ``jti`` (1008, ``token revoked``)."""
    clients: set[Client] = app[CLIENTS]
    for client in tuple(clients):
        if client.who.jti == jti:
            client.end("token revoked")


async def follow_revocations(app: web.Application) -> None:
    """Once the runtime runs: a revocation heard by this process (its own, another
    process's over pub/sub, or a re-read) closes the sockets of that token here."""
    app[RUNTIME].revocations.on_revoked(lambda jti: end_revoked(app, jti))


def _start_subscription(client: Client, msg: dict[str, Any]) -> Subscription | None:
    """Check a ``subscribe`` to a stream and register it (buffering live events); reply
    ``{"head": …}`` and return the subscription to catch up, or None when the connection
    follows that stream already (its subscription goes on; nothing is read again)."""
    runtime = client.runtime
    stream = text_field(msg, "stream")
    if stream != LOG and stream not in runtime.supervisor.actors:
        raise ProtocolError("unknown_stream", f"no stream {stream!r}")
    if not may_read(client.who, stream):
        raise ProtocolError("forbidden", f"{client.who.role} may not read {stream}")
    since_raw = msg.get("since", 0)
    if stream == LOG:
        since = since_log_id(since_raw)
        position: Any = _log_position(since) if since != "0" else (0, 0)
        types = log_types_field(msg, registered())
    else:
        position = since_seq(since_raw)
        if "types" in msg:
            raise ProtocolError("bad_request", "field 'types' filters the log only")
        types = None
    if stream in client.subs:
        # The head this process knows (a stream another process runs: as last read here).
        head = runtime.supervisor.actors[stream].head.version if stream != LOG else None
        result: dict[str, Any] = {"head": head, "already": True}
        client.answer(request_id(msg), {"ok": True, "result": result})
        return None
    _check_room_for_subscription(client)
    sub = Subscription(stream=stream, client=client, position=position, types=types)
    runtime.broker.add(stream, sub.deliver)
    client.subs[stream] = sub
    result = {}
    raffle = raffle_of(stream)
    if raffle is not None:
        # The raffle as the projection has it (it may trail ``head`` by moments).
        result["view"] = runtime.raffles.view(raffle)
    # Read with the catch-up when another process runs the stream (Runtime.head).
    result["head"] = _head(runtime, stream) if stream != LOG else None
    sub.reply = (request_id(msg), result)
    return sub


def _head(runtime: Runtime, stream: str) -> int | None:
    """The head of a stream this process runs; None when another process runs it."""
    if not runtime.cluster.owns(stream):
        return None
    return runtime.supervisor.actors[stream].head.version


def _check_room_for_subscription(client: Client) -> None:
    limit = client.runtime.settings.max_subscriptions
    if client.subscriptions >= limit:
        raise ProtocolError(
            "too_many_subscriptions",
            f"a connection follows at most {limit} streams and views; unsubscribe first",
        )


async def _catch_up(client: Client, sub: Subscription) -> None:
    """Reply ``{"head": …}``, then send every stored event after ``since`` in order, then
    the live ones (PROTOCOL.md): live events that arrive during the catch-up wait in the
    subscription and follow it, none twice, none missed. Pages are read a few at a time
    server-wide (``CATCH_UP_READERS``) and one catch-up at a time per connection."""
    runtime = client.runtime
    stream = sub.stream
    re, result = sub.reply
    try:
        try:
            if stream == LOG:
                result["head"] = await runtime.store.log_head()
            elif result.get("head") is None:
                result["head"] = await runtime.head(stream)
        finally:
            # Every subscribe gets its reply, also one unsubscribed (cancelled) while the
            # log's head was read: ``head`` is then null.
            client.answer(re, {"ok": True, "result": result})
        async with client.catch_up_turn:
            if stream == LOG:
                ms, n = sub.position
                after = "0" if (ms, n) == (0, 0) else f"{ms}-{n}"
                while client.writable:
                    async with client.readers:
                        page = await runtime.store.log_raw(after, CATCH_UP_PAGE)
                    for log_id, raw in page:
                        await sub.catch_up(decode(raw, log_id))
                    if len(page) < CATCH_UP_PAGE:
                        break
                    after = page[-1][0]
            else:
                while client.writable:
                    async with client.readers:
                        page_envs = await runtime.store.read(stream, sub.position, CATCH_UP_PAGE)
                    for env in page_envs:
                        await sub.catch_up(env)
                    if len(page_envs) < CATCH_UP_PAGE:
                        break
            for env in sub.pending:
                await sub.catch_up(env)
    except asyncio.CancelledError:
        raise  # unsubscribed, or the connection ended
    except Exception:
        # The reply is out: a catch-up that cannot finish ends the connection, and the
        # tablet resumes with the last seq it saw.
        log.exception("catch_up_failed", stream=stream)
        client.unsubscribe(stream)
        await client.ws.close(code=WSCloseCode.INTERNAL_ERROR, message=b"catch-up failed")
        return
    sub.pending.clear()
    sub.buffering = False


async def _subscribe_task(client: Client, sub: Subscription) -> None:
    try:
        await _catch_up(client, sub)
    finally:
        if client.catching_up.get(sub.stream) is asyncio.current_task():
            del client.catching_up[sub.stream]


def _view_key(client: Client, msg: dict[str, Any]) -> tuple[str, str]:
    """The (view, key) a ``subscribe``/``unsubscribe`` with ``view`` names, checked."""
    kind = text_field(msg, "view")
    if kind not in VIEWS:
        raise ProtocolError("unknown_view", f"no view {kind!r}; views: {', '.join(VIEWS)}")
    if kind == "raffle":
        raffle = text_field(msg, "raffle")
        if client.runtime.raffles.view(raffle) is None:
            raise ProtocolError("unknown_raffle", f"no raffle {raffle!r}")
        if not may_read(client.who, raffle_stream(raffle)):
            raise ProtocolError("forbidden", f"{client.who.role} may not read raffles")
        return kind, raffle
    if kind in ("flare", "deal"):
        deal_id = text_field(msg, "deal")
        state = client.runtime.supervisor.deal_state(deal_id)
        if state is None or not state.registered:
            raise ProtocolError("unknown_deal", f"no deal {deal_id!r}")
        if kind == "deal" and client.who.role not in DEAL_READERS:
            raise ProtocolError("forbidden", f"{client.who.role} may not read a deal's ledger")
        hidden = not shown_to_players(state, client.runtime.supervisor.deal_state)
        if kind == "flare" and client.who.role not in DEAL_READERS and hidden:
            raise ProtocolError("unknown_deal", f"no deal {deal_id!r}")
        return kind, deal_id
    if kind == "dashboard":
        if client.who.role not in DASHBOARD_READERS:
            raise ProtocolError("forbidden", f"{client.who.role} may not read the dashboard")
        if msg.get("key", DASHBOARD_KEY) != DASHBOARD_KEY:
            # The view has one key; a client may name it (it is the pushes' ``key``).
            raise ProtocolError("bad_request", f"the dashboard's only key is {DASHBOARD_KEY!r}")
        return kind, DASHBOARD_KEY
    if kind == "bankroll":
        player = text_field(msg, "player")
        if not may_read_bankroll(client.who, player):
            raise ProtocolError("forbidden", "a player reads only their own bankroll")
        return kind, player
    table = text_field(msg, "table")
    if kind == "table":
        if table not in client.runtime.table_ids:
            raise ProtocolError("unknown_table", f"no table {table!r}")
        if not may_read(client.who, table_stream(table)):
            raise ProtocolError("forbidden", f"{client.who.role} may not read {table}")
        return kind, table
    if table not in client.runtime.control_sheets.sheets:
        raise ProtocolError("unknown_table", f"no merchandise wheel {table!r}")
    if not may_read_sheet(client.who, table):
        raise ProtocolError("forbidden", f"{client.who.role} may not read {table}'s sheet")
    return kind, table


def _subscribe_view(client: Client, msg: dict[str, Any]) -> None:
    """Reply with the view's current data, then push it whenever an event changes it."""
    kind, key = _view_key(client, msg)
    runtime = client.runtime
    old = client.views.pop((kind, key), None)
    if old is not None:
        runtime.unwatch(kind, key, old)
    else:
        _check_room_for_subscription(client)

    def push(data: dict[str, Any] | None) -> None:
        client.push(ws_frame(encode({"view": kind, "key": key, "data": data})))

    runtime.watch(kind, key, push)
    client.views[(kind, key)] = push
    data = runtime.view(kind, key)
    client.answer(request_id(msg), {"ok": True, "result": {"view": kind, "data": data}})
    if kind == "table":  # another process may run it: what it appended is pushed in a moment
        runtime.pushes.changed(kind, key)


class _ReplyTo:
    """Where a command's reply goes: its request's id on its client, once its principal's
    slot is given back."""

    __slots__ = ("client", "give_back", "re")

    def __init__(self, client: Client, give_back: Callable[[], None]) -> None:
        self.client = client
        self.give_back = give_back
        self.re: Any = None

    def __call__(self, reply: Reply) -> None:
        self.give_back()
        self.client.answer(self.re, reply)


def _on_text(client: Client, text: str, give_back: Callable[[], None]) -> None:
    """Handle one request frame, holding one of its principal's in-flight slots until its
    reply is out (``give_back``; a subscribe's once its catch-up is done). A command needs
    no task of its own: it is queued for its actor and its reply is written when the actor
    answers. Commands of one connection run concurrently (different tables); each table's
    actor keeps its own commands in order.

    A well-formed command takes the typed path (:func:`~services.gateway.commands.submit_frame`:
    one pass of msgspec over the frame); every other frame is parsed and checked here and in
    :func:`~services.gateway.commands.submit_command`, which answer it as before."""
    then = _ReplyTo(client, give_back)
    try:
        command_id = submit_frame(client.runtime, client.who, text, then)
    except Exception:
        log.exception("command_failed")
        client.answer(None, error_reply("internal", "internal error"))
        give_back()
        return
    if command_id is not None:
        then.re = command_id  # read when the reply comes, a later turn at the soonest
        return
    msg_id: Any = None
    try:
        msg = parse_json(text, check=False)
        msg_id = request_id(msg)
        check_request(text, msg)
        op = req_field(msg, "op", str)
        if op == "subscribe" and "view" in msg:
            _subscribe_view(client, msg)
            give_back()
            return
        if op == "unsubscribe" and "view" in msg:
            kind, key = _view_key(client, msg)
            listener = client.views.pop((kind, key), None)
            if listener is not None:
                client.runtime.unwatch(kind, key, listener)
            client.answer(msg_id, {"ok": True, "result": {}})
            give_back()
            return
        if op == "subscribe":
            sub = _start_subscription(client, msg)
            if sub is None:
                give_back()
                return
            task = asyncio.create_task(_subscribe_task(client, sub))
            client.catching_up[sub.stream] = task
            task.add_done_callback(lambda _t: give_back())
            return
        if op == "unsubscribe":
            client.unsubscribe(text_field(msg, "stream"))
            client.answer(msg_id, {"ok": True, "result": {}})
            give_back()
            return
    except ProtocolError as e:
        client.answer(msg_id, error_reply(e.code, e.message))
        give_back()
        return
    then.re = msg_id
    try:
        submit_command(client.runtime, client.who, msg, then=then)
    except Exception:
        log.exception("command_failed")
        client.answer(msg_id, error_reply("internal", "internal error"))
        give_back()


def _peek_id(text: str) -> Any:
    """The ``id`` of a request, if it parses, for replies sent without running it."""
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return request_id(msg) if isinstance(msg, dict) else None


FRAMES_PER_TURN = 4
"""Frames of one socket, already read and queued, handled before its handler lets the
event loop run the others (docs/OPERATIONS.md, "Hostile clients"): another client's frame
waits for at most this many of a flooder's. One a turn cost the closed loop 6-8 % of its
bets/s (a read brings two or three frames at load, each was one more step of the task)."""


@types.coroutine
def _one_turn() -> Generator[None, None, None]:
    """Let the event loop run the others once (what ``asyncio.sleep(0)`` does, without
    its coroutine object and call: this runs for every message)."""
    yield


def _paced(seconds: float) -> Awaitable[None]:
    """Wait ``seconds`` (a principal's pace), or one turn of the event loop when none."""
    return asyncio.sleep(seconds) if seconds > 0 else _one_turn()


def _frame_waiting(ws: web.WebSocketResponse) -> bool:
    """Whether the socket's next frame is already read and queued (aiohttp's reader queue;
    True when this aiohttp keeps it elsewhere, so the caller yields as before). With none
    queued the next read suspends the handler anyway, which lets the others run."""
    queue = getattr(ws, "_reader", None)
    buffer = getattr(queue, "_buffer", None)
    return buffer is None or bool(buffer)


async def websocket(request: web.Request) -> web.StreamResponse:
    runtime = request.app[RUNTIME]
    try:
        who = principal_of(request)
    except AuthError as e:
        return unauthorized(str(e))
    refused = admitted(request, who)
    if refused is not None:
        return refused
    ws = web.WebSocketResponse(
        protocols=(WS_SUBPROTOCOL,),
        heartbeat=runtime.settings.heartbeat_seconds,
        max_msg_size=runtime.settings.max_frame_bytes,
        compress=False,
        # Pings are answered below, paced: aiohttp's own answering (autoping) handles every
        # ping and pong already read before it returns, unpaced, so a client flooding
        # them would take the event loop from the others.
        autoping=False,
    )
    await ws.prepare(request)
    transport = request.transport
    if transport is None:  # pragma: no cover - the peer left during the handshake
        return ws
    client = Client(
        ws,
        who,
        runtime,
        request.app[FRAMES],
        cast(FrameTransport, transport),
        request.app[READERS],
        request.app[DUE_WRITES],
    )
    request.app[CLIENTS].add(client)
    runtime.metrics.connections.inc()
    slots = request.app[SLOTS]
    principal = (who.role, who.sub)
    loop = asyncio.get_running_loop()
    # A token expires on open connections too: at its expiry the socket is closed (1008)
    # and, until the close is done, nothing more is sent to it.
    expiry = loop.call_later(max(0.0, who.exp - time.time()), client.end, "token expired")
    run = 0  # frames handled since the handler last let the others run
    try:
        async for message in ws:
            if message.type == WSMsgType.TEXT and (client.ended or who.exp <= int(time.time())):
                reply = error_reply("unauthorized", "token expired; reconnect with a new one")
                with contextlib.suppress(ConnectionError):
                    await ws.send_str(dumps({"re": _peek_id(message.data), **reply}))
                client.end("token expired")
                break
            if message.type == WSMsgType.TEXT:
                # Paced per principal: at its message rate, and while it has its limit in
                # flight none of its sockets is read further. A turn of the event loop
                # after every FRAMES_PER_TURN messages handled: a frame already buffered is
                # handed over without yielding, so a client sending cheap requests fast
                # would hold the loop (with no frame buffered the next read yields anyway).
                pace = slots.reserve(principal, message_cost(message.data))
                if pace > 0:
                    await asyncio.sleep(pace)
                    run = 0
                if slots.full(principal):
                    await slots.room(principal)
                    run = 0
                if not client.writable:
                    break
                give_back = slots.take(principal)
                try:
                    _on_text(client, message.data, give_back)
                except Exception:
                    give_back()
                    log.exception("request_failed")
                    client.answer(None, error_reply("internal", "internal error"))
                run += 1
                if not _frame_waiting(ws):
                    run = 0  # the next read waits, and the others run meanwhile
                elif run >= FRAMES_PER_TURN:
                    await _one_turn()
                    run = 0
            elif message.type == WSMsgType.BINARY:
                # Refused, but paced like any message: a flood of them costs only its sender.
                await _paced(slots.reserve(principal, message_cost(message.data)))
                run = 0
                client.answer(None, error_reply("bad_request", "text frames only"))
            elif message.type in (WSMsgType.PING, WSMsgType.PONG):
                # A ping is answered (RFC 6455, 5.5.2) and a pong needs nothing (the
                # heartbeat counts any frame as an answer), each paced like any message.
                await _paced(slots.reserve(principal, message_cost(message.data)))
                run = 0
                if message.type == WSMsgType.PING and client.writable:
                    with contextlib.suppress(ConnectionError):
                        await ws.pong(message.data)
    finally:
        expiry.cancel()
        request.app[CLIENTS].discard(client)
        runtime.metrics.connections.dec()
        client.drop_subscriptions()
    return ws


FRAMES = web.AppKey("frames", FrameCache)
CLIENTS: web.AppKey[set[Client]] = web.AppKey("clients")
SLOTS = web.AppKey("slots", PrincipalSlots)
READERS = web.AppKey("catch_up_readers", asyncio.Semaphore)
DUE_WRITES = web.AppKey("due_writes", DueWrites)


async def close_clients(app: web.Application) -> None:
    """On shutdown, close every websocket with 1001 (going away): tablets reconnect and
    resume with ``since`` instead of waiting for a dead connection to time out."""
    clients = app[CLIENTS].copy()
    await asyncio.gather(
        *(
            c.ws.close(code=WSCloseCode.GOING_AWAY, message=b"server shutting down")
            for c in clients
        ),
        return_exceptions=True,
    )


def authenticated(
    handler: Callable[[web.Request, Principal], Any],
) -> Callable[[web.Request], Any]:
    """An HTTP handler run only for a valid token's principal (401 otherwise) on a
    connection it may hold (429 ``busy`` otherwise, :func:`admitted`)."""

    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            who = principal_of(request)
        except AuthError as e:
            return unauthorized(str(e))
        refused = admitted(request, who)
        if refused is not None:
            return refused
        response: web.StreamResponse = await handler(request, who)
        return response

    return wrapped


async def post_command(request: web.Request, who: Principal) -> web.Response:
    runtime = request.app[RUNTIME]
    if (
        request.content_length is not None
        and request.content_length > runtime.settings.max_frame_bytes
    ):
        return web.json_response(error_reply("bad_request", "command too large"), status=413)
    try:
        body = await request.read()
    except web.HTTPException:
        raise  # aiohttp's own answer (413 for a body over the limit)
    except Exception:  # a body that cannot be decoded (a Content-Encoding it does not have)
        return web.json_response(
            error_reply("bad_request", "the body cannot be read as sent"), status=400
        )
    slots = request.app[SLOTS]
    principal = (who.role, who.sub)
    # Paced before it is parsed: parsing is what a flood of large bodies would cost.
    if slots.full(principal) or slots.reserve(principal, message_cost(body)) > 0:
        limit = runtime.settings.principal_in_flight
        busy = error_reply(
            "busy", f"this client has {limit} commands in flight or sends too fast; retry"
        )
        runtime.metrics.refused("busy")
        return web.json_response({"re": None, **busy})
    msg_id: Any = None
    try:
        msg = parse_json(body, check=False)
        msg_id = request_id(msg)
        check_request(body, msg)
        op = req_field(msg, "op", str)
        if op in STREAM_OPS:
            raise ProtocolError("bad_request", f"{op} is a websocket op")
    except ProtocolError as e:
        return web.json_response({"re": msg_id, **error_reply(e.code, e.message)})
    give_back = slots.take(principal)
    try:
        reply = await dispatch(runtime, who, msg)
    finally:
        give_back()
    return web.json_response({"re": msg_id, **reply})
