"""Bell jar deals over real websockets and HTTP: registration, play, sales, redemptions,
removal, commingled deals, the flare and staff views, who reads what, and one refusal per
code changing nothing (docs/PROTOCOL.md "Bell jar deals")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from services.aggregates import DEAL_SERIALS
from services.store.embedded import EmbeddedRedis
from tests.conftest import deal_night, night_doc
from tests.support import LiveServer, WsClient, player_token, start_server, token

PLAYER = player_token("p-1")
MIC = token("member_in_charge", "mic-1")
SELLER = token("seller", "seller-1")
AUDITOR = token("auditor")


def ok(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["ok"], reply
    result: dict[str, Any] = reply["result"]
    return result


def code(reply: dict[str, Any]) -> str:
    assert not reply["ok"], reply
    value: str = reply["error"]["code"]
    return value


def deal_fields(serial: str = "S-100", **over: Any) -> dict[str, Any]:
    """A small deal: 20 tickets at $1, a flare of one $5 prize, two $2 and a $1."""
    fields: dict[str, Any] = {
        "kind": "bell_jar",
        "supplier": "Acme Gaming Supply",
        "supplier_license": "SUP-77",
        "invoice_number": "INV-9",
        "invoice_date": "2026-11-20",
        "serial_number": serial,
        "ticket_serial": serial,
        "flare_serial": serial,
        "invoice_serial": serial,
        "form_number": "F-1",
        "ticket_count": 20,
        "ticket_price": 100,
        "cost": 400,
        "prizes": [
            {"value": 500, "count": 1, "kind": "cash"},
            {"value": 200, "count": 2, "kind": "cash"},
            {"value": 100, "count": 1, "kind": "cash"},
        ],
    }
    fields.update(over)
    return fields


@pytest.fixture
async def server(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[LiveServer]:
    live = await start_server(redis_server.url, deal_night(org))
    yield live
    await live.stop()


async def staff(server: LiveServer) -> tuple[WsClient, WsClient]:
    return await server.connect(MIC), await server.connect(SELLER)


async def register(mic: WsClient, deal: str, **over: Any) -> dict[str, Any]:
    return await mic.cmd("register_deal", deal=deal, **deal_fields(**over))


async def snapshot(server: LiveServer) -> Any:
    """Every stream's head and the deals' staff views: what a refusal must not change."""
    runtime = server.runtime
    heads = {s: a.head.version for s, a in runtime.supervisor.actors.items()}
    _, deals = await server.get("/api/deals", AUDITOR)
    return heads, deals, sorted(runtime.supervisor.deals)


async def test_a_deal_from_registration_to_sell_out(server: LiveServer) -> None:
    mic, seller = await staff(server)
    ok(await register(mic, "d-1"))
    played = ok(await mic.cmd("put_deal_in_play", deal="d-1", container="jar"))
    assert played["deals"] == ["d-1"]
    ok(await seller.cmd("record_sale", deal="d-1", count=5, amount=500))
    won = ok(await seller.cmd("redeem_ticket", deal="d-1", prize=0, ticket="T-1"))
    assert won["value"] == 500 and won["kind"] == "cash" and won["retain_until"]
    status, view = await server.get("/api/deals/d-1", SELLER)
    assert status == 200
    assert view["receptacle"]["bank"] == {"sales": 500, "cash_prizes": 500, "balance": 0}
    assert view["prizes_left"] == [0, 2, 1] and view["status"] == "in_play"
    assert view["receptacle"]["removal"]["by_count"] == [1, 4]
    last = ok(await seller.cmd("record_sale", deal="d-1", count=15, amount=1500))
    assert last["closed"] == "sold_out" and last["unsold"] == 0
    # A ticket sold before the sell-out is still redeemed in the quarter it closed.
    ok(await seller.cmd("redeem_ticket", deal="d-1", prize=1, ticket="T-2"))
    status, view = await server.get("/api/deals/d-1", AUDITOR)
    assert view["status"] == "closed" and view["closed_reason"] == "sold_out"
    assert view["receptacle"]["profit_or_loss"] == 2000 - 700 - 400


async def test_players_see_the_flare_and_nothing_else(server: LiveServer) -> None:
    mic, seller = await staff(server)
    ok(await register(mic, "d-1"))
    # Not in play yet: a player does not see it at all.
    assert (await server.get("/api/deals", PLAYER))[1] == {"deals": []}
    assert (await server.get("/api/deals/d-1/flare", PLAYER))[0] == 404
    ok(await mic.cmd("put_deal_in_play", deal="d-1", container="jar"))
    ok(await seller.cmd("record_sale", deal="d-1", count=3, amount=300))
    ok(await seller.cmd("redeem_ticket", deal="d-1", prize=1, ticket="T-1"))
    status, flare = await server.get("/api/deals/d-1/flare", PLAYER)
    assert status == 200
    assert set(flare) == {"deal", "kind", "serial_number", "form_number", "ticket_price", "prizes"}
    assert [p["awarded"] for p in flare["prizes"]] == [0, 1, 0]
    assert (await server.get("/api/deals", PLAYER))[1] == {"deals": [flare]}
    # The ledger, the stream's events and the registry are staff's only.
    assert (await server.get("/api/deals/d-1", PLAYER))[0] == 403
    assert (await server.get("/api/streams/deal:d-1/events", PLAYER))[0] == 403
    assert (await server.get(f"/api/streams/{DEAL_SERIALS}/events", PLAYER))[0] == 403
    assert (await server.get("/api/streams/log/events", PLAYER))[0] == 403
    dealer = token("dealer", tables=("roulette-1",))
    assert (await server.get("/api/streams/deal:d-1/events", dealer))[0] == 403
    player = await server.connect(PLAYER)
    assert code(await player.cmd("subscribe", stream="deal:d-1")) == "forbidden"
    assert code(await player.cmd("subscribe", stream="log")) == "forbidden"
    assert code(await player.cmd("subscribe", stream=DEAL_SERIALS)) == "forbidden"
    assert code(await player.cmd("subscribe", view="deal", deal="d-1")) == "forbidden"
    watched = ok(await player.cmd("subscribe", view="flare", deal="d-1"))
    assert watched["data"] == flare
    ok(await seller.cmd("redeem_ticket", deal="d-1", prize=1, ticket="T-2"))
    pushed = await player.wait_view(lambda d: d["prizes"][1]["awarded"] == 2)
    assert set(pushed) == set(flare)
    # Staff read the stream.
    status, body = await server.get("/api/streams/deal:d-1/events", SELLER)
    assert status == 200 and [e["type"] for e in body["events"]][:2] == [
        "DealRegistered",
        "DealPutInPlay",
    ]


async def test_commingled_deals_share_one_receptacle_and_close_together(
    server: LiveServer,
) -> None:
    mic, seller = await staff(server)
    for deal, serial in (("a", "S-1"), ("b", "S-2"), ("c", "S-3")):
        ok(await register(mic, deal, serial=serial))
    played = ok(await mic.cmd("put_deal_in_play", deal="a", container="jar", commingle=["b", "c"]))
    assert played["deals"] == ["a", "b", "c"]
    assert code(await seller.cmd("record_sale", deal="b", count=1, amount=100)) == (
        "deal_commingled"
    )
    ok(await seller.cmd("redeem_ticket", deal="b", prize=0, ticket="B-1"))
    view = (await server.get("/api/deals/a", MIC))[1]
    assert view["receptacle"]["tickets"] == 60 and view["deals"] == ["a", "b", "c"]
    assert view["receptacle"]["bank"]["cash_prizes"] == 500
    ok(await seller.cmd("record_sale", deal="a", count=60, amount=6000))
    for deal in ("a", "b", "c"):
        events = (await server.get(f"/api/streams/deal:{deal}/events", AUDITOR))[1]["events"]
        closes = [e for e in events if e["type"] == "DealClosed"]
        assert len(closes) == 1 and closes[0]["data"]["reason"] == "sold_out", deal


async def test_every_refusal_has_its_code_and_changes_nothing(server: LiveServer) -> None:
    mic, seller = await staff(server)
    ok(await register(mic, "d-1"))
    ok(await register(mic, "d-2", serial="S-200", form_number="F-2"))
    ok(await register(mic, "d-3", serial="S-300"))
    ok(await mic.cmd("put_deal_in_play", deal="d-1", container="jar"))
    ok(await seller.cmd("record_sale", deal="d-1", count=1, amount=100))
    tv = {"value": 500, "count": 1, "kind": "merchandise", "description": "TV"}
    registrations = [
        (deal_fields("S-9", flare_serial="X"), "serial_mismatch"),
        (deal_fields("S-9", ticket_price=700), "price_over_limit"),
        (deal_fields("S-9", prizes=[{"value": 100_001, "count": 1}]), "prize_over_limit"),
        (deal_fields("S-9", prizes=[{"value": 100_000, "count": 7}]), "flare_over_limit"),
        (deal_fields("S-9", prizes=[{**tv, "value_basis": "cost"}]), "merchandise_not_allowed"),
        (deal_fields("S-9", prizes=[{"value": 1, "count": 21}]), "too_many_prizes"),
        (deal_fields("S-100"), "duplicate_serial"),
    ]
    cases: list[tuple[WsClient, str, dict[str, Any], str]] = [
        (mic, "register_deal", {"deal": "d-9", **fields}, expected)
        for fields, expected in registrations
    ]
    jar = {"container": "jar"}
    cases += [
        (mic, "register_deal", {"deal": "d-1", **deal_fields("S-9")}, "deal_exists"),
        (mic, "put_deal_in_play", {"deal": "d-3", **jar, "commingle": ["d-2"]}, "deals_differ"),
        (
            mic,
            "put_deal_in_play",
            {"deal": "d-3", **jar, "commingle": ["d-1"]},
            "deal_not_complete",
        ),
        (mic, "put_deal_in_play", {"deal": "d-1", **jar}, "deal_in_play"),
        (seller, "record_sale", {"deal": "d-1", "count": 2, "amount": 100}, "amount_mismatch"),
        (seller, "record_sale", {"deal": "d-1", "count": 20, "amount": 2000}, "more_than_unsold"),
        (seller, "record_sale", {"deal": "d-2", "count": 1, "amount": 100}, "deal_not_in_play"),
        (seller, "redeem_ticket", {"deal": "d-2", "prize": 0, "ticket": "T"}, "deal_not_in_play"),
        (
            seller,
            "redeem_ticket",
            {"deal": "d-1", "prize": 3, "ticket": "T"},
            "prize_not_available",
        ),
        (mic, "remove_deal", {"deal": "d-1"}, "too_few_prizes_awarded"),
        (seller, "record_sale", {"deal": "d-404", "count": 1, "amount": 100}, "unknown_deal"),
        (seller, "register_deal", {"deal": "d-9", **deal_fields("S-9")}, "forbidden"),
        (seller, "remove_deal", {"deal": "d-1"}, "forbidden"),
        (mic, "put_deal_in_play", {"deal": "d-2", "container": "box"}, "bad_request"),
        (
            mic,
            "register_deal",
            {"deal": "d-9", **deal_fields("S-9", invoice_date="2026-13-01")},
            "invalid_deal",
        ),
    ]
    for client, op, fields, expected in cases:
        before = await snapshot(server)
        assert code(await client.cmd(op, **fields)) == expected, (op, fields)
        await asyncio.sleep(0.05)  # a refused registration's actor is dropped
        assert await snapshot(server) == before, (op, expected)
    # prize_not_available for a line whose every prize was awarded; ticket_redeemed.
    ok(await seller.cmd("redeem_ticket", deal="d-1", prize=0, ticket="T-1"))
    before = await snapshot(server)
    assert code(await seller.cmd("redeem_ticket", deal="d-1", prize=0, ticket="T-9")) == (
        "prize_not_available"
    )
    assert code(await seller.cmd("redeem_ticket", deal="d-1", prize=1, ticket="T-1")) == (
        "ticket_redeemed"
    )
    assert await snapshot(server) == before
    # deal_closed: a sold-out deal takes no more sales, no removal, no second play.
    ok(await mic.cmd("put_deal_in_play", deal="d-3", container="jar"))
    ok(await seller.cmd("record_sale", deal="d-3", count=20, amount=2000))
    before = await snapshot(server)
    assert code(await seller.cmd("record_sale", deal="d-3", count=1, amount=100)) == "deal_closed"
    assert code(await mic.cmd("remove_deal", deal="d-3")) == "deal_closed"
    assert code(await mic.cmd("put_deal_in_play", deal="d-3", container="jar")) == "deal_closed"
    assert await snapshot(server) == before
    # column_in_use: d-2 (form F-2) may not join a column that dispenses F-1.
    ok(await register(mic, "d-4", serial="S-400"))
    ok(await mic.cmd("put_deal_in_play", deal="d-4", container="vending_machine", column="m1/3"))
    before = await snapshot(server)
    refusal = await mic.cmd(
        "put_deal_in_play", deal="d-2", container="vending_machine", column="m1/3"
    )
    assert code(refusal) == "column_in_use"
    assert await snapshot(server) == before
    ok(await mic.cmd("put_deal_in_play", deal="d-2", container="vending_machine", column="m1/4"))


async def test_deal_commands_run_outside_the_occasion_window_bjar_7(
    redis_server: EmbeddedRedis, org: str
) -> None:
    past = deal_night(org)
    past["occasion"] = {"id": "last-week", "name": "Last week", "starts_at": "2026-01-01T18:00:00Z"}
    server = await start_server(redis_server.url, past)
    try:
        mic, seller = await staff(server)
        cashier = await server.connect(token("cashier"))
        assert code(await cashier.cmd("buy_chips", player="p-1", amount=100)) == "occasion_closed"
        ok(await register(mic, "d-1"))
        ok(await mic.cmd("put_deal_in_play", deal="d-1", container="jar"))
        ok(await seller.cmd("record_sale", deal="d-1", count=2, amount=200))
        ok(await mic.cmd("redeem_ticket", deal="d-1", prize=3 - 1, ticket="T-1"))
    finally:
        await server.stop()


async def test_the_http_command_path_takes_deal_ops_too(server: LiveServer) -> None:
    msg = {"op": "register_deal", "id": "h-1", "deal": "d-1", **deal_fields()}
    status, reply = await server.post_command(msg, MIC)
    assert status == 200 and reply["ok"], reply
    status, again = await server.post_command(msg, MIC)  # the same id: its stored reply
    assert again["result"] == reply["result"]
    status, other = await server.post_command({**msg, "id": "h-2"}, MIC)
    assert other["error"]["code"] == "deal_exists"


async def test_a_deal_of_a_game_the_license_does_not_list_is_refused_4620_2(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """4620.2: a game is conducted only if the license lists it. A license with bell jars
    but no seal cards takes a bell jar deal and a banded one (banded tickets are bell jar
    tickets), and refuses a seal card deal, with nothing registered or claimed."""
    doc = night_doc(org)
    doc["license"] = {**doc["license"], "games": ["roulette", "bell_jar"]}
    server = await start_server(redis_server.url, doc)
    try:
        mic, _seller = await staff(server)
        before = await snapshot(server)
        reply = await register(mic, "d-seal", serial="S-7", kind="seal_card")
        assert code(reply) == "game_not_licensed", reply
        assert "seal_card" in reply["error"]["message"]
        assert await snapshot(server) == before
        ok(await register(mic, "d-jar", serial="S-8"))
        ok(await register(mic, "d-banded", serial="S-9", kind="banded"))
        # The serial the refused deal named is free: another deal may use it.
        ok(await register(mic, "d-jar-2", serial="S-7"))
    finally:
        await server.stop()
