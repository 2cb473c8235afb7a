"""The HTTP views paced per principal (services/gateway/view_pacing.py), against a real
server: a client fetching views in a loop slows down only itself."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import socket
import sys
import time
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from services.gateway import transport as gateway
from services.gateway import view_pacing
from services.gateway.view_pacing import VIEW_COST_BYTES, VIEW_TURNS
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import LiveServer, start_server, token

AUDITOR = ("auditor", "a-1")
CAGE_EVENTS = "/api/streams/cage/events?limit=10000"

# A second process that keeps 16 GETs of one view going for as long as it runs; it
# prints a line once the first is answered.
FLOODER = r"""
import asyncio, sys
import aiohttp

async def main(url, tok):
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {tok}"}) as s:
        async def one():
            while True:
                async with s.get(url) as r:
                    await r.read()
                if not said:
                    said.append(print("answered", flush=True))
        await asyncio.gather(*(one() for _ in range(16)))

said = []

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def cage_events(server: LiveServer, n: int, *, players: int = 7) -> None:
    """``n`` chip purchases in the cage's stream, for ``players`` players ``p-0`` … in
    turn (one bankroll each), a hundred at a time."""
    cashier = await server.connect(token("cashier"))
    for start in range(0, n, 100):
        replies = await asyncio.gather(
            *(
                cashier.cmd("buy_chips", player=f"p-{i % players}", amount=100)
                for i in range(start, min(n, start + 100))
            )
        )
        assert all(r["ok"] for r in replies)


async def filled_beforehand(redis_url: str, org: str, fill: Any) -> None:
    """Run ``fill(server)`` on a server of its own with the usual pacing, stopped after:
    a slow rate set for the test would pace the cashier filling the store too."""
    filler = await start_server(redis_url, night_doc(org))
    try:
        await fill(filler)
    finally:
        await filler.stop()


async def timed_get(server: LiveServer, path: str, tok: str) -> tuple[int, Any, float]:
    started = time.monotonic()
    status, body = await server.get(path, tok)
    return status, body, time.monotonic() - started


