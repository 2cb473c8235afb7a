"""The server's Chance: unbiased draws in range, salts, and seals bound to their context."""

from __future__ import annotations

import random

import pytest

from services.chance import ServerChance, seal_key


def test_draws_stay_in_range_and_cover_it() -> None:
    chance = ServerChance(seal_key(b"s" * 32), random.Random(7))
    seen = {chance.below(6) for _ in range(600)}
    assert seen == set(range(6))


def test_a_seal_opens_only_in_its_context_and_with_its_key() -> None:
    chance = ServerChance(seal_key(b"s" * 32), random.Random(7))
    sealed = chance.seal("bj-1/shoe/1", b"seed")
    assert b"seed" not in sealed.encode()
    assert chance.unseal("bj-1/shoe/1", sealed) == b"seed"
    with pytest.raises(ValueError):
        chance.unseal("bj-1/shoe/2", sealed)
    with pytest.raises(ValueError):
        ServerChance(seal_key(b"t" * 32)).unseal("bj-1/shoe/1", sealed)
    with pytest.raises(ValueError):
        chance.unseal("bj-1/shoe/1", "not base64!")


def test_salts_are_fresh_hex() -> None:
    chance = ServerChance(seal_key(b"s" * 32))
    a, b = chance.salt(), chance.salt()
    assert a != b and len(a) == 32 and int(a, 16) >= 0
