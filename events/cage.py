"""Events of the cage stream ``cage``: chips in and out of players' balances."""

from __future__ import annotations

from dataclasses import dataclass

from events.base import Event, event


@event("ChipsIssued")
@dataclass(frozen=True, slots=True, kw_only=True)
class ChipsIssued(Event):
    """A cashier sold chips to a player: the player's balance grows by ``amount`` cents."""

    player: str
    amount: int


@event("ChipsRedeemed")
@dataclass(frozen=True, slots=True, kw_only=True)
class ChipsRedeemed(Event):
    """A cashier cashed a player's chips out: the balance shrinks by ``amount`` cents."""

    player: str
    amount: int
