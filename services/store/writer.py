"""The append writer: gathers the appends that are ready, from every actor, into pipelines,
several in flight at once (docs/ARCHITECTURE.md, "Actors, group commit, reload": never one
round trip per event).

Each actor still appends its own batch with its own script call (one stream, one writer,
at most one append of an actor on its way, so the order within a stream is the order of
its appends); the writer only shares the trips to Redis between actors whose appends are
ready at the same time. With ``appendfsync always`` Redis fsyncs once per event-loop turn,
so appends that reach it together, on one connection or several, are made durable together.

``PIPELINES`` lanes run side by side, each with a Redis connection of its own and one
pipeline in flight at most: while Redis runs (and fsyncs) one lane's pipeline, another lane
sends the appends that became ready meanwhile, so the client and Redis work at the same
time instead of taking turns.

Why the lanes do not call redis-py's ``Redis.evalsha`` or its ``Pipeline``: measured on this
project's 2-core machine (client CPU per script call, ``time.process_time``, one BetPlaced
append per call, 50 streams; median figures of several runs, the machine shared):

==========================================================  ================
path                                                        CPU per call
==========================================================  ================
``Script.__call__`` / ``Redis.evalsha``, one call at a time  185-260 µs
the same, 50 calls concurrent (50 pool connections)          150-160 µs
``Pipeline.execute`` of 1 call                               210-300 µs
``Pipeline.execute`` of 50 calls                             39-53 µs
raw asyncio protocol + ``hiredis.Reader``, one at a time     50-70 µs
raw asyncio protocol + ``hiredis.Reader``, 50 at once        18-24 µs
a redis-py ``Connection`` driven directly, 1 / 50           62 / 31 µs
==========================================================  ================

The per-call cost of redis-py's command path is its machinery, not the protocol: a pool
checkout and release per command, ``asyncio.wait_for`` (a task) around each write and a
timeout context around each read, retries, event dispatch and observability hooks, and
the encoding of every argument. A lane lets redis-py open its connection (so connecting,
AUTH, TLS and the database stay redis-py's), then takes the connection's transport over
with a protocol of its own (:class:`_Link`): commands are packed with
``hiredis.pack_command`` (1.7 µs for an append's EVALSHA, against 4.7 µs in Python), a
pipeline is written with one call, and its replies are parsed by a ``hiredis.Reader`` in
the transport's callback as they arrive; each caller's future is answered there, with no
task between the socket and the caller, and one timer covers the pipeline. Redis itself
spends about 40-100 µs of CPU on each call (``INFO commandstats``; machines differ).

Before that, a lane was a task driving its redis-py ``Connection`` (``send_packed_command``
and ``read_response``, through redis-py's stream reader) under one ``asyncio.timeout``
per pipeline. Against it, in one process, interleaved pairs on a later, slower 2-core
machine (two runs, medians of 4 and of 3 interleaved pairs; the runs of
:func:`bench.store.concurrent` and :func:`bench.store.sequential`):

==================================  =================  =================
shape                               task lanes         protocol
==================================  =================  =================
50 writers, 1 event per append      8,760 / 9,741/s    11,923 / 10,100/s
the same, client CPU per event      54.6 / 54.1 µs     40.2 / 45.3 µs
50 writers, 8 events per append     19,155 / 19,411    20,692 / 22,318
the same, client CPU per event      13.7 / 13.8 µs     10.9 / 11.0 µs
one sequential writer               1,695 / 1,565/s    1,705 / 1,374/s
==================================  =================  =================

The sequential writer gains nothing measurable: most of its client time is the ``write``
system call that wakes Redis, and Redis's fsync of its growing file (about 400 µs there,
against 280 µs for a file rewritten in place, as SQLite's WAL is) dominates. Answering the
callers from the transport callback first made the 50 writers 6-14 % slower: a pipeline
went as soon as one lane's callers had queued their next appends, before those of a lane
answered later in the same turn, so fewer appends shared each fsync. Sending two callback
steps later (:meth:`AppendWriter._dispatch_soon`) gave the figures above.

The writer of lanes, against the one before it (one pipeline in flight, a
direct ``Script`` call when nothing else was on its way), measured side by side in one run
with 50 streams (client CPU per event including ``EventStore.append``; appends per fsync
counted with ``perf stat`` on Redis's ``fdatasync`` calls):

==============================  ====================  ====================
shape                           before                now (4 pipelines)
==============================  ====================  ====================
1 event per append, CPU         65-74 µs              32-36 µs
1 event per append, per fsync   10 appends            27 appends
8 events per append, per fsync  29 events             86-96 events
one sequential writer, CPU      258-322 µs            147-164 µs
==============================  ====================  ====================
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Sequence
from typing import Any

import hiredis
import redis.asyncio as aioredis
import redis.exceptions
from redis._parsers.base import BaseParser
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection

from services.store import replication
from services.tasks import cancel_and_wait

PIPELINES = 4
"""Pipelines the append writer keeps in flight at once, each on a Redis connection of its
own (opened beside the client's pool). More lets the client send while Redis runs and
fsyncs the pipelines before, and lets Redis take more appends in one event-loop turn (up to
``PIPELINE_BYTES`` from each connection), so more of them share one fsync."""
MAX_PIPELINE = 64
"""Script calls one pipeline may carry."""
PIPELINE_BYTES = 16 * 1024
"""Bytes of commands a free lane puts in one pipeline while the free lanes can carry all
that is queued at that size (a call larger than that goes alone); past it the queued calls
are shared evenly among the free lanes, all sent at once. Redis reads at most 16 KiB from
a connection per turn of its event loop and, with ``appendfsync always``, fsyncs after
each turn: a larger pipeline is read in several turns with an fsync between, while
pipelines of at most that size on several connections are read in one turn (measured with
50 appends of one event ready: 12.5 appends per fsync in one pipeline, 23-28 spread over
four). More than fits is better sent at once than left waiting for a lane: Redis then
works through it without waiting for a round trip to the client."""
PIPELINE_TIMEOUT_SECONDS = 10.0
"""Longest a pipeline may take from its write to its last reply (connecting included);
past it the lane drops its connection and the pipeline's calls without a reply fail with a
timeout (their fate unknown: each caller reloads)."""


class _Call:
    """One queued script call: its EVALSHA command, packed, and its caller's future."""

    __slots__ = ("fut", "packed")

    def __init__(self, packed: bytes, fut: asyncio.Future[Any]) -> None:
        self.packed = packed
        self.fut = fut


def _reply_reader() -> Any:
    """A RESP parser whose error replies come out as redis-py's exceptions (``NOSCRIPT`` as
    ``NoScriptError``, the rest as ``ResponseError``), as redis-py's own parser gives them."""
    return hiredis.Reader(
        protocolError=redis.exceptions.InvalidResponse, replyError=BaseParser.parse_error
    )


class _Link(asyncio.Protocol):
    """The protocol of one open lane connection: hands what arrives to its lane, which
    ignores a link it has already dropped (a closed connection's last callbacks may come
    after the lane reopened)."""

    def __init__(self, lane: _Lane, transport: asyncio.WriteTransport, inner: Any) -> None:
        self.lane = lane
        self.transport = transport
        self.inner = inner
        """redis-py's protocol of the connection, still told when it closes (so that its
        ``disconnect`` returns)."""
        self.reader = _reply_reader()

    def data_received(self, data: bytes) -> None:
        self.lane.received(self, data)

    def eof_received(self) -> bool | None:
        return None  # close: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        if self.inner is not None:
            self.inner.connection_lost(exc)
            self.inner = None
        self.lane.lost(self)


class _Lane:
    """One connection of the writer, carrying one pipeline at a time. redis-py opens it
    (connecting, AUTH, TLS and the database stay redis-py's); then a :class:`_Link` takes
    its transport over, so the pipeline is written with one call and each reply is parsed
    in the transport's own callback the moment it arrives, with no task in between."""

    def __init__(self, writer: AppendWriter, name: str) -> None:
        self.writer = writer
        self.name = name
        self.conn: AbstractConnection | None = None
        self.link: _Link | None = None
        """The open connection's protocol (None: closed; the next pipeline reopens it)."""
        self.calls: list[_Call] = []
        """The pipeline in flight (empty: the lane is free)."""
        self.replies: list[Any] = []
        self.expected = 0
        self.timer: asyncio.TimerHandle | None = None
        self.opening: asyncio.Task[None] | None = None

    def begin(self, calls: list[_Call], packed: bytes, expected: int) -> None:
        """Carry ``calls`` (``packed``, answered by ``expected`` replies): write them now, or
        once the connection is (re)opened."""
        self.calls = calls
        self.replies = []
        self.expected = expected
        loop = asyncio.get_running_loop()
        self.timer = loop.call_later(PIPELINE_TIMEOUT_SECONDS, self._timed_out)
        if self.link is not None:
            self.link.transport.write(packed)
        else:
            self.opening = loop.create_task(self._open_and_write(packed), name=self.name)

    async def _open_and_write(self, packed: bytes) -> None:
        try:
            link = await self._open()
        except Exception as e:  # refused, unreachable, AUTH failed: these calls fail
            self.opening = None
            self._fail_rest(e)
            return
        self.opening = None
        if self.calls:
            link.transport.write(packed)

    async def _open(self) -> _Link:
        old, self.conn = self.conn, None
        if old is not None:
            with contextlib.suppress(Exception):  # already gone is fine
                await old.disconnect(nowait=True)
        conn = self.writer.new_connection()
        self.conn = conn
        await conn.connect()  # type: ignore[no-untyped-call]
        stream = getattr(conn, "_writer", None)
        if not isinstance(stream, asyncio.StreamWriter):  # pragma: no cover - redis-py changed
            raise RuntimeError("redis-py's connection keeps no asyncio StreamWriter")
        transport = stream.transport
        link = _Link(self, transport, transport.get_protocol())
        transport.set_protocol(link)
        self.link = link
        return link

    def received(self, link: _Link, data: bytes) -> None:
        if link is not self.link:
            return
        reader = link.reader
        try:
            reader.feed(data)
            while self.calls:
                reply = reader.gets()
                if reply is False:
                    return
                self.replies.append(reply)
                if len(self.replies) == self.expected:
                    self._complete()
            if reader.gets() is not False:
                raise redis.exceptions.InvalidResponse("a reply no call of this lane asked for")
        except redis.exceptions.RedisError as e:
            self._drop(e)

    def lost(self, link: _Link) -> None:
        if link is not self.link:
            return
        self.link = None
        self._fail_rest(redis.exceptions.ConnectionError("the connection to Redis was lost"))

    def _complete(self) -> None:
        calls, replies = self.calls, self.replies
        self._clear()
        writer = self.writer
        if writer.wait_replicas:
            # None of the calls stands before the closing WAIT's answer.
            replies = replication.unconfirmed(replies[:-1], replies[-1], writer.wait_replicas)
        writer.finished(calls, replies)

    def _timed_out(self) -> None:
        self.timer = None
        self._drop(redis.exceptions.TimeoutError("the append pipeline timed out"))

    def _drop(self, error: Exception) -> None:
        """The connection's state is unknown: close it (the next pipeline reopens it), and
        fail the calls still without a reply."""
        link, self.link = self.link, None
        if link is not None:
            link.transport.abort()
        self._fail_rest(error)

    def _fail_rest(self, error: Exception) -> None:
        """Fail the pipeline's calls that got no reply; the replies that came stand (with
        WAIT none does: its answer never came)."""
        if not self.calls:
            return
        calls, replies = self.calls, self.replies
        self._clear()
        if self.opening is not None:
            self.opening.cancel()
            self.opening = None
        kept = [] if self.writer.wait_replicas else replies[: len(calls)]
        self.writer.finished(calls, kept + [error] * (len(calls) - len(kept)))

    def _clear(self) -> None:
        self.calls = []
        self.replies = []
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    async def close(self, error: BaseException) -> None:
        """Stop: fail the pipeline in flight with ``error`` and drop the connection."""
        calls = self.calls
        self._clear()
        _fail(calls, error)
        if self.opening is not None:
            await cancel_and_wait([self.opening])
            self.opening = None
        self.link = None
        conn, self.conn = self.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a connection already gone is fine
                await conn.disconnect()


class AppendWriter:
    """Runs the append script for every caller, pipelining the calls that are ready on
    ``pipelines`` connections at once."""

    def __init__(
        self,
        client: aioredis.Redis | RedisCluster,
        source: str,
        pipelines: int = PIPELINES,
        *,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
    ) -> None:
        if pipelines < 1:
            raise ValueError("the append writer needs at least one pipeline")
        self.client = client
        self.source = source
        self.script = client.register_script(source)
        self.pipelines = pipelines
        self.queue: deque[_Call] = deque()
        """Calls waiting for a lane."""
        self.queued_bytes = 0
        """The size of the queued calls' commands."""
        self.lanes: list[_Lane] = []
        self.in_flight = 0
        """Pipelines on their way to Redis and back."""
        self._dispatch_due = False
        self.reloads: set[asyncio.Task[None]] = set()
        """Script loads under way after a ``NOSCRIPT`` (their calls then go again)."""
        self.pipelined = hasattr(client, "connection_pool")
        """A cluster client refuses scripts in pipelines: there, every call goes direct."""
        self.wait_replicas = wait_replicas
        """Replicas that must confirm each call (``WAIT``) before it is answered; 0: none."""
        self.wait_timeout_ms = wait_timeout_ms
        self._wait = hiredis.pack_command(replication.wait_command(wait_replicas, wait_timeout_ms))

    @property
    def connections(self) -> list[AbstractConnection]:
        """The lanes' open redis-py connections."""
        return [lane.conn for lane in self.lanes if lane.conn is not None]

    def new_connection(self) -> AbstractConnection:
        """A connection of the client's kind and settings, outside its pool, for a lane."""
        assert isinstance(self.client, aioredis.Redis)
        pool = self.client.connection_pool
        # One timeout per pipeline instead of redis-py's timer per write and per read.
        return pool.connection_class(**{**pool.connection_kwargs, "socket_timeout": None})

    def start(self) -> None:
        """Start the lanes (none for a cluster client: its calls go direct)."""
        if self.lanes or not self.pipelined:
            return
        self.lanes = [_Lane(self, f"append-lane-{i}") for i in range(self.pipelines)]

    async def stop(self) -> None:
        """Stop the lanes: the calls they carry and the queued calls fail with a
        ``ConnectionError`` (their fate unknown to the callers, who reload)."""
        stopped = redis.exceptions.ConnectionError("the append writer stopped")
        lanes, self.lanes = self.lanes, []
        reloads, self.reloads = list(self.reloads), set()
        await cancel_and_wait(reloads)
        queued, self.queue = self.queue, deque()
        self.queued_bytes = 0
        _fail(list(queued), stopped)
        for lane in lanes:
            await lane.close(stopped)
        self.in_flight = 0

    async def call(self, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run the script: through the next free lane's pipeline with whatever else is
        ready, or, when the writer is not running (or the client is a cluster's), directly
        with redis-py's script call."""
        if not self.lanes:
            if self.wait_replicas:
                return await self._replicated(keys, args)
            return await self.script(keys=keys, args=args)
        packed = hiredis.pack_command(("EVALSHA", self.script.sha, len(keys), *keys, *args))
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.queue.append(_Call(packed, fut))
        self.queued_bytes += len(packed)
        if not self._dispatch_due:
            # One step: the other callers running in this turn queue theirs before it.
            self._dispatch_due = True
            asyncio.get_running_loop().call_soon(self._dispatch_now)
        return await fut

    def _dispatch_soon(self) -> None:
        """After a lane's pipeline: send what is queued once every callback already due has
        run, and those they make due: the callers just answered (by any lane whose replies
        came in the same turn) make their next appends first, and these join the same
        pipelines and share Redis's fsync. (Two steps: a lane answers its callers from its
        transport callback, so callers answered by a later lane in the same turn are queued
        after the first step. A call made with nothing due is sent one step later
        (:meth:`call`): the callers of that turn have queued theirs by then, and each step
        is a turn of the event loop every command waits for, a few milliseconds when the
        loop is busy. That one step stands when a pipeline ends after the call in the same
        turn: the callers it answered then follow in the next pipeline. Holding the call a
        second step so that they join it gave 3-4 % fewer bets a second in the closed
        loop.)"""
        if not self._dispatch_due:
            self._dispatch_due = True
            asyncio.get_running_loop().call_soon(self._dispatch_next)

    def _dispatch_next(self) -> None:
        asyncio.get_running_loop().call_soon(self._dispatch_now)

    def _dispatch_now(self) -> None:
        self._dispatch_due = False
        self._dispatch()

    def _dispatch(self) -> None:
        """Send the queued calls on the free lanes, a pipeline each, while both last."""
        while self.queue:
            lane = next((lane for lane in self.lanes if not lane.calls), None)
            if lane is None:
                return
            self._send(lane, self._take())

    def _take(self) -> list[_Call]:
        """The next pipeline: at least one queued call, then more up to ``MAX_PIPELINE``
        and this lane's share of the queued bytes (``PIPELINE_BYTES``, or an even share
        among the free lanes when they could not carry all at that size); the rest waits
        for the next free lane."""
        queue = self.queue
        free = max(1, self.pipelines - self.in_flight)  # this lane and the others not in flight
        share = max(PIPELINE_BYTES, -(-self.queued_bytes // free))
        first = queue.popleft()
        calls = [first]
        size = len(first.packed)
        while queue and len(calls) < MAX_PIPELINE and size + len(queue[0].packed) <= share:
            call = queue.popleft()
            calls.append(call)
            size += len(call.packed)
        self.queued_bytes -= size
        return calls

    def _send(self, lane: _Lane, calls: list[_Call]) -> None:
        """Put one pipeline of the calls on ``lane``. The one place a pipeline is built: a
        command that must follow the appends on the same connection goes here."""
        packed = b"".join(call.packed for call in calls)
        expected = len(calls)
        if self.wait_replicas:
            # One WAIT at the end, on the pipeline's connection, covers all its calls.
            packed += self._wait
            expected += 1
        self.in_flight += 1
        lane.begin(calls, packed, expected)

    def finished(self, calls: list[_Call], results: list[Any]) -> None:
        """A lane's pipeline is over: answer each call (a refusal or failure as its
        exception), send again the calls Redis had no script for, and the next pipeline."""
        self.in_flight -= 1
        missing: list[_Call] = []
        for call, result in zip(calls, results, strict=True):
            if isinstance(result, redis.exceptions.NoScriptError):
                missing.append(call)
            elif call.fut.done():
                continue
            elif isinstance(result, BaseException):
                call.fut.set_exception(result)
            else:
                call.fut.set_result(result)
        if missing:
            # Redis restarted and lost its script cache; a NOSCRIPT call ran nothing.
            task = asyncio.get_running_loop().create_task(self._reload(missing))
            self.reloads.add(task)
            task.add_done_callback(self.reloads.discard)
        self._dispatch_soon()

    async def _reload(self, calls: list[_Call]) -> None:
        """Load the script again, then put ``calls`` back at the front of the queue (each
        actor has one append on its way at most, so no stream's order changes)."""
        try:
            await self.client.script_load(self.source)
        except Exception as e:
            _fail(calls, e)
            return
        if not self.lanes:
            _fail(calls, redis.exceptions.ConnectionError("the append writer stopped"))
            return
        for call in reversed(calls):
            self.queue.appendleft(call)
            self.queued_bytes += len(call.packed)
        self._dispatch_soon()

    async def _replicated(self, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """One call and its WAIT on one connection (of the slot's master on a cluster)."""
        if isinstance(self.client, RedisCluster):
            command = ("EVALSHA", self.script.sha, len(keys), *keys, *args)
            [reply] = await replication.call_on_master(
                self.client,
                keys[0],
                [command],
                self.wait_replicas,
                self.wait_timeout_ms,
                source=self.source,
            )
            return reply
        return await replication.call_single(
            self.client,
            self.script.sha,
            self.source,
            keys,
            args,
            self.wait_replicas,
            self.wait_timeout_ms,
        )


def _fail(calls: list[_Call], error: BaseException) -> None:
    for call in calls:
        if not call.fut.done():
            call.fut.set_exception(error)
