"""A server-dealt Queen of Hearts board in Redis (services/raffles/board.py): dealt once,
sealed under a key from the server secret, every position checkable against its
commitment when revealed."""

from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from services.raffles import board
from services.raffles import queen_of_hearts as qoh
from services.store import keys

KEY = board.board_key(b"test-secret")


async def test_a_board_is_dealt_once_and_its_commitments_never_change(
    redis_client: aioredis.Redis, org: str
) -> None:
    first = await board.ensure_board(redis_client, KEY, org, "qoh-1", random.Random(1))
    again = await board.ensure_board(redis_client, KEY, org, "qoh-1", random.Random(2))
    assert first == again and len(first) == qoh.POSITIONS
    cards = []
    for pos in range(1, qoh.POSITIONS + 1):
        found = await board.position(redis_client, KEY, org, "qoh-1", pos)
        assert found is not None
        card, salt = found
        assert qoh.commitment(salt, pos, card) == first[pos - 1]
        cards.append(card)
    assert sorted(cards) == sorted(qoh.DECK)
    assert await board.position(redis_client, KEY, org, "qoh-1", 55) is None


async def test_the_stored_board_shows_no_card_and_needs_the_server_key(
    redis_client: aioredis.Redis, org: str
) -> None:
    await board.ensure_board(redis_client, KEY, org, "qoh-2", random.Random(3))
    raw = await redis_client.get(keys.raffle_board(org, "qoh-2"))
    assert raw is not None
    # the JSON of the board, quotes included (long enough not to occur by chance in
    # random ciphertext)
    assert not any(f'"{card}"'.encode() in raw for card in ("QH", "JK1", "10S", "AH"))
    assert b'"cards"' not in raw and b'"salts"' not in raw
    other = board.board_key(b"another-secret")
    with pytest.raises(board.BoardUnreadable):
        await board.position(redis_client, other, org, "qoh-2", 1)
    # a board copied to another raffle's key does not open there (bound to its raffle)
    await redis_client.set(keys.raffle_board(org, "qoh-3"), raw)
    with pytest.raises(board.BoardUnreadable):
        await board.position(redis_client, KEY, org, "qoh-3", 1)
