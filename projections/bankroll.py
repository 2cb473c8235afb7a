"""Bankrolls: money per player, per table, per organization and per occasion.

Definitions (cents):
- player: ``bought`` (chips issued), ``redeemed`` (cashed out), ``wagered`` (bets placed and
  wagers added to them, less bets cancelled and wagers returned by a voided round),
  ``paid`` (paid back: stake plus winnings, by a round's settlement or a part of it),
  ``balance`` = bought − redeemed − wagered + paid,
  ``net`` = paid − wagered (the player's result).
- table: ``handle`` (wagered), ``paid_out``, ``house_win`` = handle − paid_out, ``rounds``
  (rounds ended: a ``Settled`` or a ``RoundEnded``), ``bets`` (placed less cancelled).
- organization and occasion: ``issued``, ``redeemed``, ``handle``, ``paid_out``,
  ``house_win``; the organization also ``outstanding`` = issued − redeemed, the chips in
  players' hands and on layouts. Money is conserved: sum of balances + house_win =
  issued − redeemed, at every point of the log.
A bet placed but not yet settled counts in ``handle`` and ``house_win`` until it is
settled and paid back: at the end of its round, or, for a bet that rides across rounds
(Bang's big six and big eight), in the later round that decides it.
"""

from __future__ import annotations

import copy
from typing import Any

from events.money import MONEY_EVENTS, SINGLE_MOVES, data_moves
from services.aggregates import TABLE_PREFIX

PLAYER_FIELDS = ("bought", "redeemed", "wagered", "paid", "balance", "net")
TABLE_FIELDS = ("handle", "paid_out", "house_win", "rounds", "bets")
TOTAL_FIELDS = ("issued", "redeemed", "handle", "paid_out", "house_win")
SETTLED = "Settled"
ROUND_ENDED = "RoundEnded"
"""A table's ``rounds`` counts the rounds ended: by a ``Settled`` (one outcome) or a
``RoundEnded`` (a round of many steps)."""
CAGE_FIELD = {"issued": "bought", "redeemed": "redeemed"}
"""A player's field for each kind of cage move (the totals' field is the kind's name)."""
BET_COUNT = {"BetPlaced": 1, "BetCancelled": -1}
"""How a table's ``bets`` moves (an added wager is part of its bet, not another bet)."""


def _zero(fields: tuple[str, ...]) -> dict[str, int]:
    return dict.fromkeys(fields, 0)


def _rows(rows: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """A copy of rows of figures that shares nothing with them."""
    return {key: dict(row) for key, row in rows.items()}


class Bankrolls:
    """The bankroll projection (see the module docstring for every figure's meaning).

    Money is read through :func:`events.money.data_moves`, the one place that says which
    event moves whose balance: a new kind of wager or settlement counts here once it
    counts there."""

    name = "bankrolls"
    types = MONEY_EVENTS | {"OccasionStarted", ROUND_ENDED}
    """The event types :meth:`apply` folds (the runner skips the others)."""

    def __init__(self) -> None:
        self.players: dict[str, dict[str, int]] = {}
        self.tables: dict[str, dict[str, int]] = {}
        self.organization: dict[str, int] = {**_zero(TOTAL_FIELDS), "outstanding": 0}
        self.occasions: dict[str, dict[str, int]] = {}
        self.occasion: str | None = None

    def _player(self, player: str) -> dict[str, int]:
        p = self.players.get(player)
        if p is None:
            p = self.players[player] = _zero(PLAYER_FIELDS)
        return p

    def _table(self, stream: str) -> dict[str, int]:
        table = stream.removeprefix(TABLE_PREFIX)
        t = self.tables.get(table)
        if t is None:
            t = self.tables[table] = _zero(TABLE_FIELDS)
        return t

    def _totals(self) -> tuple[dict[str, int], ...]:
        occ = self.occasion
        if occ is None:
            return (self.organization,)
        o = self.occasions.get(occ)
        if o is None:
            o = self.occasions[occ] = _zero(TOTAL_FIELDS)
        return (self.organization, o)

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        single = SINGLE_MOVES.get(type_)
        if single is not None:  # the common case (a bet): one player, one amount
            kind, sign = single
            self._move(type_, stream, data["player"], sign * data["amount"], kind)
        elif type_ in MONEY_EVENTS:
            self._money(type_, stream, data)
        elif type_ == ROUND_ENDED:
            self._table(stream)["rounds"] += 1
        elif type_ == "OccasionStarted":
            self.occasion = data["occasion"]
            self._totals()

    def _money(self, type_: str, stream: str, data: dict[str, Any]) -> None:
        """A settlement: what each player was paid back."""
        paid_out = returned = 0
        players = self.players
        for player, cents, kind in data_moves(type_, data):  # a settlement: paid back
            p = players.get(player)
            if p is None:
                p = self._player(player)
            p["balance"] += cents
            p["net"] += cents
            if kind == "returned":  # a voided round's stake: no longer wagered
                p["wagered"] -= cents
                returned += cents
            else:
                p["paid"] += cents
                paid_out += cents
        table = self._table(stream) if stream.startswith(TABLE_PREFIX) else None
        if table is not None and type_ == SETTLED:
            table["rounds"] += 1
        if paid_out or returned:
            for row in (*self._totals(), *(() if table is None else (table,))):
                row["paid_out"] += paid_out
                row["handle"] -= returned
                row["house_win"] -= paid_out + returned

    def _move(self, type_: str, stream: str, player: str, cents: int, kind: str) -> None:
        """One player's balance moved by ``cents``: chips sold or cashed out at the cage, or
        a wager placed (negative) or taken back (positive) at a table."""
        p = self.players.get(player)
        if p is None:
            p = self._player(player)
        p["balance"] += cents
        if kind in CAGE_FIELD:
            p[CAGE_FIELD[kind]] += abs(cents)
            for row in self._totals():
                row[kind] += abs(cents)
            self.organization["outstanding"] += cents
            return
        handle = -cents
        p["net"] += cents
        p["wagered"] += handle
        org = self.organization
        org["handle"] += handle
        org["house_win"] += handle
        if self.occasion is not None:
            occ = self._totals()[1]
            occ["handle"] += handle
            occ["house_win"] += handle
        table = self.tables.get(stream[len(TABLE_PREFIX) :])
        if table is None:
            table = self._table(stream)
        table["handle"] += handle
        table["house_win"] += handle
        table["bets"] += BET_COUNT.get(type_, 0)

    def snapshot(self) -> dict[str, Any]:
        # Rows of whole numbers: copying each row is the deep copy (copy.deepcopy took a
        # few milliseconds of the event loop for a night's players, at every checkpoint).
        return {
            "players": _rows(self.players),
            "tables": _rows(self.tables),
            "organization": dict(self.organization),
            "occasions": _rows(self.occasions),
            "occasion": self.occasion,
        }

    def restore(self, data: dict[str, Any]) -> None:
        data = copy.deepcopy(data)
        self.players = data["players"]
        self.tables = data["tables"]
        self.organization = data["organization"]
        self.occasions = data["occasions"]
        self.occasion = data["occasion"]
