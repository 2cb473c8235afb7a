"""The append writer (services/store/writer.py) on a real Redis: appends of many streams that
are ready together travel in one pipeline, each keeps its own all-or-nothing result, and a
Redis that lost its script cache is handled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

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
    piped.writer.in_flight += 1  # as if another append were on its way: all go by pipeline
    try:
        results = await asyncio.gather(
            *(piped.append(s, Head(0), [write(s, envs[s])]) for s in streams)
        )
    finally:
        piped.writer.in_flight -= 1
    assert all(isinstance(r, Appended) for r in results)
    assert all(r.ok for r in await verify_all(piped))
