"""Events of a Black Jack table (4620.5) on its stream ``table:<id>``: the shoe and the cards.

Every card that leaves the dealing box is an event (a burn, a card dealt to a hand or the
dealer), and so is every discard, so an auditor recomputes every hand from the stream. The
money of a round is never here: a double, a split or an insurance is a
``events.tables.WagerAdded``, a settlement a ``PartSettled`` (``events.money`` reads them).

In RNG mode a shuffle is public only as commitments, one per position of the box
(docs/RULES.md, "Black Jack", "The shoe's commitments"); a card face up is revealed with its
salt so anyone can check it against its position's commitment, and a retired shuffle is
revealed whole by its seed. In dealer mode there are no commitments, salts or seeds: the
dealer enters each card.
"""

from __future__ import annotations

from dataclasses import dataclass

from events.base import Event, event


@event("ShoeShuffled")
@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeShuffled(Event):
    """A new box of ``cards`` cards: a new shoe (``reason`` ``new_shoe``, every deck) or the
    discards shuffled when the box ran out (``box_empty``, 4620.5(g)). ``shuffle`` counts the
    table's shuffles from 1. RNG mode: ``commitments`` has one SHA-256 per position, and
    ``sealed`` is the shuffle's seed sealed by the server (never the order); dealer mode:
    neither (empty, None)."""

    shuffle: int
    cards: int
    commitments: tuple[str, ...]
    sealed: str | None
    reason: str


@event("CardBurnt")
@dataclass(frozen=True, slots=True, kw_only=True)
class CardBurnt(Event):
    """A card went from the box to the discards unplayed: the first card after a shuffle,
    unseen (``reason`` ``first_card``, ``card`` None, 4620.5(g)), or a dead card the player
    refused (``dead_card``, dealer mode, with its ``card``, 4620.5(i)(4)). ``position`` is its
    place in the shuffle (RNG mode; None in dealer mode)."""

    round: int
    shuffle: int
    position: int | None
    card: str | None
    reason: str


@event("CardDealt")
@dataclass(frozen=True, slots=True, kw_only=True)
class CardDealt(Event):
    """A card from the box to ``to`` (a hand id such as ``3.0``, or ``dealer``). Face up it
    carries the ``card`` and, in RNG mode, its ``salt``; the dealer's hole card is dealt face
    down (``face_up`` false, no card and no salt, 4620.5(g)) and revealed later by
    :class:`HoleCardRevealed`. ``position`` is its place in the shuffle (RNG mode)."""

    round: int
    to: str
    shuffle: int
    position: int | None
    card: str | None
    salt: str | None
    face_up: bool


@event("DealerPeeked")
@dataclass(frozen=True, slots=True, kw_only=True)
class DealerPeeked(Event):
    """With an ace or a 10-count up the dealer looked at the hole card, 4620.5(h)(1); this
    closes insurance, 4620.5(m). ``natural``: whether the dealer holds a natural 21 (then a
    :class:`HoleCardRevealed` follows at once)."""

    round: int
    natural: bool


@event("HandActed")
@dataclass(frozen=True, slots=True, kw_only=True)
class HandActed(Event):
    """A player's decision on ``hand``: ``hit``, ``stand``, ``double`` (4620.5(l)) or ``split``
    (4620.5(k)); ``player`` is who acted (None: the dealer, for the hand's owner). A split
    opens ``new_hand``, the left card of the pair, played after the right one."""

    round: int
    hand: str
    action: str
    player: str | None
    new_hand: str | None


@event("HoleCardRevealed")
@dataclass(frozen=True, slots=True, kw_only=True)
class HoleCardRevealed(Event):
    """The dealer turned up the hole card (a natural at the peek, 4620.5(h)(1), or the
    dealer's turn, 4620.5(i)(1)); ``salt`` opens its commitment in RNG mode (None in dealer
    mode)."""

    round: int
    card: str
    salt: str | None


@event("CardsDiscarded")
@dataclass(frozen=True, slots=True, kw_only=True)
class CardsDiscarded(Event):
    """The cards of ``holders`` (hand ids, ``dealer``) went to the discard pile: a bust or a
    paid natural at once (4620.5(h)(2), (h)(3)), every hand at the round's end, the dealer's
    cards unrevealed when every hand was already settled (4620.5(i)); ``cards`` counts them.
    Discards are not used again until the box is empty, 4620.5(g)."""

    round: int
    holders: tuple[str, ...]
    cards: int


@event("ShoeRevealed")
@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeRevealed(Event):
    """A retired shuffle (its box empty and none of its cards in play) opened at a round's
    end, RNG mode: its ``seed`` (hex) and the ``cards`` of its box in dealing order, so an
    auditor recomputes the order from the seed and checks every commitment of it."""

    shuffle: int
    seed: str
    cards: tuple[str, ...]
