"""Stream ownership against a real Redis: the lease scripts (acquire, renew, release,
membership by Redis's clock), the fence the append script checks, rendezvous placement,
and an actor that loses its lease (docs/ARCHITECTURE.md, "Several processes")."""

from __future__ import annotations

import asyncio
import random

import redis.asyncio as aioredis

from events.cage import ChipsIssued
from services.actor import MOVED, Actor, Submission
from services.cage.actor import CageRules
from services.cage.rules import BuyChips
from services.cluster.leases import Leases, parse_holder
from services.cluster.placement import assign, preferred, ranked
from services.store import keys
from services.store.redis_store import Appended, BalanceMove, EventStore, Fenced, Head
from tests.contract.test_event_store import chain, write


async def test_a_free_lease_is_taken_with_a_new_token_each_time(
    redis_client: aioredis.Redis, org: str
) -> None:
    a = Leases(redis_client, org, "node-a", "inc-1")
    b = Leases(redis_client, org, "node-b", "inc-1")
    taken, first = await a.acquire("table:t-1", 5000)
    assert taken and first == "node-a|inc-1|1"
    # Another node cannot take it; the holder renews it under the same value.
    assert await b.acquire("table:t-1", 5000) == (False, first)
    assert await a.acquire("table:t-1", 5000) == (True, first)
    # Released only with the value it holds (a former holder's value deletes nothing).
    assert await b.release([("table:t-1", "node-b|inc-1|1")]) == 0
    assert await a.release([("table:t-1", first)]) == 1
    taken, second = await b.acquire("table:t-1", 5000)
    assert taken and second == "node-b|inc-1|2"
    holder = parse_holder(second)
    assert holder is not None and (holder.node, holder.token) == ("node-b", 2)


async def test_a_restarted_node_takes_back_its_lease_at_once_with_a_new_token(
    redis_client: aioredis.Redis, org: str
) -> None:
    old = Leases(redis_client, org, "node-a", "before-crash")
    _taken, value = await old.acquire("cage", 60_000)
    new = Leases(redis_client, org, "node-a", "after-crash")
    taken, again = await new.acquire("cage", 60_000)
    assert taken and again == "node-a|after-crash|2"
    # The earlier life's renewal finds it lost.
    assert await old.renew([("cage", value)], 60_000) == ["cage"]


async def test_renewal_extends_held_leases_in_one_call_and_names_the_lost(
    redis_client: aioredis.Redis, org: str
) -> None:
    a = Leases(redis_client, org, "node-a", "i")
    b = Leases(redis_client, org, "node-b", "i")
    held = [(s, (await a.acquire(s, 300))[1]) for s in ("license", "cage", "table:t-1")]
    await asyncio.sleep(0.15)
    assert await a.renew(held, 2000) == []
    await asyncio.sleep(0.25)  # past the first expiry, within the renewed one
    assert await b.acquire("cage", 2000) == (False, held[1][1])
    await redis_client.delete(keys.lease(org, "license"))
    await b.acquire("license", 2000)
    assert await a.renew(held, 2000) == ["license"]
    ttl = await redis_client.pttl(keys.lease(org, "table:t-1"))
    assert 1000 < ttl <= 2000


async def test_an_expired_lease_is_free_for_another_node(
    redis_client: aioredis.Redis, org: str
) -> None:
    a = Leases(redis_client, org, "node-a", "i")
    b = Leases(redis_client, org, "node-b", "i")
    await a.acquire("table:t-1", 100)
    await asyncio.sleep(0.2)
    taken, value = await b.acquire("table:t-1", 5000)
    assert taken and value == "node-b|i|2"


async def test_membership_is_live_until_it_expires_by_redis_time_and_leave_removes_it(
    redis_client: aioredis.Redis, org: str
) -> None:
    a = Leases(redis_client, org, "node-a", "i")
    b = Leases(redis_client, org, "node-b", "i")
    assert await a.heartbeat(200) == ["node-a"]
    assert await b.heartbeat(5000) == ["node-a", "node-b"]
    await asyncio.sleep(0.3)
    assert await b.heartbeat(5000) == ["node-b"]
    await a.heartbeat(5000)
    await a.leave()
    assert await b.heartbeat(5000) == ["node-b"]


async def test_the_checkpoint_is_written_only_under_the_lease(
    redis_client: aioredis.Redis, org: str
) -> None:
    a = Leases(redis_client, org, "node-a", "i")
    _taken, value = await a.acquire("projections", 5000)
    key = keys.projection(org, "runner")
    assert await a.guarded_set("projections", value, key, b"one")
    assert not await a.guarded_set("projections", "node-a|i|999", key, b"two")
    assert await redis_client.get(key) == b"one"


