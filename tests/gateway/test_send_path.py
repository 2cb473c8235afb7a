"""The websocket's send path and the typed path, against a real server: the frames due in
one turn go out in one write, in order; a retry is the same command whichever path reads
it; replies are JSON a client reads back to the same values."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from services.gateway import transport as gateway
from services.gateway.ops import FAST_FRAME_CHARS
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import LiveServer, WsClient, dealer_token, player_token, start_server, token

TABLE = "roulette-1"


class CountedWrites:
    """The connection's real transport, counting the writes made to it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.writes = 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self.inner.write(data)

    def get_write_buffer_size(self) -> int:
        return int(self.inner.get_write_buffer_size())

    def is_closing(self) -> bool:
        return bool(self.inner.is_closing())

    def abort(self) -> None:
        self.inner.abort()


@pytest.fixture
async def server(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[LiveServer]:
    live = await start_server(redis_server.url, night_doc(org))
    cashier = await live.connect(token("cashier"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=10_000))["ok"]
    dealer = await live.connect(dealer_token(TABLE))
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    yield live
    await live.stop()


def server_side(server: LiveServer, sub: str) -> gateway.Client:
    [client] = [c for c in server.runner.app[gateway.CLIENTS] if c.who.sub == sub]
    return client


def awaiting(client: WsClient, ids: list[Any]) -> list[asyncio.Future[dict[str, Any]]]:
    """Futures of the replies to ``ids``, to be sent by other means than ``client.send``."""
    loop = asyncio.get_running_loop()
    futures = [loop.create_future() for _ in ids]
    client._waiters.update(zip(ids, futures, strict=True))
    return futures


async def send_text(client: WsClient, command_id: Any, text: str) -> dict[str, Any]:
    """Send a frame as given; its reply (by ``command_id``)."""
    [reply] = awaiting(client, [command_id])
    await client.ws.send_str(text)
    return await asyncio.wait_for(reply, 10)


async def test_frames_due_in_one_turn_go_out_in_one_write_in_order(server: LiveServer) -> None:
    player = await server.connect(player_token("p-1"))
    assert (await player.cmd("subscribe", stream=f"table:{TABLE}"))["ok"]
    # The catch-up (opened, round opened) is written after the reply: let it land first,
    # so that only the five replies are counted.
    await player.wait_events(f"table:{TABLE}", 2)
    conn = server_side(server, "p-1")
    counted = CountedWrites(conn.transport)
    conn.transport = counted
    ids = [f"x-{i}" for i in range(5)]
    replies = awaiting(player, ids)
    for i in ids:
        conn.answer(i, {"ok": True, "result": {"n": i}})
    assert counted.writes == 0  # gathered until the turn is over
    await asyncio.wait_for(asyncio.gather(*replies), 10)
    assert counted.writes == 1
    assert [a for a in player.arrivals if a[0] == "re" and a[1] in ids] == [("re", i) for i in ids]


async def test_a_batch_s_replies_and_events_are_written_when_its_actor_is_done(
    server: LiveServer,
) -> None:
    """The actor answers a bet and its reply (and the event to the subscriber) is written
    at the end of the actor's own batch, not a turn of the event loop later: by the time
    the runtime's ``after_batch`` hooks have run, the socket has had its one write."""
    player = await server.connect(player_token("p-1"))
    assert (await player.cmd("subscribe", stream=f"table:{TABLE}"))["ok"]
    await player.wait_events(f"table:{TABLE}", 2)  # the catch-up: opened, round opened
    conn = server_side(server, "p-1")
    counted = CountedWrites(conn.transport)
    conn.transport = counted
    at_batch_end: list[int] = []
    server.runtime.after_batch.append(lambda: at_batch_end.append(counted.writes))
    reply = await player.send(bet("w-1"))
    assert reply["ok"]
    assert at_batch_end == [1]  # the event and the reply, in one write, in the batch's turn
    assert counted.writes == 1
    # The event came in the same write, ahead of the reply.
    assert [e["type"] for e in player.events if e["type"] == "BetPlaced"] == ["BetPlaced"]
    placed = next(e["seq"] for e in player.events if e["type"] == "BetPlaced")
    order = player.arrivals
    assert order.index(("ev", (f"table:{TABLE}", placed))) < order.index(("re", "w-1"))


async def test_a_faulty_after_batch_hook_stops_neither_the_others_nor_the_actor(
    server: LiveServer,
) -> None:
    """A hook that raises after a batch is logged: the hooks after it run, the bet is
    answered, and the table's actor goes on with the next bet."""
    player = await server.connect(player_token("p-1"))
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("a broken hook")

    server.runtime.after_batch[:0] = [broken]
    server.runtime.after_batch.append(lambda: ran.append("next"))
    assert (await player.send(bet("h-1")))["ok"]
    assert (await player.send(bet("h-2")))["ok"]
    assert len(ran) >= 2  # once per batch at least: the two bets' batches


async def test_a_socket_with_no_frame_queued_is_seen_as_such(server: LiveServer) -> None:
    """The handler's look at aiohttp's reader queue finds it (a renamed queue would make
    every frame look queued, and every few frames a wasted turn) and finds it empty
    between two requests."""
    player = await server.connect(player_token("p-1"))
    assert (await player.send(bet("q-1")))["ok"]
    ws = server_side(server, "p-1").ws
    assert getattr(getattr(ws, "_reader", None), "_buffer", None) is not None
    assert gateway._frame_waiting(ws) is False


async def test_due_writes_write_every_connection_and_one_fault_stops_none() -> None:
    """The connections due are written together, each once; one whose write fails is
    logged and the others are written all the same; the turn's own callback then finds
    nothing left."""

    class Conn:
        def __init__(self, broken: bool = False) -> None:
            self.flushed = 0
            self.broken = broken
            self.who = type("Who", (), {"sub": "x"})()

        def flush(self) -> None:
            self.flushed += 1
            if self.broken:
                raise ConnectionResetError("gone")

    due = gateway.DueWrites()
    a, broken, b = Conn(), Conn(broken=True), Conn()
    for conn in (a, broken, b):
        due.add(conn)  # type: ignore[arg-type]
    due.write()
    assert (a.flushed, broken.flushed, b.flushed) == (1, 1, 1)
    await asyncio.sleep(0)  # the turn's callback: nothing more is due
    assert (a.flushed, broken.flushed, b.flushed) == (1, 1, 1)
    due.add(a)  # type: ignore[arg-type]
    await asyncio.sleep(0)
    assert a.flushed == 2  # and a connection due later is written at its turn


async def test_nothing_gathered_is_written_once_the_socket_closes(server: LiveServer) -> None:
    player = await server.connect(player_token("p-1"))
    assert (await player.cmd("subscribe", stream=f"table:{TABLE}"))["ok"]
    conn = server_side(server, "p-1")
    counted = CountedWrites(conn.transport)
    conn.transport = counted
    conn.answer("late", {"ok": True, "result": {}})
    await conn.ws.close()  # the close frame goes first: nothing may follow it
    await asyncio.sleep(0.05)
    assert counted.writes == 0
    assert "late" not in player.replies


def bet(command_id: str, amount: int = 100) -> dict[str, Any]:
    return {
        "op": "place_bet",
        "id": command_id,
        "table": TABLE,
        "player": "p-1",
        "bet": {"kind": "straight", "numbers": ["17"]},
        "amount": amount,
    }


async def test_a_retry_is_the_same_command_whichever_path_reads_it(server: LiveServer) -> None:
    """A frame padded past the typed decoder's reach takes the exact path; its retry in a
    compact frame takes the typed one (and the reverse): each retry gets the first reply,
    and other content under the same id is a ``conflict``."""
    player = await server.connect(player_token("p-1"))
    pad = " " * FAST_FRAME_CHARS
    for first, retry in (("typed", "exact"), ("exact", "typed")):
        cid = f"r-{first}"
        frames = {
            "typed": json.dumps(bet(cid), separators=(",", ":")),
            "exact": json.dumps(dict(reversed(bet(cid).items()))) + pad,
        }
        reply = await send_text(player, cid, frames[first])
        assert reply["ok"], reply
        assert await send_text(player, cid, frames[retry]) == reply
        other = await player.send(bet(cid, amount=101))
        assert other["error"]["code"] == "conflict"
    assert len(await server.runtime.store.read(f"table:{TABLE}")) == 1 + 1 + 2


async def test_replies_read_back_to_the_same_values(server: LiveServer) -> None:
    """Text past ASCII is sent as UTF-8, and an ``re`` msgspec cannot write (a lone
    surrogate) is escaped as the standard encoder does: the client reads what was meant."""
    player = await server.connect(player_token("p-1"))
    reply = await player.send({**bet("é-1"), "table": "café"})
    assert reply == {
        "re": "é-1",
        "ok": False,
        "error": {"code": "unknown_table", "message": "no table 'café' tonight"},
    }
    text = json.dumps(bet("x")).replace('"x"', '"x\\ud800"')
    assert (await send_text(player, "x\ud800", text))["error"]["code"] == "bad_request"


def test_encode_falls_back_to_the_standard_encoder() -> None:
    assert gateway.encode({"re": "x\ud800", "ok": False}) == b'{"re":"x\\ud800","ok":false}'
    assert gateway.encode({"re": "é", "n": [1, None]}) == '{"re":"é","n":[1,null]}'.encode()
