"""The append writer: gathers the appends that are ready, from every actor, into pipelines,
several in flight at once (docs/ARCHITECTURE.md, "Actors, group commit, reload": never one
round trip per event).

Each actor still appends its own batch with its own script call (one stream, one writer,
at most one append of an actor on its way, so the order within a stream is the order of
its appends); the writer only shares the trips to Redis between actors whose appends are
ready at the same time. With ``appendfsync always`` Redis fsyncs once per event-loop turn,
so appends that reach it together, on one connection or several, are made durable together.

``PIPELINES`` lanes run side by side, each a task with a Redis connection of its own: while
Redis runs (and fsyncs) one lane's pipeline, another lane sends the appends that became
ready meanwhile, so the client and Redis work at the same time instead of taking turns.

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
a redis-py ``Connection`` driven directly (below), 1 / 50    62 / 31 µs
==========================================================  ================

The per-call cost of redis-py's command path is its machinery, not the protocol: a pool
checkout and release per command, ``asyncio.wait_for`` (a task) around each write and a
timeout context around each read, retries, event dispatch and observability hooks, and
the encoding of every argument. A lane keeps one redis-py ``Connection`` for itself (so
connecting, AUTH, TLS and the hiredis reply parser stay redis-py's), packs the commands
with ``hiredis.pack_command`` (1.7 µs for an append's EVALSHA, against 4.7 µs in Python),
writes a pipeline with one call and reads its replies with ``Connection.read_response``;
one timeout covers the whole pipeline. That comes within about 10 µs of the raw protocol,
so no other client is needed. Redis itself spends about 40-50 µs of CPU on each call.

The writer as a whole, this one against the one before it (one pipeline in flight, a
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
"""Longest a pipeline may take from its write to its last reply; past it the lane drops
its connection and the pipeline's calls without a reply fail with a timeout (their fate
unknown: each caller reloads)."""


class _Call:
    """One queued script call: its EVALSHA command, packed, and its caller's future."""

    __slots__ = ("fut", "packed")

    def __init__(self, packed: bytes, fut: asyncio.Future[Any]) -> None:
        self.packed = packed
        self.fut = fut


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
        self.idle: deque[asyncio.Future[None]] = deque()
        """The wake-ups of the lanes waiting for calls."""
        self.lanes: list[asyncio.Task[None]] = []
        self.connections: list[AbstractConnection] = []
        self.in_flight = 0
        """Pipelines on their way to Redis and back."""
        self.pipelined = hasattr(client, "connection_pool")
        """A cluster client refuses scripts in pipelines: there, every call goes direct."""
        self.wait_replicas = wait_replicas
        """Replicas that must confirm each call (``WAIT``) before it is answered; 0: none."""
        self.wait_timeout_ms = wait_timeout_ms
        self._wait = hiredis.pack_command(replication.wait_command(wait_replicas, wait_timeout_ms))

    def start(self) -> None:
        """Start the lanes (none for a cluster client: its calls go direct)."""
        if self.lanes or not self.pipelined:
            return
        assert isinstance(self.client, aioredis.Redis)
        pool = self.client.connection_pool
        # One timeout per pipeline instead of redis-py's timer per write and per read.
        kwargs = {**pool.connection_kwargs, "socket_timeout": None}
        for i in range(self.pipelines):
            conn = pool.connection_class(**kwargs)
            self.connections.append(conn)
            self.lanes.append(asyncio.create_task(self._lane(conn), name=f"append-lane-{i}"))

    async def stop(self) -> None:
        """Stop the lanes: the calls they carry and the queued calls fail with a
        ``ConnectionError`` (their fate unknown to the callers, who reload)."""
        lanes, self.lanes = self.lanes, []
        await cancel_and_wait(lanes)
        self.idle.clear()
        queued, self.queue = self.queue, deque()
        self.queued_bytes = 0
        _fail(list(queued), redis.exceptions.ConnectionError("the append writer stopped"))
        connections, self.connections = self.connections, []
        for conn in connections:
            with contextlib.suppress(Exception):  # a connection already gone is fine
                await conn.disconnect()

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
        self._wake()
        return await fut

    def _wake(self) -> None:
        """Wake one idle lane (each queued call wakes one: a burst wakes them all)."""
        while self.idle:
            wake = self.idle.popleft()
            if not wake.done():
                wake.set_result(None)
                return

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

    async def _lane(self, conn: AbstractConnection) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self.queue:
                wake: asyncio.Future[None] = loop.create_future()
                self.idle.append(wake)
                await wake
                continue
            calls = self._take()
            if self.queue:
                self._wake()  # the rest goes at once, on another connection
            self.in_flight += 1
            try:
                results = await self._execute(conn, calls)
            except asyncio.CancelledError:
                _fail(calls, redis.exceptions.ConnectionError("the append writer stopped"))
                raise
            finally:
                self.in_flight -= 1
            for call, result in zip(calls, results, strict=True):
                if call.fut.done():
                    continue
                if isinstance(result, Exception):
                    call.fut.set_exception(result)
                else:
                    call.fut.set_result(result)

    async def _execute(self, conn: AbstractConnection, calls: list[_Call]) -> list[Any]:
        """The calls' replies (a refusal or failure as its exception), in order."""
        results = await self._replies(conn, calls)
        missing = [
            i for i, r in enumerate(results) if isinstance(r, redis.exceptions.NoScriptError)
        ]
        if missing:
            # Redis restarted and lost its script cache; a NOSCRIPT call ran nothing.
            try:
                await self.client.script_load(self.source)
            except Exception as e:
                for i in missing:
                    results[i] = e
                return results
            again = await self._replies(conn, [calls[i] for i in missing])
            for i, result in zip(missing, again, strict=True):
                results[i] = result
        return results

    async def _replies(self, conn: AbstractConnection, calls: list[_Call]) -> list[Any]:
        """One pipeline's replies; when the connection fails partway, the replies that
        came and the failure for each call that got none (their fate is unknown)."""
        replies: list[Any] = []
        try:
            async with asyncio.timeout(PIPELINE_TIMEOUT_SECONDS):
                await self._pipeline(conn, calls, replies)
        except asyncio.CancelledError:
            await conn.disconnect(nowait=True)
            raise
        except Exception as e:
            # The connection's state is unknown: drop it (the next pipeline reconnects).
            await conn.disconnect(nowait=True)
            error: Exception = e
            if isinstance(e, TimeoutError):
                error = redis.exceptions.TimeoutError("the append pipeline timed out")
            replies += [error] * (len(calls) - len(replies))
        return replies

    async def _pipeline(self, conn: AbstractConnection, calls: list[_Call], out: list[Any]) -> None:
        """Write one pipeline of the calls at once and read its replies into ``out`` (an
        error reply as its exception). The one place a pipeline is built and executed: a
        command that must follow the appends on the same connection goes here."""
        packed = b"".join(call.packed for call in calls)
        if self.wait_replicas:
            # One WAIT at the end, on the pipeline's connection, covers all its calls.
            packed += self._wait
        await conn.send_packed_command(packed)
        # Without WAIT each reply stands as it comes (a connection lost partway keeps the
        # replies that came); with it, none stands before the WAIT's answer.
        replies: list[Any] = [] if self.wait_replicas else out
        for _ in calls:
            try:
                replies.append(await conn.read_response())
            except redis.exceptions.ResponseError as e:
                replies.append(e)
        if self.wait_replicas:
            try:
                wait_reply: Any = await conn.read_response()
            except redis.exceptions.ResponseError as e:
                wait_reply = e
            out += replication.unconfirmed(replies, wait_reply, self.wait_replicas)

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
