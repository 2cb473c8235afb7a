"""A revoked token is refused at the gateway with 401 ``token revoked`` (PROTOCOL.md
"Connecting"), whichever server process revoked it."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest
import redis.asyncio as aioredis

from services.gateway.auth import issue
from services.gateway.revocations import Revocations
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import SECRET, LiveServer, start_server, token


async def test_a_token_revoked_by_another_process_gets_401_token_revoked(
    server: LiveServer, redis_client: aioredis.Redis
) -> None:
    lost = issue(SECRET, role="cashier", sub="desk-1", ttl_seconds=3600, now=int(time.time()))
    kept = token("cashier", "desk-2")
    assert (await server.get("/api/bankrolls", lost.token))[0] == 200
    await (await server.connect(lost.token)).close()

    # Another server process of the organization (its own client, the same Redis).
    other = Revocations(redis_client, server.runtime.night.organization)
    assert await other.revoke(lost.jti, lost.exp)
    deadline = time.monotonic() + 10
    while not server.runtime.revocations.is_revoked(lost.jti):
        assert time.monotonic() < deadline, "the server never heard of the revocation"
        await asyncio.sleep(0.01)

    status, body = await server.get("/api/bankrolls", lost.token)
    assert (status, body) == (
        401,
        {"ok": False, "error": {"code": "unauthorized", "message": "token revoked"}},
    )
    with pytest.raises(aiohttp.WSServerHandshakeError) as info:
        await server.session.ws_connect(f"{server.base}/ws?token={lost.token}")
    assert info.value.status == 401
    status, body = await server.post_command(
        {"op": "buy_chips", "id": "after", "player": "p-1", "amount": 100}, lost.token
    )
    assert status == 401 and body["error"]["message"] == "token revoked"
    assert await server.runtime.store.balance("p-1") == 0  # nothing was sold

    # Every other token still works.
    assert (await server.get("/api/bankrolls", kept))[0] == 200
    cashier = await server.connect(kept)
    assert (await cashier.cmd("buy_chips", player="p-1", amount=100))["ok"]


async def test_a_token_revoked_before_the_server_starts_is_refused_from_the_start(
    redis_client: aioredis.Redis, redis_server: EmbeddedRedis, org: str
) -> None:
    lost = issue(SECRET, role="ops", sub="ops-tablet", ttl_seconds=3600, now=int(time.time()))
    await Revocations(redis_client, org).revoke(lost.jti)
    live = await start_server(redis_server.url, night_doc(org))
    try:
        status, body = await live.get("/api/bankrolls", lost.token)
        assert status == 401 and body["error"]["message"] == "token revoked"
    finally:
        await live.stop()
