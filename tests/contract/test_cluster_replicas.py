"""Organizations over a Redis Cluster with replicas, ``wait_replicas`` (WAIT) and failovers,
on real redis-server processes: the package's cluster (three masters, a replica each) and,
for a single Redis, a primary with one replica started here."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis
import structlog
import structlog.testing

from events.cage import ChipsIssued
from services.store import keys
from services.store.embedded import free_port, redis_server_binary
from services.store.redis_store import (
    Appended,
    EventStore,
    Head,
    RedisClient,
    close_redis,
    open_redis,
)
from services.store.replication import NotReplicated, replicas_online
from services.store.verify import verify_all
from tests.conftest import night_doc
from tests.contract.cluster_nodes import Cluster, Node, wait_for
from tests.contract.test_event_store import chain, write
from tests.support import WsClient, start_server, token

T = TypeVar("T")

_names = itertools.count(1)


def orgs_on_every_master(cluster: Cluster, prefix: str) -> dict[int, str]:
    """One new organization id per master (by the port of the master its slot is on)."""
    found: dict[int, str] = {}
    while len(found) < 3:
        org = f"{prefix}-{next(_names)}"
        found.setdefault(cluster.master_of(keys.log(org)).port, org)
    return found


def org_on(cluster: Cluster, master: Node, prefix: str) -> str:
    while True:
        org = f"{prefix}-{next(_names)}"
        if cluster.master_of(keys.log(org)) is master:
            return org


def replica_xlen(node: Node, key: str, *, cluster: bool = True) -> int:
    """XLEN of ``key`` read on a replica itself (in a cluster, READONLY: no redirect)."""
    conn = redis.Connection(
        host="127.0.0.1", port=node.port, password=node.password, socket_timeout=5
    )
    try:
        if cluster:
            conn.send_command("READONLY")
            assert conn.read_response() == b"OK"
        conn.send_command("XLEN", key)
        return int(conn.read_response())
    finally:
        conn.disconnect()


async def append_n(store: EventStore, stream: str, n: int, tag: str) -> list[Any]:
    head = await store.head(stream)
    outcomes = []
    for i in range(n):
        [env] = chain([ChipsIssued(player="p", amount=i + 1)], stream, head)
        outcome = await store.append(stream, head, [write(f"{tag}-{i}", [env])])
        outcomes.append(outcome)
        if isinstance(outcome, Appended):
            head = Head(env.seq, env.hash)
    return outcomes


@contextlib.asynccontextmanager
async def cluster_client(cluster: Cluster) -> AsyncIterator[RedisClient]:
    client = await open_redis(cluster.url)
    try:
        yield client
    finally:
        await close_redis(client)


@contextlib.contextmanager
def replica_cut_off(master: Node, replica: Node, *, relink: bool = True) -> Iterator[None]:
    """The replica paused and its link dropped by the master: whatever the master writes
    now reaches no replica (not even a socket buffer) until the replica resumes; with
    ``relink``, until it is linked to the master again."""
    replica.pause()
    try:
        master.client().execute_command("CLIENT", "KILL", "TYPE", "replica")
        yield
    finally:
        replica.resume()
    if relink:
        wait_for(lambda: linked(master), "the replica did not come back")


def linked(master: Node) -> bool:
    """The master has a replica online again."""
    info = master.client().info("replication")
    return int(info["connected_slaves"]) >= 1 and info["slave0"]["state"] == "online"


async def until_ok(client: WsClient, command: dict[str, Any]) -> dict[str, Any]:
    """Send ``command`` until it is answered ok (a replica link being remade may still time
    a WAIT out); every other answer must be ``unavailable``."""
    deadline = time.monotonic() + 20
    while True:
        reply = await client.send(command)
        if reply["ok"]:
            return reply
        assert reply["error"]["code"] == "unavailable", reply
        assert time.monotonic() < deadline, reply
        await asyncio.sleep(0.05)


# -- organizations spread over slots ---------------------------------------------------


async def test_organizations_spread_over_the_masters_and_each_appends_and_verifies(
    cluster: Cluster,
) -> None:
    by_master = orgs_on_every_master(cluster, "spread")
    slots = {cluster.keyslot(keys.log(org)) for org in by_master.values()}
    assert len(by_master) == 3 and len(slots) == 3
    for port in by_master:
        # Each master forgets the append script: the first call loads it there again.
        cluster.node(port).client().script_flush()
    async with cluster_client(cluster) as client:
        for port, org in by_master.items():
            # Every key of the organization is on its slot's master.
            for key in (keys.log(org), keys.commands(org), keys.meta(org, "cage")):
                assert cluster.master_of(key).port == port
            store = EventStore(client, org, wait_replicas=1, wait_timeout_ms=2000)
            outcomes = await append_n(store, "cage", 5, org)
            assert all(isinstance(o, Appended) for o in outcomes), outcomes
            assert all(r.ok for r in await verify_all(store))
            # Acknowledged with WAIT 1: the master's replica holds every event already.
            replica = cluster.replica_of(cluster.node(port))
            assert replica_xlen(replica, keys.stream(org, "cage")) == 5
            assert replica_xlen(replica, keys.log(org)) == 5


# -- WAIT on a single Redis with a replica ---------------------------------------------


@pytest.fixture(scope="module")
def primary_and_replica(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Node, Node]]:
    """A single (non-cluster) redis-server with one replica, both wanting a password."""
    password = "single-" + str(free_port())
    primary = _plain_node(tmp_path_factory.mktemp("primary"), password)
    replica = _plain_node(tmp_path_factory.mktemp("replica"), password, of=primary.port)
    try:
        wait_for(
            lambda: replica.client().info("replication").get("master_link_status") == "up",
            "the replica did not connect",
        )
        # The replica's side says "up" before the primary takes it as online (its first
        # sync acknowledged): until then a WAIT counts no replica.
        wait_for(lambda: linked(primary), "the primary never took the replica as online")
        yield primary, replica
    finally:
        for node in (replica, primary):
            if node.proc is not None:
                node.resume()
                _terminate(node.proc)


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """Stop a redis-server with SIGTERM, sent again each second: a replica still writing
    its first AOF after a sync refuses one ("Writing initial AOF, can't exit") and does
    not try again by itself; SIGKILL after 30 s."""
    for _ in range(30):
        proc.terminate()
        try:
            proc.wait(1)
            return
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    proc.wait(10)


def _plain_node(home: Path, password: str, of: int | None = None) -> Node:
    node = Node(free_port(), home, password)
    args = [
        redis_server_binary(), "--port", str(node.port), "--bind", "127.0.0.1",
        "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--dir", str(home),
        "--requirepass", password, "--masterauth", password,
        "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
    ]  # fmt: skip
    if of is not None:
        args += ["--replicaof", "127.0.0.1", str(of)]
    node.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(node.client().ping, "a redis-server did not start")
    return node


async def _retrying(call: Callable[[], Awaitable[T]]) -> T:
    """``call()`` until it is not refused as not replicated (the link just came back)."""
    for _ in range(50):
        with contextlib.suppress(NotReplicated):
            return await call()
        await asyncio.sleep(0.1)
    return await call()


def _url(node: Node) -> str:
    return f"redis://:{node.password}@127.0.0.1:{node.port}/0"


async def test_wait_on_a_single_redis_covers_direct_and_pipelined_appends(
    primary_and_replica: tuple[Node, Node], org: str
) -> None:
    primary, replica = primary_and_replica
    client = await open_redis(_url(primary))
    store = EventStore(client, org, wait_replicas=1, wait_timeout_ms=1000)
    unguarded = EventStore(client, org)
    try:
        # Direct calls (the writer not started; the first after Redis forgot its scripts),
        # then calls that share the writer's pipelines: all confirmed by the replica.
        await client.script_flush()
        assert all(isinstance(o, Appended) for o in await append_n(store, "cage", 3, "d"))
        store.writer.start()
        streams = [f"table:t-{i}" for i in range(8)]
        got = await asyncio.gather(*(append_n(store, s, 2, s) for s in streams))
        assert all(isinstance(o, Appended) for outcomes in got for o in outcomes)
        assert replica_xlen(replica, keys.log(org), cluster=False) == 3 + 16

        with replica_cut_off(primary, replica):
            # Pipelined: every call of the pipeline fails as not confirmed.
            pending = await asyncio.gather(
                *(append_n(store, s, 1, f"{s}-cut") for s in streams[:4]),
                return_exceptions=True,
            )
            assert all(isinstance(e, NotReplicated) for e in pending), pending
            await store.writer.stop()
            # Direct: the same.
            with pytest.raises(NotReplicated, match=r"^not confirmed on 1 replica "):
                await append_n(store, "cage", 1, "d-cut")
            # Without wait_replicas the primary's word is enough (what WAIT guards against).
            assert all(isinstance(o, Appended) for o in await append_n(unguarded, "x", 1, "u"))
            # A stored reply of an unconfirmed append is not handed out either.
            with pytest.raises(NotReplicated):
                await store.lookup(["d-cut-0"], [])
        # The replica back: the same lookup is confirmed and answered.
        [stored], _ = await _retrying(lambda: store.lookup(["d-cut-0"], []))
        assert stored is not None
        assert all(r.ok for r in await verify_all(store))
    finally:
        await store.writer.stop()
        await close_redis(client)


async def test_replicas_online_are_counted_and_a_wait_they_cannot_meet_is_warned_at_start(
    primary_and_replica: tuple[Node, Node], cluster: Cluster, org: str
) -> None:
    """``wait_replicas`` above the replicas online makes every command ``unavailable``: the
    server says so when it starts (and says nothing when they suffice)."""
    primary, _replica = primary_and_replica
    client = await open_redis(_url(primary))
    try:
        assert await replicas_online(client, keys.log(org)) == 1
    finally:
        await close_redis(client)
    async with cluster_client(cluster) as on_cluster:
        assert await replicas_online(on_cluster, keys.log(org)) == 1
    # Two asked for, one online: the warning says why, then the first append (the
    # license) cannot be confirmed and the night does not start.
    unconfirmed = r"not confirmed on 2 replicas \(1 confirmed\)"
    with structlog.testing.capture_logs() as logs, pytest.raises(RuntimeError, match=unconfirmed):
        await start_server(_url(primary), night_doc(f"{org}-2"), wait_replicas=2)
    [unmet] = [e for e in logs if e["event"] == "wait_replicas_unmet"]
    assert (unmet["wait_replicas"], unmet["replicas_online"]) == (2, 1)
    with structlog.testing.capture_logs() as logs:
        server = await start_server(_url(primary), night_doc(f"{org}-1"), wait_replicas=1)
        await server.stop()
    assert not [e for e in logs if e["event"] == "wait_replicas_unmet"]


async def test_a_command_not_confirmed_by_the_replica_is_unavailable_then_its_retry_ok(
    primary_and_replica: tuple[Node, Node], org: str
) -> None:
    primary, replica = primary_and_replica
    server = await start_server(_url(primary), night_doc(org), wait_replicas=1, wait_timeout_ms=300)
    try:
        cashier = await server.connect(token("cashier"))
        assert (await cashier.cmd("buy_chips", player="p-1", amount=100))["ok"]
        buy = {"op": "buy_chips", "id": "buy-while-cut-off", "player": "p-1", "amount": 250}
        with replica_cut_off(primary, replica):
            first = await cashier.send(buy)
            assert first["ok"] is False and first["error"]["code"] == "unavailable"
            assert first["error"]["message"].startswith("not confirmed on 1 replica ")
            # Its retry finds it applied, but the replica still lacks it: unavailable again.
            again = await cashier.send(buy)
            assert again["error"]["code"] == "unavailable", again
            # Nor is it signed outside Redis: a failover now would lose it.
            unconfirmed_log = await server.runtime.store.log_head()
            assert await server.runtime.anchor.sign("interval", force=True) is None
        await until_ok(cashier, buy)
        signed = await server.runtime.anchor.sign("interval", force=True)
        assert signed is not None and signed.log_id == unconfirmed_log
        assert await server.runtime.store.balance("p-1") == 350  # applied once
        issued = [e for e in await server.runtime.store.read_all("cage") if e.type == "ChipsIssued"]
        assert Counter(e.causation for e in issued)["buy-while-cut-off"] == 1
    finally:
        await server.stop()


# -- failovers ---------------------------------------------------------------------------


async def _promoted(replica: Node) -> None:
    """Until ``replica`` is a master and the cluster is whole again."""

    def done() -> bool:
        c = replica.client()
        return replica.role() == "master" and c.cluster("info")["cluster_state"] == "ok"

    await asyncio.to_thread(wait_for, done, "the replica was never promoted")


async def _rejoin(cluster: Cluster, node: Node) -> None:
    """Start a killed node again: it comes back as a replica of the one promoted."""
    node.start()
    await asyncio.to_thread(cluster.wait_healthy)


async def test_a_manual_failover_is_followed_without_a_refusal(cluster: Cluster) -> None:
    """A replica promoted while its master lives (maintenance): the master answers MOVED,
    the client follows it to the new master, and WAIT is confirmed by the old one, now
    its replica."""
    master = cluster.master_of(keys.log(f"moved-{next(_names)}"))
    replica = cluster.replica_of(master)
    org = org_on(cluster, master, "moved")
    async with cluster_client(cluster) as client:
        store = EventStore(client, org, wait_replicas=1, wait_timeout_ms=2000)
        assert all(isinstance(o, Appended) for o in await append_n(store, "cage", 2, "a"))
        head = await store.head("cage")
        replica.client().execute_command("CLUSTER", "FAILOVER")
        await _promoted(replica)
        await asyncio.to_thread(cluster.wait_healthy)
        # Every master's view of the slot map follows by gossip, moments apart.
        await asyncio.to_thread(
            wait_for,
            lambda: cluster.master_of(keys.log(org)) is replica,
            "the other masters never learnt of the promotion",
        )
        # The client still takes the old master for the slot's (nothing read since): the
        # append meets MOVED there and runs on the new master.
        [env] = chain([ChipsIssued(player="p", amount=3)], "cage", head)
        assert isinstance(await store.append("cage", head, [write("b", [env])]), Appended)
        assert (await store.head("cage")).version == 3
        assert all(r.ok for r in await verify_all(store))


async def test_without_wait_a_failover_can_lose_an_acknowledged_append(
    cluster: Cluster,
) -> None:
    """What the docs warn of, made certain: the replica is cut off when the master
    acknowledges an append, then the master dies and the replica takes over."""
    master = cluster.master_of(keys.log(f"loss-{next(_names)}"))
    replica = cluster.replica_of(master)
    org = org_on(cluster, master, "loss")
    async with cluster_client(cluster) as client:
        plain = EventStore(client, org)
        waiting = EventStore(client, org, wait_replicas=1, wait_timeout_ms=300)
        assert all(isinstance(o, Appended) for o in await append_n(waiting, "cage", 2, "a"))
        with replica_cut_off(master, replica, relink=False):
            [lost] = await append_n(plain, "cage", 1, "b")
            assert isinstance(lost, Appended)  # acknowledged to its caller
            with pytest.raises(NotReplicated):  # never acknowledged
                await append_n(waiting, "table:t", 1, "c")
            master.kill9()
        replica.client().execute_command("CLUSTER", "FAILOVER", "TAKEOVER")
        await _promoted(replica)
        await _rejoin(cluster, master)
    async with cluster_client(cluster) as client:
        store = EventStore(client, org)
        assert (await store.head("cage")).version == 2  # the acknowledged third is gone
        assert (await store.head("table:t")).version == 0
        assert (await store.command_results(["a-1", "b-0"]))[1] is None
        assert all(r.ok for r in await verify_all(store))


async def test_a_master_killed_under_load_with_wait_loses_no_acknowledged_command(
    cluster: Cluster,
) -> None:
    master = cluster.master_of(keys.log(f"failover-{next(_names)}"))
    replica = cluster.replica_of(master)
    org = org_on(cluster, master, "failover")
    server = await start_server(cluster.url, night_doc(org), wait_replicas=1, wait_timeout_ms=500)
    acknowledged: dict[str, dict[str, Any]] = {}
    codes: Counter[str] = Counter()
    per_writer = 30
    killed = asyncio.Event()
    unreplicated = asyncio.Event()

    async def writer(player: str) -> None:
        cashier = await server.connect(token("cashier"))
        for i in range(per_writer):
            buy = {"op": "buy_chips", "id": f"{player}-{i}", "player": player, "amount": 1}
            deadline = time.monotonic() + 60
            while True:
                reply = await cashier.send(buy, timeout=30)
                if reply["ok"]:
                    acknowledged[buy["id"]] = reply["result"]
                    break
                codes[reply["error"]["code"]] += 1
                if reply["error"]["message"].startswith("not confirmed on 1 replica "):
                    unreplicated.set()
                assert time.monotonic() < deadline, f"{buy['id']} never went through"
                await asyncio.sleep(0.05)
            if i == per_writer // 3:
                killed.set()

    async def kill_and_heal() -> None:
        await killed.wait()
        master.kill9()
        await _promoted(replica)
        # With one replica per master and WAIT 1, nothing is acknowledged by the new master
        # alone: its appends are not confirmed until the old one is back as its replica.
        await asyncio.wait_for(unreplicated.wait(), 30)
        await _rejoin(cluster, master)

    try:
        players = ["p-1", "p-2"]
        await asyncio.gather(*(writer(p) for p in players), kill_and_heal())
        assert replica.role() == "master" and master.role() == "slave"
        assert set(codes) <= {"unavailable"}, codes  # never a wrong reply
        assert codes["unavailable"] > 0  # the failover was met mid-load
        store = server.runtime.store
        issued = [e for e in await store.read_all("cage") if e.type == "ChipsIssued"]
        seen = Counter(e.causation for e in issued)
        assert set(seen) == set(acknowledged) and set(seen.values()) == {1}
        assert len(acknowledged) == per_writer * len(players)
        for player in players:
            assert await store.balance(player) == per_writer
        assert all(r.ok for r in await verify_all(store))
    finally:
        await server.stop()
        if not master.alive:
            await _rejoin(cluster, master)
