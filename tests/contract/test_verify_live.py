"""``verify`` on a store that a server keeps appending to reports no false break."""

from __future__ import annotations

import asyncio

from events.cage import ChipsIssued
from services.store.redis_store import EventStore
from services.store.verify import verify_all
from tests.contract.test_event_store import fill


async def test_verify_while_appends_go_on_reports_only_truth(store: EventStore) -> None:
    stop = asyncio.Event()

    async def keep_appending(stream: str) -> int:
        n = 0
        while not stop.is_set():
            await fill(store, stream, [ChipsIssued(player="p", amount=n + 1)])
            n += 1
        return n

    writers = [asyncio.create_task(keep_appending(s)) for s in ("cage", "table:a", "table:b")]
    await asyncio.sleep(0.05)
    try:
        for _ in range(15):
            reports = await verify_all(store)
            assert [r for r in reports if not r.ok] == []
            assert {r.stream for r in reports} == {"cage", "table:a", "table:b", "log"}
    finally:
        stop.set()
        counts = await asyncio.gather(*writers)
    assert min(counts) > 5  # the store really moved while it was verified
    final = {r.stream: r.events for r in await verify_all(store)}
    assert final["log"] == sum(counts)
