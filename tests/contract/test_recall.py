"""Game recall against a real Redis: a round of a long table stream is found in a few short
range reads (services/recall.py, docs/AUDIT.md "Game recall")."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from events.base import Event
from events.black_jack import ShoeShuffled
from events.dice import PlayerSeated, PlayerUnseated
from events.envelope import GENESIS_HASH, seal
from events.tables import (
    BetPlaced,
    BetSettlement,
    NoMoreBets,
    OutcomeRecorded,
    RoundOpened,
    Settled,
    TableOpened,
)
from services.aggregates import table_stream
from services.recall import (
    AFTER_END_EVENTS,
    MAX_RECALL_READS,
    RecallTooCostly,
    read_round,
    recall_from_store,
)
from services.store import keys
from services.store.redis_store import Appended, CommandWrite, EventStore, Head, pack_result

ROUNDS = 2000
TABLE = "roulette-9"
STREAM = f"table:{TABLE}"


def round_bodies(number: int, rng: random.Random) -> list[Event]:
    """One roulette round of one to three bets; every 50th round after a shuffle (an event
    of no round)."""
    bets = [
        BetPlaced(
            round=number, bet_id=f"{number}.{i}", player="p-1", bet={"kind": "red"}, amount=100
        )
        for i in range(rng.randint(1, 3))
    ]
    pocket = str(rng.randint(1, 36))
    lines = tuple(BetSettlement(b.bet_id, "p-1", 100, "lost", 0) for b in bets)
    shuffle: list[Event] = (
        [ShoeShuffled(shuffle=number, cards=52, commitments=(), sealed=None, reason="new_shoe")]
        if number % 50 == 0
        else []
    )
    return [
        *shuffle,
        RoundOpened(round=number),
        *bets,
        NoMoreBets(round=number),
        OutcomeRecorded(round=number, outcome={"pocket": pocket}, source="rng"),
        Settled(
            round=number,
            outcome={"pocket": pocket},
            settlements=lines,
            wagered=100 * len(bets),
            paid=0,
        ),
    ]


async def fill(store: EventStore) -> int:
    """A table stream of :data:`ROUNDS` rounds, appended 100 rounds to a command."""
    rng = random.Random(14)
    bodies: list[Event] = [TableOpened(table=TABLE, game="roulette", config={}, outcome_mode="rng")]
    head = Head(0)
    for first in range(1, ROUNDS + 1, 100):
        for n in range(first, first + 100):
            bodies += round_bodies(n, rng)
        envs = []
        for body in bodies:
            env = seal(
                body,
                id=f"e{head.version + 1}",
                stream=STREAM,
                seq=head.version + 1,
                ts=1_764_412_345_000 + head.version,
                actor="dealer:d-9",
                causation=f"c{head.version + 1}",
                correlation=None,
                prev_hash=head.last_hash or GENESIS_HASH,
            )
            envs.append(env)
            head = Head(env.seq, env.hash)
        write = CommandWrite(
            key=f"fill-{first}", result=pack_result("fp", {"ok": True}), events=envs
        )
        expected = Head(envs[0].seq - 1, envs[0].prev_hash)
        assert isinstance(await store.append(STREAM, expected, [write]), Appended)
        bodies = []
    return head.version


async def test_a_round_of_thousands_is_read_in_a_logarithmic_number_of_reads(
    store: EventStore,
) -> None:
    head = await fill(store)
    assert head > 5 * ROUNDS
    bound = math.ceil(math.log2(head)) + 4
    for number in (1, 2, 50, 51, 1234, ROUNDS - 1, ROUNDS):
        span = await read_round(store, TABLE, number, head)
        assert span is not None, number
        assert span.reads <= bound, (number, span.reads, bound)
        assert span.events[0].type == "RoundOpened" and span.events[0].data["round"] == number
        assert span.events[-1].type in ("Settled", "ShoeShuffled")
        assert {e.data.get("round") for e in span.events} <= {number, None}
        assert not span.cut_short
        assert span.opened is not None and span.opened.type == "TableOpened"
    # Without the index (a stream begun before it), or with a wrong entry, the search by seq
    # holds the same bound on a stream whose rounds are close together.
    key = keys.rounds(store.org, STREAM)
    fifty = (await store.round_marks(STREAM, 50)).exact
    await store.redis.zremrangebyscore(key, 1234, 1234)
    await store.redis.zadd(key, {str(fifty): 1234})
    for _case in ("a wrong entry", "no index"):
        span = await read_round(store, TABLE, 1234, head)
        assert span is not None and span.events[0].data["round"] == 1234
        assert span.reads <= bound + 2, span.reads
        await store.redis.delete(key)
    # Round 50 came after a shuffle: the shuffle is the end of round 49's span.
    before = await read_round(store, TABLE, 49, head)
    assert before is not None and before.events[-1].type == "ShoeShuffled"
    assert await read_round(store, TABLE, ROUNDS + 1, head) is None
    recalled = await recall_from_store(store, TABLE, 1234)
    assert recalled is not None and recalled["status"] == "settled" and recalled["complete"]
    assert recalled["outcomes"][0]["source"] == "rng"


SEATED = 3000
"""Events of no round between two rounds: a dealer who seats and unseats a player 1,500
times."""
LONG_ROUNDS = 12


class CountingStore:
    """The real store, its reads counted: each range read of a stream and each round trip to
    the round index is one."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.reads = 0

    async def read_raw(self, stream: str, since: int = 0, limit: int | None = None) -> Any:
        self.reads += 1
        return await self.store.read_raw(stream, since, limit)

    async def round_marks(self, stream: str, number: int) -> Any:
        self.reads += 1
        return await self.store.round_marks(stream, number)

    async def head(self, stream: str) -> Head:
        return await self.store.head(stream)


