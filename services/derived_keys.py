"""Keys derived from the server secret, one per use (token signing, projection checkpoints,
Queen of Hearts boards, the purchaser vault): HKDF-SHA256 with an ``info`` naming the use,
so no key can stand in for another and none is ever stored beside what it protects."""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_BYTES = 32


def derive_key(secret: bytes, info: bytes, length: int = KEY_BYTES) -> bytes:
    """The ``length``-byte key of the use ``info``, from ``secret`` (ValueError if empty)."""
    if not secret:
        raise ValueError("the server secret is empty")
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(secret)
