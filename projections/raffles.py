"""Raffles: every raffle's state as people look at it, folded from the org log.

Per raffle (cents): ``sales`` and ``tickets`` in all, by ``rounds`` (the week of a Queen of
Hearts, the occasion of a Treasure Chest, 1 otherwise) and by ``occasions`` (the night's
occasion id a door sale named); ``pool`` (the Queen of Hearts grand prize pool, the
Treasure Chest's chest); ``prizes_paid`` and ``profit_kept`` (a Queen of Hearts
consolation is paid from the licensee's share, so ``profit_kept`` can be negative while it
runs); ``open`` = sales − prizes_paid − profit_kept, the money not yet allocated (the pool,
a Treasure Chest occasion's sales before its drawing, a standard raffle's sales before its
last drawing); ``carry_overs``; the Queen of Hearts ``board`` (revealed positions and their
cards); the Treasure Chest ``keys_in_play``; ``prizes`` (every prize, in order, with its
description) and ``announcements``.

For the raffle's statement (GC-7R, ``services.reports.gc7r``): what the tickets carry
(``organization``, ``identification_number``, ``location``, ``bundles``) and
``tickets_printed`` from the configuration, and ``round_results`` per round: its
``drawings``, the ``winners`` drawn, the time of its last drawing (``drawn_at``), and the
``prizes_paid`` and ``profit_kept`` of the round. No personal data: purchasers appear as
opaque ids only.
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


SNAPSHOT_SCHEMA = 2
"""The shape of :meth:`Raffles.snapshot`: 2 added the statement's figures (prize
descriptions, ``round_results``, the ticket's settings). A checkpoint of another shape is
not restored (:meth:`Raffles.accepts`): the projection folds the log from the start."""


def _new(raffle: str, data: dict[str, Any]) -> dict[str, Any]:
    config = data["config"]
    return {
        "raffle": raffle,
        "kind": data["kind"],
        "name": config.get("name"),
        "price": config.get("price"),
        "bundles": copy.deepcopy(config.get("bundles", [])),
        "tickets_printed": config.get("tickets_printed"),
        "organization": config.get("organization"),
        "identification_number": config.get("identification_number"),
        "location": config.get("location"),
        "method": None,
        "round": 1,
        "ended": False,
        "sales_open": True,
        "tickets": 0,
        "sales": 0,
        "online_tickets": 0,
        "rounds": {},
        "round_results": {},
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


def _result(r: dict[str, Any], round_: int) -> dict[str, Any]:
    """The round's row of ``round_results`` (made on its first drawing, prize or profit)."""
    results: dict[str, dict[str, Any]] = r["round_results"]
    row = results.get(str(round_))
    if row is None:
        row = results[str(round_)] = {
            "drawings": 0,
            "winners": 0,
            "drawn_at": None,
            "prizes_paid": 0,
            "profit_kept": 0,
        }
    return row


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
            result = _result(r, data["round"])
            result["drawings"] += 1
            result["winners"] += len(data["winners"])
            result["drawn_at"] = data["at"]
            if r["kind"] == "queen_of_hearts":
                r["round"] = data["round"] + 1  # sales go on for the next week
                r["sales_open"] = True
            elif r["kind"] == "treasure_chest":
                r["sales_open"] = False
        elif type_ == "ProceedsAllocated":
            r["pool"] += data["pool"]
        elif type_ == "PrizeAwarded":
            r["prizes_paid"] += data["amount"]
            _result(r, data["round"])["prizes_paid"] += data["amount"]
            r["prizes"].append(
                {k: data[k] for k in ("round", "serial", "prize", "amount", "cash", "description")}
            )
            if data["prize"] in ("grand", "secondary"):
                r["pool"] = 0
        elif type_ == "ProfitKept":
            r["profit_kept"] += data["amount"]
            _result(r, data["round"])["profit_kept"] += data["amount"]
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
        return {"schema": SNAPSHOT_SCHEMA, "raffles": copy.deepcopy(self.raffles)}

    def accepts(self, data: dict[str, Any]) -> bool:
        """Whether a checkpoint's snapshot has this version's shape (:data:`SNAPSHOT_SCHEMA`)."""
        return data.get("schema") == SNAPSHOT_SCHEMA

    def restore(self, data: dict[str, Any]) -> None:
        self.raffles = copy.deepcopy(data["raffles"])
