"""Cash control by occasion: each occasion's bankrolls (its cage and its tables) and the
reporting calendar (license periods, occasions, the game each table runs), for the GC-7
and the GC-7B.

Per occasion (by id): its ``name``, ``window`` (``starts_at``, ``ends_at``, unix ms or
None), ``started`` (the occurred-at of its ``OccasionStarted``), ``last`` (the newest
money event folded in it), the license period it ran under (``period_start``,
``period_end``, ``license_number``) and ``bankrolls``: a :class:`projections.bankroll.Bankrolls`
folded from the money events of that occasion only (so its ``organization`` row holds
the occasion's cage and table totals, its ``tables`` each table's drop, paid and house
result in it). Money events before any occasion count under the key ``""``. ``games``:
the game of each table (its last ``TableOpened``). ``periods``: every license period
recorded, by key (``projections.expenses.period_key``), with the license number.

Summed over the occasions (and ``""``), the figures are the bankroll projection's, to the
cent (the same fold, split by occasion); the GC-7B shows every occasion's against it, so
money under ``""``, on no occasion's form, shows as a difference there.
"""

from __future__ import annotations

from typing import Any

from projections.bankroll import Bankrolls
from projections.expenses import period_key

CALENDAR_TYPES = frozenset({"LicenseRecorded", "OccasionStarted", "TableOpened"})


class CashControl:
    """The cash-control projection (see the module docstring)."""

    name = "cash_control"
    types = Bankrolls.types | CALENDAR_TYPES

    def __init__(self) -> None:
        self.occasions: dict[str, dict[str, Any]] = {}
        self.bankrolls: dict[str, Bankrolls] = {}
        self.periods: dict[str, dict[str, Any]] = {}
        self.games: dict[str, str] = {}
        self.current = ""
        self.license: dict[str, Any] = {}

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        if type_ in CALENDAR_TYPES:
            self._calendar(type_, data, ts)
            return
        bankroll = self.bankrolls.get(self.current)
        if bankroll is None:
            bankroll = self.bankrolls[self.current] = Bankrolls()
        bankroll.apply(type_, stream, data, ts)
        occasion = self.occasions.get(self.current)
        if occasion is not None and ts > occasion["last"]:
            occasion["last"] = ts

    def _calendar(self, type_: str, data: dict[str, Any], ts: int) -> None:
        if type_ == "TableOpened":
            self.games[data["table"]] = data["game"]
        elif type_ == "LicenseRecorded":
            self.license = {
                "license_number": data["license_number"],
                "period_start": data["period_start"],
                "period_end": data["period_end"],
            }
            key = period_key(data["period_start"], data["period_end"])
            self.periods[key] = {**self.license, "organization": data["organization"]}
        else:
            occasion = data["occasion"]
            self.current = occasion
            if occasion not in self.occasions:
                self.occasions[occasion] = {
                    "occasion": occasion,
                    "name": data["name"],
                    "starts_at": data.get("starts_at"),
                    "ends_at": data.get("ends_at"),
                    "started": ts,
                    "last": ts,
                    **self.license,
                }

    def of_period(self, key: str) -> list[str]:
        """The occasions run under the license period ``key``, in the order they began."""
        return [
            o
            for o, info in self.occasions.items()
            if period_key(info.get("period_start", ""), info.get("period_end", "")) == key
        ]

    def occasion_bankrolls(self, occasion: str) -> Bankrolls:
        """The bankrolls of one occasion (empty when nothing moved in it)."""
        return self.bankrolls.get(occasion) or Bankrolls()

    def snapshot(self) -> dict[str, Any]:
        return {
            "occasions": {o: dict(info) for o, info in self.occasions.items()},
            "bankrolls": {o: b.snapshot() for o, b in self.bankrolls.items()},
            "periods": {k: dict(v) for k, v in self.periods.items()},
            "games": dict(self.games),
            "current": self.current,
            "license": dict(self.license),
        }

    def restore(self, data: dict[str, Any]) -> None:
        self.occasions = {o: dict(info) for o, info in data["occasions"].items()}
        self.bankrolls = {}
        for occasion, snap in data["bankrolls"].items():
            b = Bankrolls()
            b.restore(snap)
            self.bankrolls[occasion] = b
        self.periods = {k: dict(v) for k, v in data["periods"].items()}
        self.games = dict(data["games"])
        self.current = data["current"]
        self.license = dict(data["license"])
