"""Expenses: every expense of the games of chance, as the GC-7's Part B shows them.

Per expense, in the order recorded: ``number``, ``payee``, ``address``, ``description``,
``amount`` (cents), ``category`` (Part B's, ``services.expenses.rules.CATEGORIES``),
``covers`` (``occasion`` or ``license_period``), ``occasion``, the license period
(``period_start``, ``period_end``), ``recorded_by`` and ``recorded_at`` (unix ms).
A pure fold of the org log: the same events give the same list, live or by replay.
"""

from __future__ import annotations

import copy
from typing import Any

EXPENSE_RECORDED = "ExpenseRecorded"


def period_key(start: str, end: str) -> str:
    """A license period's key (``2026-11-01_2026-12-31``): the GC-7's key in the catalog."""
    return f"{start}_{end}"


class Expenses:
    """The expense projection (see the module docstring)."""

    name = "expenses"
    types = frozenset({EXPENSE_RECORDED})

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        if type_ == EXPENSE_RECORDED:
            self.items.append(dict(data))

    def of_period(self, key: str) -> list[dict[str, Any]]:
        """The expenses of the license period ``key`` (:func:`period_key`), in order."""
        return [e for e in self.items if period_key(e["period_start"], e["period_end"]) == key]

    def snapshot(self) -> dict[str, Any]:
        return {"items": copy.deepcopy(self.items)}

    def restore(self, data: dict[str, Any]) -> None:
        self.items = copy.deepcopy(data["items"])
