"""Hostile clients against a real server (issue: one client never hurts another).

A buggy or malicious tablet sends text that cannot be stored, hostile nesting, ``since``
out of range, floods of commands or subscribes, and never reads what it is sent. Each
gets a clear refusal or is disconnected; every other client's commands go on unharmed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import WSMsgType

from services.gateway import transport as gateway
from services.gateway.protocol import MAX_JSON_CONTAINERS
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import (
    LiveServer,
    StuckClient,
    dealer_token,
    player_token,
    start_server,
    token,
)

TABLE = "roulette-1"
STREAM = f"table:{TABLE}"
STRAIGHT = {"kind": "straight", "numbers": ["17"]}
SURROGATE = "\\ud800"


def bet(player: str, command_id: str, amount: int = 10) -> dict[str, Any]:
    return {
        "op": "place_bet",
        "id": command_id,
        "table": TABLE,
        "player": player,
        "bet": STRAIGHT,
        "amount": amount,
    }


async def funded(server: LiveServer, players: list[str], amount: int = 100_000) -> None:
    cashier = await server.connect(token("cashier"))
    for p in players:
        assert (await cashier.cmd("buy_chips", player=p, amount=amount))["ok"]


@pytest.fixture
async def server(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[LiveServer]:
    live = await start_server(redis_server.url, night_doc(org))
    yield live
    await live.stop()


def port_of(server: LiveServer) -> int:
    return int(server.base.rsplit(":", 1)[1])


async def test_bad_text_in_a_busy_batch_fails_only_itself(server: LiveServer) -> None:
    """Commands holding lone surrogates, sent amid 200 good bets and the dealer's call at
    one table (so they would share group commits), get ``bad_request``; every good command
    succeeds (before the fix: ``internal`` for them and for many good ones)."""
    players = [f"p-{i}" for i in range(4)]
    await funded(server, players)
    dealer = await server.connect(dealer_token(TABLE))
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    good = [await server.connect(player_token(p)) for p in players]
    hostile = await server.connect(player_token("p-0"))
    cashier = await server.connect(token("cashier"))
    poison = [
        json.dumps(bet("p-0", "MARK")).replace('"MARK"', f'"x{SURROGATE}{i}"') for i in range(25)
    ] + [json.dumps(bet("MARK", f"h-{i}")).replace('"MARK"', f'"p{SURROGATE}"') for i in range(25)]
    sends: list[Any] = []
    for i in range(50):
        for c, p in zip(good, players, strict=True):
            sends.append(c.send(bet(p, f"g-{p}-{i}")))
        sends.append(hostile.ws.send_str(poison[i]))
        if i % 10 == 0:
            sale = {"op": "buy_chips", "id": f"x-{i}", "player": "MARK", "amount": 1}
            text = json.dumps(sale).replace('"MARK"', f'"p{SURROGATE}"')
            sends.append(cashier.ws.send_str(text))
    replies = await asyncio.gather(*sends)
    good_replies = [r for r in replies if isinstance(r, dict) and str(r["re"]).startswith("g-")]
    assert len(good_replies) == 200
    assert all(r["ok"] for r in good_replies), [r for r in good_replies if not r["ok"]][:3]
    assert (await dealer.cmd("no_more_bets", table=TABLE))["ok"]
    # The hostile client's replies: all bad_request, none internal.
    await asyncio.sleep(0.2)
    hostile_codes = {r["error"]["code"] for r in hostile.replies.values() if not r.get("ok", True)}
    assert hostile_codes == {"bad_request"}
    assert len(await server.runtime.store.read(STREAM)) == 1 + 1 + 200 + 1


async def test_deep_json_is_bad_request_on_the_socket_and_over_http(server: LiveServer) -> None:
    client = await server.connect(token("cashier"))
    deep = '{"op": "buy_chips", "player": "p-1", "amount": 1, "x": ' + "[" * 1500 + "]" * 1500
    reply = await client.send_raw(deep + "}")
    assert reply["re"] is None
    assert reply["error"]["code"] == "bad_request"
    assert str(MAX_JSON_CONTAINERS) in reply["error"]["message"]  # refused unparsed
    # The socket stays open and works.
    assert (await client.cmd("buy_chips", player="p-1", amount=100))["ok"]
    async with server.session.post(
        server.base + "/api/commands",
        data=deep + ', "id": "d-1"}',
        headers={"Authorization": f"Bearer {token('cashier')}"},
    ) as r:
        assert r.content_type == "application/json"
        body = await r.json()
    assert body["error"]["code"] == "bad_request"
    assert (await server.runtime.store.head("cage")).version == 1


@pytest.mark.parametrize("since", [-5, 2**64, 1.5, "7"])
async def test_since_out_of_range_on_a_stream_is_bad_request(
    server: LiveServer, since: Any
) -> None:
    client = await server.connect(token("auditor"))
    reply = await client.cmd("subscribe", stream=STREAM, since=since)
    assert reply["error"]["code"] == "bad_request"
    assert (await client.cmd("subscribe", stream=STREAM, since=0))["ok"]  # still open


@pytest.mark.parametrize("since", ["1-18446744073709551616", f"{2**64}-0", "-5", -5, 2**64])
async def test_since_out_of_range_on_the_log_is_bad_request(server: LiveServer, since: Any) -> None:
    client = await server.connect(token("auditor"))
    reply = await client.cmd("subscribe", stream="log", since=since)
    assert reply["error"]["code"] == "bad_request"
    assert (await client.cmd("subscribe", stream="log", since=0))["ok"]


@pytest.mark.parametrize(
    ("stream", "since"),
    [(STREAM, "-5"), (STREAM, str(2**64)), ("log", "1-18446744073709551616"), ("log", "-5")],
)
async def test_since_out_of_range_over_http_is_bad_request(
    server: LiveServer, stream: str, since: str
) -> None:
    status, body = await server.get(f"/api/streams/{stream}/events?since={since}", token("auditor"))
    assert status == 400
    assert body["error"]["code"] == "bad_request"


async def test_ids_that_once_shared_a_key_are_two_commands(server: LiveServer) -> None:
    """Cashier ``desk/1`` sending id ``7`` and cashier ``desk`` sending id ``1/7`` once
    shared the key ``cashier:desk/1/7``: the second was answered with the first's reply
    and nothing was written for it (chips handed over with no ``ChipsIssued``)."""
    one = await server.connect(token("cashier", "desk/1"))
    other = await server.connect(token("cashier", "desk"))
    first = await one.send({"op": "buy_chips", "id": "7", "player": "p-1", "amount": 500})
    second = await other.send({"op": "buy_chips", "id": "1/7", "player": "p-1", "amount": 500})
    assert first["ok"] and second["ok"]
    assert first["result"]["seq"] != second["result"]["seq"]
    events = await server.runtime.store.read("cage")
    assert [(e.actor, e.causation) for e in events] == [
        ("cashier:desk/1", "7"),
        ("cashier:desk", "1/7"),
    ]
    assert await server.runtime.store.balance("p-1") == 1000


async def test_subscribing_again_starts_no_second_catch_up(server: LiveServer) -> None:
    await funded(server, ["p-1"])
    client = await server.connect(token("auditor"))
    first = await client.cmd("subscribe", stream="cage")
    assert first["ok"] and "already" not in first["result"]
    await client.wait_events("cage", first["result"]["head"])
    for _ in range(20):
        again = await client.cmd("subscribe", stream="cage", since=0)
        assert again["result"] == {"head": first["result"]["head"], "already": True}
    await asyncio.sleep(0.1)
    assert len(client.events) == first["result"]["head"]  # nothing sent twice


async def test_subscriptions_per_connection_are_limited(
    redis_server: EmbeddedRedis, org: str
) -> None:
    server = await start_server(redis_server.url, night_doc(org), max_subscriptions=3)
    try:
        client = await server.connect(token("auditor"))
        for stream in ("cage", "license", STREAM):
            assert (await client.cmd("subscribe", stream=stream))["ok"]
        refused = await client.cmd("subscribe", stream="log")
        assert refused["error"]["code"] == "too_many_subscriptions"
        assert (await client.cmd("unsubscribe", stream="cage"))["ok"]
        assert (await client.cmd("subscribe", stream="log"))["ok"]
    finally:
        await server.stop()


async def test_a_socket_that_never_reads_its_replies_is_dropped(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """Replies go through the same bounded send path as events: cheap requests on a socket
    that reads nothing fill its 1 MiB and it is disconnected, while others carry on. (With
    the principal's rate out of the way here, so that the send path is what stops it.)"""
    server = await start_server(
        redis_server.url, night_doc(org), principal_rate=1e9, principal_burst=10**9
    )
    stuck = await StuckClient.connect(port_of(server), token("auditor", "stuck"))
    try:
        await _flood_unread_replies(server, stuck)
    finally:
        stuck.close()
        await server.stop()


async def _flood_unread_replies(server: LiveServer, stuck: StuckClient) -> None:
    app = server.runner.app
    cashier = await server.connect(token("cashier"))
    # An unsubscribe's id is only echoed: 60 KiB of it makes a 60 KiB reply.
    frame = {"op": "unsubscribe", "id": "x" * 60_000, "stream": "cage"}
    dropped_before = server.runtime.metrics.slow_disconnects._value.get()
    for _ in range(200):
        for _ in range(10):
            stuck.send(frame)
        await asyncio.sleep(0.01)
        if server.runtime.metrics.slow_disconnects._value.get() > dropped_before:
            break
    assert server.runtime.metrics.slow_disconnects._value.get() == dropped_before + 1
    assert (await cashier.cmd("buy_chips", player="p-1", amount=100))["ok"]
    for _ in range(100):
        if not any(c.who.sub == "stuck" for c in app[gateway.CLIENTS]):
            break
        await asyncio.sleep(0.05)
    assert not any(c.who.sub == "stuck" for c in app[gateway.CLIENTS])


async def test_a_subscribe_storm_on_a_socket_that_never_reads(server: LiveServer) -> None:
    """300 subscribes to a long stream on a socket that reads nothing start one catch-up,
    which waits for the client; the cage keeps serving chip sales meanwhile."""
    await funded(server, [f"p-{i}" for i in range(50)], amount=10)
    stuck = await StuckClient.connect(port_of(server), token("auditor", "storm"))
    try:
        await _storm(server, stuck)
    finally:
        stuck.close()


async def _storm(server: LiveServer, stuck: StuckClient) -> None:
    for i in range(300):
        stuck.send({"op": "subscribe", "id": f"s-{i}", "stream": "cage"})
    cashier = await server.connect(token("cashier"))
    started = time.monotonic()
    for i in range(20):
        assert (await cashier.cmd("buy_chips", player=f"q-{i}", amount=10))["ok"]
    assert time.monotonic() - started < 5  # not 6.6 s per sale as before
    [storm] = [c for c in server.runner.app[gateway.CLIENTS] if c.who.sub == "storm"]
    assert list(storm.subs) == ["cage"]
    assert len(storm.catching_up) <= 1


async def test_a_flooding_principal_is_paced_and_others_go_first(tmp_path: Path, org: str) -> None:
    """One player floods one table from three connections while the store is stalled
    (SIGSTOP): it never has more than its limit in flight (its sockets are not read
    meanwhile), and another player's bet, sent after the whole flood, is applied among the
    first once the store is back (the mailbox serves principals in turn)."""
    redis = EmbeddedRedis(tmp_path / "redis", appendfsync="everysec", die_with_parent=True)
    redis.start()
    server = await start_server(
        redis.url, night_doc(org), principal_in_flight=4, command_deadline_seconds=60
    )
    try:
        await funded(server, ["p-1", "p-2"])
        dealer = await server.connect(dealer_token(TABLE))
        assert (await dealer.cmd("open_round", table=TABLE))["ok"]
        flood = [await server.connect(player_token("p-1")) for _ in range(3)]
        good = await server.connect(player_token("p-2"))
        assert redis.proc is not None
        os.kill(redis.proc.pid, signal.SIGSTOP)
        try:
            pending = [
                asyncio.ensure_future(c.send(bet("p-1", f"f-{k}-{i}"), timeout=60))
                for i in range(20)
                for k, c in enumerate(flood)
            ]
            await asyncio.sleep(0.5)
            slots = server.runner.app[gateway.SLOTS]
            assert slots.in_flight(("player", "p-1")) == 4
            mine = asyncio.ensure_future(good.send(bet("p-2", "good"), timeout=60))
            await asyncio.sleep(0.3)
            assert slots.in_flight(("player", "p-2")) == 1
            assert slots.in_flight(("player", "p-1")) == 4
        finally:
            os.kill(redis.proc.pid, signal.SIGCONT)
        replies = await asyncio.gather(*pending)
        assert all(r["ok"] for r in replies)
        reply = await mine
        assert reply["ok"]
        flood_seqs = sorted(r["result"]["seq"] for r in replies)
        # At most the flooder's 4 in flight were ahead of it, not its 60.
        assert sum(1 for s in flood_seqs if s < reply["result"]["seq"]) <= 4
    finally:
        await server.stop()
        redis.stop()


async def test_a_command_gets_its_reply_within_the_deadline_when_redis_stalls(
    tmp_path: Path, org: str
) -> None:
    """With Redis stopped (SIGSTOP), a command is answered ``unavailable`` at the
    deadline; once Redis is back, its retry with the same id is applied once."""
    redis = EmbeddedRedis(tmp_path / "redis", appendfsync="everysec")
    redis.start()
    server = await start_server(redis.url, night_doc(org), command_deadline_seconds=1.0)
    try:
        cashier = await server.connect(token("cashier"))
        assert (await cashier.cmd("buy_chips", player="p-1", amount=100))["ok"]
        assert redis.proc is not None
        os.kill(redis.proc.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            replies = await asyncio.gather(
                *(
                    cashier.send(
                        {"op": "buy_chips", "id": f"o-{i}", "player": "p-1", "amount": 100},
                        timeout=20,
                    )
                    for i in range(5)
                )
            )
            waited = time.monotonic() - started
        finally:
            os.kill(redis.proc.pid, signal.SIGCONT)
        assert {r["error"]["code"] for r in replies} == {"unavailable"}
        assert waited < 1.0 + 2.0  # the deadline, not Redis's socket timeout (10 s)
        for _ in range(3):
            again = await asyncio.gather(
                *(
                    cashier.send(
                        {"op": "buy_chips", "id": f"o-{i}", "player": "p-1", "amount": 100},
                        timeout=20,
                    )
                    for i in range(5)
                )
            )
            if all(r["ok"] for r in again):
                break
            await asyncio.sleep(0.5)
        assert all(r["ok"] for r in again)
        issued = [e for e in await server.runtime.store.read("cage") if e.type == "ChipsIssued"]
        assert sorted(e.causation for e in issued if e.causation.startswith("o-")) == [
            f"o-{i}" for i in range(5)
        ]
        assert len(issued) == 6
        assert await server.runtime.store.balance("p-1") == 600
    finally:
        await server.stop()
        redis.stop()


async def test_a_retry_after_its_record_was_deleted_is_not_applied_again(
    server: LiveServer,
) -> None:
    """Deleting a command's idempotency record in Redis does not make its retry apply
    again: the actor knows every command that caused events in its stream."""
    cashier = await server.connect(token("cashier"))
    msg = {"op": "buy_chips", "id": "sale-1", "player": "p-1", "amount": 2000}
    assert (await cashier.send(msg))["ok"]
    store = server.runtime.store
    from services.store import keys

    deleted = await store.redis.hdel(keys.commands(store.org), "cashier:cashier/sale-1")
    assert deleted == 1
    retry = await cashier.send(msg)
    assert retry["error"]["code"] == "already_applied"
    assert await store.balance("p-1") == 2000
    assert [e.causation for e in await store.read("cage")] == ["sale-1"]


async def test_binary_frames_are_paced_like_any_message(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """Binary frames are refused, but read at the principal's rate like text: a flood of
    them gets no more replies than the rate allows (here 5 at once, then 10 a second)."""
    server = await start_server(
        redis_server.url, night_doc(org), principal_rate=10.0, principal_burst=5
    )
    try:
        client = await server.connect(token("auditor", "bin"))
        for _ in range(20):
            await client.ws.send_bytes(b"\x00")
        await asyncio.sleep(0.5)
        early = sum(1 for kind, _re in client.arrivals if kind == "re")
        assert early <= 5 + 10 * 0.5 + 2  # the burst and half a second of the rate, not 20
        for _ in range(100):
            if sum(1 for kind, _re in client.arrivals if kind == "re") == 20:
                break
            await asyncio.sleep(0.05)
        assert sum(1 for kind, _re in client.arrivals if kind == "re") == 20
    finally:
        await server.stop()


async def _received(ws: Any, kind: WSMsgType, into: list[tuple[float, Any]]) -> None:
    """Append each message of ``kind`` the client gets, with its arrival time."""
    async for msg in ws:
        if msg.type == kind:
            into.append((time.monotonic(), msg.data))


@pytest.mark.parametrize("kind", ["ping", "pong"])
async def test_pings_and_pongs_are_paced_like_any_message(
    redis_server: EmbeddedRedis, org: str, kind: str
) -> None:
    """A client's pings are answered, each in turn, and its unasked-for pongs ignored, but
    both are read at its principal's rate like any message (here 5 at once, then 10 a
    second): a flood of 20 takes the server about 1.5 s to read, not one turn."""
    server = await start_server(
        redis_server.url, night_doc(org), principal_rate=10.0, principal_burst=5
    )
    try:
        ws = await server.session.ws_connect(
            f"{server.base}/ws?token={token('auditor', 'pinger')}", autoping=False
        )
        pongs: list[tuple[float, bytes]] = []
        reading = asyncio.ensure_future(_received(ws, WSMsgType.PONG, pongs))
        started = time.monotonic()
        for i in range(20):
            await (ws.ping if kind == "ping" else ws.pong)(b"%d" % i)
        if kind == "pong":
            await ws.ping(b"after")  # read after the 20 pongs, at the rate
        expected = [b"%d" % i for i in range(20)] if kind == "ping" else [b"after"]
        await asyncio.sleep(0.5)
        if kind == "ping":
            assert 5 <= len(pongs) <= 5 + 10 * 0.5 + 2  # the burst and half a second, not 20
        else:
            assert pongs == []  # nothing answers a pong; the ping waits behind them
        for _ in range(100):
            if len(pongs) == len(expected):
                break
            await asyncio.sleep(0.05)
        assert [data for _at, data in pongs] == expected
        assert pongs[-1][0] - started >= 1.2  # 15 or 16 of them at 10 a second
        reading.cancel()
        await ws.close()
    finally:
        await server.stop()


async def test_the_heartbeat_closes_only_the_socket_that_does_not_answer(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """With pings answered by the gateway itself (not aiohttp's autoping), the heartbeat
    still holds (docs/PROTOCOL.md): a client that answers the server's pings stays
    connected, one that never answers is closed half an interval after the ping it left
    unanswered."""
    server = await start_server(redis_server.url, night_doc(org), heartbeat_seconds=0.4)
    try:
        url = f"{server.base}/ws?token={token('auditor', 'beat')}"
        answering = await server.session.ws_connect(url)  # aiohttp answers in receive()
        texts: list[tuple[float, str]] = []
        reading = asyncio.ensure_future(_received(answering, WSMsgType.TEXT, texts))
        silent = await server.session.ws_connect(url, autoping=False)
        pings: list[bytes] = []
        started = time.monotonic()
        async for msg in silent:  # never answers: the server gives up on it
            if msg.type == WSMsgType.PING:
                pings.append(msg.data)
        assert pings  # it was pinged
        assert time.monotonic() - started < 3.0
        await asyncio.sleep(1.0)  # two more intervals
        assert not answering.closed
        await answering.send_str(json.dumps({"op": "no_such_op", "id": "alive"}))
        for _ in range(100):
            if texts:
                break
            await asyncio.sleep(0.05)
        assert json.loads(texts[-1][1])["re"] == "alive"
        reading.cancel()
        await answering.close()
    finally:
        await server.stop()


async def test_large_messages_cost_their_size(redis_server: EmbeddedRedis, org: str) -> None:
    """A 60 KiB message costs its principal 1 token per 256 bytes: with 500 a second, a
    flood of them is read a couple a second, while a small command of another client is
    read at once."""
    server = await start_server(redis_server.url, night_doc(org), principal_burst=200)
    try:
        wide = await server.connect(player_token("p-1"))
        frame = '{"op": "nope", "id": "w", "a": [' + ",".join(["[]"] * 20_000) + "]}"
        for _ in range(6):
            await wide.ws.send_str(frame)
        cashier = await server.connect(token("cashier"))
        started = time.monotonic()
        assert (await cashier.cmd("buy_chips", player="p-2", amount=100))["ok"]
        assert time.monotonic() - started < 2.0  # not behind the six wide frames
        slots = server.runner.app[gateway.SLOTS]
        await asyncio.sleep(0.2)
        assert slots.reserve(("player", "p-1"), 0.0) > 0  # p-1 owes tokens: it waits
    finally:
        await server.stop()


async def test_a_log_subscribe_cancelled_at_once_still_gets_its_reply(server: LiveServer) -> None:
    """Every message gets exactly one reply: a ``log`` subscribe unsubscribed right away
    (before the server read the log's head) is answered too."""
    client = await server.connect(token("auditor"))
    waits = []
    for i in range(50):
        waits.append(
            asyncio.ensure_future(client.send({"op": "subscribe", "id": f"s{i}", "stream": "log"}))
        )
        await client.ws.send_str(json.dumps({"op": "unsubscribe", "id": f"u{i}", "stream": "log"}))
    replies = await asyncio.gather(*waits)
    assert all(r["ok"] for r in replies)


async def test_a_body_that_cannot_be_decoded_is_bad_request(server: LiveServer) -> None:
    async with server.session.post(
        server.base + "/api/commands",
        data=b"hello",
        headers={"Authorization": f"Bearer {token('cashier')}", "Content-Encoding": "gzip"},
    ) as r:
        assert r.status == 400
        body = await r.json()
    assert body["error"]["code"] == "bad_request"


async def test_the_authorization_header_wins_whatever_its_case(server: LiveServer) -> None:
    player = player_token("p-1")
    async with server.session.get(
        server.base + f"/api/bankrolls?token={token('auditor')}",
        headers={"Authorization": f"bearer {player}"},
    ) as r:
        assert r.status == 403  # the player's header, not the auditor's query token


@pytest.mark.parametrize("limit", ["10_0", "１０", " 10", "-1", "0"])
async def test_a_limit_that_is_not_plain_digits_is_bad_request(
    server: LiveServer, limit: str
) -> None:
    status, body = await server.get(f"/api/streams/cage/events?limit={limit}", token("auditor"))
    assert status == 400 and body["error"]["code"] == "bad_request"


def _record_handled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sub of each message's sender as the gateway handles it, in order."""
    handled: list[str] = []
    on_text = gateway._on_text

    def recorded(client: Any, text: str, give_back: Any) -> None:
        handled.append(client.who.sub)
        on_text(client, text, give_back)

    monkeypatch.setattr(gateway, "_on_text", recorded)
    return handled


async def test_frames_read_in_one_go_let_the_others_run_every_few(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client whose frames all arrive at once (40 in one write, within its burst: not
    paced) has them handled a few per turn of the event loop (``FRAMES_PER_TURN``):
    another client's frame, which reached the server with them, is handled among the first
    of them, not after the lot."""
    handled = _record_handled(monkeypatch)
    flood = await StuckClient.connect(port_of(server), player_token("p-1"))
    good = await server.connect(player_token("p-2"))
    try:
        flood.send_all([{"op": "no_such_op", "id": f"f-{i}"} for i in range(40)])
        reply = await good.send({"op": "no_such_op", "id": "good"})
        assert reply["error"]["code"] == "bad_request"
        for _ in range(100):
            if len(handled) == 41:
                break
            await asyncio.sleep(0.05)
        assert sorted(handled) == ["p-1"] * 40 + ["p-2"]
        assert handled.index("p-2") <= gateway.FRAMES_PER_TURN, handled
    finally:
        flood.close()


async def test_two_floods_read_at_once_take_turns_of_a_few_frames(
    server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two clients whose frames (24 each, in one write) reach the server in the same read
    are handled in turns: neither handler goes on past ``FRAMES_PER_TURN`` frames while
    the other has frames waiting."""
    handled = _record_handled(monkeypatch)
    floods = [await StuckClient.connect(port_of(server), player_token(p)) for p in ("p-1", "p-2")]
    try:
        # Both writes go out in this turn: the server reads both sockets in its next one.
        for flood in floods:
            flood.send_all([{"op": "no_such_op", "id": f"f-{i}"} for i in range(24)])
        for _ in range(100):
            if len(handled) == 48:
                break
            await asyncio.sleep(0.05)
        assert sorted(handled) == ["p-1"] * 24 + ["p-2"] * 24
        runs = [len(list(g)) for _k, g in itertools.groupby(handled)]
        assert max(runs) <= gateway.FRAMES_PER_TURN, handled
        assert len(runs) >= 2 * 24 // gateway.FRAMES_PER_TURN - 1, handled
    finally:
        for flood in floods:
            flood.close()