async def test_the_append_script_refuses_a_stale_lease_and_writes_nothing(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    stream = "cage"
    a = Leases(redis_client, org, "node-a", "i")
    b = Leases(redis_client, org, "node-b", "i")
    _t, old = await a.acquire(stream, 100)
    [first] = chain([ChipsIssued(player="p-1", amount=100)], stream)
    one = write("k-1", [first], [BalanceMove(player="p-1", delta=100)])
    assert isinstance(await store.append(stream, Head(0), [one], old), Appended)
    await asyncio.sleep(0.2)
    _t, new = await b.acquire(stream, 5000)
    head = await store.head(stream)
    [second] = chain([ChipsIssued(player="p-1", amount=50)], stream, head)
    # The former holder (paused past its lease) is fenced: nothing is written.
    two = write("k-2", [second], [BalanceMove(player="p-1", delta=50)])
    assert await store.append(stream, head, [two], old) == Fenced(holder=new)
    # '' (no lease) is refused while a lease exists.
    assert await store.append(stream, head, [two]) == Fenced(holder=new)
    assert await store.head(stream) == head
    assert await store.command_results(["k-2"]) == [None]
    assert await store.balance("p-1") == 100
    assert await redis_client.xlen(keys.log(org)) == 1
    # The holder appends.
    assert isinstance(await store.append(stream, head, [two], new), Appended)
    assert await store.balance("p-1") == 150
    # Once the lease is gone, '' appends again (tools, contract tests).
    await b.release([(stream, new)])
    [third] = chain([ChipsIssued(player="p-1", amount=1)], stream, await store.head(stream))
    got = await store.append(stream, await store.head(stream), [write("k-3", [third])])
    assert isinstance(got, Appended)


async def test_a_fenced_actor_stops_and_hands_over_its_unanswered_commands(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    a = Leases(redis_client, org, "node-a", "i")
    b = Leases(redis_client, org, "node-b", "i")
    actor: Actor[object, object] = Actor(store, "cage", CageRules(10**9), publish=lambda _e: None)
    await actor.load()
    _t, mine = await a.acquire("cage", 5000)
    actor.lease = mine
    handed: list[Submission[object]] = []
    actor.on_fenced = handed.extend
    task = asyncio.create_task(actor.run())
    try:
        ok = Submission(
            key="cashier:c/1", fingerprint="f1", command_id="1", actor="cashier:c",
            command=BuyChips(player="p-1", amount=100),
        )  # fmt: skip
        assert (await actor.submit_nowait(ok))["ok"]
        await redis_client.delete(keys.lease(org, "cage"))
        _t, theirs = await b.acquire("cage", 5000)
        late = Submission(
            key="cashier:c/2", fingerprint="f2", command_id="2", actor="cashier:c",
            command=BuyChips(player="p-1", amount=50),
        )  # fmt: skip
        actor.submit_nowait(late)
        await asyncio.wait_for(task, 5)  # the actor stops by itself
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert actor.fenced
    assert handed == [late] and not late.future.done()  # handed over, not answered
    assert await store.command_results(["cashier:c/2"]) == [None]
    assert (await store.head("cage")).version == 1
    assert await store.balance("p-1") == 100
    assert theirs.startswith("node-b|")
    # Without a taker, the commands of a fenced batch are answered ``unavailable``.
    actor2: Actor[object, object] = Actor(store, "cage", CageRules(10**9), publish=lambda _e: None)
    await actor2.load()
    actor2.lease = mine
    task2 = asyncio.create_task(actor2.run())
    try:
        lost = Submission(
            key="cashier:c/3", fingerprint="f3", command_id="3", actor="cashier:c",
            command=BuyChips(player="p-1", amount=5),
        )  # fmt: skip
        reply = await asyncio.wait_for(actor2.submit_nowait(lost), 5)
    finally:
        task2.cancel()
        await asyncio.gather(task2, return_exceptions=True)
    assert reply == {"ok": False, "error": {"code": "unavailable", "message": MOVED}}


def test_rendezvous_placement_moves_only_the_streams_of_a_node_that_leaves() -> None:
    rng = random.Random(7)
    streams = [f"table:t-{i}" for i in range(200)] + ["license", "cage"]
    nodes = ["a", "b", "c"]
    before = {s: preferred(nodes, s) for s in streams}
    # Every node gets a share.
    assert {before[s] for s in streams} == set(nodes)
    assert all(ranked(nodes, s)[0] == before[s] for s in streams)
    assert preferred([], "cage") is None
    gone = rng.choice(nodes)
    after = {s: preferred([n for n in nodes if n != gone], s) for s in streams}
    for s in streams:
        if before[s] != gone:
            assert after[s] == before[s]
        else:
            assert after[s] == ranked(nodes, s)[1]
    # The order does not depend on how the nodes are listed.
    assert all(preferred(["c", "a", "b"], s) == before[s] for s in streams)


def test_the_placement_spreads_streams_evenly_and_moves_few_when_a_node_goes() -> None:
    streams = ["license", "cage", *(f"table:t-{i:02d}" for i in range(1, 21))]
    two_nodes = ["node-a", "node-b"]
    three_nodes = [*two_nodes, "node-c"]
    placed = assign(two_nodes, streams)
    assert set(placed) == set(streams)
    # Even shares (rendezvous alone splits these 22 unevenly).
    assert sorted(list(placed.values()).count(n) for n in two_nodes) == [11, 11]
    three = assign(three_nodes, streams)
    assert max(list(three.values()).count(n) for n in three_nodes) == 8
    # The same inputs in any order give the same placement (every node computes it).
    assert assign(list(reversed(two_nodes)), list(reversed(streams))) == placed
    # When node-c goes, most of the streams the others had stay where they were.
    stayed = [s for s in streams if three[s] != "node-c" and placed[s] == three[s]]
    assert len(stayed) >= len([s for s in streams if three[s] != "node-c"]) - 4
    assert assign([], streams) == {}


def test_the_placement_keeps_each_stream_with_its_live_holder_within_its_share() -> None:
    streams = ["license", "cage", *(f"table:t-{i:02d}" for i in range(1, 21))]
    three = assign(["node-a", "node-b", "node-c"], streams)
    # node-c dies: the others keep every stream they held, and share node-c's.
    two = assign(["node-a", "node-b"], streams, three)
    assert all(two[s] == three[s] for s in streams if three[s] != "node-c")
    assert sorted(list(two.values()).count(n) for n in ("node-a", "node-b")) == [11, 11]
    # One node held everything; a second joins: the first keeps its share, the rest move.
    alone = dict.fromkeys(streams, "node-a")
    joined = assign(["node-a", "node-b"], streams, alone)
    assert list(joined.values()).count("node-a") == 11
    assert assign(["node-a", "node-b"], streams, joined) == joined  # it is settled
