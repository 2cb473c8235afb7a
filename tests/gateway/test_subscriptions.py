"""Subscriptions: catch-up from any seq then live, with no gap and no duplicate; who may
read what; slow clients are dropped without stalling the table (PROTOCOL.md)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
from collections.abc import AsyncIterator

import pytest

from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import LiveServer, WsClient, dealer_token, player_token, start_server, token

TABLE = "roulette-1"
STREAM = f"table:{TABLE}"


async def open_round_with_chips(
    server: LiveServer, amount: int = 100_000
) -> tuple[WsClient, WsClient]:
    cashier = await server.connect(token("cashier"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=amount))["ok"]
    dealer = await server.connect(dealer_token(TABLE))
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    player = await server.connect(player_token("p-1"))
    return dealer, player


def bet(player: WsClient) -> asyncio.Future[dict[str, object]]:
    return asyncio.ensure_future(
        player.cmd("place_bet", table=TABLE, player="p-1", bet={"kind": "red"}, amount=1)
    )


async def test_subscribe_from_the_middle_while_bets_flow_misses_nothing(server: LiveServer) -> None:
    _dealer, player = await open_round_with_chips(server)
    for _ in range(20):
        assert (await bet(player))["ok"]
    flowing = [bet(player) for _ in range(200)]
    watcher = await server.connect(token("auditor"))
    sub = await watcher.cmd("subscribe", stream=STREAM, since=10)
    assert sub["ok"]
    replies = await asyncio.gather(*flowing)
    assert all(r["ok"] for r in replies)
    head = (await server.runtime.store.head(STREAM)).version
    got = await watcher.wait_events(STREAM, head - 10)
    assert [e["seq"] for e in got] == list(range(11, head + 1))
    assert sub["result"]["head"] >= 10


async def test_resume_with_since_after_a_disconnect(server: LiveServer) -> None:
    _dealer, player = await open_round_with_chips(server)
    first = await server.connect(token("auditor"))
    assert (await first.cmd("subscribe", stream=STREAM, since=0))["ok"]
    for _ in range(5):
        assert (await bet(player))["ok"]
    seen = await first.wait_events(STREAM, 7)
    last = seen[-1]["seq"]
    await first.close()
    for _ in range(5):
        assert (await bet(player))["ok"]  # missed while away
    second = await server.connect(token("auditor"))
    assert (await second.cmd("subscribe", stream=STREAM, since=last))["ok"]
    assert (await bet(player))["ok"]
    again = await second.wait_events(STREAM, 6)
    assert [e["seq"] for e in again] == list(range(last + 1, last + 7))


async def test_who_may_read_what(server: LiveServer) -> None:
    player = await server.connect(player_token("p-1"))
    assert (await player.cmd("subscribe", stream=STREAM))["ok"]
    for stream in ("cage", "log", "license"):
        assert (await player.cmd("subscribe", stream=stream))["error"]["code"] == "forbidden"
    other_dealer = await server.connect(dealer_token("roulette-2"))
    assert (await other_dealer.cmd("subscribe", stream=STREAM))["error"]["code"] == "forbidden"
    cashier = await server.connect(token("cashier"))
    assert (await cashier.cmd("subscribe", stream="cage"))["ok"]
    assert (await cashier.cmd("subscribe", stream=STREAM))["error"]["code"] == "forbidden"
    auditor = await server.connect(token("auditor"))
    for stream in ("cage", "log", "license", STREAM):
        assert (await auditor.cmd("subscribe", stream=stream))["ok"]
    assert (await auditor.cmd("subscribe", stream="table:nope"))["error"][
        "code"
    ] == "unknown_stream"
    assert (await auditor.cmd("subscribe", stream=STREAM, since=-1))["error"][
        "code"
    ] == "bad_request"


async def test_unsubscribe_stops_the_events(server: LiveServer) -> None:
    _dealer, player = await open_round_with_chips(server)
    auditor = await server.connect(token("auditor"))
    assert (await auditor.cmd("subscribe", stream=STREAM, since=0))["ok"]
    await auditor.wait_events(STREAM, 2)
    assert (await auditor.cmd("unsubscribe", stream=STREAM))["ok"]
    assert (await bet(player))["ok"]
    # A later command's reply arrives after any event published before it.
    assert (await auditor.cmd("subscribe", stream="cage", since=0))["ok"]
    assert len([e for e in auditor.events if e["stream"] == STREAM]) == 2


async def test_the_log_carries_every_stream_in_commit_order(server: LiveServer) -> None:
    _dealer, player = await open_round_with_chips(server)
    auditor = await server.connect(token("auditor"))
    sub = await auditor.cmd("subscribe", stream="log", since=0)
    assert sub["ok"]
    before = await auditor.wait_events("cage", 1)
    assert before[0]["type"] == "ChipsIssued" and before[0]["log_id"]
    assert (await bet(player))["ok"]
    bets = await auditor.wait_events(STREAM, 3)
    log_ids = [e["log_id"] for e in auditor.events]
    assert len(log_ids) == len(set(log_ids))
    key = [tuple(int(x) for x in i.split("-")) for i in log_ids]
    assert key == sorted(key)
    # Resuming the log from a log id returns exactly what came after it.
    late = await server.connect(token("auditor"))
    assert (await late.cmd("subscribe", stream="log", since=bets[0]["log_id"]))["ok"]
    after = await late.wait_events(STREAM, 2)
    assert [e["seq"] for e in after] == [bets[1]["seq"], bets[2]["seq"]]


def _raw_ws(port: int, tok: str) -> socket.socket:
    """A websocket client that completes the handshake and then never reads: a stuck tablet."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws?token={tok} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    response = b""
    while b"\r\n\r\n" not in response:
        response += sock.recv(1)
    assert b" 101 " in response
    payload = json.dumps({"op": "subscribe", "id": "s", "stream": STREAM, "since": 0}).encode()
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
    return sock


