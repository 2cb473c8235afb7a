"""Raffles: every raffle's state as people look at it, folded from the org log.

Per raffle (cents): ``sales`` and ``tickets`` in all, by ``rounds`` (the week of a Queen of
Hearts, the occasion of a Treasure Chest, 1 otherwise) and by ``occasions`` (the night's
occasion id a door sale named); ``pool`` (the Queen of Hearts grand prize pool, the
Treasure Chest's chest); ``prizes_paid`` and ``profit_kept`` (a Queen of Hearts
consolation is paid from the licensee's share, so ``profit_kept`` can be negative while it
runs); ``open`` = sales − prizes_paid − profit_kept, the money not yet allocated (the pool,
a Treasure Chest occasion's sales before its drawing, a standard raffle's sales before its
last drawing); ``carry_overs``; the Queen of Hearts ``board`` (revealed positions and their
cards); the Treasure Chest ``keys_in_play``; ``prizes`` (every prize, in order) and
``announcements``. No personal data: purchasers appear as opaque ids only.
"""

from __future__ import annotations

import copy
from typing import Any

from services.aggregates import raffle_of

RAFFLE_EVENT_TYPES = frozenset(
    {
        "RaffleOpened",
        "DrawingMethodRecorded",
        "TicketSold",
        "RaffleSalesClosed",
        "DrawingHeld",
        "ProceedsAllocated",
        "PrizeAwarded",
        "ProfitKept",
        "CardRevealed",
        "KeyTried",
        "ChestCarriedOver",
        "AnnouncementRaised",
        "RaffleEnded",
    }
)
"""The event types of raffle streams (``events.raffles``), the ones this projection folds."""


def _new(raffle: str, data: dict[str, Any]) -> dict[str, Any]:
    config = data["config"]
    return {
        "raffle": raffle,
        "kind": data["kind"],
        "name": config.get("name"),
        "price": config.get("price"),
        "method": None,
        "round": 1,
        "ended": False,
        "sales_open": True,
        "tickets": 0,
        "sales": 0,
        "online_tickets": 0,
        "rounds": {},
        "occasions": {},
        "pool": 0,
        "prizes_paid": 0,
        "profit_kept": 0,
        "open": 0,
        "drawings": 0,
        "prizes": [],
        "carry_overs": [],
        "announcements": [],
        "board": (
            {"mode": config["board"]["mode"], "root": config["board"].get("root"), "revealed": {}}
            if data["kind"] == "queen_of_hearts"
            else None
        ),
        "keys_in_play": (
            list(range(1, config["keys"] + 1)) if data["kind"] == "treasure_chest" else None
        ),
    }


def _count(table: dict[str, dict[str, int]], key: str, tickets: int, sales: int) -> None:
    row = table.get(key)
    if row is None:
        row = table[key] = {"tickets": 0, "sales": 0}
    row["tickets"] += tickets
    row["sales"] += sales


class Raffles:
    """The raffle projection (see the module docstring for every figure's meaning)."""

    name = "raffles"
    types = RAFFLE_EVENT_TYPES
    """Every event type of a raffle stream (``events.raffles``): the others are skipped."""

    def __init__(self) -> None:
        self.raffles: dict[str, dict[str, Any]] = {}

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        """Fold one event. ``ts`` (the envelope's time, which main's runner passes) is not
        needed: the raffle's events carry their own times where the rules use them."""
        raffle = raffle_of(stream)
        if raffle is None:
            return
        if type_ == "RaffleOpened":
            self.raffles[raffle] = _new(raffle, data)
            return
        r = self.raffles.get(raffle)
        if r is None:
            return
        if type_ == "TicketSold":
            n = len(data["serials"])
            amount = data["amount"]
            r["tickets"] += n
            r["sales"] += amount
            if data["channel"] == "online":
                r["online_tickets"] += n
            _count(r["rounds"], str(data["round"]), n, amount)
            if data.get("occasion"):
                _count(r["occasions"], data["occasion"], n, amount)
            if r["kind"] == "queen_of_hearts":
                r["pool"] += amount
        elif type_ == "DrawingMethodRecorded":
            r["method"] = data["method"]
        elif type_ == "RaffleSalesClosed":
            r["sales_open"] = False
        elif type_ == "DrawingHeld":
            r["drawings"] += 1
            if r["kind"] == "queen_of_hearts":
                r["round"] = data["round"] + 1  # sales go on for the next week
                r["sales_open"] = True
            elif r["kind"] == "treasure_chest":
                r["sales_open"] = False
        elif type_ == "ProceedsAllocated":
            r["pool"] += data["pool"]
        elif type_ == "PrizeAwarded":
            r["prizes_paid"] += data["amount"]
            r["prizes"].append({k: data[k] for k in ("round", "serial", "prize", "amount", "cash")})
            if data["prize"] in ("grand", "secondary"):
                r["pool"] = 0
        elif type_ == "ProfitKept":
            r["profit_kept"] += data["amount"]
        elif type_ == "CardRevealed":
            r["board"]["revealed"][str(data["position"])] = data["card"]
        elif type_ == "KeyTried":
            if not data["opened"]:
                r["keys_in_play"].remove(data["key"])
        elif type_ == "ChestCarriedOver":
            r["carry_overs"].append(
                {k: data[k] for k in ("round", "chest", "keys_removed", "keys_left")}
            )
            r["round"] = data["round"] + 1
            r["sales_open"] = True
        elif type_ == "AnnouncementRaised":
            r["announcements"].append({"round": data["round"], "kind": data["kind"]})
        elif type_ == "RaffleEnded":
            r["ended"] = True
            r["sales_open"] = False
        r["open"] = r["sales"] - r["prizes_paid"] - r["profit_kept"]

    def view(self, raffle: str) -> dict[str, Any] | None:
        r = self.raffles.get(raffle)
        return None if r is None else copy.deepcopy(r)

    def views(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(self.raffles[k]) for k in sorted(self.raffles)]

    def snapshot(self) -> dict[str, Any]:
        return {"raffles": copy.deepcopy(self.raffles)}

    def restore(self, data: dict[str, Any]) -> None:
        self.raffles = copy.deepcopy(data["raffles"])
