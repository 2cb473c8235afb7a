"""The Black Jack shoe in RNG mode: a shuffle fixed by a seed, its salts and commitments.

Pure: the seed comes from the Chance (``black_jack.BLACK_JACK.prepare``); everything else
is computed from it, so an auditor with the seed recomputes the whole box. The exact formats
are in docs/RULES.md ("Black Jack", "The shoe's commitments"):

- the composition of a box is its cards in deck order (``cards.DECK``), copies together;
- the order is a Fisher-Yates shuffle of that list driven by SHA-256 in counter mode over the
  seed, each index drawn by rejection, never reduced modulo with a bias;
- the salt of position ``p`` is the first 16 bytes (32 hex digits) of
  HMAC-SHA256(seed, ``"salt:" + str(p)``);
- the commitment of position ``p`` is SHA-256 of ``card + ":" + salt`` (ASCII), in hex.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

from services.games.cards import DECK

SEED_BYTES: Final = 32
"""A shuffle's seed: 32 bytes drawn through the Chance (``below(256)`` 32 times)."""
_WORD_BYTES: Final = 8
_WORD: Final = 1 << 64


def composition(cards: Counter[str] | Iterable[str]) -> tuple[str, ...]:
    """The cards of a box in canonical order (deck order, copies together)."""
    count = cards if isinstance(cards, Counter) else Counter(cards)
    return tuple(card for card in DECK for _ in range(count.get(card, 0)))


def _words(seed: bytes) -> Iterator[int]:
    """64-bit words of SHA-256(seed + "order:" + counter as 8 bytes big-endian), counter 0…"""
    counter = 0
    while True:
        block = hashlib.sha256(seed + b"order:" + counter.to_bytes(8, "big")).digest()
        for i in range(0, len(block), _WORD_BYTES):
            yield int.from_bytes(block[i : i + _WORD_BYTES], "big")
        counter += 1


def shuffle_order(seed: bytes, cards: Sequence[str]) -> tuple[str, ...]:
    """The box in dealing order: Fisher-Yates over ``composition(cards)``, from the last
    position down, each swap index uniform in ``[0, i]`` by rejection sampling (a word at or
    above the largest multiple of ``i + 1`` below 2^64 is drawn again)."""
    return _shuffle_order(seed, composition(cards))


@functools.lru_cache(maxsize=256)
def _shuffle_order(seed: bytes, box: tuple[str, ...]) -> tuple[str, ...]:
    # Memoised: a table's every step recomputes the order of its open shuffles (a pure
    # function of the seed and the box, so the cache changes no result).
    order = list(box)
    words = _words(seed)
    for i in range(len(order) - 1, 0, -1):
        bound = i + 1
        limit = _WORD - _WORD % bound
        word = next(words)
        while word >= limit:
            word = next(words)
        j = word % bound
        order[i], order[j] = order[j], order[i]
    return tuple(order)


def position_salt(seed: bytes, position: int) -> str:
    """The salt of a position: 32 hex digits of HMAC-SHA256(seed, "salt:<position>")."""
    mac = hmac.new(seed, f"salt:{position}".encode("ascii"), hashlib.sha256).digest()
    return mac[:16].hex()


def commitment(card: str, salt: str) -> str:
    """SHA-256 of ``card:salt`` in ASCII, hex: what ``ShoeShuffled`` publishes per position."""
    return hashlib.sha256(f"{card}:{salt}".encode("ascii")).hexdigest()


def commitments(seed: bytes, order: Sequence[str]) -> tuple[str, ...]:
    """The commitment of every position of a box in dealing order."""
    return tuple(commitment(card, position_salt(seed, p)) for p, card in enumerate(order))


def opens(commit: str, card: str, salt: str) -> bool:
    """Whether ``card`` with ``salt`` is what ``commit`` committed to."""
    return hmac.compare_digest(commit, commitment(card, salt))