async def test_a_page_of_events_is_read_in_parts_and_whole(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """A page of several parts (100 events each) holds every event after ``since`` in
    order, with no gap and none twice, on a stream and on the org log."""
    server = await start_server(redis_server.url, night_doc(org))
    try:
        await cage_events(server, 620)
        auditor = token(*AUDITOR)
        async with server.session.get(
            server.base + "/api/streams/cage/events?since=7&limit=600",
            headers={"Authorization": f"Bearer {auditor}"},
        ) as r:
            assert r.status == 200
            assert r.headers["Transfer-Encoding"] == "chunked"  # sent as it was read
            body = await r.json()
        assert [e["seq"] for e in body["events"]] == list(range(8, 608))
        status, rest = await server.get("/api/streams/cage/events?since=607", auditor)
        assert [e["seq"] for e in rest["events"]] == list(range(608, 621))
        status, log = await server.get("/api/streams/log/events?limit=10000", auditor)
        ids = [e["log_id"] for e in log["events"]]
        assert len(ids) == len(set(ids)) and len(ids) >= 620
        status, tail = await server.get(f"/api/streams/log/events?since={ids[99]}", auditor)
        assert status == 200
        assert [e["log_id"] for e in tail["events"]] == ids[100:]
    finally:
        await server.stop()


async def test_a_principal_at_its_in_flight_limit_gets_busy_and_others_do_not(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """With two in flight (one waiting for its token, one for its turn) a third view of
    the same principal gets 429 ``busy`` with a Retry-After, at once; another principal's
    view is answered meanwhile; the two waiting views are answered in the end."""
    server = await start_server(
        redis_server.url,
        night_doc(org),
        principal_in_flight=2,
        principal_rate=1.0,
        principal_burst=1,
    )
    try:
        auditor = token(*AUDITOR)
        assert (await server.get("/api/tables", auditor))[0] == 200  # spends its one token
        waiting = [
            asyncio.ensure_future(timed_get(server, "/api/tables", auditor)) for _ in range(2)
        ]
        await asyncio.sleep(0.2)
        assert server.runner.app[VIEW_TURNS].waiting(AUDITOR) == 2
        async with server.session.get(
            server.base + "/api/tables", headers={"Authorization": f"Bearer {auditor}"}
        ) as r:
            assert r.status == 429
            assert int(r.headers["Retry-After"]) >= 1
            assert (await r.json())["error"]["code"] == "busy"
        other = await timed_get(server, "/api/tables", token("auditor", "a-2"))
        assert other[0] == 200 and other[2] < 0.5  # not behind a-1's two
        answered = await asyncio.gather(*waiting)
        assert [a[0] for a in answered] == [200, 200]
        # One token a second: the first waited about one, the second two.
        assert sorted(a[2] for a in answered)[1] >= 1.5
        assert server.runner.app[VIEW_TURNS].waiting(AUDITOR) == 0
        assert server.runner.app[gateway.SLOTS].in_flight(AUDITOR) == 0
    finally:
        await server.stop()


async def test_a_view_costs_its_size_and_its_principal_pays_after(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """A page of 600 events costs a token per 4 KiB: its principal then owes what its
    burst does not cover (its next message waits for that), while a principal that did not
    read it owes none."""
    server = await start_server(redis_server.url, night_doc(org), principal_burst=10)
    try:
        await cage_events(server, 600)
        async with server.session.get(
            server.base + CAGE_EVENTS, headers={"Authorization": f"Bearer {token(*AUDITOR)}"}
        ) as r:
            size = len(await r.read())
        cost = size // VIEW_COST_BYTES
        assert cost > 40  # the page is large enough to owe for
        slots = server.runner.app[gateway.SLOTS]
        owed_seconds = slots.reserve(AUDITOR, 0.0)
        # Burst 10, one token to start, then the cost; at most 20 ms refilled (10 tokens)
        # between the charge and this look.
        assert owed_seconds * 500 >= cost + 1 - 10 - 10
        assert slots.reserve(("auditor", "a-2"), 0.0) == 0.0
    finally:
        await server.stop()


@pytest.mark.timeout(120)
async def test_a_view_flood_from_another_process_leaves_others_commands_alone(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """A process keeps 16 GETs of a 1,500-event page going (megabytes each): another
    client's commands are answered at their usual pace meanwhile. (Before the views were
    paced, each of those commands waited for the whole flood's pages to be built: a few
    dozen got through in three seconds.)"""
    server = await start_server(redis_server.url, night_doc(org))
    try:
        await cage_events(server, 1500)
        good = await server.connect(token("auditor", "good"))
        flooder = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            FLOODER,
            server.base + CAGE_EVENTS,
            token(*AUDITOR),
            stdout=asyncio.subprocess.PIPE,
        )
        try:
            assert flooder.stdout is not None
            first = await asyncio.wait_for(flooder.stdout.readline(), 30)
            assert first == b"answered\n"
            await asyncio.sleep(0.2)  # its 16 GETs are all sent by now
            answered = 0
            slowest = 0.0
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                started = time.monotonic()
                reply = await good.send({"op": "no_such_op", "id": f"g-{answered}"})
                assert reply["error"]["code"] == "bad_request"
                slowest = max(slowest, time.monotonic() - started)
                answered += 1
                await asyncio.sleep(0.005)
        finally:
            flooder.kill()
            await flooder.wait()
        assert answered >= 200, (answered, slowest)
        assert slowest < 1.0
    finally:
        await server.stop()


async def test_a_view_whose_client_hung_up_while_waiting_is_not_built(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """A view waiting for its principal's tokens when its client closes the connection is
    dropped at its turn: the principal does not pay for a page nobody receives."""
    await filled_beforehand(redis_server.url, org, lambda filler: cage_events(filler, 600))
    server = await start_server(
        redis_server.url, night_doc(org), principal_rate=20.0, principal_burst=1
    )
    try:
        headers = {"Authorization": f"Bearer {token(*AUDITOR)}"}
        async with server.session.get(server.base + CAGE_EVENTS, headers=headers) as r:
            cost = len(await r.read()) // VIEW_COST_BYTES
        assert cost > 40  # owed: about two seconds at 20 tokens a second
        slots = server.runner.app[gateway.SLOTS]
        owed = slots.reserve(AUDITOR, 0.0)
        reads: list[str] = []
        store = server.runtime.store
        read = store.read

        async def counted(stream: str, *args: Any, **kwargs: Any) -> Any:
            reads.append(stream)
            return await read(stream, *args, **kwargs)

        store.read = counted  # type: ignore[method-assign]
        abandoned = asyncio.ensure_future(
            server.session.get(server.base + CAGE_EVENTS, headers=headers)
        )
        await asyncio.sleep(0.3)
        assert server.runner.app[VIEW_TURNS].waiting(AUDITOR) == 1
        abandoned.cancel()  # the client gives up and closes its connection
        with pytest.raises(asyncio.CancelledError):
            await abandoned
        await asyncio.sleep(owed + 0.5)  # its turn has come and gone
        assert server.runner.app[VIEW_TURNS].waiting(AUDITOR) == 0
        # It took its one token, not the page's cost again, and read nothing.
        assert slots.reserve(AUDITOR, 0.0) < 0.5
        assert "cage" not in reads
    finally:
        await server.stop()


@pytest.mark.parametrize(
    ("events", "rate", "send_buffer"),
    [(1500, 500.0, 4096), (300, 100.0, 32768)],
    ids=["stalled-in-a-part", "stalled-at-the-end"],
)
async def test_a_client_that_never_reads_a_streamed_page_is_cut_off(
    redis_server: EmbeddedRedis,
    org: str,
    monkeypatch: pytest.MonkeyPatch,
    events: int,
    rate: float,
    send_buffer: int,
) -> None:
    """A client that asks for a page of events and reads none of it holds its turn only
    until a write has waited the stall limit (here 1 s), whether a part's or the last
    one's (with a larger send buffer, a page of three parts first waits at its end):
    then its connection is aborted, and its principal's next view is answered."""
    monkeypatch.setattr(view_pacing, "VIEW_STALL_SECONDS", 1.0)
    server = await start_server(
        redis_server.url, night_doc(org), principal_burst=1, principal_rate=rate
    )
    try:
        await cage_events(server, events)
        sock = await _slow_page_request(server, send_buffer)
        loop = asyncio.get_running_loop()
        try:
            turns = server.runner.app[VIEW_TURNS]
            await asyncio.sleep(0.6)
            assert turns.waiting(AUDITOR) == 1  # stuck writing a part nobody reads
            await turn_let_go(turns, "the stalled view")
            status, body = await server.get("/api/tables", token(*AUDITOR))
            assert status == 200 and body["tables"]
            # What the client can still read ends before the page does.
            received = b""
            with contextlib.suppress(ConnectionError):
                while chunk := await asyncio.wait_for(loop.sock_recv(sock, 65536), 5):
                    received += chunk
            assert received.startswith(b"HTTP/1.1 200")
            assert not received.endswith(b"]}\r\n0\r\n\r\n")
        finally:
            sock.close()
    finally:
        await server.stop()


def _server_socket(web_server: web.Server, peer: tuple[str, int]) -> socket.socket | None:
    """The server's socket of the connection from ``peer`` (None until it is accepted)."""
    for handler in web_server.connections:
        transport = handler.transport
        if transport is not None and transport.get_extra_info("peername") == peer:
            found: socket.socket = transport.get_extra_info("socket")
            return found
    return None


async def turn_let_go(turns: view_pacing.ViewTurns, what: str) -> None:
    """Wait (10 s at most) until the auditor has no view built or waiting."""
    deadline = time.monotonic() + 10
    while turns.waiting(AUDITOR):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} never let go of its turn")
        await asyncio.sleep(0.05)


async def _slow_page_request(
    server: LiveServer, send_buffer: int = 4096, path: str = CAGE_EVENTS
) -> socket.socket:
    """A raw connection that has asked for ``path`` (:data:`CAGE_EVENTS`) as the auditor,
    whose server side has a send buffer of ``send_buffer`` bytes, as a slow network would
    give it (else the kernel would take the whole page at once). A first view leaves the
    principal owing a few tenths of a second (the server runs with a burst of 1), so this
    one waits for its turn: time to set the buffer."""
    assert (await server.get(path, token(*AUDITOR)))[0] == 200
    loop = asyncio.get_running_loop()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await loop.sock_connect(sock, ("127.0.0.1", int(server.base.rsplit(":", 1)[1])))
    request = f"GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token(*AUDITOR)}\r\n\r\n"
    await loop.sock_sendall(sock, request.encode())
    mine = sock.getsockname()
    assert server.runner.server is not None
    deadline = time.monotonic() + 5
    while not (server_side := _server_socket(server.runner.server, mine)):
        if time.monotonic() > deadline:
            raise AssertionError("the client's connection is not among the server's")
        await asyncio.sleep(0.01)
    server_side.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
    return sock


async def test_a_page_cut_short_by_its_client_costs_what_was_sent(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """A client that reads most of a large page and hangs up before its end pays for
    what the server wrote, not nothing: else reading near-whole pages in a loop would
    never be paced."""
    server = await start_server(redis_server.url, night_doc(org), principal_burst=1)
    try:
        await cage_events(server, 1500)
        sock = await _slow_page_request(server)
        loop = asyncio.get_running_loop()
        received = 0
        try:
            while received < 400_000:
                chunk = await asyncio.wait_for(loop.sock_recv(sock, 65536), 10)
                assert chunk, "the page ended early"
                received += len(chunk)
        finally:
            sock.close()
        turns = server.runner.app[VIEW_TURNS]
        deadline = time.monotonic() + 10
        while turns.waiting(AUDITOR):
            if time.monotonic() > deadline:
                raise AssertionError("the abandoned page never ended")
            await asyncio.sleep(0.02)
        owed_tokens = server.runner.app[gateway.SLOTS].reserve(AUDITOR, 0.0) * 500
        # At least what the client read, less a few tenths of a second of refill.
        assert owed_tokens >= received // VIEW_COST_BYTES - 60, (owed_tokens, received)
    finally:
        await server.stop()


async def test_a_head_of_a_page_is_refused_and_the_connection_goes_on(
    server: LiveServer,
) -> None:
    """A page is streamed, so HEAD is not offered for it (405): its body would follow the
    headers into the connection. The next request on the connection is answered."""
    headers = {"Authorization": f"Bearer {token(*AUDITOR)}"}
    async with aiohttp.ClientSession() as session:
        async with session.head(server.base + CAGE_EVENTS, headers=headers) as r:
            assert r.status == 405
        async with session.get(server.base + CAGE_EVENTS, headers=headers) as r:
            assert r.status == 200
            assert (await r.json())["events"] == []


async def bankrolls_of_1500_players(redis_url: str, org: str) -> LiveServer:
    """A server paced at 100 tokens a second whose store holds the bankrolls of 1,500
    players, ``GET /api/bankrolls`` answered in one piece of about 100 KB."""
    await filled_beforehand(redis_url, org, lambda filler: cage_events(filler, 1500, players=1500))
    return await start_server(redis_url, night_doc(org), principal_burst=1, principal_rate=100.0)


async def test_a_view_its_client_does_not_read_holds_only_its_own_turn_until_cut_off(
    redis_server: EmbeddedRedis, org: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view answered in one piece (the bankrolls of 1,500 players, about 100 KB) is sent
    within its principal's turn: to a client that reads none of it, the turn is held until
    a write has waited the stall limit (here 1 s), then the connection is aborted and the
    principal's next view is answered. (Handed to aiohttp after its turn, such views piled
    up unsent in the server's buffers, one per connection, as many as a client opened.)"""
    monkeypatch.setattr(view_pacing, "VIEW_STALL_SECONDS", 1.0)
    server = await bankrolls_of_1500_players(redis_server.url, org)
    try:
        sock = await _slow_page_request(server, path="/api/bankrolls")
        try:
            turns = server.runner.app[VIEW_TURNS]
            await asyncio.sleep(0.6)
            assert turns.waiting(AUDITOR) == 1  # stuck sending what nobody reads
            await turn_let_go(turns, "the unread view")
            status, body = await server.get("/api/tables", token(*AUDITOR))
            assert status == 200 and body["tables"]
            received = b""
            loop = asyncio.get_running_loop()
            with contextlib.suppress(ConnectionError):
                while chunk := await asyncio.wait_for(loop.sock_recv(sock, 65536), 5):
                    received += chunk
            assert received.startswith(b"HTTP/1.1 200")
            assert not received.endswith(b"}}")  # cut off before its end
        finally:
            sock.close()
    finally:
        await server.stop()


async def test_a_page_that_fails_midway_still_costs_what_it_sent(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """When the store fails after a page's first part is sent, the principal still pays
    for that part: a failure is no way around the pacing."""
    await filled_beforehand(redis_server.url, org, lambda filler: cage_events(filler, 300))
    server = await start_server(
        redis_server.url, night_doc(org), principal_burst=1, principal_rate=10.0
    )
    try:
        store = server.runtime.store
        read = store.read
        calls = 0

        async def fails_second(stream: str, *args: Any, **kwargs: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == 2:
                raise ConnectionError("the store went away")
            return await read(stream, *args, **kwargs)

        store.read = fails_second  # type: ignore[method-assign]
        headers = {"Authorization": f"Bearer {token(*AUDITOR)}"}
        with contextlib.suppress(aiohttp.ClientError):
            async with server.session.get(server.base + CAGE_EVENTS, headers=headers) as r:
                await r.read()
        assert calls == 2
        turns = server.runner.app[VIEW_TURNS]
        deadline = time.monotonic() + 5
        while turns.waiting(AUDITOR):
            assert time.monotonic() < deadline, "the failed page never ended"
            await asyncio.sleep(0.02)
        # The first part (100 chip sales) is tens of KB: at 10 tokens a second, seconds owed.
        assert server.runner.app[gateway.SLOTS].owed_seconds(AUDITOR) > 0.5
    finally:
        await server.stop()


async def test_a_busy_view_is_told_to_retry_after_what_its_principal_owes(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """``Retry-After`` on a 429 ``busy`` view is when the principal's earlier views are
    paid for: seconds after a large page at 20 tokens a second, not always one."""
    await filled_beforehand(redis_server.url, org, lambda filler: cage_events(filler, 600))
    server = await start_server(
        redis_server.url,
        night_doc(org),
        principal_in_flight=1,
        principal_rate=20.0,
        principal_burst=1,
    )
    try:
        auditor = token(*AUDITOR)
        assert (await server.get(CAGE_EVENTS, auditor))[0] == 200
        owed = server.runner.app[gateway.SLOTS].owed_seconds(AUDITOR)
        assert owed > 1.5  # the page's forty-odd tokens
        waiting = asyncio.ensure_future(timed_get(server, "/api/tables", auditor))
        await asyncio.sleep(0.2)  # it holds the one slot, waiting for its token
        async with server.session.get(
            server.base + "/api/tables", headers={"Authorization": f"Bearer {auditor}"}
        ) as r:
            assert r.status == 429
            assert (await r.json())["error"]["code"] == "busy"
            assert int(r.headers["Retry-After"]) >= math.floor(owed) >= 1
        assert (await waiting)[0] == 200
    finally:
        await server.stop()


async def test_a_client_reading_slowly_gets_its_whole_view(
    redis_server: EmbeddedRedis, org: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stall limit (here 1 s) is for a client that takes nothing: one that reads
    steadily but slowly, so that the bankrolls of 1,500 players take it several times the
    limit, gets the whole view."""
    monkeypatch.setattr(view_pacing, "VIEW_STALL_SECONDS", 1.0)
    server = await bankrolls_of_1500_players(redis_server.url, org)
    try:
        sock = await _slow_page_request(server, path="/api/bankrolls")
        loop = asyncio.get_running_loop()
        received = b""
        started = time.monotonic()
        try:
            while not received.endswith(b"}}"):
                chunk = await asyncio.wait_for(loop.sock_recv(sock, 4096), 5)
                assert chunk, f"cut off after {len(received)} bytes"
                received += chunk
                await asyncio.sleep(0.05)
        finally:
            sock.close()
        assert time.monotonic() - started > 2.0  # well past the stall limit
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        assert len(json.loads(body)["players"]) == 1500
    finally:
        await server.stop()
