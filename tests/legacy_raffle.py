"""A Queen of Hearts raffle as a server before ``RaffleOpened`` version 2 left it: its
server-dealt board kept in Redis (``keys.raffle_board``, the format services/raffles/board.py
reads) and a version 1 ``RaffleOpened`` carrying the commitments only. Seeded throughout."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from events.base import to_data
from events.envelope import GENESIS_HASH, Envelope, chain_hash
from events.raffles import RaffleOpened
from services.raffles import board
from services.raffles import queen_of_hearts as qoh
from services.raffles.rules import parse_config
from services.store import keys
from services.store.redis_store import CommandWrite, EventStore, Head
from tests.support import SECRET

KEY = board.board_key(SECRET)
"""The key the server with the tests' secret seals and reads stored boards with."""


def deal(seed: int) -> tuple[list[str], list[str]]:
    """A board and its salts from a seeded generator (a stand-in for the old deal)."""
    rng = random.Random(seed)
    cards = list(qoh.DECK)
    rng.shuffle(cards)
    return cards, [rng.randbytes(16).hex() for _ in cards]


async def store_board(
    redis: aioredis.Redis, org: str, raffle: str, cards: Sequence[str], salts: Sequence[str]
) -> None:
    """The board kept in Redis as the server stored it: JSON sealed with AES-GCM (a 12-byte
    nonce, here seeded, then the ciphertext) bound to the organization and raffle."""
    nonce = random.Random(raffle).randbytes(board.NONCE_BYTES)
    plain = json.dumps({"cards": list(cards), "salts": list(salts)}).encode()
    sealed = nonce + AESGCM(KEY).encrypt(nonce, plain, board.aad(org, raffle))
    await redis.set(keys.raffle_board(org, raffle), sealed)


async def open_raffle(
    store: EventStore, raffle: str, options: Mapping[str, Any], seed: int
) -> list[str]:
    """A raffle opened the old way: its board in Redis, then ``RaffleOpened`` version 1 as
    the first event of ``raffle:<raffle>``. Returns the board's cards by position."""
    cards, salts = deal(seed)
    await store_board(store.redis, store.org, raffle, cards, salts)
    config = parse_config("queen_of_hearts", options, qoh.commit(cards, salts))
    data = to_data(RaffleOpened(raffle=raffle, kind="queen_of_hearts", config=config))
    del data["sealed_board"]  # version 1 had no such field
    stream = f"raffle:{raffle}"
    fields: dict[str, Any] = dict(
        id=f"{random.Random(seed).getrandbits(128):032x}", type="RaffleOpened", version=1,
        stream=stream, seq=1, ts=int(time.time() * 1000), actor="member_in_charge:m",
        causation="c-legacy-setup", correlation=None, prev_hash=GENESIS_HASH,
    )  # fmt: skip
    env = Envelope(**fields, hash=chain_hash(**fields, data=data), data=data)
    await store.append(stream, Head(0), [CommandWrite(key="", result=b"", events=[env])])
    return cards
