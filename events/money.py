"""How events move money: the one place that says which event debits or credits whom.

The actor's balance guard (the moves the append script checks), the bankroll projection and
the audit all read money from here, so a new kind of wager (a double, a split, an
insurance, a part of a settlement) is taught to them once. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple

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


SINGLE_MOVES: Mapping[str, tuple[MoveKind, int]] = {
    ChipsIssued.NAME: ("issued", +1),
    ChipsRedeemed.NAME: ("redeemed", -1),
    BetPlaced.NAME: ("wagered", -1),
    WagerAdded.NAME: ("wagered", -1),
    BetCancelled.NAME: ("returned", +1),
}
"""Events that move one player's balance by their ``amount``: the kind and the sign (a
projection's fast path reads it; :func:`data_moves` is the whole rule)."""
_SETTLEMENTS = frozenset({Settled.NAME, PartSettled.NAME})
"""Events that pay back what each of their ``settlements`` says (``paid``)."""


def money_moves(event: Event) -> list[Move]:
    """The moves of one event, in a stable order (a settlement's payouts summed per
    player, sorted by player)."""
    if isinstance(event, ChipsIssued | ChipsRedeemed | BetPlaced | WagerAdded | BetCancelled):
        kind, sign = SINGLE_MOVES[event.NAME]
        return [Move(event.player, sign * event.amount, kind)]
    if isinstance(event, Settled | PartSettled):
        return _paid((s.player, s.paid, s.result) for s in event.settlements)
    return []


class MoneyDataError(ValueError):
    """Stored data of a money event that moves no balance as its type says: a field
    missing, or a player or an amount that is not what the type holds (a forged event)."""


def data_moves(type_: str, data: Mapping[str, Any]) -> list[Move]:
    """:func:`money_moves` of an event as stored data (its current version): what a
    projection folds, without building the typed event (a round's settlement may hold
    thousands of bets).

    :class:`MoneyDataError` for data its type never holds: a field missing, a player that
    is not text, an amount or a payout that is not whole cents (a float, a bool: values
    that would otherwise fold without a fault)."""
    single = SINGLE_MOVES.get(type_)
    if single is not None:
        kind, sign = single
        player, amount = money_fields(data)
        return [Move(player, sign * amount, kind)]
    if type_ in _SETTLEMENTS:
        try:
            lines = [(s["player"], s["paid"], s["result"]) for s in data["settlements"]]
        except (KeyError, TypeError) as e:
            raise MoneyDataError(f"a settlement line cannot be read: {e!r}") from None
        for player, paid, _result in lines:
            if player.__class__ is not str or paid.__class__ is not int:
                raise MoneyDataError(
                    f"a settlement line pays {paid!r} to {player!r}: not whole cents to a player"
                )
        return _paid(lines)
    return []


def money_fields(data: Mapping[str, Any]) -> tuple[str, int]:
    """The ``player`` and ``amount`` of a one-move event's stored data
    (:data:`SINGLE_MOVES`), each of its type, else :class:`MoneyDataError`."""
    try:
        player = data["player"]
        amount = data["amount"]
    except (KeyError, TypeError) as e:
        raise MoneyDataError(f"its player or amount cannot be read: {e!r}") from None
    if player.__class__ is not str or amount.__class__ is not int:
        raise MoneyDataError(f"it moves {amount!r} for {player!r}: not whole cents of a player")
    return player, amount


def _paid(payouts: Iterable[tuple[str, int, str]]) -> list[Move]:
    """What a settlement pays back, summed per player and kind, sorted: a wager returned
    (a voided round, result ``returned``) is its stake back, ``returned``, as a bet taken
    back is; every other payout (a win, a push) is ``paid``."""
    paid: dict[tuple[str, MoveKind], int] = {}
    for player, cents, result in payouts:
        if cents:
            kind: MoveKind = "returned" if result == "returned" else "paid"
            paid[(player, kind)] = paid.get((player, kind), 0) + cents
    return [Move(player, cents, kind) for (player, kind), cents in sorted(paid.items())]


_SIGNS: Mapping[type[Event], int] = {
    ChipsIssued: +1,
    ChipsRedeemed: -1,
    BetPlaced: -1,
    WagerAdded: -1,
    BetCancelled: +1,
}
""":data:`SINGLE_MOVES`' signs by class, for the balance guard's look-up per event."""


def balance_moves(events: Iterable[Event]) -> list[tuple[str, int]]:
    """How events move players' balances (player, signed cents), for the balance guard:
    :func:`money_moves` of each event, in order.

    A negative move (a bet, a cash-out) is guarded by the store: the whole command is
    refused with ``insufficient_funds`` if any balance would go below zero."""
    out: list[tuple[str, int]] = []
    for ev in events:
        sign = _SIGNS.get(ev.__class__)
        if sign is not None:  # a bet, a sale: one move, without building a Move
            single: Any = ev
            out.append((single.player, sign * single.amount))
        else:
            out += [(m.player, m.cents) for m in money_moves(ev)]
    return out
