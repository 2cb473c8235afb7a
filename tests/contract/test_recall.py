"""Game recall against a real Redis: a round of a long table stream is found in a few short
range reads (services/recall.py, docs/AUDIT.md "Game recall")."""

from __future__ import annotations

import math
import random

from events.base import Event
from events.black_jack import ShoeShuffled
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
from services.recall import read_round, recall_from_store
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
    # Round 50 came after a shuffle: the shuffle is the end of round 49's span.
    before = await read_round(store, TABLE, 49, head)
    assert before is not None and before.events[-1].type == "ShoeShuffled"
    assert await read_round(store, TABLE, ROUNDS + 1, head) is None
    recalled = await recall_from_store(store, TABLE, 1234)
    assert recalled is not None and recalled["status"] == "settled" and recalled["complete"]
    assert recalled["outcomes"][0]["source"] == "rng"
