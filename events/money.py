"""How events move money: the one place that says which event debits or credits whom.

The actor's balance guard (the moves the append script checks), the bankroll projection and
the audit all read money from here, so a new kind of wager (a double, a split, an
insurance, a part of a settlement) is taught to them once. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from events.base import Event
from events.cage import ChipsIssued, ChipsRedeemed
from events.tables import BetCancelled, BetPlaced, PartSettled, Settled, WagerAdded

MoveKind = Literal["issued", "redeemed", "wagered", "returned", "paid"]


class Move(NamedTuple):
    """One change to a player's balance: ``cents`` is signed (a bet is negative).

    ``kind``: ``issued`` (chips sold), ``redeemed`` (cashed out), ``wagered`` (a bet or an
    added wager left the balance), ``returned`` (a bet taken back), ``paid`` (a settlement
    paid back stake and winnings)."""

    player: str
    cents: int
    kind: MoveKind


MONEY_EVENTS = frozenset(
    cls.NAME
    for cls in (
        ChipsIssued,
        ChipsRedeemed,
        BetPlaced,
        BetCancelled,
        WagerAdded,
        Settled,
        PartSettled,
    )
)
"""The names of every event type that moves a balance."""


def money_moves(event: Event) -> list[Move]:
    """The moves of one event, in a stable order (a settlement's payouts summed per
    player, sorted by player)."""
    match event:
        case ChipsIssued():
            return [Move(event.player, event.amount, "issued")]
        case ChipsRedeemed():
            return [Move(event.player, -event.amount, "redeemed")]
        case BetPlaced() | WagerAdded():
            return [Move(event.player, -event.amount, "wagered")]
        case BetCancelled():
            return [Move(event.player, event.amount, "returned")]
        case Settled() | PartSettled():
            paid: dict[str, int] = {}
            for s in event.settlements:
                if s.paid:
                    paid[s.player] = paid.get(s.player, 0) + s.paid
            return [Move(player, cents, "paid") for player, cents in sorted(paid.items())]
    return []


def balance_moves(events: Iterable[Event]) -> list[tuple[str, int]]:
    """How events move players' balances (player, signed cents), for the balance guard.

    A negative move (a bet, a cash-out) is guarded by the store: the whole command is
    refused with ``insufficient_funds`` if any balance would go below zero."""
    return [(m.player, m.cents) for ev in events for m in money_moves(ev)]
