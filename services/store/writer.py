"""The append writer: gathers the appends that are ready, from every actor, into one
pipeline (docs/ARCHITECTURE.md, "Actors, group commit, reload": never one round trip per event).

Each actor still appends its own batch with its own script call (one stream, one writer);
the writer only shares the trip to Redis between actors whose appends are ready at the
same time. With ``appendfsync always`` Redis fsyncs once per event-loop turn, so appends
that travel together are also made durable together.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.cluster import RedisCluster

from services.store import replication

MAX_PIPELINE = 64
"""Script calls one pipeline may carry."""

Call = tuple[Sequence[str], Sequence[Any], "asyncio.Future[Any]"]


class AppendWriter:
    """Runs the append script for every caller, pipelining the calls that are ready."""

    def __init__(
        self,
        client: aioredis.Redis | RedisCluster,
        source: str,
        *,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
    ) -> None:
        self.client = client
        self.source = source
        self.script = client.register_script(source)
        self.queue: asyncio.Queue[Call] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.in_flight = 0
        """Direct script calls on their way (the writer takes the others)."""
        self.pipelines = hasattr(client, "connection_pool")
        """A cluster client refuses scripts in pipelines: there, every call goes direct."""
        self.wait_replicas = wait_replicas
        """Replicas that must confirm each call (``WAIT``) before it is answered; 0: none."""
        self.wait_timeout_ms = wait_timeout_ms

    def start(self) -> None:
        self.task = asyncio.create_task(self._run(), name="append-writer")

    async def stop(self) -> None:
        task, self.task = self.task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        while not self.queue.empty():
            _keys, _args, fut = self.queue.get_nowait()
            if not fut.done():
                fut.set_exception(redis.exceptions.ConnectionError("the append writer stopped"))

    async def call(self, keys: Sequence[str], args: Sequence[Any]) -> Any:
        """Run the script. When no other append is on its way, directly (no extra hop);
        when others are, through the writer's next pipeline with whatever else is ready."""
        if self.task is None or not self.pipelines or (self.in_flight == 0 and self.queue.empty()):
            self.in_flight += 1
            try:
                if self.wait_replicas:
                    return await self._replicated(keys, args)
                return await self.script(keys=keys, args=args)
            finally:
                self.in_flight -= 1
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((keys, args, fut))
        return await fut

    async def _run(self) -> None:
        while True:
            calls = [await self.queue.get()]
            while len(calls) < MAX_PIPELINE and not self.queue.empty():
                calls.append(self.queue.get_nowait())
            self.in_flight += 1
            try:
                results = await self._execute(calls)
            except asyncio.CancelledError:
                _fail(calls, redis.exceptions.ConnectionError("the append writer stopped"))
                raise
            except Exception as e:  # the fate of these calls is unknown: each caller reloads
                _fail(calls, e)
                continue
            finally:
                self.in_flight -= 1
            for (_keys, _args, fut), result in zip(calls, results, strict=True):
                if fut.done():
                    continue
                if isinstance(result, Exception):
                    fut.set_exception(result)
                else:
                    fut.set_result(result)

    async def _execute(self, calls: list[Call]) -> list[Any]:
        results = await self._pipeline(calls)
        missing = [
            i for i, r in enumerate(results) if isinstance(r, redis.exceptions.NoScriptError)
        ]
        if missing:
            # Redis restarted and lost its script cache; a NOSCRIPT call ran nothing.
            await self.client.script_load(self.source)
            again = await self._pipeline([calls[i] for i in missing])
            for i, result in zip(missing, again, strict=True):
                results[i] = result
        return results

    async def _pipeline(self, calls: list[Call]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        for keys, args, _fut in calls:
            pipe.evalsha(self.script.sha, len(keys), *keys, *args)
        if self.wait_replicas:
            # One WAIT at the end, on the pipeline's connection, covers all its calls.
            wait = replication.wait_command(self.wait_replicas, self.wait_timeout_ms)
            pipe.execute_command(*wait)
        results: list[Any] = await pipe.execute(raise_on_error=False)
        if self.wait_replicas:
            results = replication.unconfirmed(results[:-1], results[-1], self.wait_replicas)
        return results

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


def _fail(calls: list[Call], error: BaseException) -> None:
    for _keys, _args, fut in calls:
        if not fut.done():
            fut.set_exception(error)
