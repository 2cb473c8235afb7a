"""A server-dealt Queen of Hearts board: dealt once with the CSPRNG, its secret (cards and
salts) kept in Redis encrypted (AES-GCM under a key derived from the server secret, so
reading Redis alone does not tell where the queen lies), its commitments published when
the raffle opens (docs/RULES.md).

Dealing is idempotent: the first deal for a raffle is stored with SET NX and every later
call (a retried setup, a restart) reads the stored one, so the commitments never change.
"""

from __future__ import annotations

import json
import random
import secrets
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from services.derived_keys import derive_key
from services.raffles import queen_of_hearts as qoh
from services.store import keys
from services.store.redis_store import RedisClient

SALT_BYTES = 16
"""Random bytes per position's salt (hex in the commitment): the commitments reveal
nothing about the cards before their reveal."""


BOARD_KEY_INFO = b"casino-night queen of hearts board"
NONCE_BYTES = 12


class BoardUnreadable(Exception):
    """The stored board cannot be decrypted (another server secret, or tampering)."""


def board_key(secret: bytes) -> bytes:
    """The 32-byte key that seals stored boards: HKDF-SHA256 of the server secret."""
    return derive_key(secret, BOARD_KEY_INFO)


def _aad(org: str, raffle: str) -> bytes:
    return f"casino-night/board/{org}/{raffle}".encode()


def _seal(key: bytes, org: str, raffle: str, board: dict[str, list[str]]) -> bytes:
    nonce = secrets.token_bytes(NONCE_BYTES)
    plain = json.dumps(board, separators=(",", ":")).encode()
    return nonce + AESGCM(key).encrypt(nonce, plain, _aad(org, raffle))


def deal(rng: random.Random) -> dict[str, list[str]]:
    """A shuffled deck on the 54 positions and a fresh random salt per position."""
    cards = list(qoh.DECK)
    rng.shuffle(cards)
    salts = [secrets.token_hex(SALT_BYTES) for _ in cards]
    return {"cards": cards, "salts": salts}


async def _secret(
    redis: RedisClient, key: bytes, org: str, raffle: str
) -> dict[str, list[str]] | None:
    raw: Any = await redis.get(keys.raffle_board(org, raffle))
    if raw is None:
        return None
    blob = bytes(raw)
    try:
        plain = AESGCM(key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], _aad(org, raffle))
    except InvalidTag:
        raise BoardUnreadable(f"the board of {raffle} cannot be decrypted") from None
    value: dict[str, list[str]] = json.loads(plain)
    return value


async def ensure_board(
    redis: RedisClient, key: bytes, org: str, raffle: str, rng: random.Random
) -> tuple[str, ...]:
    """The board's 54 commitments, dealing and storing the board first if it has none."""
    await redis.set(keys.raffle_board(org, raffle), _seal(key, org, raffle, deal(rng)), nx=True)
    secret = await _secret(redis, key, org, raffle)
    assert secret is not None
    return qoh.commit(secret["cards"], secret["salts"])


async def position(
    redis: RedisClient, key: bytes, org: str, raffle: str, pos: int
) -> tuple[str, str] | None:
    """The card and salt at position ``pos`` (1-54) of the stored board, or None."""
    secret = await _secret(redis, key, org, raffle)
    if secret is None or not 1 <= pos <= qoh.POSITIONS:
        return None
    return secret["cards"][pos - 1], secret["salts"][pos - 1]
