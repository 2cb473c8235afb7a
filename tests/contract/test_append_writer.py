"""The append writer (services/store/writer.py) on a real Redis: appends of many streams that
are ready together travel in pipelines, several in flight at once on connections of their
own; each call keeps its own all-or-nothing result, a failed pipeline fails only its own
calls, stopping fails what is in flight, and a Redis that lost its script cache is handled.

Pipelines are held in flight with ``CLIENT PAUSE … WRITE`` (Redis runs no script until
``CLIENT UNPAUSE``; this test's own client, which only reads, goes on meanwhile)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis
import redis.exceptions

from events.cage import ChipsIssued
from services.store.redis_store import (
    Appended,
    BalanceMove,
    EventStore,
    Head,
    InsufficientFunds,
    VersionConflict,
)
from services.store.verify import verify_all
from services.store.writer import PIPELINE_BYTES, AppendWriter
from tests.contract.test_event_store import chain, write


@pytest.fixture
async def piped(store: EventStore) -> AsyncIterator[EventStore]:
    store.writer.start()
    yield store
    await store.writer.stop()


async def test_concurrent_appends_share_pipelines_and_each_gets_its_own_result(
    piped: EventStore,
) -> None:
    streams = [f"table:t-{i}" for i in range(30)]

    async def append_three(stream: str) -> list[object]:
        results: list[object] = []
        head = Head(0)
        for n in range(3):
            [env] = chain([ChipsIssued(player="p", amount=n + 1)], stream, head)
            results.append(await piped.append(stream, head, [write(f"{stream}-{n}", [env])]))
            head = Head(env.seq, env.hash)
        return results

    outcomes = await asyncio.gather(*(append_three(s) for s in streams))
    assert all(isinstance(o, Appended) for got in outcomes for o in got)
    assert not piped.writer.queue
    for stream in streams:
        assert (await piped.head(stream)).version == 3
    assert all(r.ok for r in await verify_all(piped))


async def test_a_refused_append_in_a_shared_pipeline_writes_nothing(piped: EventStore) -> None:
    stale = Head(5)  # not the stream's version: refused
    [good] = chain([ChipsIssued(player="p", amount=1)], "cage")
    [bad] = chain([ChipsIssued(player="p", amount=2)], "table:x", stale)
    [poor] = chain([ChipsIssued(player="q", amount=3)], "table:y")
    debit = [BalanceMove(player="nobody", delta=-1)]
    results = await asyncio.gather(
        piped.append("cage", Head(0), [write("g", [good])]),
        piped.append("table:x", stale, [write("b", [bad])]),
        piped.append("table:y", Head(0), [write("p", [poor], debit)]),
    )
    assert isinstance(results[0], Appended)
    assert isinstance(results[1], VersionConflict) and results[1].version == 0
    assert isinstance(results[2], InsufficientFunds) and results[2].player == "nobody"
    assert (await piped.head("table:x")).version == 0
    assert (await piped.head("table:y")).version == 0


async def test_a_redis_that_lost_its_scripts_is_served_again(
    piped: EventStore, redis_client: aioredis.Redis
) -> None:
    await redis_client.script_flush()
    streams = [f"table:s-{i}" for i in range(10)]
    envs = {s: chain([ChipsIssued(player="p", amount=1)], s) for s in streams}
    results = await asyncio.gather(
        *(piped.append(s, Head(0), [write(s, envs[s])]) for s in streams)
    )
    assert all(isinstance(r, Appended) for r in results)
    assert all(r.ok for r in await verify_all(piped))


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait (a bounded number of loop turns) for the writer or Redis to reach a state."""
    for _ in range(2000):
        if await check():
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"never: {what}")


async def _eq(got: Awaitable[int], want: int) -> bool:
    return await got == want


async def _now(value: bool) -> bool:
    return value


async def held(client: aioredis.Redis) -> int:
    """Connections whose script calls Redis holds (paused) right now."""
    return sum(1 for c in await client.client_list() if "b" in c["flags"])


@pytest.fixture
async def paused(redis_client: aioredis.Redis) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """Pause Redis's writes now; the fixture's value unpauses them (also at the end)."""

    async def unpause() -> None:
        await redis_client.execute_command("CLIENT", "UNPAUSE")

    await redis_client.execute_command("CLIENT", "PAUSE", 30_000, "WRITE")
    try:
        yield unpause
    finally:
        await unpause()