@pytest.fixture
async def small_queue_server(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[LiveServer]:
    live = await start_server(redis_server.url, night_doc(org), send_buffer_bytes=16 * 1024)
    yield live
    await live.stop()


async def test_a_stuck_client_is_dropped_and_the_table_goes_on(
    small_queue_server: LiveServer,
) -> None:
    server = small_queue_server
    _dealer, player = await open_round_with_chips(server)
    port = int(server.base.rsplit(":", 1)[1])
    stuck = await asyncio.to_thread(_raw_ws, port, token("auditor"))
    try:
        broker = server.runtime.broker
        for _ in range(100):  # wait for its subscription
            if broker.subscribers(STREAM) >= 1:
                break
            await asyncio.sleep(0.01)
        assert broker.subscribers(STREAM) == 1
        slow = server.runtime.metrics.slow_disconnects
        # Fill its socket buffers and then its queue with live events.
        for _ in range(400):
            replies = await asyncio.gather(*[bet(player) for _ in range(50)])
            assert all(r["ok"] for r in replies)
            if slow._value.get() >= 1:
                break
        assert slow._value.get() == 1
        assert broker.subscribers(STREAM) == 0
        # The table still answers promptly.
        assert (await asyncio.wait_for(bet(player), 2))["ok"]
    finally:
        stuck.close()


async def test_shutdown_closes_every_websocket_with_going_away(
    redis_server: EmbeddedRedis, org: str
) -> None:
    live = await start_server(redis_server.url, night_doc(org))
    client = await live.connect(token("auditor"))
    assert (await client.cmd("subscribe", stream=STREAM))["ok"]
    await asyncio.wait_for(live.runner.cleanup(), 5)
    assert await asyncio.wait_for(client.closed, 5) == 1001
    await live.session.close()


async def test_the_reply_comes_first_then_the_catch_up_in_order(server: LiveServer) -> None:
    _dealer, player = await open_round_with_chips(server)
    for _ in range(5):
        assert (await bet(player))["ok"]
    auditor = await server.connect(token("auditor"))
    sub = await auditor.send({"op": "subscribe", "id": "sub-1", "stream": STREAM, "since": 2})
    assert sub["result"]["head"] == 7
    await auditor.wait_events(STREAM, 5)
    assert auditor.arrivals == [("re", "sub-1")] + [("ev", (STREAM, n)) for n in range(3, 8)]
