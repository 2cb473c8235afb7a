"""The event store against a real Redis: ordering, optimistic concurrency, idempotent retries,
all-or-nothing batches and the hash chain (docs/ARCHITECTURE.md, "The append script")."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random
import uuid
from typing import Any

import msgpack
import redis.asyncio as aioredis

from events.base import Event
from events.cage import ChipsIssued, ChipsRedeemed
from events.codec import decode, encode
from events.envelope import GENESIS_HASH, Envelope, chain_hash, expected_hash, seal
from events.tables import BetPlaced, RoundOpened, TableOpened
from services.store import keys
from services.store.redis_store import (
    Appended,
    BalanceMove,
    CommandWrite,
    DuplicateCommand,
    EventStore,
    Head,
    InsufficientFunds,
    VersionConflict,
    pack_result,
    unpack_result,
)
from services.store.verify import verify_all, verify_stream

TS = 1_764_412_345_000


def envelope(body: Event, stream: str, seq: int, prev_hash: str, **meta: Any) -> Envelope:
    fields: dict[str, Any] = {
        "id": uuid.uuid4().hex,
        "stream": stream,
        "seq": seq,
        "ts": TS + seq,
        "actor": "cashier:c-1",
        "causation": f"cmd-{stream}-{seq}",
        "correlation": None,
        "prev_hash": prev_hash,
    }
    fields.update(meta)
    return seal(body, **fields)


def chain(bodies: list[Event], stream: str, after: Head | None = None) -> list[Envelope]:
    """Sealed envelopes continuing ``after`` (the empty stream by default)."""
    head = after or Head(0)
    out = []
    for body in bodies:
        env = envelope(body, stream, head.version + 1, head.last_hash)
        out.append(env)
        head = Head(env.seq, env.hash)
    return out


def write(key: str, envs: list[Envelope], moves: list[BalanceMove] | None = None) -> CommandWrite:
    reply = {"ok": True, "result": {"seq": envs[-1].seq if envs else 0}}
    return CommandWrite(
        key=key, result=pack_result(f"fp-{key}", reply), events=envs, moves=moves or []
    )


async def fill(store: EventStore, stream: str, bodies: list[Event]) -> list[Envelope]:
    """Append ``bodies`` one command each; return their envelopes."""
    out = []
    for body in bodies:
        head = await store.head(stream)
        [env] = chain([body], stream, head)
        got = await store.append(stream, head, [write(f"k-{env.id}", [env])])
        assert isinstance(got, Appended), got
        out.append(env)
    return out


def issued(n: int, player: str = "p-1") -> list[Event]:
    return [ChipsIssued(player=player, amount=100 + i) for i in range(n)]


async def snapshot(redis: aioredis.Redis, org: str) -> dict[str, Any]:
    """Every key of the organization and its full contents."""
    out: dict[str, Any] = {}
    async for key in redis.scan_iter(match=f"{keys.PREFIX}:{{{org}}}:*"):
        kind: Any = await redis.type(key)
        kind = kind.decode()
        if kind == "stream":
            out[key] = await redis.xrange(key)
        elif kind == "hash":
            out[key] = await redis.hgetall(key)
        elif kind == "set":
            out[key] = await redis.smembers(key)
        else:
            out[key] = await redis.get(key)
    return out


async def rewrite_stream(redis: aioredis.Redis, org: str, stream: str, edit: Any) -> None:
    """Rewrite a stream in Redis as someone with write access could: read every entry,
    DEL the key, XADD back what ``edit(entries)`` returns (ids kept unless edited)."""
    key = keys.stream(org, stream)
    entries: Any = await redis.xrange(key)
    new_entries = edit([(eid, dict(fields)) for eid, fields in entries])
    await redis.delete(key)
    for eid, fields in new_entries:
        await redis.xadd(key, fields, id=eid)


def forge(env: Envelope, **changes: Any) -> bytes:
    return encode(dataclasses.replace(env, **changes))


# --- append and read back ------------------------------------------------------------------


async def test_appended_events_read_back_in_order_with_seq_ids_and_on_the_org_log(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    table_bodies: list[Event] = [
        TableOpened(table="t-1", game="roulette", config={"options": []}, outcome_mode="rng"),
        RoundOpened(round=1),
        BetPlaced(round=1, bet_id="b-1", player="p-1", bet={"kind": "red"}, amount=100),
    ]
    cage = await fill(store, "cage", issued(4))
    table = await fill(store, "table:t-1", table_bodies)
    cage += await fill(store, "cage", [ChipsRedeemed(player="p-1", amount=5)])

    got = await store.read_all("cage")
    assert got == cage
    assert [e.seq for e in got] == [1, 2, 3, 4, 5]
    assert [e.event() for e in got] == [*issued(4), ChipsRedeemed(player="p-1", amount=5)]
    assert await store.read_all("table:t-1") == table
    assert [e.event() for e in table] == table_bodies

    raw: Any = await redis_client.xrange(keys.stream(org, "cage"))
    ids = [eid for eid, _f in raw]
    assert ids == [f"0-{n}".encode() for n in range(1, 6)]
    assert await store.read("cage", since=3) == cage[3:]
    assert await store.read("cage", since=1, limit=2) == cage[1:3]
    assert await store.read("cage", since=5) == []

    head = await store.head("cage")
    assert head == Head(5, cage[-1].hash)
    assert await store.head("table:t-1") == Head(3, table[-1].hash)
    assert await store.head("nothing-here") == Head(0, GENESIS_HASH)
    assert await store.stream_names() == ["cage", "table:t-1"]

    # The org log holds every event in commit order, and each stream entry points at it.
    log = await store.log_raw()
    committed = cage[:4] + table + cage[4:]
    assert [decode(raw) for _i, raw in log] == committed
    by_id = {e.id: e for e in await store.read_all("cage") + await store.read_all("table:t-1")}
    assert [by_id[decode(raw).id].log_id for _i, raw in log] == [i for i, _raw in log]
    assert await store.log_head() == log[-1][0]
    assert await store.log_raw(after=log[2][0]) == log[3:]
    assert [decode(raw) for _i, raw in await store.log_raw(after=log[5][0], limit=2)] == (
        committed[6:8]
    )


async def test_read_all_pages_through_long_streams(store: EventStore) -> None:
    envs = chain(issued(25), "cage")
    assert isinstance(await store.append("cage", Head(0), [write("k", envs)]), Appended)
    assert await store.read_all("cage", batch=4) == envs
    assert await store.read_all("cage", batch=25) == envs


# --- optimistic concurrency ----------------------------------------------------------------


async def test_concurrent_appenders_each_version_has_exactly_one_winner(
    store: EventStore, redis_server: Any, org: str
) -> None:
    """20 writers race over 50 versions, each reloading the head after a conflict."""
    stream, target, writers = "cage", 50, 20
    rng = random.Random(20)
    clients = [aioredis.Redis.from_url(redis_server.url) for _ in range(4)]
    stores = [EventStore(c, org) for c in clients]
    wins: list[Envelope] = []
    conflicts: list[tuple[int, VersionConflict]] = []

    async def writer(w: int) -> None:
        s = stores[w % len(stores)]
        while True:
            head = await s.head(stream)
            if head.version >= target:
                return
            env = envelope(
                ChipsIssued(player=f"p-{w}", amount=rng.randrange(1, 1000)),
                stream,
                head.version + 1,
                head.last_hash,
                actor=f"writer-{w}",
            )
            got = await s.append(stream, head, [write(f"w{w}/{env.seq}", [env])])
            if isinstance(got, Appended):
                wins.append(env)
            else:
                assert isinstance(got, VersionConflict), got
                assert got.version > head.version
                conflicts.append((head.version, got))

    try:
        await asyncio.gather(*(writer(w) for w in range(writers)))
    finally:
        for c in clients:
            await c.aclose()

    assert len(wins) == target
    assert sorted(e.seq for e in wins) == list(range(1, target + 1))
    assert conflicts, "20 racing writers never conflicted"
    stored = await store.read_all(stream)
    assert stored == sorted(wins, key=lambda e: e.seq)
    assert [e.seq for e in stored] == list(range(1, target + 1))
    for before, after in itertools.pairwise(stored):
        assert after.prev_hash == before.hash
    report = await verify_stream(store, stream)
    assert report.ok and report.events == target
    assert len(await store.log_raw()) == target
    assert None not in await store.command_results(
        [f"w{e.actor.removeprefix('writer-')}/{e.seq}" for e in wins]
    )
    # Every conflict reported a version the stream really reached.
    hashes = {e.seq: e.hash for e in stored}
    for _seen, conflict in conflicts:
        assert hashes[conflict.version] == conflict.last_hash


async def test_a_stale_expected_version_writes_nothing(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    [env] = chain(issued(1), "cage")
    got = await store.append(
        "cage", Head(3, "f" * 64), [write("k-1", [env], [BalanceMove(player="p-1", delta=100)])]
    )
    assert got == VersionConflict(version=0, last_hash=GENESIS_HASH)
    assert await snapshot(redis_client, org) == {}

    first = await fill(store, "cage", issued(2))
    before = await snapshot(redis_client, org)
    late = chain(issued(1), "cage", Head(1, first[0].hash))
    got = await store.append(
        "cage",
        Head(1, first[0].hash),
        [write("k-late", late, [BalanceMove(player="p-1", delta=100)])],
    )
    assert got == VersionConflict(version=2, last_hash=first[1].hash)
    # The right version with the wrong last hash (a forked chain) conflicts too.
    forked = chain(issued(1), "cage", Head(2, "e" * 64))
    got = await store.append(
        "cage", Head(2, "e" * 64), [write("k-fork", forked, [BalanceMove(player="p-1", delta=1)])]
    )
    assert got == VersionConflict(version=2, last_hash=first[1].hash)
    assert await snapshot(redis_client, org) == before


# --- idempotency -----------------------------------------------------------------------------


async def test_a_retried_command_is_a_duplicate_and_returns_the_stored_result(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    reply = {"ok": True, "result": {"seq": 1, "balance": 500}}
    [env] = chain([ChipsIssued(player="p-1", amount=500)], "cage")
    cmd = CommandWrite(
        key="cashier/c-0001",
        result=pack_result("fp-buy-500", reply),
        events=[env],
        moves=[BalanceMove(player="p-1", delta=500)],
    )
    first = await store.append("cage", Head(0), [cmd])
    assert isinstance(first, Appended) and len(first.log_ids) == 1
    before = await snapshot(redis_client, org)

    # The retry is decided again (a new envelope) at the current head: nothing is written.
    head = await store.head("cage")
    [again] = chain([ChipsIssued(player="p-1", amount=500)], "cage", head)
    retry = dataclasses.replace(cmd, events=[again])
    assert await store.append("cage", head, [retry]) == DuplicateCommand(index=0)
    assert await snapshot(redis_client, org) == before
    assert await store.balance("p-1") == 500
    assert await store.read_all("cage") == [env]

    stored = await store.command_results(["cashier/c-0001", "cashier/never-sent"])
    assert stored[1] is None
    assert stored[0] is not None
    assert unpack_result(stored[0]) == ("fp-buy-500", reply)
    assert await store.command_results([]) == []

    # A duplicate later in a batch refuses the whole batch, new commands included.
    [fresh] = chain([ChipsIssued(player="p-2", amount=7)], "cage", head)
    new = write("cashier/c-0002", [fresh], [BalanceMove(player="p-2", delta=7)])
    assert await store.append("cage", head, [new, retry]) == DuplicateCommand(index=1)
    assert await snapshot(redis_client, org) == before


async def test_a_command_without_events_still_stores_its_result(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    """A refused command's reply is stored under its key so a retry gets the same refusal."""
    refusal = {"ok": False, "error": {"code": "bets_closed", "message": "closed"}}
    cmd = CommandWrite(key="p-1/c-9", result=pack_result("fp", refusal))
    assert await store.append("table:t-1", Head(0), [cmd]) == Appended(log_ids=())
    assert await store.head("table:t-1") == Head(0)
    assert await store.read_all("table:t-1") == []
    [raw] = await store.command_results(["p-1/c-9"])
    assert raw is not None and unpack_result(raw) == ("fp", refusal)
    assert await store.append("table:t-1", Head(0), [cmd]) == DuplicateCommand(index=0)