def appends(store: EventStore, n: int, first: int = 0) -> list[asyncio.Task[object]]:
    """``n`` appends of one command each, to streams of their own (``table:w-<first>``
    on), as tasks."""

    async def one(i: int) -> object:
        stream = f"table:w-{i:03d}"
        [env] = chain([ChipsIssued(player="p", amount=1000 + i)], stream)
        return await store.append(stream, Head(0), [write(f"{stream}-c", [env])])

    return [asyncio.create_task(one(i)) for i in range(first, first + n)]


def lanes(store: EventStore, n: int) -> AppendWriter:
    store.writer = AppendWriter(store.redis, store.writer.source, pipelines=n)
    store.writer.start()
    return store.writer


async def test_several_pipelines_are_in_flight_at_once_each_on_its_own_connection(
    store: EventStore, redis_client: aioredis.Redis, paused: Callable[[], Awaitable[None]]
) -> None:
    writer = lanes(store, 3)
    try:
        tasks = appends(store, 80)  # well over three pipelines' worth of bytes
        # Redis holds a pipeline from each of three connections at once.
        await until(lambda: _eq(held(redis_client), 3), "three pipelines held by Redis")
        assert writer.in_flight == 3
        assert not any(task.done() for task in tasks)
        # Calls made now wait for a free lane ...
        tasks += appends(store, 5, first=80)
        await until(lambda: _now(len(writer.queue) == 5), "five calls queued")
        assert writer.in_flight == 3
        await paused()
        results = await asyncio.gather(*tasks)
        assert all(isinstance(r, Appended) for r in results)
        assert not writer.queue and writer.in_flight == 0
        # ... and go when one is free.
        for i in range(85):
            assert (await store.head(f"table:w-{i:03d}")).version == 1
    finally:
        await writer.stop()
    assert all(r.ok for r in await verify_all(store))


def sizes_sent(writer: AppendWriter) -> list[int]:
    """The command bytes of each pipeline the writer sends from now on."""
    sent: list[int] = []
    real = writer._send

    def counted(lane: Any, calls: list[Any]) -> None:
        sent.append(sum(len(call.packed) for call in calls))
        real(lane, calls)

    writer._send = counted  # type: ignore[method-assign]
    return sent


async def test_a_burst_the_free_lanes_carry_goes_in_pipelines_of_at_most_pipeline_bytes(
    store: EventStore, redis_client: aioredis.Redis, paused: Callable[[], Awaitable[None]]
) -> None:
    writer = lanes(store, 4)
    sent = sizes_sent(writer)
    try:
        tasks = appends(store, 30)  # about 2 x PIPELINE_BYTES: two pipelines, not one
        await until(lambda: _now(bool(sent) and not writer.queue), "the burst sent")
        await until(lambda: _eq(held(redis_client), len(sent)), "Redis holding them")
        assert sum(sent) > PIPELINE_BYTES
        assert 2 <= len(sent) < 4  # two lanes' worth (or three, as the calls divide)
        assert all(size <= PIPELINE_BYTES for size in sent)
        await paused()
        assert all(isinstance(r, Appended) for r in await asyncio.gather(*tasks))
    finally:
        await writer.stop()


async def test_a_burst_larger_than_the_free_lanes_carry_is_shared_among_them_at_once(
    store: EventStore, redis_client: aioredis.Redis, paused: Callable[[], Awaitable[None]]
) -> None:
    writer = lanes(store, 4)
    sent = sizes_sent(writer)
    try:
        tasks = appends(store, 200)  # over 4 x PIPELINE_BYTES
        # Nothing waits for a lane: all four pipelines carry everything, evenly.
        await until(lambda: _eq(held(redis_client), 4), "four pipelines held by Redis")
        assert not writer.queue and writer.in_flight == 4 and len(sent) == 4
        assert sum(sent) > 4 * PIPELINE_BYTES
        one_call = sum(sent) / 200
        assert max(sent) - min(sent) <= 2 * one_call
        await paused()
        assert all(isinstance(r, Appended) for r in await asyncio.gather(*tasks))
    finally:
        await writer.stop()
    assert all(r.ok for r in await verify_all(store))


