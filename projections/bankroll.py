"""Bankrolls: money per player, per table, per organization and per occasion.

Definitions (cents):
- player: ``bought`` (chips issued), ``redeemed`` (cashed out), ``wagered`` (bets placed less
  bets cancelled), ``paid`` (paid back: stake plus winnings), ``balance`` =
  bought − redeemed − wagered + paid, ``net`` = paid − wagered (the player's result).
- table: ``handle`` (wagered), ``paid_out``, ``house_win`` = handle − paid_out, ``rounds``,
  ``bets``.
- organization and occasion: ``issued``, ``redeemed``, ``handle``, ``paid_out``,
  ``house_win``; the organization also ``outstanding`` = issued − redeemed, the chips in
  players' hands and on layouts. Money is conserved: sum of balances + house_win =
  issued − redeemed, at every point of the log.
A bet placed but not yet settled counts in ``handle`` and ``house_win`` until its round
settles and pays it back.
"""

from __future__ import annotations

import copy
from typing import Any

from services.aggregates import TABLE_PREFIX

PLAYER_FIELDS = ("bought", "redeemed", "wagered", "paid", "balance", "net")
TABLE_FIELDS = ("handle", "paid_out", "house_win", "rounds", "bets")
TOTAL_FIELDS = ("issued", "redeemed", "handle", "paid_out", "house_win")


def _zero(fields: tuple[str, ...]) -> dict[str, int]:
    return dict.fromkeys(fields, 0)


class Bankrolls:
    """The bankroll projection (see the module docstring for every figure's meaning)."""

    name = "bankrolls"
    types = frozenset(
        {"BetPlaced", "Settled", "BetCancelled", "ChipsIssued", "ChipsRedeemed", "OccasionStarted"}
    )
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
        if type_ == "BetPlaced":
            self._wager(stream, data["player"], data["amount"], 1)
        elif type_ == "Settled":
            self._settled(stream, data)
        elif type_ == "BetCancelled":
            self._wager(stream, data["player"], data["amount"], -1)
        elif type_ == "ChipsIssued":
            self._cage(data["player"], data["amount"], "bought", "issued", 1)
        elif type_ == "ChipsRedeemed":
            self._cage(data["player"], data["amount"], "redeemed", "redeemed", -1)
        elif type_ == "OccasionStarted":
            self.occasion = data["occasion"]
            self._totals()

    def _wager(self, stream: str, player: str, amount: int, sign: int) -> None:
        amount *= sign
        p = self._player(player)
        p["wagered"] += amount
        p["balance"] -= amount
        p["net"] -= amount
        t = self._table(stream)
        t["handle"] += amount
        t["house_win"] += amount
        t["bets"] += sign
        for tot in self._totals():
            tot["handle"] += amount
            tot["house_win"] += amount

    def _settled(self, stream: str, data: dict[str, Any]) -> None:
        t = self._table(stream)
        t["rounds"] += 1
        total = 0
        for s in data["settlements"]:
            paid = s["paid"]
            if paid:
                p = self._player(s["player"])
                p["paid"] += paid
                p["balance"] += paid
                p["net"] += paid
                total += paid
        t["paid_out"] += total
        t["house_win"] -= total
        for tot in self._totals():
            tot["paid_out"] += total
            tot["house_win"] -= total

    def _cage(self, player: str, amount: int, field: str, total: str, sign: int) -> None:
        p = self._player(player)
        p[field] += amount
        p["balance"] += sign * amount
        for tot in self._totals():
            tot[total] += amount
        self.organization["outstanding"] += sign * amount

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(
            {
                "players": self.players,
                "tables": self.tables,
                "organization": self.organization,
                "occasions": self.occasions,
                "occasion": self.occasion,
            }
        )

    def restore(self, data: dict[str, Any]) -> None:
        data = copy.deepcopy(data)
        self.players = data["players"]
        self.tables = data["tables"]
        self.organization = data["organization"]
        self.occasions = data["occasions"]
        self.occasion = data["occasion"]