async def append_all(store: EventStore, stream: str, bodies: list[Event], head: Head) -> Head:
    """Append ``bodies`` to ``stream`` through the append script, 2,000 events a command."""
    for first in range(0, len(bodies), 2000):
        envs = []
        for body in bodies[first : first + 2000]:
            env = seal(
                body, id=f"{stream}-{head.version + 1}", stream=stream, seq=head.version + 1,
                ts=1_764_412_345_000 + head.version, actor="dealer:d-9",
                causation=f"c{head.version + 1}", correlation=None,
                prev_hash=head.last_hash or GENESIS_HASH,
            )  # fmt: skip
            envs.append(env)
            head = Head(env.seq, env.hash)
        write = CommandWrite(
            key=f"{stream}-{first}", result=pack_result("fp", {"ok": True}), events=envs
        )
        expected = Head(envs[0].seq - 1, envs[0].prev_hash)
        assert isinstance(await store.append(stream, expected, [write]), Appended)
    return head


async def seated_table(store: EventStore, table: str, rounds: int = LONG_ROUNDS) -> int:
    """A table whose rounds are each preceded by :data:`SEATED` seatings (events of no
    round): every probe of a search by seq alone lands among them."""
    rng = random.Random(1414)
    bodies: list[Event] = [TableOpened(table=table, game="roulette", config={}, outcome_mode="rng")]
    for number in range(1, rounds + 1):
        for i in range(SEATED // 2):
            bodies += [
                PlayerSeated(seat=1 + i % 6, player="p-1"),
                PlayerUnseated(seat=1 + i % 6, player="p-1"),
            ]
        bodies += round_bodies(number, rng)
    return (await append_all(store, table_stream(table), bodies, Head(0))).version


async def test_long_runs_of_events_of_no_round_cost_a_recall_no_more_reads(
    store: EventStore,
) -> None:
    """With the round index the append script keeps, each round costs the same 4 reads (the
    TableOpened, the index, the indexed RoundOpened, the round), whatever the stream holds
    between rounds; a round never opened costs 2. Without the index (a stream begun before
    it, or its entry for a round wrong), every recall stays within MAX_RECALL_READS: it
    answers, or refuses (RecallTooCostly) where its bounded search cannot place the round."""
    head = await seated_table(store, "roulette-7")
    assert head > LONG_ROUNDS * SEATED
    counted = CountingStore(store)
    for number in range(1, LONG_ROUNDS + 1):
        counted.reads = 0
        span = await read_round(counted, "roulette-7", number, head)  # type: ignore[arg-type]
        assert span is not None and span.events[0].data["round"] == number
        types = [e.type for e in span.events]
        after = AFTER_END_EVENTS if number < LONG_ROUNDS else 0  # the seatings before the next
        assert types.index("Settled") == len(types) - 1 - after, types
        assert not span.cut_short
        assert counted.reads == span.reads == 4, (number, counted.reads)
    counted.reads = 0
    assert await read_round(counted, "roulette-7", LONG_ROUNDS + 1, head) is None  # type: ignore[arg-type]
    assert counted.reads == 2

    # A wrong entry (round 5 said to open at round 3's seq) is checked against the event:
    # never round 3 served as round 5; here the search between rounds 4 and 6 cannot place it.
    key = keys.rounds(store.org, table_stream("roulette-7"))
    three = (await store.round_marks(table_stream("roulette-7"), 3)).exact
    await store.redis.zremrangebyscore(key, 5, 5)
    await store.redis.zadd(key, {str(three): 5})
    counted.reads = 0
    with pytest.raises(RecallTooCostly):
        await read_round(counted, "roulette-7", 5, head)  # type: ignore[arg-type]
    assert counted.reads <= MAX_RECALL_READS

    # No index at all: bounded, answered or refused, never read to the end.
    await store.redis.delete(key)
    refused = 0
    for number in (1, 2, 6, LONG_ROUNDS, LONG_ROUNDS + 1):
        counted.reads = 0
        try:
            span = await read_round(counted, "roulette-7", number, head)  # type: ignore[arg-type]
        except RecallTooCostly:
            refused += 1
        else:
            if number <= LONG_ROUNDS:
                assert span is not None and span.events[0].data["round"] == number
        assert counted.reads <= MAX_RECALL_READS, (number, counted.reads)
    assert refused > 0  # these runs defeat a search by seq alone: the index is what bounds it
