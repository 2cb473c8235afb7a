"""Server-dealt Queen of Hearts boards of raffles opened before ``RaffleOpened`` version 2.

Such a board was dealt before its raffle's actor saw the setup and kept in Redis
(``keys.raffle_board``): the JSON ``{"cards", "salts"}`` by position, sealed with AES-GCM
(a 12-byte nonce, then the ciphertext) under a key derived from the server secret and bound
to the organization and raffle. Its ``RaffleOpened`` (version 1) carries the commitments
only, so a reveal on it still reads the position from here (the gateway does, before the
raffle's actor sees the ``reveal_card``). Nothing deals into Redis any more: a board dealt
now is dealt by the raffle actor's adapter and sealed in its event
(``services.raffles.actor``).
"""

from __future__ import annotations

import json
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from services.derived_keys import derive_key
from services.raffles import queen_of_hearts as qoh
from services.store import keys
from services.store.redis_store import RedisClient

BOARD_KEY_INFO = b"casino-night queen of hearts board"
"""HKDF info of the key the boards kept in Redis were sealed under."""
NONCE_BYTES = 12


class BoardUnreadable(Exception):
    """The stored board cannot be decrypted (another server secret, or tampering)."""


def board_key(secret: bytes) -> bytes:
    """The 32-byte key that sealed the boards kept in Redis: HKDF-SHA256 of the server
    secret."""
    return derive_key(secret, BOARD_KEY_INFO)


def aad(org: str, raffle: str) -> bytes:
    """The associated data a stored board was sealed with: it opens for its raffle only."""
    return f"casino-night/board/{org}/{raffle}".encode()


async def _secret(
    redis: RedisClient, key: bytes, org: str, raffle: str
) -> dict[str, list[str]] | None:
    raw: Any = await redis.get(keys.raffle_board(org, raffle))
    if raw is None:
        return None
    blob = bytes(raw)
    try:
        plain = AESGCM(key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], aad(org, raffle))
    except InvalidTag:
        raise BoardUnreadable(f"the board of {raffle} cannot be decrypted") from None
    value: dict[str, list[str]] = json.loads(plain)
    return value


async def position(
    redis: RedisClient, key: bytes, org: str, raffle: str, pos: int
) -> tuple[str, str] | None:
    """The card and salt at position ``pos`` (1-54) of the board kept in Redis, or None
    (no board stored, or a position off the board)."""
    secret = await _secret(redis, key, org, raffle)
    if secret is None or not 1 <= pos <= qoh.POSITIONS:
        return None
    return secret["cards"][pos - 1], secret["salts"][pos - 1]
