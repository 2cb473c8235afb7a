"""Playing cards as the card games of Part 4620 use them: notation, ranks, colours, decks.

A card is written rank then suit: ranks ``A 2 3 4 5 6 7 8 9 10 J Q K``, suits ``C D H S``
(clubs, diamonds, hearts, spades), so ``AS`` is the ace of spades and ``10H`` the ten of
hearts. A joker is ``JOKER`` (Joker Seven's two jokers are alike, 4620.16(a)). Input is
read without regard to case or surrounding spaces; the canonical form is upper case.
Pure.
"""

from __future__ import annotations

from collections import Counter
from typing import Final, Literal

from services.aggregates import RuleError

RANKS: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS: Final = ("C", "D", "H", "S")
RED_SUITS: Final = frozenset({"D", "H"})
JOKER: Final = "JOKER"
DECK: Final = tuple(rank + suit for suit in SUITS for rank in RANKS)
"""The 52 cards of one deck, in a fixed order (clubs ace to king, then diamonds, …)."""
MAX_CARD_CHARS: Final = 8
"""The longest text read as a card (``JOKER`` with room for spaces)."""

Colour = Literal["red", "black"]


def parse_card(raw: object, *, jokers: bool = False) -> str:
    """The canonical card ``raw`` names, or RuleError ``invalid_card``.

    ``jokers`` allows ``JOKER`` (Joker Seven); otherwise only the 52 cards of a deck."""
    if isinstance(raw, str) and len(raw) <= MAX_CARD_CHARS:
        text = raw.strip().upper()
        if text == JOKER and jokers:
            return JOKER
        if len(text) >= 2 and text[:-1] in RANKS and text[-1] in SUITS:
            return text
    # The refusal quotes at most a card's length of the input (it is stored with the reply).
    shown = repr(raw)[: MAX_CARD_CHARS + 2] if isinstance(raw, str) else type(raw).__name__
    raise RuleError("invalid_card", f"{shown} is not a card (rank then suit, such as 10H)")


def rank(card: str) -> str:
    """The card's rank (``10`` of ``10H``); ``JOKER`` for a joker."""
    return JOKER if card == JOKER else card[:-1]


def suit(card: str) -> str | None:
    """The card's suit letter; None for a joker."""
    return None if card == JOKER else card[-1]


def colour(card: str) -> Colour | None:
    """``red`` (diamonds, hearts) or ``black`` (clubs, spades); a joker has none."""
    s = suit(card)
    if s is None:
        return None
    return "red" if s in RED_SUITS else "black"


def decks(count: int) -> Counter[str]:
    """The composition of ``count`` 52-card decks shuffled together (card -> copies)."""
    return Counter({card: count for card in DECK})