async def test_a_failed_pipeline_fails_only_its_own_calls(
    store: EventStore, redis_client: aioredis.Redis, paused: Callable[[], Awaitable[None]]
) -> None:
    writer = lanes(store, 3)
    try:
        tasks = appends(store, 40)
        await until(lambda: _eq(held(redis_client), 3), "three pipelines held by Redis")
        # One lane's connection drops while Redis holds its pipeline: Redis never runs it.
        await writer.connections[0].disconnect()
        await until(lambda: _eq(held(redis_client), 2), "the dropped one gone")
        await paused()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        failed = [i for i, r in enumerate(results) if isinstance(r, BaseException)]
        done = [i for i, r in enumerate(results) if isinstance(r, Appended)]
        assert failed and done and len(failed) + len(done) == 40
        assert all(isinstance(results[i], redis.exceptions.ConnectionError) for i in failed)
        for i in failed:
            assert (await store.head(f"table:w-{i:03d}")).version == 0
        for i in done:
            assert (await store.head(f"table:w-{i:03d}")).version == 1
        # The lane reconnects: the failed appends go through when tried again.
        again = await asyncio.gather(*(appends(store, 1, first=i)[0] for i in failed))
        assert all(isinstance(r, Appended) for r in again)
    finally:
        await writer.stop()
    assert all(r.ok for r in await verify_all(store))


async def test_stop_fails_the_pipelines_in_flight_and_the_queued_calls(
    store: EventStore, redis_client: aioredis.Redis, paused: Callable[[], Awaitable[None]]
) -> None:
    writer = lanes(store, 2)
    tasks = appends(store, 50)
    await until(lambda: _eq(held(redis_client), 2), "both lanes' pipelines held by Redis")
    tasks += appends(store, 10, first=50)  # queued: no lane is free
    await until(lambda: _now(len(writer.queue) == 10), "ten calls queued")
    await writer.stop()
    # (Bounded: a call that stop() left hanging fails the test instead of stalling it.)
    results = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
    assert all(isinstance(r, redis.exceptions.ConnectionError) for r in results)
    assert all("stopped" in str(r) for r in results)
    assert not writer.lanes and not writer.queue and writer.in_flight == 0
    await until(lambda: _eq(held(redis_client), 0), "the stopped lanes' connections gone")
    await paused()
    # Their connections were dropped before Redis ran them: nothing was written ...
    for i in range(60):
        assert (await store.head(f"table:w-{i:03d}")).version == 0
    # ... and a stopped writer still appends, directly.
    [env] = chain([ChipsIssued(player="p", amount=1)], "table:after")
    assert isinstance(await store.append("table:after", Head(0), [write("a", [env])]), Appended)


async def test_a_pipeline_past_its_timeout_fails_and_its_lane_reopens(
    store: EventStore,
    redis_client: aioredis.Redis,
    paused: Callable[[], Awaitable[None]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("services.store.writer.PIPELINE_TIMEOUT_SECONDS", 0.3)
    writer = lanes(store, 1)
    try:
        [task] = appends(store, 1)
        await until(lambda: _eq(held(redis_client), 1), "the pipeline held by Redis")
        with pytest.raises(redis.exceptions.TimeoutError, match="timed out"):
            await asyncio.wait_for(task, 10)
        # The lane dropped its connection: Redis never ran the held call ...
        await until(lambda: _eq(held(redis_client), 0), "the timed-out connection gone")
        await paused()
        assert (await store.head("table:w-000")).version == 0
        assert writer.in_flight == 0 and not writer.queue
        # ... and the next call opens a new one and goes through.
        [again] = appends(store, 1)
        assert isinstance(await again, Appended)
        assert (await store.head("table:w-000")).version == 1
    finally:
        await writer.stop()


async def test_a_call_made_with_nothing_due_is_sent_one_turn_later(piped: EventStore) -> None:
    """A call made while nothing is due goes out at the next turn of the event loop, with
    the calls made in the same turn (one step: every step is a turn each command waits
    for); the calls a pipeline's callers make when it is over go two steps later, so that
    those answered by another lane in the same turn join them."""
    writer = piped.writer
    tasks = appends(piped, 3)
    await asyncio.sleep(0)  # the three tasks run: their calls are queued
    assert len(writer.queue) == 3 and writer.in_flight == 0
    await asyncio.sleep(0)  # the next turn: sent, in one pipeline
    assert not writer.queue and writer.in_flight == 1
    assert all(isinstance(r, Appended) for r in await asyncio.gather(*tasks))
