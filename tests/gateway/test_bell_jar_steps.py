"""The steps of a deal command on other streams, stopped half way: the server is stopped
after the first step (as a crash would leave the store), started again on the same Redis,
and the same command sent again finishes it (services/deal_steps.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from services.actor import Submission
from services.aggregates import DEAL_SERIALS, deal_stream
from services.bell_jars.actor import ClaimSerial
from services.bell_jars.state import Commingle
from services.gateway.auth import Principal
from services.gateway.ops import parse_command
from services.store.embedded import EmbeddedRedis
from services.supervisor import system_submission
from tests.conftest import deal_night
from tests.gateway.test_bell_jars import AUDITOR, MIC, SELLER, code, deal_fields, ok, register
from tests.support import LiveServer, start_server


def now_ms() -> int:
    return int(time.time() * 1000)


async def events_of(server: LiveServer, deal: str) -> list[str]:
    body = (await server.get(f"/api/streams/deal:{deal}/events", AUDITOR))[1]
    return [e["type"] for e in body["events"]]


async def test_a_combination_marked_but_not_in_play_is_finished_by_a_retry(
    redis_server: EmbeddedRedis, org: str
) -> None:
    doc = deal_night(org)
    first = await start_server(redis_server.url, doc)
    try:
        mic = await first.connect(MIC)
        for deal, serial in (("a", "S-1"), ("b", "S-2"), ("c", "S-3")):
            ok(await register(mic, deal, serial=serial))
        # The first step of put_deal_in_play(a, commingle=[b, c]) on b only, then the stop.
        supervisor = first.runtime.supervisor
        lead = supervisor.deal_state("a")
        assert lead is not None
        step = Commingle(lead=lead, now_ms=int(time.time() * 1000))
        reply = await supervisor.submit(deal_stream("b"), system_submission(step))
        assert reply["ok"]
    finally:
        await first.stop()
    second = await start_server(redis_server.url, doc)
    try:
        mic, seller = await second.connect(MIC), await second.connect(SELLER)
        refusal = await mic.cmd("put_deal_in_play", deal="b", container="jar")
        assert code(refusal) == "deal_commingled" and "deal a" in refusal["error"]["message"]
        assert code(await seller.cmd("record_sale", deal="b", count=1, amount=100)) == (
            "deal_commingled"
        )
        assert code(await seller.cmd("redeem_ticket", deal="b", prize=0, ticket="T")) == (
            "deal_not_in_play"
        )
        assert (await second.get("/api/deals/b", MIC))[1]["status"] == "commingled"
        # A retry of the whole command finishes it: b is marked once, c now, then a.
        played = ok(
            await mic.cmd("put_deal_in_play", deal="a", container="jar", commingle=["b", "c"])
        )
        assert played["deals"] == ["a", "b", "c"]
        assert await events_of(second, "b") == ["DealRegistered", "DealCommingled"]
        assert await events_of(second, "c") == ["DealRegistered", "DealCommingled"]
        assert await events_of(second, "a") == ["DealRegistered", "DealPutInPlay"]
    finally:
        await second.stop()


async def test_a_sell_out_whose_other_deals_did_not_close_is_finished_by_a_retry(
    redis_server: EmbeddedRedis, org: str
) -> None:
    doc = deal_night(org)
    first = await start_server(redis_server.url, doc)
    sale: dict[str, Any] = {"op": "record_sale", "id": "sale-1", "deal": "a", "count": 40}
    sale["amount"] = 4000
    try:
        mic = await first.connect(MIC)
        for deal, serial in (("a", "S-1"), ("b", "S-2")):
            ok(await register(mic, deal, serial=serial))
        ok(await mic.cmd("put_deal_in_play", deal="a", container="jar", commingle=["b"]))
        # The lead's own step only (what the gateway submits), then the stop.
        runtime = first.runtime
        seller = Principal(role="seller", sub="seller-1", exp=0)
        parsed = parse_command(
            sale, seller, runtime.table_ids, deals=runtime.supervisor.deals, now_ms=now_ms()
        )
        reply = await runtime.supervisor.submit(
            parsed.stream,
            Submission(
                key=parsed.key,
                fingerprint=parsed.fingerprint,
                command_id=parsed.id,
                actor="seller:seller-1",
                command=parsed.command,
            ),
        )
        assert reply["result"]["closed"] == "sold_out"
    finally:
        await first.stop()
    second = await start_server(redis_server.url, doc)
    try:
        assert "DealClosed" not in await events_of(second, "b")
        # b's ticket, sold before the sell-out, is redeemed: its close is finished first.
        seller_ws = await second.connect(SELLER)
        ok(await seller_ws.cmd("redeem_ticket", deal="b", prize=0, ticket="B-1"))
        assert await events_of(second, "b") == [
            "DealRegistered",
            "DealCommingled",
            "DealClosed",
            "TicketRedeemed",
        ]
    finally:
        await second.stop()
    third = await start_server(redis_server.url, doc)
    try:
        # The same sale sent again gets its stored reply (nothing is sold twice).
        seller_ws = await third.connect(SELLER)
        again = ok(await seller_ws.send(dict(sale)))
        assert again["closed"] == "sold_out"
        assert (await events_of(third, "a")).count("TicketsSold") == 1
        assert (await events_of(third, "b")).count("DealClosed") == 1
    finally:
        await third.stop()


async def test_a_retried_sell_out_closes_the_other_deals(
    redis_server: EmbeddedRedis, org: str
) -> None:
    doc = deal_night(org)
    first = await start_server(redis_server.url, doc)
    sale: dict[str, Any] = {"op": "record_sale", "id": "sale-1", "deal": "a", "count": 40}
    sale["amount"] = 4000
    try:
        mic = await first.connect(MIC)
        for deal, serial in (("a", "S-1"), ("b", "S-2")):
            ok(await register(mic, deal, serial=serial))
        ok(await mic.cmd("put_deal_in_play", deal="a", container="jar", commingle=["b"]))
        runtime = first.runtime
        parsed = parse_command(
            sale,
            Principal(role="seller", sub="seller-1", exp=0),
            runtime.table_ids,
            deals=runtime.supervisor.deals,
            now_ms=now_ms(),
        )
        await runtime.supervisor.submit(
            parsed.stream,
            Submission(
                key=parsed.key,
                fingerprint=parsed.fingerprint,
                command_id=parsed.id,
                actor="seller:seller-1",
                command=parsed.command,
            ),
        )
    finally:
        await first.stop()
    second = await start_server(redis_server.url, doc)
    try:
        assert "DealClosed" not in await events_of(second, "b")
        seller_ws = await second.connect(SELLER)
        assert ok(await seller_ws.send(dict(sale)))["closed"] == "sold_out"
        assert (await events_of(second, "a")).count("TicketsSold") == 1
        assert (await events_of(second, "b"))[-1] == "DealClosed"
        view = (await second.get("/api/deals/b", MIC))[1]
        assert view["status"] == "closed" and view["closed_reason"] == "sold_out"
    finally:
        await second.stop()


async def test_a_serial_claimed_for_a_deal_never_registered_stays_that_deals(
    redis_server: EmbeddedRedis, org: str
) -> None:
    doc = deal_night(org)
    first = await start_server(redis_server.url, doc)
    try:
        claim = ClaimSerial(serial="S-7", deal="d-7", now_ms=int(time.time() * 1000))
        supervisor = first.runtime.supervisor
        supervisor.ensure_serial_registry()  # as the first registration does
        assert await first.runtime.cluster.take_if_free(DEAL_SERIALS)
        assert (await supervisor.submit(DEAL_SERIALS, system_submission(claim)))["ok"]
    finally:
        await first.stop()
    second = await start_server(redis_server.url, doc)
    try:
        mic = await second.connect(MIC)
        other = await mic.cmd("register_deal", deal="d-8", **deal_fields("S-7"))
        assert code(other) == "duplicate_serial" and "d-7" in other["error"]["message"]
        assert (await second.get("/api/deals/d-8", MIC))[0] == 404
        ok(await mic.cmd("register_deal", deal="d-7", **deal_fields("S-7")))
        body = (await second.get(f"/api/streams/{DEAL_SERIALS}/events", AUDITOR))[1]
        assert [e["data"]["deal"] for e in body["events"]] == ["d-7"]
    finally:
        await second.stop()


async def test_two_deals_racing_for_one_serial_register_one(
    redis_server: EmbeddedRedis, org: str
) -> None:
    server = await start_server(redis_server.url, deal_night(org))
    try:
        mic = await server.connect(MIC)
        replies = await asyncio.gather(
            *(mic.cmd("register_deal", deal=f"r-{i}", **deal_fields("S-1")) for i in range(4))
        )
        assert sorted(r["ok"] for r in replies) == [False, False, False, True]
        assert {r["error"]["code"] for r in replies if not r["ok"]} == {"duplicate_serial"}
        _, deals = await server.get("/api/deals", AUDITOR)
        assert len(deals["deals"]) == 1
    finally:
        await server.stop()
