"""Events of the dice games whose round takes several rolls (Beat the Dealer, 4620.14, and
Bang, 4620.15) on their table's stream ``table:<id>``: each roll, and Bang's seats and dice.

Every roll is its own event, with its faces, its total and who threw it, so an auditor
recomputes every settlement from the stream. Money is never here: a settlement is an
``events.tables.PartSettled`` (``events.money`` reads it).
"""

from __future__ import annotations

from dataclasses import dataclass

from events.base import Event, event


@event("DiceRolled")
@dataclass(frozen=True, slots=True, kw_only=True)
class DiceRolled(Event):
    """One roll of the round. ``turn`` ``dealer``: the dealer's roll (Beat the Dealer's total
    to beat; Bang's point, the marker); ``player``: a player's roll (a Beat the Dealer player
    against the dealer's total, or Bang's shooter), ``player`` naming them. ``dice`` are the
    faces as they lie, ``total`` their sum; ``thrown_by`` is who threw (``dealer``,
    ``player``, ``cage``) or ``rng`` for the server's draw."""

    round: int
    turn: str
    player: str | None
    dice: tuple[int, ...]
    total: int
    thrown_by: str


@event("PlayerSeated")
@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerSeated(Event):
    """Bang: the dealer seated ``player`` at ``seat`` (seats are numbered clockwise from the
    dealer's left, from 1); the dice pass among the seated players."""

    seat: int
    player: str


@event("PlayerUnseated")
@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerUnseated(Event):
    """Bang: ``player`` left ``seat``."""

    seat: int
    player: str


@event("DicePassed")
@dataclass(frozen=True, slots=True, kw_only=True)
class DicePassed(Event):
    """Bang: the player offered the dice (at ``from_seat``) declined them, and they passed
    clockwise to ``player`` at ``seat``, who is the game's shooter now."""

    round: int
    from_seat: int
    seat: int
    player: str
