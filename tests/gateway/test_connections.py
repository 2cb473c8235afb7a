"""The connections one principal may hold open (``principal_connections``,
services/gateway/connections.py) and the HTTP keep-alive timeout, against a real server
and real clients."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import player_token, start_server

P1 = player_token("p-1")


async def test_a_principal_past_its_connections_is_refused_and_others_are_not(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """With 3 allowed, p-1's fourth websocket is refused before its upgrade and an HTTP
    request on a fourth connection gets 429 ``busy`` (and that connection is closed);
    p-2 connects meanwhile; once p-1 closes one, it may open another."""
    server = await start_server(redis_server.url, night_doc(org), principal_connections=3)
    try:
        held = [await server.connect(P1) for _ in range(3)]
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await server.session.ws_connect(f"{server.base}/ws?token={P1}")
        assert refused.value.status == 429
        headers = {"Authorization": f"Bearer {P1}"}
        async with (
            aiohttp.ClientSession() as fresh,  # a connection of its own
            fresh.get(server.base + "/api/tables", headers=headers) as r,
        ):
            assert r.status == 429
            assert (await r.json())["error"]["code"] == "busy"
            assert int(r.headers["Retry-After"]) >= 1
            assert r.headers["Connection"].lower() == "close"
        other = await server.connect(player_token("p-2"))
        assert (await other.cmd("unsubscribe", stream="cage"))["ok"] is True
        assert (await held[0].cmd("unsubscribe", stream="cage"))["ok"] is True
        await held[0].close()
        server.clients.remove(held[0])
        deadline = time.monotonic() + 5
        while True:
            try:
                again = await server.connect(P1)
                break
            except aiohttp.WSServerHandshakeError:
                assert time.monotonic() < deadline, "a closed connection never made room"
                await asyncio.sleep(0.05)
        assert (await again.cmd("unsubscribe", stream="cage"))["ok"] is True
    finally:
        await server.stop()


async def test_one_http_connection_counts_once_however_many_requests_it_carries(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """p-1 with two websockets and one keep-alive HTTP connection (3 of 3) is answered on
    that connection as often as it asks; only a further connection is refused."""
    server = await start_server(redis_server.url, night_doc(org), principal_connections=3)
    try:
        for _ in range(2):
            await server.connect(P1)
        headers = {"Authorization": f"Bearer {P1}"}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as one:
            for _ in range(5):
                async with one.get(server.base + "/api/tables", headers=headers) as r:
                    assert r.status == 200
            async with (
                aiohttp.ClientSession() as another,
                another.get(server.base + "/api/tables", headers=headers) as r,
            ):
                assert r.status == 429
            async with one.get(server.base + "/api/tables", headers=headers) as r:
                assert r.status == 200
    finally:
        await server.stop()


async def test_an_idle_http_connection_is_closed_after_the_keepalive_timeout(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """An HTTP connection left idle after its answer is closed by the server after
    ``keepalive_seconds`` (here 0.5 s; aiohttp's own server default is an hour), so idle
    connections do not pile up."""
    server = await start_server(redis_server.url, night_doc(org), keepalive_seconds=0.5)
    try:
        port = int(server.base.rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            assert head.startswith(b"HTTP/1.1 200")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            started = time.monotonic()
            assert await asyncio.wait_for(reader.read(1), 5) == b""  # closed by the server
            assert time.monotonic() - started < 3
        finally:
            writer.close()
    finally:
        await server.stop()
