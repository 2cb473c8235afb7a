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


async def test_revoking_a_token_closes_its_open_sockets_on_every_process(
    server: LiveServer, redis_client: aioredis.Redis
) -> None:
    """A token revoked by another process: the sockets open with it here are closed with
    1008 ``token revoked``; other sockets of the same role and sub stay open."""
    lost = issue(SECRET, role="cashier", sub="desk", ttl_seconds=3600, now=int(time.time()))
    kept = issue(SECRET, role="cashier", sub="desk", ttl_seconds=3600, now=int(time.time()))
    victims = [await server.connect(lost.token) for _ in range(2)]
    survivor = await server.connect(kept.token)
    assert (await victims[0].cmd("buy_chips", player="p-1", amount=100))["ok"]
    other = Revocations(redis_client, server.runtime.night.organization)
    assert await other.revoke(lost.jti, lost.exp)
    for ws in victims:
        assert await asyncio.wait_for(ws.closed, 10) == aiohttp.WSCloseCode.POLICY_VIOLATION
    assert (await survivor.cmd("buy_chips", player="p-1", amount=100))["ok"]


async def test_ops_revokes_a_token_with_revoke_token(server: LiveServer) -> None:
    lost = issue(SECRET, role="dealer", sub="d-9", ttl_seconds=3600, now=int(time.time()),
                 tables=("roulette-1",))  # fmt: skip
    victim = await server.connect(lost.token)
    ops = await server.connect(token("ops"))
    reply = await ops.cmd("revoke_token", token_id=lost.jti)
    assert reply["result"] == {"token_id": lost.jti, "already_revoked": False}
    assert await asyncio.wait_for(victim.closed, 10) == aiohttp.WSCloseCode.POLICY_VIOLATION
    assert server.runtime.revocations.is_revoked(lost.jti)
    again = await ops.cmd("revoke_token", token=lost.token)
    assert again["result"] == {"token_id": lost.jti, "already_revoked": True}
    status, _body = await server.get("/api/tables", lost.token)
    assert status == 401


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"token_id": "not an id!"}, "bad_request"),
        ({"token_id": "x" * 65}, "bad_request"),
        ({"token_id": 7}, "bad_request"),
        ({"token": "a.b.c"}, "bad_request"),
        ({}, "bad_request"),
    ],
)
async def test_revoke_token_refuses_what_is_not_a_token(
    server: LiveServer, fields: dict[str, object], code: str
) -> None:
    ops = await server.connect(token("ops"))
    reply = await ops.cmd("revoke_token", **fields)
    assert reply["error"]["code"] == code
    assert not server.runtime.revocations.revoked_ids()


@pytest.mark.parametrize("role", ["player", "dealer", "cashier", "auditor", "member_in_charge"])
async def test_only_ops_may_revoke_a_token(server: LiveServer, role: str) -> None:
    target = issue(SECRET, role="cashier", sub="desk", ttl_seconds=3600, now=int(time.time()))
    client = await server.connect(token(role, player="p-1" if role == "player" else None))
    reply = await client.cmd("revoke_token", token_id=target.jti)
    assert reply["error"]["code"] == "forbidden"
    assert not server.runtime.revocations.is_revoked(target.jti)