# --- all-or-nothing batches ----------------------------------------------------------------


async def test_a_batch_of_commands_is_all_or_nothing(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    await fill(store, "cage", [ChipsIssued(player="p-1", amount=300)])
    # Credit the balance the way the cage does (the fill above moved no money).
    head = await store.head("cage")
    [credit] = chain([ChipsIssued(player="p-1", amount=300)], "cage", head)
    got = await store.append(
        "cage", head, [write("buy-1", [credit], [BalanceMove(player="p-1", delta=300)])]
    )
    assert isinstance(got, Appended)
    assert await store.balance("p-1") == 300
    before = await snapshot(redis_client, org)

    stream = "table:t-1"
    bodies: list[Event] = [
        RoundOpened(round=1),
        BetPlaced(round=1, bet_id="b-1", player="p-1", bet={"kind": "red"}, amount=100),
        BetPlaced(round=1, bet_id="b-2", player="p-1", bet={"kind": "odd"}, amount=150),
        BetPlaced(round=1, bet_id="b-3", player="p-1", bet={"kind": "low"}, amount=100),
    ]
    envs = chain(bodies, stream)
    cmds = [
        write("dealer/open", [envs[0]]),
        write("p-1/b-1", [envs[1]], [BalanceMove(player="p-1", delta=-100)]),
        write("p-1/b-2", [envs[2]], [BalanceMove(player="p-1", delta=-150)]),
        write("p-1/b-3", [envs[3]], [BalanceMove(player="p-1", delta=-100)]),
    ]
    # 100 + 150 + 100 > 300: the fourth command fails the guard, so nothing is written.
    assert await store.append(stream, Head(0), cmds) == InsufficientFunds(index=3, player="p-1")
    assert await snapshot(redis_client, org) == before

    # Without the last bet the batch fits: every event, move and result lands at once.
    got = await store.append(stream, Head(0), cmds[:3])
    assert isinstance(got, Appended) and len(got.log_ids) == 3
    assert await store.read_all(stream) == envs[:3]
    assert await store.head(stream) == Head(3, envs[2].hash)
    assert await store.balance("p-1") == 50
    results = await store.command_results(["dealer/open", "p-1/b-1", "p-1/b-2", "p-1/b-3"])
    assert [r is not None for r in results] == [True, True, True, False]
    log = await store.log_raw()
    assert [i for i, _raw in log[-3:]] == list(got.log_ids)
    assert [decode(raw) for _i, raw in log[-3:]] == envs[:3]
    assert all(r.ok for r in await verify_all(store))


async def test_a_command_with_many_events_and_moves_applies_them_together(
    store: EventStore,
) -> None:
    envs = chain(
        [ChipsIssued(player="p-1", amount=40), ChipsIssued(player="p-2", amount=60)], "cage"
    )
    moves = [
        BalanceMove(player="p-1", delta=40),
        BalanceMove(player="p-2", delta=60),
        BalanceMove(player="p-1", delta=-40),
    ]
    got = await store.append("cage", Head(0), [write("multi", envs, moves)])
    assert isinstance(got, Appended) and len(got.log_ids) == 2
    assert await store.balances() == {"p-1": 0, "p-2": 60}
    # A move that takes a balance below zero, even after a credit in the same batch, refuses.
    head = await store.head("cage")
    more = chain([ChipsRedeemed(player="p-2", amount=61)], "cage", head)
    bad = [BalanceMove(player="p-2", delta=1), BalanceMove(player="p-2", delta=-62)]
    assert await store.append("cage", head, [write("x", more, bad)]) == InsufficientFunds(
        index=0, player="p-2"
    )
    assert await store.balances() == {"p-1": 0, "p-2": 60}


# --- the hash chain --------------------------------------------------------------------------


async def _good_streams(store: EventStore) -> tuple[list[Envelope], list[Envelope]]:
    cage = await fill(store, "cage", issued(6))
    table = await fill(
        store,
        "table:t-1",
        [
            RoundOpened(round=1),
            BetPlaced(round=1, bet_id="b-1", player="p-1", bet={"kind": "red"}, amount=100),
        ],
    )
    return cage, table


async def test_verify_passes_on_good_streams(store: EventStore) -> None:
    await _good_streams(store)
    reports = await verify_all(store)
    assert [(r.stream, r.events, r.ok) for r in reports] == [
        ("cage", 6, True),
        ("table:t-1", 2, True),
        ("log", 8, True),
    ]
    small = await verify_stream(store, "cage", batch=4)
    assert small.ok and small.events == 6
    assert (await verify_stream(store, "empty")).ok


async def test_verify_detects_an_altered_event(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    cage, _table = await _good_streams(store)

    def alter(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> Any:
        eid, fields = entries[2]
        env = decode(fields[b"e"])
        assert env.seq == 3
        entries[2] = (eid, {**fields, b"e": forge(env, data={**env.data, "amount": 99_999})})
        return entries

    await rewrite_stream(redis_client, org, "cage", alter)
    report = await verify_stream(store, "cage")
    assert not report.ok
    [brk] = report.breaks
    assert brk.seq == 3 and "altered" in brk.reason
    assert (await store.read_all("cage"))[2].event() == ChipsIssued(player="p-1", amount=99_999)
    by_stream = {r.stream: r.ok for r in await verify_all(store)}
    assert by_stream == {"cage": False, "table:t-1": True}  # the log is checked once all are
    assert cage[2].data["amount"] == 102


async def test_verify_detects_an_altered_event_with_a_recomputed_hash(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    """Recomputing the altered event's own hash breaks the next event's link instead."""
    await _good_streams(store)

    def alter(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> Any:
        eid, fields = entries[1]
        env = decode(fields[b"e"])
        changed = dataclasses.replace(env, data={**env.data, "player": "p-666"})
        changed = dataclasses.replace(changed, hash=expected_hash(changed))
        entries[1] = (eid, {**fields, b"e": encode(changed)})
        return entries

    await rewrite_stream(redis_client, org, "cage", alter)
    [brk] = (await verify_stream(store, "cage")).breaks
    assert brk.seq == 3 and "prev_hash" in brk.reason


async def test_verify_detects_a_deleted_event(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    await _good_streams(store)
    await rewrite_stream(redis_client, org, "cage", lambda entries: entries[:3] + entries[4:])
    report = await verify_stream(store, "cage")
    [brk] = report.breaks
    assert brk.seq == 4 and "expected entry 0-4" in brk.reason


async def test_verify_detects_a_deleted_last_event(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    await _good_streams(store)
    await rewrite_stream(redis_client, org, "cage", lambda entries: entries[:-1])
    [brk] = (await verify_stream(store, "cage")).breaks
    assert brk.seq == 5 and "meta" in brk.reason


async def test_verify_detects_reordered_events(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    await _good_streams(store)

    def swap(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> Any:
        (id2, f2), (id3, f3) = entries[1], entries[2]
        entries[1], entries[2] = (id2, f3), (id3, f2)
        return entries

    await rewrite_stream(redis_client, org, "cage", swap)
    [brk] = (await verify_stream(store, "cage")).breaks
    assert brk.seq == 2 and "expected seq 2" in brk.reason


async def test_verify_detects_renumbered_reordered_events(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    """Swapping two events and rewriting their seqs (hashes recomputed) breaks the links."""
    await _good_streams(store)

    def swap(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> Any:
        (id2, f2), (id3, f3) = entries[1], entries[2]
        e2, e3 = decode(f2[b"e"]), decode(f3[b"e"])
        n3 = dataclasses.replace(e3, seq=2, prev_hash=e2.prev_hash)
        n3 = dataclasses.replace(n3, hash=expected_hash(n3))
        n2 = dataclasses.replace(e2, seq=3, prev_hash=n3.hash)
        n2 = dataclasses.replace(n2, hash=expected_hash(n2))
        entries[1], entries[2] = (id2, {**f3, b"e": encode(n3)}), (id3, {**f2, b"e": encode(n2)})
        return entries

    await rewrite_stream(redis_client, org, "cage", swap)
    [brk] = (await verify_stream(store, "cage")).breaks
    assert brk.seq == 4 and "prev_hash" in brk.reason


async def test_verify_detects_a_forged_prev_hash(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    await _good_streams(store)

    def forge_link(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> Any:
        eid, fields = entries[4]
        env = decode(fields[b"e"])
        fake = dataclasses.replace(env, prev_hash="1" * 64)
        fake = dataclasses.replace(fake, hash=expected_hash(fake))  # self-consistent forgery
        entries[4] = (eid, {**fields, b"e": encode(fake)})
        return entries

    await rewrite_stream(redis_client, org, "cage", forge_link)
    [brk] = (await verify_stream(store, "cage")).breaks
    assert brk.seq == 5 and "prev_hash" in brk.reason


async def test_verify_detects_an_event_moved_from_another_stream(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    _cage, table = await _good_streams(store)

    def graft(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> Any:
        eid, fields = entries[0]
        return [(eid, {**fields, b"e": encode(table[0])}), *entries[1:]]

    await rewrite_stream(redis_client, org, "cage", graft)
    [brk] = (await verify_stream(store, "cage")).breaks
    assert brk.seq == 1 and "table:t-1" in brk.reason


async def test_verify_detects_a_forged_genesis_link(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    """A whole fake chain hashed consistently still fails unless it starts at genesis and
    ends at the meta hash the append script recorded."""
    real = await fill(store, "cage", issued(3))
    fake = chain(issued(3, player="p-x"), "cage")
    assert fake[0].prev_hash == GENESIS_HASH

    def replace_all(entries: list[tuple[bytes, dict[bytes, bytes]]]) -> Any:
        return [(eid, {**f, b"e": encode(e)}) for (eid, f), e in zip(entries, fake, strict=True)]

    await rewrite_stream(redis_client, org, "cage", replace_all)
    [brk] = (await verify_stream(store, "cage")).breaks
    assert brk.seq == 3 and "meta" in brk.reason
    assert real[-1].hash != fake[-1].hash


async def test_chain_hash_of_stored_bytes_matches_the_seal(store: EventStore) -> None:
    """What Redis holds hashes to what the writer sealed (no field lost in the codec)."""
    envs = await fill(store, "cage", issued(3))
    raw: Any = await store.redis.xrange(keys.stream(store.org, "cage"))
    for (_eid, fields), env in zip(raw, envs, strict=True):
        f = msgpack.unpackb(fields[b"e"], raw=False)
        assert (
            chain_hash(
                id=f[0],
                type=f[1],
                version=f[2],
                stream=f[3],
                seq=f[4],
                ts=f[5],
                actor=f[6],
                causation=f[7],
                correlation=f[8],
                prev_hash=f[9],
                data=f[11],
            )
            == env.hash
            == f[10]
        )


async def test_verify_detects_an_altered_org_log_entry(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    """Projections fold the org log: a copy altered there is caught even with a valid hash."""
    await _good_streams(store)
    log_key = keys.log(org)
    entries = await redis_client.xrange(log_key)
    target_id, fields = entries[2]
    env = decode(fields[b"e"])
    forged = forge(env, data={**env.data, "amount": 1})
    await redis_client.delete(log_key)
    for eid, f in entries:
        await redis_client.xadd(log_key, {b"e": forged if eid == target_id else f[b"e"]}, id=eid)
    reports = {r.stream: r for r in await verify_all(store)}
    assert reports["cage"].ok and reports["table:t-1"].ok
    [brk] = reports["log"].breaks
    assert brk.seq == 3 and "differs from cage seq 3" in brk.reason


async def test_verify_detects_an_event_missing_from_the_org_log(
    store: EventStore, redis_client: aioredis.Redis, org: str
) -> None:
    await _good_streams(store)
    log_key = keys.log(org)
    [(last_id, _fields)] = await redis_client.xrevrange(log_key, count=1)
    await redis_client.xdel(log_key, last_id)
    reports = {r.stream: r for r in await verify_all(store)}
    [brk] = reports["log"].breaks
    assert "table:t-1 seq 2 is missing from the log" in brk.reason
