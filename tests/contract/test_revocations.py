"""Revoked tokens shared by every server process of an organization
(services/gateway/revocations.py), on a real Redis: two ``Revocations`` on the same Redis
stand for two server processes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from services.gateway.auth import issue
from services.gateway.revocations import NO_EXPIRY, PRUNE_GRACE_SECONDS, Revocations
from services.store import keys
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import close_redis, open_redis

WAIT_SECONDS = 10.0
"""How long a test waits for something that should happen in milliseconds."""
JTI = "0123456789abcdefABCD_-"


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds (failing after :data:`WAIT_SECONDS`)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.01)


class Follower:
    """A ``Revocations`` with its ``run`` task, recording the ids its callback hears."""

    def __init__(self, revocations: Revocations) -> None:
        self.revocations = revocations
        self.heard: list[str] = []
        revocations.on_revoked(self.heard.append)
        self.task = asyncio.create_task(revocations.run())

    async def subscribed(self) -> None:
        """Until its first subscription read the hash (so messages from now on reach it)."""
        await until(lambda: self.revocations.reloads >= 1, "the first subscription")

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


@pytest.fixture
async def follow() -> AsyncIterator[Callable[[Revocations], Follower]]:
    started: list[Follower] = []

    def factory(revocations: Revocations) -> Follower:
        follower = Follower(revocations)
        started.append(follower)
        return follower

    yield factory
    for follower in started:
        await follower.stop()


async def test_a_revocation_reaches_another_process_through_pub_sub(
    redis_client: aioredis.Redis, org: str, follow: Callable[[Revocations], Follower]
) -> None:
    here = Revocations(redis_client, org)
    there = follow(Revocations(redis_client, org, reload_seconds=3600))
    await there.subscribed()
    token = issue(b"secret", role="player", sub="p-1", player="p-1", ttl_seconds=60, now=0)
    assert not there.revocations.is_revoked(token.jti)
    assert await here.revoke(token.jti, token.exp) is True
    assert here.is_revoked(token.jti)
    await until(lambda: there.revocations.is_revoked(token.jti), "the other process learns it")
    assert there.heard == [token.jti]
    assert there.revocations.reloads == 1  # the message told it, not a re-read
    assert await redis_client.hgetall(keys.revoked(org)) == {
        token.jti.encode(): str(token.exp).encode()
    }


async def test_a_missed_message_is_found_by_the_periodic_re_read(
    redis_client: aioredis.Redis, org: str, follow: Callable[[Revocations], Follower]
) -> None:
    there = follow(Revocations(redis_client, org, reload_seconds=0.05))
    await there.subscribed()
    # A revocation whose message this process never got: in the hash, never published.
    await redis_client.hset(keys.revoked(org), JTI, str(NO_EXPIRY))
    await until(lambda: there.revocations.is_revoked(JTI), "the re-read finds it")
    assert there.heard == [JTI]
    assert there.revocations.reloads >= 2


async def test_a_resubscription_reads_what_was_revoked_while_away(
    redis_client: aioredis.Redis, org: str, follow: Callable[[Revocations], Follower]
) -> None:
    there = follow(Revocations(redis_client, org, reload_seconds=3600, retry_seconds=0.05))
    await there.subscribed()
    await redis_client.hset(keys.revoked(org), JTI, str(NO_EXPIRY))  # published to no one
    killed = await redis_client.client_kill_filter(_type="pubsub")
    assert killed >= 1
    await until(lambda: there.revocations.is_revoked(JTI), "the resubscription reads it")
    assert there.heard == [JTI]
    assert there.revocations.reloads == 2  # the first subscription and the second one
    assert not there.task.done()


async def test_the_follower_survives_a_redis_restart(
    tmp_path: Path, org: str, follow: Callable[[Revocations], Follower]
) -> None:
    server = EmbeddedRedis(tmp_path / "redis", appendfsync="everysec")
    server.start()
    client = await open_redis(server.url)
    try:
        there = follow(Revocations(client, org, reload_seconds=3600, retry_seconds=0.05))
        await there.subscribed()
        server.stop()
        await asyncio.sleep(0.2)  # let the follower meet the dead connection
        server.start()  # on the same port, as the embedded Redis's watcher does
        other = await open_redis(server.url)
        try:
            assert await Revocations(other, org).revoke(JTI, None)
        finally:
            await close_redis(other)
        await until(lambda: there.revocations.is_revoked(JTI), "learnt after the restart")
        assert there.heard == [JTI]
        assert not there.task.done()
    finally:
        await close_redis(client)
        server.stop()


async def test_a_callback_hears_each_id_once_whichever_way_it_arrives(
    redis_client: aioredis.Redis, org: str, follow: Callable[[Revocations], Follower]
) -> None:
    here = follow(Revocations(redis_client, org, reload_seconds=0.05))
    await here.subscribed()
    assert await here.revocations.revoke(JTI, 2_000_000_000) is True
    assert await here.revocations.revoke(JTI, 2_000_000_000) is False  # already revoked
    reloads = here.revocations.reloads
    await until(lambda: here.revocations.reloads >= reloads + 2, "two more re-reads")
    assert here.heard == [JTI]  # revoke, its own message and the re-reads: one call


async def test_a_failing_callback_does_not_stop_the_others(
    redis_client: aioredis.Redis, org: str
) -> None:
    revocations = Revocations(redis_client, org)
    heard: list[str] = []

    def broken(jti: str) -> None:
        raise RuntimeError("a bug in a listener")

    revocations.on_revoked(broken)
    revocations.on_revoked(heard.append)
    assert await revocations.revoke(JTI)
    assert heard == [JTI] and revocations.is_revoked(JTI)


async def test_load_reads_the_hash_and_prunes_entries_long_expired(
    redis_client: aioredis.Redis, org: str
) -> None:
    now = 1_900_000_000.0
    key = keys.revoked(org)
    await redis_client.hset(
        key,
        mapping={
            "forever": str(NO_EXPIRY),
            "live": str(int(now) + 60),
            "justexpired": str(int(now) - 10),
            "longgone": str(int(now) - PRUNE_GRACE_SECONDS - 1),
        },
    )
    revocations = Revocations(redis_client, org, clock=lambda: now)
    assert await revocations.load() == 3
    assert [revocations.is_revoked(j) for j in ("forever", "live", "justexpired", "longgone")] == [
        True,
        True,
        True,
        False,
    ]
    assert sorted(await redis_client.hkeys(key)) == [b"forever", b"justexpired", b"live"]


async def test_bad_ids_and_expiries_are_refused_and_write_nothing(
    redis_client: aioredis.Redis, org: str
) -> None:
    revocations = Revocations(redis_client, org)
    for bad in ("", "has space", "a/b", "x" * 65, "tab\t"):
        with pytest.raises(ValueError, match="not a token id"):
            await revocations.revoke(bad, None)
    for exp in (-1, True, 1.5, "60"):
        with pytest.raises(ValueError, match="expiry"):
            await revocations.revoke(JTI, exp)  # type: ignore[arg-type]
    assert await redis_client.exists(keys.revoked(org)) == 0
    assert not revocations.is_revoked(JTI)


async def test_junk_on_the_channel_is_ignored(
    redis_client: aioredis.Redis, org: str, follow: Callable[[Revocations], Follower]
) -> None:
    there = follow(Revocations(redis_client, org, reload_seconds=3600))
    await there.subscribed()
    channel = keys.revocations_channel(org)
    for junk in (b"not json", b"[]", b'{"jti": 5, "exp": 1}', b'{"jti": "a b", "exp": 1}'):
        await redis_client.publish(channel, junk)
    await Revocations(redis_client, org).revoke(JTI)
    await until(lambda: there.revocations.is_revoked(JTI), "the good message after the junk")
    assert there.heard == [JTI]
    assert not there.task.done()
