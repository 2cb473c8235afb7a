"""Merchandise-wheel prize aggregates: each wheel's inventory control sheet, 4620.10(e).

Per merchandise wheel (by table id):
- ``limit``: the aggregate prize limit of GML 189(6)(a)(1) the wheel was opened with;
- ``awarded``: every item awarded, in order: round, bet, player, item, prize class, value
  (cost to the licensee, or current retail price if donated), ``donated``, ``aggregate``
  (the running total after it) and ``at`` (unix ms);
- ``aggregate``: the value awarded so far; ``distance_to_limit`` = limit − aggregate;
- ``inventory``: the items still on the shelf (in stocking order), ``inventory_value``;
- ``stocked_count`` / ``stocked_value``: everything ever put on the shelf. Merchandise is
  conserved: stocked_value = aggregate + inventory_value, at every point of the log;
- ``closed``: ``null``, ``"prize_limit"`` (closed by the limit) or ``"closed"`` (closed by
  the dealer), with ``closed_at``.

A pure fold of the org log: the same events give the same sheets, live or by replay.
"""

from __future__ import annotations

import copy
from typing import Any

from services.aggregates import TABLE_PREFIX

MERCHANDISE_WHEEL = "merchandise_wheel"
RELEVANT = frozenset(
    {"TableOpened", "MerchandiseStocked", "MerchandiseAwarded", "PrizeLimitReached", "TableClosed"}
)
"""The only event types that change a control sheet."""


def new_sheet(table: str, limit: int) -> dict[str, Any]:
    return {
        "table": table,
        "limit": limit,
        "aggregate": 0,
        "distance_to_limit": limit,
        "awarded": [],
        "inventory": {},
        "inventory_value": 0,
        "stocked_count": 0,
        "stocked_value": 0,
        "closed": None,
        "closed_at": None,
    }


class ControlSheets:
    """The control-sheet projection (see the module docstring for every field)."""

    name = "control_sheets"
    types = RELEVANT

    def __init__(self) -> None:
        self.sheets: dict[str, dict[str, Any]] = {}

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        if type_ not in RELEVANT:
            return
        table = stream.removeprefix(TABLE_PREFIX)
        if type_ == "TableOpened":
            if data["game"] == MERCHANDISE_WHEEL:
                limit = int(data["config"]["aggregate_prize_limit"])
                self.sheets[table] = new_sheet(table, limit)
            return
        sheet = self.sheets.get(table)
        if sheet is None:
            return
        if type_ == "MerchandiseStocked":
            for item in data["items"]:
                entry = {
                    "item": item["item"],
                    "prize": item["prize"],
                    "value": item["value"],
                    "donated": item["donated"],
                    "stocked_at": ts,
                }
                sheet["inventory"][item["item"]] = entry
                sheet["inventory_value"] += item["value"]
                sheet["stocked_count"] += 1
                sheet["stocked_value"] += item["value"]
        elif type_ == "MerchandiseAwarded":
            sheet["awarded"].append(
                {
                    "round": data["round"],
                    "bet_id": data["bet_id"],
                    "player": data["player"],
                    "item": data["item"],
                    "prize": data["prize"],
                    "value": data["value"],
                    "donated": data["donated"],
                    "aggregate": data["aggregate"],
                    "at": ts,
                }
            )
            sheet["inventory"].pop(data["item"], None)
            sheet["inventory_value"] -= data["value"]
            sheet["aggregate"] = data["aggregate"]
            sheet["distance_to_limit"] = sheet["limit"] - data["aggregate"]
        elif sheet["closed"] is None:  # PrizeLimitReached or TableClosed: the first one
            sheet["closed"] = "prize_limit" if type_ == "PrizeLimitReached" else "closed"
            sheet["closed_at"] = ts

    def sheet(self, table: str) -> dict[str, Any] | None:
        """One wheel's sheet as plain data (the shelf as a list, in stocking order)."""
        sheet = self.sheets.get(table)
        if sheet is None:
            return None
        out = copy.deepcopy(sheet)
        out["inventory"] = list(out["inventory"].values())
        return out

    def all_sheets(self) -> list[dict[str, Any]]:
        """Every wheel's sheet, by table id."""
        return [s for t in sorted(self.sheets) if (s := self.sheet(t)) is not None]

    def snapshot(self) -> dict[str, Any]:
        return {"sheets": {t: self.sheet(t) for t in sorted(self.sheets)}}

    def restore(self, data: dict[str, Any]) -> None:
        self.sheets = {}
        for table, sheet in data.get("sheets", {}).items():
            restored = copy.deepcopy(sheet)
            restored["inventory"] = {i["item"]: i for i in restored["inventory"]}
            self.sheets[table] = restored
