"""Events of a game table's stream ``table:<id>``: the round lifecycle every table game shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from events.base import Event, event


@event("TableOpened")
@dataclass(frozen=True, slots=True, kw_only=True)
class TableOpened(Event):
    """A table was opened with its full configuration (game options, limits, outcome mode)."""

    table: str
    game: str
    config: Mapping[str, Any]
    outcome_mode: str  # "dealer": physical device, result entered; "rng": server draws


@event("RoundOpened")
@dataclass(frozen=True, slots=True, kw_only=True)
class RoundOpened(Event):
    """The dealer opened a round for bets."""

    round: int


@event("BetPlaced")
@dataclass(frozen=True, slots=True, kw_only=True)
class BetPlaced(Event):
    """A bet is on the layout; its amount has left the player's balance."""

    round: int
    bet_id: str
    player: str
    bet: Mapping[str, Any]
    amount: int


@event("BetCancelled")
@dataclass(frozen=True, slots=True, kw_only=True)
class BetCancelled(Event):
    """A bet was taken back before no more bets; its amount returned to the player."""

    round: int
    bet_id: str
    player: str
    amount: int


@event("NoMoreBets")
@dataclass(frozen=True, slots=True, kw_only=True)
class NoMoreBets(Event):
    """The dealer called "No more bets" (4620.4(c)(1)); later bets are refused."""

    round: int


@event("BetsReopened")
@dataclass(frozen=True, slots=True, kw_only=True)
class BetsReopened(Event):
    """A step of the game opened the bets again within the round (Bang's "Place inside bets
    only" after the dealer's roll, 4620.15(c)(4)): the table is ``betting`` again until the
    next ``NoMoreBets``; the game says which bets it takes now."""

    round: int


@event("OutcomeRecorded")
@dataclass(frozen=True, slots=True, kw_only=True)
class OutcomeRecorded(Event):
    """The round's result: entered by the dealer (source ``dealer``) or drawn (``rng``).

    For roulette ``outcome`` is ``{"pocket": "00", "spun_from": "17"}``.
    """

    round: int
    outcome: Mapping[str, Any]
    source: str


class BetSettlement(NamedTuple):
    """One bet's end: ``result`` is ``won``, ``lost``, ``push`` or ``returned``; ``paid`` is
    the amount back to the player (stake plus winnings). An immutable named tuple: a round
    can hold thousands, and a tuple is built several times faster than a frozen dataclass."""

    bet_id: str
    player: str
    amount: int
    result: str
    paid: int


@event("Settled")
@dataclass(frozen=True, slots=True, kw_only=True)
class Settled(Event):
    """Every bet of the round settled against its outcome; ``paid`` sums what went back."""

    round: int
    outcome: Mapping[str, Any]
    settlements: tuple[BetSettlement, ...]
    wagered: int
    paid: int


@event("TableClosed")
@dataclass(frozen=True, slots=True, kw_only=True)
class TableClosed(Event):
    """The table closed; every later command gets ``table_closed``."""

    reason: str


@event("WagerAdded")
@dataclass(frozen=True, slots=True, kw_only=True)
class WagerAdded(Event):
    """A wager beyond a bet's first, placed during the round: a double, a split hand or an
    insurance (Black Jack, 4620.5(k), (l), (m)). ``wager_id`` names the new wager (its
    settlement refers to it); ``bet_id`` is the bet it belongs to; its amount has left the
    player's balance."""

    round: int
    bet_id: str
    wager_id: str
    player: str
    amount: int
    kind: str


@event("PartSettled")
@dataclass(frozen=True, slots=True, kw_only=True)
class PartSettled(Event):
    """Some of the round's wagers settled before the round ends (an insurance, a natural
    paid at once, a hand played out); ``part`` says which (``insurance``, ``hand:3.0``).
    Like :class:`Settled`, ``paid`` sums what went back to the players."""

    round: int
    part: str
    settlements: tuple[BetSettlement, ...]
    wagered: int
    paid: int


@event("RoundEnded")
@dataclass(frozen=True, slots=True, kw_only=True)
class RoundEnded(Event):
    """A round of many steps is over: every wager of it has settled (in :class:`PartSettled`
    events), and the table may open the next round. A round of one outcome ends with its
    :class:`Settled` instead."""

    round: int


@event("RoundVoided")
@dataclass(frozen=True, slots=True, kw_only=True)
class RoundVoided(Event):
    """A member in charge voided the round in play (a misdeal, a device fault, a dealer's
    entry that cannot stand): the events that follow return every wager of it not yet
    settled and end the round; what was settled before stands. ``reason`` says why; the
    envelope's ``actor`` says who."""

    round: int
    reason: str
