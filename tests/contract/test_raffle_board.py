"""Server-dealt Queen of Hearts boards on a real Redis: a board sealed in its
``RaffleOpened`` survives a restart (a new actor folding the stream reveals the same cards),
and a board kept in Redis by a raffle opened before that (services/raffles/board.py) is
still read, sealed under a key from the server secret and bound to its raffle."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import pytest
import redis.asyncio as aioredis

from services.actor import Actor, Submission
from services.chance import ServerChance, seal_key
from services.raffles import board
from services.raffles import queen_of_hearts as qoh
from services.raffles.actor import RaffleRules, board_context, open_board
from services.raffles.state import (
    HoldDrawing,
    RaffleCommand,
    RecordDrawingMethod,
    RevealCard,
    SellTicket,
    SetupRaffle,
)
from services.store import keys
from services.store.redis_store import EventStore
from tests import legacy_raffle
from tests.support import SECRET
from tests.unit.raffles.support import NOW, qoh_config

SEAL_KEY = seal_key(SECRET)


async def test_a_stored_board_is_read_by_position(redis_client: aioredis.Redis, org: str) -> None:
    cards, salts = legacy_raffle.deal(1)
    await legacy_raffle.store_board(redis_client, org, "qoh-1", cards, salts)
    for pos in range(1, qoh.POSITIONS + 1):
        found = await board.position(redis_client, legacy_raffle.KEY, org, "qoh-1", pos)
        assert found == (cards[pos - 1], salts[pos - 1])
    assert await board.position(redis_client, legacy_raffle.KEY, org, "qoh-1", 55) is None
    assert await board.position(redis_client, legacy_raffle.KEY, org, "qoh-none", 1) is None


async def test_a_stored_board_needs_the_server_key_and_its_raffle(
    redis_client: aioredis.Redis, org: str
) -> None:
    cards, salts = legacy_raffle.deal(2)
    await legacy_raffle.store_board(redis_client, org, "qoh-2", cards, salts)
    raw = await redis_client.get(keys.raffle_board(org, "qoh-2"))
    assert raw is not None and b'"QH"' not in raw and b'"cards"' not in raw
    with pytest.raises(board.BoardUnreadable):
        await board.position(redis_client, board.board_key(b"another-secret"), org, "qoh-2", 1)
    # a board copied to another raffle's key does not open there (bound to its raffle)
    await redis_client.set(keys.raffle_board(org, "qoh-3"), raw)
    with pytest.raises(board.BoardUnreadable):
        await board.position(redis_client, legacy_raffle.KEY, org, "qoh-3", 1)


def submission(n: int, command: RaffleCommand) -> Submission[Any]:
    return Submission(
        key=f"member_in_charge:m/c-{n}",
        fingerprint=f"fp-{n}",
        command_id=f"c-{n}",
        actor="member_in_charge:m",
        command=command,
    )


def raffle_actor(store: EventStore, org: str, *, seed: int) -> Actor[Any, Any]:
    rules = RaffleRules(ServerChance(SEAL_KEY, random.Random(seed)), org)
    return Actor(store, "raffle:qoh-9", rules, publish=lambda _envelopes: None)


async def run(actor: Actor[Any, Any], commands: Sequence[tuple[int, RaffleCommand]]) -> list[Any]:
    """Each command through the running actor, in turn; their replies."""
    task = asyncio.create_task(actor.run())
    try:
        replies = []
        for n, command in commands:
            replies.append(await asyncio.wait_for(actor.submit_nowait(submission(n, command)), 10))
        return replies
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_restarted_actor_reveals_the_cards_sealed_in_the_stream(
    redis_client: aioredis.Redis, store: EventStore, org: str
) -> None:
    first = raffle_actor(store, org, seed=1)
    await first.load()
    setup = SetupRaffle(kind="queen_of_hearts", config=qoh_config(board="server"))
    replies = await run(
        first,
        [
            (1, setup),
            (2, RecordDrawingMethod(method="hand", description="stubs")),
            (3, SellTicket(count=1, amount=100, now_ms=NOW)),
            (4, SellTicket(count=1, amount=100, now_ms=NOW)),
            (5, HoldDrawing(now_ms=NOW, serials=(1,))),
        ],
    )
    assert all(r["ok"] for r in replies), replies
    (opened, *_rest) = await store.read("raffle:qoh-9")
    assert opened.type == "RaffleOpened" and opened.version == 2
    cards, _salts = open_board(
        ServerChance(SEAL_KEY), board_context(org, "qoh-9"), opened.data["sealed_board"]
    )
    assert await redis_client.exists(keys.raffle_board(org, "qoh-9")) == 0  # nothing kept aside

    # a new actor, with another generator, folds the stream and reveals as dealt
    again = raffle_actor(store, org, seed=2)
    await again.load()
    queen = cards.index(qoh.QUEEN_OF_HEARTS) + 1
    position = 1 if queen != 1 else 2
    (reply,) = await run(again, [(6, RevealCard(now_ms=NOW, position=position))])
    assert reply["ok"] and reply["result"]["card"] == cards[position - 1]
    # a setup at start again (another command) deals nothing: the stream has one board
    (reply,) = await run(again, [(7, setup)])
    assert reply["ok"]
    assert [e.type for e in await store.read("raffle:qoh-9")].count("RaffleOpened") == 1
