"""A server-dealt Queen of Hearts board: dealt once with the CSPRNG, its secret (cards and
salts) kept in Redis, its commitments published when the raffle opens (docs/RULES.md).

Dealing is idempotent: the first deal for a raffle is stored with SET NX and every later
call (a retried setup, a restart) reads the stored one, so the commitments never change.
"""

from __future__ import annotations

import json
import random
import secrets
from typing import Any

from services.raffles import queen_of_hearts as qoh
from services.store import keys
from services.store.redis_store import RedisClient

SALT_BYTES = 16
"""Random bytes per position's salt (hex in the commitment): the commitments reveal
nothing about the cards before their reveal."""


def deal(rng: random.Random) -> dict[str, list[str]]:
    """A shuffled deck on the 54 positions and a fresh random salt per position."""
    cards = list(qoh.DECK)
    rng.shuffle(cards)
    salts = [secrets.token_hex(SALT_BYTES) for _ in cards]
    return {"cards": cards, "salts": salts}


async def _secret(redis: RedisClient, org: str, raffle: str) -> dict[str, list[str]] | None:
    raw: Any = await redis.get(keys.raffle_board(org, raffle))
    if raw is None:
        return None
    value: dict[str, list[str]] = json.loads(raw)
    return value


async def ensure_board(
    redis: RedisClient, org: str, raffle: str, rng: random.Random
) -> tuple[str, ...]:
    """The board's 54 commitments, dealing and storing the board first if it has none."""
    dealt = json.dumps(deal(rng), separators=(",", ":"))
    await redis.set(keys.raffle_board(org, raffle), dealt, nx=True)
    secret = await _secret(redis, org, raffle)
    assert secret is not None
    return qoh.commit(secret["cards"], secret["salts"])


async def position(redis: RedisClient, org: str, raffle: str, pos: int) -> tuple[str, str] | None:
    """The card and salt at position ``pos`` (1-54) of the stored board, or None."""
    secret = await _secret(redis, org, raffle)
    if secret is None or not 1 <= pos <= qoh.POSITIONS:
        return None
    return secret["cards"][pos - 1], secret["salts"][pos - 1]
