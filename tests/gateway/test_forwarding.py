"""Two in-process servers of one organization on one Redis: where a command goes, the hop
limit, and a raffle set up through the process that does not get to own it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import msgpack
import pytest

from services.actor import MOVED
from services.cluster.forward import REQUEST, principal_data
from services.cluster.placement import assign
from services.gateway.auth import Principal
from services.gateway.commands import submit_command
from services.store import keys
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import LiveServer, start_server, token

FAST = {"lease_seconds": 1.0, "lease_renew_seconds": 0.25}


@pytest.fixture
async def pair(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[list[LiveServer]]:
    doc = night_doc(
        org,
        license={
            "number": "GC-TEST-1",
            "games": ["roulette", "raffle"],
            "period_start": "2026-11-01",
            "period_end": "2026-12-31",
        },
    )
    servers = [await start_server(redis_server.url, doc, **FAST) for _ in range(2)]
    try:
        nodes = [s.runtime.cluster.node for s in servers]
        streams = servers[0].runtime.supervisor.streams()
        for _ in range(200):
            owned = {n: set(s.runtime.cluster.active) for n, s in zip(nodes, servers, strict=True)}
            held = {name: n for n, names in owned.items() for name in names}
            want = assign(nodes, streams, held)
            if all(name in owned[want[name]] for name in streams) and sum(
                map(len, owned.values())
            ) == len(streams):
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"streams not placed: {owned}")
        yield servers
    finally:
        for s in servers:
            await s.stop()


def cashier() -> Principal:
    return Principal(role="cashier", sub="cashier", exp=int(time.time()) + 600)


async def test_past_the_hop_limit_a_command_is_unavailable_and_nothing_changes(
    pair: list[LiveServer], org: str
) -> None:
    owner = next(s for s in pair if s.runtime.cluster.owns("cage"))
    other = next(s for s in pair if s is not owner)
    runtime = other.runtime
    sent = runtime.metrics.forwarded._value.get()
    msg = {"op": "buy_chips", "id": "hop-1", "player": "p-1", "amount": 5}
    limit = runtime.settings.forward_hops
    reply = await submit_command(runtime, cashier(), dict(msg), hops=limit)
    assert reply == {"ok": False, "error": {"code": "unavailable", "message": MOVED}}
    assert runtime.metrics.forwarded._value.get() == sent
    store = runtime.store
    assert await store.command_results(["cashier:cashier/hop-1"]) == [None]
    # One hop fewer: forwarded once, applied once, by the owner.
    reply = await submit_command(runtime, cashier(), dict(msg), hops=limit - 1)
    assert reply["ok"], reply
    assert runtime.metrics.forwarded._value.get() == sent + 1
    assert owner.runtime.metrics.forwarded._value.get() == 0
    events = await store.read("cage")
    assert [e.causation for e in events] == ["hop-1"]


async def test_a_raffle_set_up_on_either_process_lives_where_it_is_preferred(
    pair: list[LiveServer], org: str
) -> None:
    nodes = [s.runtime.cluster.node for s in pair]
    # A raffle id whose stream the second server does not prefer, set up through it.
    streams = pair[0].runtime.supervisor.streams()
    held = {s: n for n, srv in zip(nodes, pair, strict=True) for s in srv.runtime.cluster.active}
    raffle = next(
        f"std-{i}"
        for i in range(100)
        if assign(nodes, [*streams, f"raffle:std-{i}"], held)[f"raffle:std-{i}"] == nodes[0]
    )
    member = await pair[1].connect(token("member_in_charge"))
    config = {
        "name": "Spring raffle",
        "location": "Hall",
        "price": 100,
        "first_drawing_at": int(time.time() * 1000) + 86_400_000,
        "prizes": [{"description": "Hamper", "value": 5_000}],
    }
    reply = await member.cmd("setup_raffle", raffle=raffle, kind="standard", config=config)
    assert reply["ok"], reply
    stream = f"raffle:{raffle}"
    assert pair[0].runtime.cluster.owns(stream)
    assert not pair[1].runtime.cluster.owns(stream)
    holder = await pair[0].runtime.redis.get(keys.lease(org, stream))
    assert holder is not None and holder.decode().startswith(nodes[0] + "|")
    # Both know it (the second from the log's tail): a sale through either is accepted.
    for server in pair:
        for _ in range(100):
            if raffle in server.runtime.supervisor.raffles:
                break
            await asyncio.sleep(0.02)
        assert raffle in server.runtime.supervisor.raffles
        seller = await server.connect(token("seller"))
        sold = await seller.cmd("sell_ticket", raffle=raffle, amount=100)
        assert sold["ok"], sold


async def test_an_inbox_entry_without_the_organizations_mac_is_never_run(
    pair: list[LiveServer], org: str
) -> None:
    """Whoever can write to Redis cannot have a process apply a command as a principal it
    names: an inbox entry not authenticated with the key derived from the server secret
    is dropped, and only the authenticated one runs."""
    owner = next(s for s in pair if s.runtime.cluster.owns("cage"))
    inbox = owner.runtime.cluster.inbox
    who = principal_data(cashier())
    forged = []
    for n, mac in enumerate((None, b"\0" * 32)):
        body = msgpack.packb(
            {
                "r": f"intruder/{n}",
                "from": "intruder",
                "hops": 0,
                "who": who,
                "msg": {"op": "buy_chips", "id": f"forged-{n}", "player": "p-1", "amount": 5},
            },
            use_bin_type=True,
        )
        fields = {b"k": REQUEST, b"m": body, **({b"a": mac} if mac is not None else {})}
        await owner.runtime.redis.xadd(inbox.key, fields)
        forged.append(f"forged-{n}")
    # A real forward after them: once it is answered, the inbox has read the forged ones.
    other = next(s for s in pair if s is not owner)
    msg = {"op": "buy_chips", "id": "genuine-1", "player": "p-1", "amount": 5}
    assert (await submit_command(other.runtime, cashier(), msg))["ok"]
    causes = [e.causation for e in await owner.runtime.store.read("cage")]
    assert "genuine-1" in causes
    assert not set(forged) & set(causes)
    assert await owner.runtime.store.command_results([f"cashier:cashier/{f}" for f in forged]) == [
        None,
        None,
    ]


async def test_a_stream_taken_again_while_its_lost_lease_is_still_stopping_keeps_its_actor(
    redis_server: EmbeddedRedis, org: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lease lost (renewal missed during a Redis failover, say) stops the stream's actor
    here; a command arriving meanwhile takes the stream again. The new actor must not be
    the one the old release stops: the take waits for the release (seen once as every
    later command ``unavailable`` until the process restarted)."""
    server = await start_server(redis_server.url, night_doc(org), **FAST)
    try:
        runtime = server.runtime
        node, supervisor = runtime.cluster, runtime.supervisor
        reply = await submit_command(
            runtime, cashier(), {"op": "buy_chips", "id": "b-0", "player": "p-1", "amount": 5}
        )
        assert reply["ok"], reply
        stopping = asyncio.Event()
        real_deactivate = supervisor.deactivate

        async def slow_deactivate(stream: str) -> None:
            # The old actor takes a while to stop (it finishes the batch in hand).
            stopping.set()
            await asyncio.sleep(0.3)
            await real_deactivate(stream)

        monkeypatch.setattr(supervisor, "deactivate", slow_deactivate)
        # The lease lapses (as if not renewed in time); the next tick finds it lost.
        assert await node.leases.release([("cage", node.active["cage"])]) == 1
        await node.tick()
        await asyncio.wait_for(stopping.wait(), 5)
        assert "cage" not in node.active  # being released
        replies = [
            await submit_command(
                runtime,
                cashier(),
                {"op": "buy_chips", "id": f"b-{i}", "player": "p-1", "amount": 5},
            )
            for i in range(1, 4)
        ]
        assert all(r["ok"] for r in replies), replies
        assert "cage" in node.active and "cage" in supervisor.running
        assert await runtime.store.balance("p-1") == 20
    finally:
        await server.stop()
