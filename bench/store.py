"""Figure 1: event-store appends per second on Redis with ``appendfsync always``.

Each append is what a table actor writes for accepted bets: per command, one ``BetPlaced``
envelope, its idempotency key, its stored reply and a guarded balance move, through
``EventStore.append`` (the Lua script). Envelopes are sealed (hash chained) before the timed
loop; msgpack encoding, the script call and Redis's fsync are inside it. The cost of
``seal`` itself is reported on its own row.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid

import redis.asyncio as aioredis

from bench.common import Result, at_least, own_redis, progress, unique_org
from events.envelope import GENESIS_HASH, seal
from events.tables import BetPlaced
from services.store import keys
from services.store.redis_store import (
    Appended,
    BalanceMove,
    CommandWrite,
    EventStore,
    Head,
    pack_result,
)

STREAMS = 50
BATCHES = (8, 32)
"""Commands per append in the concurrent figures (group commits; the actor takes up to 64)."""


def _commands(stream: str, player: str, count: int, ts: int) -> list[CommandWrite]:
    """``count`` bet commands for ``stream``, their envelopes sealed as one hash chain."""
    out: list[CommandWrite] = []
    prev = GENESIS_HASH
    table = stream.removeprefix("table:")
    for seq in range(1, count + 1):
        bet_id = f"{table}.1.{seq}"
        body = BetPlaced(
            round=1,
            bet_id=bet_id,
            player=player,
            bet={"kind": "straight", "numbers": [str(seq % 37)]},
            amount=1,
        )
        env = seal(
            body,
            id=uuid.uuid4().hex,
            stream=stream,
            seq=seq,
            ts=ts,
            actor=f"player:{player}",
            causation=f"c-{seq}",
            correlation=f"{table}#1",
            prev_hash=prev,
        )
        prev = env.hash
        reply = {"ok": True, "result": {"seq": seq, "round": 1, "bet_id": bet_id}}
        out.append(
            CommandWrite(
                key=f"{player}/c-{seq}",
                result=pack_result("f" * 64, reply),
                events=(env,),
                moves=(BalanceMove(player=player, delta=-1),),
            )
        )
    return out


async def _fund(client: aioredis.Redis, org: str, players: list[str]) -> None:
    await client.hset(keys.balances(org), mapping=dict.fromkeys(players, 10**12))


async def sequential(url: str, count: int, seconds: float) -> tuple[float, int]:
    """One stream, one awaited append of one command (one event) at a time."""
    client = aioredis.Redis.from_url(url, decode_responses=False)
    try:
        org = unique_org("store-seq")
        store = EventStore(client, org)
        await _fund(client, org, ["p-0"])
        commands = _commands("table:seq", "p-0", count, int(time.time() * 1000))
        head = Head(0)
        await store.append("table:seq", head, commands[:1])  # warm the script cache
        head = Head(1, commands[0].events[0].hash)
        done = 0
        started = time.perf_counter()
        deadline = started + seconds
        for cmd in commands[1:]:
            outcome = await store.append("table:seq", head, [cmd])
            if not isinstance(outcome, Appended):
                raise RuntimeError(f"append refused: {outcome}")
            env = cmd.events[0]
            head = Head(env.seq, env.hash)
            done += 1
            if time.perf_counter() >= deadline:
                break
        return done / (time.perf_counter() - started), done
    finally:
        await client.aclose()


async def concurrent(url: str, work: list[list[CommandWrite]], batch: int) -> tuple[float, int]:
    """``STREAMS`` tasks, each appending ``batch`` commands at a time to its own stream."""
    client = aioredis.Redis.from_url(url, decode_responses=False, max_connections=STREAMS + 4)
    try:
        org = unique_org("store-conc")
        store = EventStore(client, org)
        await _fund(client, org, [c[0].moves[0].player for c in work])

        async def writer(stream: str, commands: list[CommandWrite]) -> int:
            head = Head(0)
            written = 0
            for i in range(0, len(commands), batch):
                part = commands[i : i + batch]
                outcome = await store.append(stream, head, part)
                if not isinstance(outcome, Appended):
                    raise RuntimeError(f"append refused: {outcome}")
                last = part[-1].events[-1]
                head = Head(last.seq, last.hash)
                written += len(part)
            return written

        # Open the connections first so that the timed part measures appends, not connects.
        await asyncio.gather(*(client.ping() for _ in range(STREAMS)))
        started = time.perf_counter()
        counts = await asyncio.gather(*(writer(c[0].events[0].stream, c) for c in work))
        elapsed = time.perf_counter() - started
        total = sum(counts)
        return total / elapsed, total
    finally:
        await client.aclose()


def seal_cost(count: int = 5000) -> float:
    """Microseconds to seal one BetPlaced envelope (to_data, canonical msgpack, SHA-256)."""
    bodies = [
        BetPlaced(round=1, bet_id=f"x.1.{i}", player="p-0", bet={"kind": "red"}, amount=1)
        for i in range(count)
    ]
    prev = GENESIS_HASH
    started = time.perf_counter()
    for i, body in enumerate(bodies):
        prev = seal(
            body,
            id=uuid.uuid4().hex,
            stream="table:x",
            seq=i + 1,
            ts=0,
            actor="player:p-0",
            causation=f"c-{i}",
            correlation="x#1",
            prev_hash=prev,
        ).hash
    return (time.perf_counter() - started) / count * 1e6


async def run(quick: bool) -> list[Result]:
    seq_seconds = 2.0 if quick else 4.0
    per_stream = 400 if quick else 1000
    runs = 1 if quick else 3
    with own_redis() as redis:
        progress("store: one stream, sequential appends")
        seq_rate, seq_n = await sequential(redis.url, 4000 if quick else 12000, seq_seconds)
        ts = int(time.time() * 1000)
        # The same sealed streams serve every run, each run under an organization of its own.
        work = [_commands(f"table:s{i}", f"p-{i}", per_stream, ts) for i in range(STREAMS)]
        conc: dict[int, list[float]] = {}
        for batch in BATCHES:
            progress(f"store: {STREAMS} streams concurrent, {batch} commands per append")
            conc[batch] = [(await concurrent(redis.url, work, batch))[0] for _ in range(runs)]
    seal_us = seal_cost()
    rows = [
        Result(
            "1a store appends, 1 stream sequential (1 event/append)",
            seq_rate,
            "events/s",
            note=f"{seq_n:,} awaited EventStore.append calls, each 1 BetPlaced + key + result"
            " + balance move; envelopes pre-sealed; encode + Lua + fsync timed",
        )
    ]
    for letter, (batch, rates) in zip("bc", conc.items(), strict=True):
        rows.append(
            at_least(
                f"1{letter} store appends, {STREAMS} streams concurrent ({batch} events/append)",
                statistics.median(rates),
                "events/s",
                40_000,
                note=f"{STREAMS} tasks x {per_stream:,} events, {batch} commands per append (each"
                " 1 BetPlaced + key + result + balance move); pre-sealed; encode + Lua + fsync"
                f" timed; median of {runs}: {', '.join(f'{r:,.0f}' for r in rates)}",
            )
        )
    rows.append(
        Result(
            "1d seal() of one BetPlaced (not in 1a-1c)",
            seal_us,
            "us/event",
            note="to_data + canonical msgpack + SHA-256 + uuid4, paid by the actor per event",
            digits=1,
        )
    )
    return rows
