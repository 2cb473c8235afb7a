"""Raffles over real websockets and HTTP: setup, sales at the door and online, drawings,
reveals, keys, the purchaser vault, bad input and roles (docs/PROTOCOL.md "Raffles")."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
import structlog

from services.raffles.config_input import raffle_options
from services.store import keys
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import EventStore
from services.store.verify import verify_all
from tests import legacy_raffle
from tests.conftest import night_doc
from tests.support import LiveServer, WsClient, dealer_token, start_server, token

DAY = 86_400_000
QOH = "qoh-1"


def raffle_night(org: str) -> dict[str, Any]:
    now = int(time.time() * 1000)
    return night_doc(
        org,
        license={
            "number": "GC-TEST-1",
            "games": ["roulette", "raffle"],
            "period_start": "2026-11-01",
            "period_end": "2026-12-31",
        },
        raffles=[
            {
                "id": QOH,
                "kind": "queen_of_hearts",
                "options": {
                    "name": "Queen of Hearts",
                    "location": "Parish hall",
                    "price": 200,
                    "first_drawing_at": now + DAY,
                    "board": "physical",
                },
            }
        ],
    )


@pytest.fixture
async def server(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[LiveServer]:
    live = await start_server(redis_server.url, raffle_night(org))
    yield live
    await live.stop()


def ok(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["ok"], reply
    result: dict[str, Any] = reply["result"]
    return result


def code(reply: dict[str, Any]) -> str:
    assert not reply["ok"], reply
    value: str = reply["error"]["code"]
    return value


async def caught_up(server: LiveServer) -> None:
    for _ in range(300):
        if await server.runtime.runner.caught_up():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("projections did not catch up")


async def clients(server: LiveServer) -> tuple[WsClient, WsClient]:
    return await server.connect(token("seller")), await server.connect(token("member_in_charge"))


async def test_a_queen_of_hearts_week_over_websockets(server: LiveServer) -> None:
    seller, mic = await clients(server)
    auditor = await server.connect(token("auditor"))
    sub = ok(await auditor.cmd("subscribe", stream=f"raffle:{QOH}"))
    assert sub["head"] == 1 and sub["view"]["kind"] == "queen_of_hearts"
    sold = ok(await seller.cmd("sell_ticket", raffle=QOH, count=3, amount=600, occasion="night-0"))
    assert sold["serials"] == [1, 2, 3] and sold["round"] == 1
    ok(await seller.cmd("sell_ticket", raffle=QOH, amount=200))
    ok(await mic.cmd("record_drawing_method", raffle=QOH, method="rng", description="CSPRNG"))
    drawn = ok(await mic.cmd("hold_drawing", raffle=QOH))
    (winner,) = drawn["winners"]
    assert winner["serial"] in (1, 2, 3, 4) and winner["key"] is None
    revealed = ok(await mic.cmd("reveal_card", raffle=QOH, position=17, card="AS"))
    assert revealed["card"] == "AS" and not revealed["queen_of_hearts"]
    assert revealed["prizes"] == [
        {"serial": winner["serial"], "prize": "consolation", "amount": 2000}
    ]
    events = await auditor.wait_events(f"raffle:{QOH}", 8)
    assert [e["type"] for e in events] == [
        "RaffleOpened",
        "TicketSold",
        "TicketSold",
        "DrawingMethodRecorded",
        "DrawingHeld",
        "CardRevealed",
        "PrizeAwarded",
        "ProfitKept",
    ]
    # Every event of week 1 is correlated with week 1, its drawing and search too.
    assert {e["correlation"] for e in events[1:]} == {f"{QOH}#1"}
    await caught_up(server)
    status, view = await server.get(f"/api/raffles/{QOH}", token("player", "p-1", player="p-1"))
    assert status == 200
    assert view["sales"] == 800 and view["pool"] == 800 and view["tickets"] == 4
    assert view["rounds"] == {"1": {"tickets": 4, "sales": 800}}
    # A door sale counts toward the night's occasion unless it names another.
    assert view["occasions"] == {
        "night-0": {"tickets": 3, "sales": 600},
        "night-1": {"tickets": 1, "sales": 200},
    }
    assert view["board"]["revealed"] == {"17": "AS"} and view["round"] == 2
    assert view["prizes_paid"] == 2000 and view["profit_kept"] == -2000 and view["open"] == 800
    status, listing = await server.get("/api/raffles", token("auditor"))
    assert status == 200 and [r["raffle"] for r in listing["raffles"]] == [QOH]
    assert (await server.get("/api/raffles/nope", token("auditor")))[0] == 404


def server_board_config() -> dict[str, Any]:
    return {
        "name": "Committed board",
        "location": "Online",
        "price": 100,
        "first_drawing_at": int(time.time() * 1000) + DAY,
        "board": "server",
    }


async def to_search(seller: WsClient, mic: WsClient, raffle: str, price: int = 100) -> None:
    """A ticket sold and drawn by hand: its holder waits to pick a position."""
    ok(await seller.cmd("sell_ticket", raffle=raffle, amount=price))
    ok(await mic.cmd("record_drawing_method", raffle=raffle, method="hand", description="drum"))
    ok(await mic.cmd("hold_drawing", raffle=raffle, serials=[1]))


async def test_a_server_board_is_committed_at_setup_and_checked_at_each_reveal(
    server: LiveServer,
) -> None:
    seller, mic = await clients(server)
    config = server_board_config()
    ok(await mic.cmd("setup_raffle", raffle="qoh-2", kind="queen_of_hearts", config=config))
    # The same setup again (a retry, a second tablet) is the same raffle.
    ok(await mic.cmd("setup_raffle", raffle="qoh-2", kind="queen_of_hearts", config=config))
    await to_search(seller, mic, "qoh-2")
    revealed = ok(await mic.cmd("reveal_card", raffle="qoh-2", position=5))
    status, body = await server.get("/api/streams/raffle:qoh-2/events", token("auditor"))
    assert status == 200
    assert [e["type"] for e in body["events"]].count("RaffleOpened") == 1
    opened = body["events"][0]["data"]
    card = next(e["data"] for e in body["events"] if e["type"] == "CardRevealed")
    assert card["card"] == revealed["card"] and card["position"] == 5
    commitment = hashlib.sha256(f"{card['salt']}:5:{card['card']}".encode()).hexdigest()
    assert opened["config"]["board"]["commitments"][4] == commitment
    root = hashlib.sha256("".join(opened["config"]["board"]["commitments"]).encode()).hexdigest()
    assert opened["config"]["board"]["root"] == root
    # The board itself is sealed in the opening event, and nothing is kept aside in Redis.
    assert body["events"][0]["version"] == 2 and opened["sealed_board"]
    runtime = server.runtime
    redis, org = runtime.store.redis, runtime.night.organization
    assert await redis.exists(keys.raffle_board(org, "qoh-2")) == 0


async def test_a_night_file_server_board_is_dealt_once_by_its_actor_across_restarts(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """The supervisor only submits the night file's ``SetupRaffle``: the raffle's actor deals
    the board when it opens the raffle, and at every later start the setup deals nothing."""
    night = raffle_night(org)
    night["raffles"][0]["options"]["board"] = "server"
    first = await start_server(redis_server.url, night)
    try:
        opened = (await first.runtime.store.read(f"raffle:{QOH}"))[0]
        assert opened.type == "RaffleOpened" and opened.data["sealed_board"]
        seller, mic = await clients(first)
        await to_search(seller, mic, QOH, price=200)
    finally:
        await first.stop()
    second = await start_server(redis_server.url, night)
    try:
        events = await second.runtime.store.read(f"raffle:{QOH}")
        assert [e.type for e in events].count("RaffleOpened") == 1 and events[0] == opened
        seller, mic = await clients(second)
        revealed = ok(await mic.cmd("reveal_card", raffle=QOH, position=7))
        status, body = await second.get(f"/api/streams/raffle:{QOH}/events", token("auditor"))
        assert status == 200
        card = next(e["data"] for e in body["events"] if e["type"] == "CardRevealed")
        assert card["card"] == revealed["card"]
        digest = hashlib.sha256(f"{card['salt']}:7:{card['card']}".encode())
        assert opened.data["config"]["board"]["commitments"][6] == digest.hexdigest()
    finally:
        await second.stop()


async def test_a_board_sealed_under_another_secret_is_refused_with_its_code(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """A server started with another secret than the one the board was dealt under cannot
    open it: ``board_unreadable``, nothing revealed, and nothing stored: the same command
    id sent again once the right secret is back reveals the card."""
    night = raffle_night(org)
    first = await start_server(redis_server.url, night)
    try:
        seller, mic = await clients(first)
        config = server_board_config()
        ok(await mic.cmd("setup_raffle", raffle="qoh-3", kind="queen_of_hearts", config=config))
        await to_search(seller, mic, "qoh-3")
    finally:
        await first.stop()
    other = b"another-test-secret"
    second = await start_server(redis_server.url, night, secret=other)
    try:
        mic = await second.connect(token("member_in_charge", secret=other))
        head = second.runtime.supervisor.actors["raffle:qoh-3"].head.version
        reveal = {"op": "reveal_card", "id": "reveal-5", "raffle": "qoh-3", "position": 5}
        assert code(await mic.send(dict(reveal))) == "board_unreadable"
        assert second.runtime.supervisor.actors["raffle:qoh-3"].head.version == head
    finally:
        await second.stop()
    third = await start_server(redis_server.url, night)
    try:
        mic = await third.connect(token("member_in_charge"))
        ok(await mic.send(dict(reveal)))
    finally:
        await third.stop()


async def test_a_raffle_whose_board_is_kept_in_redis_still_reveals(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """A raffle opened before ``RaffleOpened`` version 2: the gateway reads each revealed
    position from the board kept in Redis; the commitments check it; the stream verifies."""
    store = EventStore(aioredis.Redis.from_url(redis_server.url), org)
    options = raffle_options(server_board_config(), organization=f"Test org {org}")
    try:
        cards = await legacy_raffle.open_raffle(store, "qoh-old", options, seed=9)
    finally:
        await store.redis.aclose()
    live = await start_server(redis_server.url, raffle_night(org))
    try:
        seller, mic = await clients(live)
        # the setup again (as a night file would at each start) deals nothing
        config = server_board_config() | {"first_drawing_at": options["first_drawing_at"]}
        ok(await mic.cmd("setup_raffle", raffle="qoh-old", kind="queen_of_hearts", config=config))
        await to_search(seller, mic, "qoh-old")
        position = 1 if cards[0] != "QH" else 2
        revealed = ok(await mic.cmd("reveal_card", raffle="qoh-old", position=position))
        assert revealed["card"] == cards[position - 1]
        status, body = await live.get("/api/streams/raffle:qoh-old/events", token("auditor"))
        assert status == 200 and body["events"][0]["version"] == 1
        assert [e["type"] for e in body["events"]].count("RaffleOpened") == 1
        reports = await verify_all(live.runtime.store)
        assert reports and all(r.ok for r in reports), reports
    finally:
        await live.stop()


async def test_a_board_kept_in_redis_that_cannot_be_opened_is_refused_with_its_code(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """The board kept in Redis for an older raffle, altered: ``board_unreadable``."""
    store = EventStore(aioredis.Redis.from_url(redis_server.url), org)
    options = raffle_options(server_board_config(), organization=f"Test org {org}")
    try:
        await legacy_raffle.open_raffle(store, "qoh-old", options, seed=10)
        stored = keys.raffle_board(org, "qoh-old")
        sealed = await store.redis.get(stored)
        assert sealed is not None
        await store.redis.set(stored, sealed[:-1] + bytes([sealed[-1] ^ 1]))
    finally:
        await store.redis.aclose()
    live = await start_server(redis_server.url, raffle_night(org))
    try:
        seller, mic = await clients(live)
        await to_search(seller, mic, "qoh-old")
        head = live.runtime.supervisor.actors["raffle:qoh-old"].head.version
        assert code(await mic.cmd("reveal_card", raffle="qoh-old", position=5)) == (
            "board_unreadable"
        )
        assert live.runtime.supervisor.actors["raffle:qoh-old"].head.version == head
    finally:
        await live.stop()


def chest_config() -> dict[str, Any]:
    """A Treasure Chest of ten keys at $5 a ticket, 20 % profit, first drawing tomorrow."""
    return {
        "name": "Treasure Chest",
        "location": "Bingo hall",
        "price": 500,
        "first_drawing_at": int(time.time() * 1000) + DAY,
        "keys": 10,
        "profit_bp": 2000,
    }


async def test_a_treasure_chest_occasion_and_a_carry_over(server: LiveServer) -> None:
    seller, mic = await clients(server)
    config = chest_config()
    ok(await mic.cmd("setup_raffle", raffle="tc-1", kind="treasure_chest", config=config))
    for _ in range(6):
        ok(await seller.cmd("sell_ticket", raffle="tc-1", amount=500))
    ok(await mic.cmd("record_drawing_method", raffle="tc-1", method="rng", description="CSPRNG"))
    drawn = ok(await mic.cmd("hold_drawing", raffle="tc-1"))
    keys = [w["key"] for w in drawn["winners"]]
    assert len(keys) == 5 and len(set(keys)) == 5
    # 3000: 600 profit, 2400 left, 240 primary (five of 48), 2160 into the chest.
    assert [p["amount"] for p in drawn["prizes"]] == [48] * 5
    assert code(await mic.cmd("try_key", raffle="tc-1", key=99, opened=False)) == "key_not_in_play"
    for key in keys:
        result = ok(await mic.cmd("try_key", raffle="tc-1", key=key, opened=False))
    assert result["chest"] == 2160 and result["round"] == 2
    await caught_up(server)
    view = (await server.get("/api/raffles/tc-1", token("auditor")))[1]
    assert view["pool"] == 2160 and len(view["keys_in_play"]) == 5
    assert view["carry_overs"][0]["chest"] == 2160 and view["profit_kept"] == 600


async def test_online_sales_and_the_purchaser_vault(server: LiveServer) -> None:
    seller, mic = await clients(server)
    account = {
        "legal_name": "Jane Q. Public",
        "date_of_birth": "1990-04-01",
        "account_number": "ACC-1",
        "address": "1 Elm St, Albany NY",
        "email": "jane@example.org",
        "phone": "518-555-0100",
    }
    with structlog.testing.capture_logs() as logs:
        pid = ok(await seller.cmd("register_purchaser", account=account))["purchaser"]
        # a retried registration gets the same id; another person on that number is refused
        again = ok(await seller.cmd("register_purchaser", account=account))["purchaser"]
        assert again == pid
        twin = {**account, "legal_name": "John Q. Public"}
        assert code(await seller.cmd("register_purchaser", account=twin)) == "duplicate_account"
        bad = {**account, "email": "not-an-email"}
        assert code(await seller.cmd("register_purchaser", account=bad)) == "invalid_account"
        away = {"state": "NJ", "lat": 40.7, "lon": -74.0}
        sale_nj = {"raffle": QOH, "amount": 200, "channel": "online", "purchaser": pid}
        assert code(await seller.cmd("sell_ticket", **sale_nj, location=away)) == "out_of_state"
    logged = repr(logs)
    assert "command_refused" in logged
    for value in ("Jane", "1990-04-01", "ACC-1", "Elm", "jane@", "555-0100", "40.7", "-74"):
        assert value not in logged, value
    where = {"state": "NY", "lat": 42.65, "lon": -73.75, "accuracy_m": 30}
    sale = {"raffle": QOH, "amount": 200, "channel": "online", "purchaser": pid}
    sold = ok(await seller.cmd("sell_ticket", **sale, location=where))
    events = (await server.get(f"/api/streams/raffle:{QOH}/events", token("auditor")))[1]["events"]
    data = events[-1]["data"]
    assert data["purchaser"] == pid and data["location_state"] == "NY"
    assert data["serials"] == sold["serials"]
    # Only the sealed blob could hold the location: the rest of every event is plain, and
    # the blob is ciphertext (checked on strings long enough that random base64 cannot
    # hold them by chance).
    plain = [
        {**e, "data": {k: v for k, v in e["data"].items() if k != "location_sealed"}}
        for e in events
    ]
    text = repr(plain)
    assert "Jane" not in text and "Elm" not in text and "42.65" not in text
    for value in ("Jane Q. Public", "1 Elm St", '"lat": 42.65'):
        assert value not in data["location_sealed"]
    sealed = base64.b64decode(data["location_sealed"])
    assert await server.runtime.vault.open(pid, sealed) == where
    head = server.runtime.supervisor.actors[f"raffle:{QOH}"].head.version
    away = {"state": "NJ", "lat": 40.7, "lon": -74.0}
    assert code(await seller.cmd("sell_ticket", **sale, location=away)) == "out_of_state"
    young = {**account, "account_number": "ACC-2", "date_of_birth": "2015-01-01"}
    kid = ok(await seller.cmd("register_purchaser", account=young))["purchaser"]
    kid_sale = {**sale, "purchaser": kid}
    assert code(await seller.cmd("sell_ticket", **kid_sale, location=where)) == "underage"
    entries = [{"legal_name": "jane q.  public", "date_of_birth": "1990-04-01"}]
    assert ok(await mic.cmd("load_self_exclusions", entries=entries))["entries"] == 1
    assert code(await seller.cmd("sell_ticket", **sale, location=where)) == "self_excluded"
    assert server.runtime.supervisor.actors[f"raffle:{QOH}"].head.version == head
    # Erasure: the account and the sealed location are gone; the events and chain stay.
    assert ok(await mic.cmd("erase_purchaser", purchaser=pid))["erased"] is True
    assert await server.runtime.vault.open(pid, sealed) is None
    assert code(await seller.cmd("sell_ticket", **sale, location=where)) == "unknown_purchaser"
    reports = await verify_all(server.runtime.store)
    assert all(r.ok for r in reports)


async def test_bad_input_has_stable_codes_and_changes_nothing(server: LiveServer) -> None:
    seller, mic = await clients(server)
    stream = server.runtime.supervisor.actors[f"raffle:{QOH}"]
    ok(await seller.cmd("sell_ticket", raffle=QOH, amount=200, serial=5))
    head = stream.head.version
    cases = [
        (seller, "sell_ticket", {"amount": 200, "serial": 5}, "serial_taken"),
        (seller, "sell_ticket", {"amount": 150}, "wrong_price"),
        (mic, "hold_drawing", {}, "method_not_recorded"),
        (mic, "reveal_card", {"position": 3, "card": "AS"}, "no_search_pending"),
        (mic, "try_key", {"key": 1, "opened": True}, "wrong_raffle"),
        (seller, "sell_ticket", {"amount": "200"}, "bad_request"),
        (seller, "hold_drawing", {}, "forbidden"),
        (mic, "sell_ticket", {"amount": 200}, "forbidden"),
    ]
    for client, op, fields, expected in cases:
        assert code(await client.cmd(op, raffle=QOH, **fields)) == expected, (op, fields)
    assert stream.head.version == head  # nothing was written
    assert code(await seller.cmd("sell_ticket", raffle="nope", amount=200)) == "unknown_raffle"
    dealer = await server.connect(dealer_token("roulette-1"))
    assert code(await dealer.cmd("sell_ticket", raffle=QOH, amount=200)) == "forbidden"
    ok(await mic.cmd("record_drawing_method", raffle=QOH, method="hand", description="drum"))
    ok(await mic.cmd("hold_drawing", raffle=QOH, serials=[5]))
    ok(await mic.cmd("reveal_card", raffle=QOH, position=3, card="2C"))
    ok(await seller.cmd("sell_ticket", raffle=QOH, amount=200))
    ok(await mic.cmd("hold_drawing", raffle=QOH, serials=[6]))
    head = stream.head.version
    assert code(await mic.cmd("reveal_card", raffle=QOH, position=3, card="3C")) == (
        "position_revealed"
    )
    far = {
        "name": "Too far",
        "location": "Hall",
        "price": 100,
        "first_drawing_at": int(time.time() * 1000) + 200 * DAY,
        "prizes": [{"description": "Car", "value": 10**12}],
    }
    assert (
        code(await mic.cmd("setup_raffle", raffle="std-1", kind="standard", config=far))
        == "prize_over_limit"
    )
    far["prizes"] = [{"description": "Car", "value": 100_000}]
    ok(await mic.cmd("setup_raffle", raffle="std-1", kind="standard", config=far))
    std = server.runtime.supervisor.actors["raffle:std-1"]
    std_head = std.head.version
    assert code(await seller.cmd("sell_ticket", raffle="std-1", amount=100)) == "too_early"
    assert std.head.version == std_head
    assert stream.head.version == head
    # Selling after the drum closed for the week's drawing.
    ok(await mic.cmd("reveal_card", raffle=QOH, position=4, card="4C"))
    ok(await mic.cmd("close_sales", raffle=QOH))
    head = stream.head.version
    assert code(await seller.cmd("sell_ticket", raffle=QOH, amount=200)) == "sales_closed"
    assert stream.head.version == head


async def test_a_raffle_set_up_by_command_survives_a_restart(
    redis_server: EmbeddedRedis, org: str
) -> None:
    doc = raffle_night(org)  # the same night file both times: its raffle is the same raffle
    first = await start_server(redis_server.url, doc)
    mic = await first.connect(token("member_in_charge"))
    config = {
        "name": "50/50",
        "location": "Hall",
        "price": 100,
        "first_drawing_at": int(time.time() * 1000) + DAY,
    }
    ok(await mic.cmd("setup_raffle", raffle="ff-1", kind="fifty_fifty", config=config))
    seller = await first.connect(token("seller"))
    ok(await seller.cmd("sell_ticket", raffle="ff-1", amount=100))
    await first.stop()
    second = await start_server(redis_server.url, doc)
    try:
        assert "ff-1" in second.runtime.supervisor.raffles
        seller = await second.connect(token("seller"))
        assert ok(await seller.cmd("sell_ticket", raffle="ff-1", amount=100))["serials"] == [2]
        await caught_up(second)
        view = (await second.get("/api/raffles/ff-1", token("auditor")))[1]
        assert view["sales"] == 200 and view["tickets"] == 2
    finally:
        await second.stop()


async def test_a_retried_sale_or_drawing_is_answered_from_its_first_reply(
    server: LiveServer,
) -> None:
    """A drawing retried after a lost reply is never drawn again (PROTOCOL.md Idempotency)."""
    seller, mic = await clients(server)
    sale = {"op": "sell_ticket", "id": "s-1", "raffle": QOH, "amount": 400, "count": 2}
    first = ok(await seller.send(sale))
    assert ok(await seller.send(dict(sale))) == first
    other = {**sale, "amount": 200, "count": 1}
    assert code(await seller.send(other)) == "conflict"
    for n in range(3):
        ok(await seller.cmd("sell_ticket", raffle=QOH, amount=200, id=f"more-{n}"))
    ok(await mic.cmd("record_drawing_method", raffle=QOH, method="rng", description="CSPRNG"))
    drawing = {"op": "hold_drawing", "id": "d-1", "raffle": QOH}
    drawn = ok(await mic.send(drawing))
    for _ in range(3):
        assert ok(await mic.send(dict(drawing))) == drawn
    status, body = await server.get(f"/api/streams/raffle:{QOH}/events", token("auditor"))
    assert status == 200
    types = [e["type"] for e in body["events"]]
    assert types.count("DrawingHeld") == 1 and types.count("TicketSold") == 4


async def test_the_raffle_view_is_pushed_as_the_projection_folds(server: LiveServer) -> None:
    seller, _mic = await clients(server)
    watcher = await server.connect(token("player", "p-1", player="p-1"))
    await caught_up(server)
    reply = await watcher.send({"op": "subscribe", "id": "v-1", "view": "raffle", "raffle": QOH})
    assert ok(reply)["data"]["sales"] == 0
    ok(await seller.cmd("sell_ticket", raffle=QOH, amount=400, count=2))
    data = await watcher.wait_view(lambda d: d["sales"] == 400)
    assert watcher.views[-1]["view"] == "raffle" and watcher.views[-1]["key"] == QOH
    assert data["tickets"] == 2 and data["pool"] == 400
    unknown = await watcher.send({"op": "subscribe", "id": "v-2", "view": "raffle", "raffle": "x"})
    assert code(unknown) == "unknown_raffle"
    dealer = await server.connect(dealer_token("roulette-1"))
    denied = await dealer.send({"op": "subscribe", "id": "v-3", "view": "raffle", "raffle": QOH})
    assert code(denied) == "forbidden"


async def test_the_server_raises_the_170_day_announcement_by_itself(server: LiveServer) -> None:
    """4620.24(b)(12): no one sends a command; the server's clock looks in on the raffle."""
    seller, mic = await clients(server)
    auditor = await server.connect(token("auditor"))
    config = chest_config()
    ok(await mic.cmd("setup_raffle", raffle="tc-9", kind="treasure_chest", config=config))
    ok(await seller.cmd("sell_ticket", raffle="tc-9", amount=500))
    ok(await auditor.cmd("subscribe", stream="raffle:tc-9"))
    supervisor = server.runtime.supervisor
    now = int(time.time() * 1000)
    assert await supervisor.raise_due_announcements(now + 169 * DAY) == []
    assert await supervisor.raise_due_announcements(now + 170 * DAY) == ["tc-9"]
    assert await supervisor.raise_due_announcements(now + 171 * DAY) == []  # once only
    events = await auditor.wait_events("raffle:tc-9", 3)
    assert [e["type"] for e in events] == ["RaffleOpened", "TicketSold", "AnnouncementRaised"]
    assert events[-1]["actor"] == "system"


async def test_a_refused_setup_leaves_no_raffle_behind(server: LiveServer) -> None:
    seller, mic = await clients(server)
    config = {
        "name": "Spring raffle",
        "location": "Hall",
        "price": 100,
        "first_drawing_at": int(time.time() * 1000) + DAY,
        "prizes": [{"description": "Hamper", "value": 5_000}],
    }
    bad = {**config, "price": -1}
    assert code(await mic.cmd("setup_raffle", raffle="std-9", kind="standard", config=bad)) == (
        "invalid_config"
    )
    supervisor = server.runtime.supervisor
    for _ in range(100):
        if "raffle:std-9" not in supervisor.actors:
            break
        await asyncio.sleep(0.01)
    assert "raffle:std-9" not in supervisor.actors and "std-9" not in supervisor.raffles
    assert code(await seller.cmd("sell_ticket", raffle="std-9", amount=100)) == "unknown_raffle"
    ok(await mic.cmd("setup_raffle", raffle="std-9", kind="standard", config=config))
    assert ok(await seller.cmd("sell_ticket", raffle="std-9", amount=100))["serials"] == [1]
