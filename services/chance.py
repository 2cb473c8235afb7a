"""Chance: where randomness and the server's secrets enter the rules (the only place).

An actor's rules adapter holds one :class:`ServerChance` and hands it to a game's
``prepare`` (``services.games.base.Chance``): uniform integers from a CSPRNG, salts for
commitments, and sealing of what must stay secret on a public stream (a shuffled shoe),
with AES-256-GCM under a key derived from the server secret and bound to a context. What a
game takes from here it writes into the step as data; the pure rules never draw.
"""

from __future__ import annotations

import base64
import binascii
import os
import random
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from services.derived_keys import derive_key

SEAL_KEY_INFO = b"casino-night sealed game secrets"
"""HKDF info of the key that seals a game's secrets on its stream."""
NONCE_BYTES = 12
SALT_BYTES = 16


def seal_key(secret: bytes) -> bytes:
    """The 32-byte sealing key of the games' secrets, from the server secret."""
    return derive_key(secret, SEAL_KEY_INFO)


class ServerChance:
    """The server's :class:`~services.games.base.Chance`: ``rng`` (``secrets.SystemRandom``
    unless a test passes a seeded one) and the sealing key."""

    def __init__(self, key: bytes, rng: random.Random | None = None) -> None:
        if len(key) != 32:
            raise ValueError("the sealing key must be 32 bytes")
        self._aead = AESGCM(key)
        self.rng: random.Random = rng if rng is not None else secrets.SystemRandom()
        """The CSPRNG itself (``secrets.SystemRandom``; a seeded generator under test)."""
        self._seeded = rng is not None and not isinstance(rng, secrets.SystemRandom)

    def below(self, bound: int) -> int:
        """Uniform in ``[0, bound)``: ``randrange`` rejects rather than reducing modulo."""
        return self.rng.randrange(bound)

    def salt(self) -> str:
        """32 hex digits of randomness (from the seeded generator under test)."""
        raw = self.rng.randbytes(SALT_BYTES) if self._seeded else os.urandom(SALT_BYTES)
        return raw.hex()

    def seal(self, context: str, plain: bytes) -> str:
        nonce = self.rng.randbytes(NONCE_BYTES) if self._seeded else os.urandom(NONCE_BYTES)
        sealed = nonce + self._aead.encrypt(nonce, plain, context.encode())
        return base64.b64encode(sealed).decode("ascii")

    def unseal(self, context: str, sealed: str) -> bytes:
        try:
            blob = base64.b64decode(sealed, validate=True)
            return self._aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], context.encode())
        except (InvalidTag, binascii.Error, ValueError) as e:
            raise ValueError(f"not sealed by this server for {context}") from e
