"""The expense stream's pure rules: one ``record_expense`` is one line of the GC-7's Part B.

GML 195-f(1) asks the statement to show "each item of expense incurred or paid, and each
expenditure made or to be made, other than prizes", with "the name and address of each
payee" and a "detailed description of the merchandise or services". The categories are the
GC-7's Part B as the predecessor rule 9 NYCRR 5624.21 gives it (docs/FORMS.md "Expenses",
docs/RULES.md "Expenses"). No clock, no I/O: the time and the license period enter as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from events.base import Event
from events.expenses import ExpenseRecorded
from services.aggregates import RuleError

CATEGORIES: Final[Mapping[str, str]] = {
    "equipment_and_supplies": "Equipment and supplies",
    "rent": "Rent to licensed lessors",
    "services": "Services (including preparing GC-7s and bookkeeping)",
    "license_fees": "License fees",
    "other": "Other",
}
"""The GC-7's Part B categories, 5624.21 (the predecessor of 4624.1), by their protocol
name: expenses "solely and directly" for the games of chance."""

COVERS: Final = ("occasion", "license_period")
"""What an expense is for: one occasion, or the license period as a whole (rent for the
period, the license fee)."""

MAX_EXPENSE_TEXT: Final = 300
"""Longest address or description, in characters: an input bound, not a rule."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpenseState:
    """The stream's position, how many expenses it holds and their total (cents), and the
    license period the night runs under (``period_start``, ``period_end``)."""

    version: int = 0
    count: int = 0
    total: int = 0
    period_start: str = ""
    period_end: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordExpense:
    payee: str
    address: str
    description: str
    amount: int
    category: str
    covers: str
    occasion: str | None
    recorded_by: str
    now_ms: int


def _bad(message: str) -> RuleError:
    return RuleError("bad_request", message)


def check_expense(command: RecordExpense) -> None:
    """Refuse (``bad_request``) an expense the GC-7 cannot show: no payee, address or
    description (GML 195-f(1) names each payee, its address and what was bought), an
    amount that is not a positive whole number of cents, a category not of Part B
    (5624.21), an occasion expense without its occasion or a period expense with one."""
    if not command.payee.strip():
        raise _bad("an expense needs its payee (GML 195-f(1))")
    if not command.address.strip():
        raise _bad("an expense needs the payee's address (GML 195-f(1))")
    if not command.description.strip():
        raise _bad("an expense needs a description of what was bought (GML 195-f(1))")
    for name, text in (("address", command.address), ("description", command.description)):
        if len(text) > MAX_EXPENSE_TEXT:
            raise _bad(f"{name} is longer than {MAX_EXPENSE_TEXT} characters")
    amount = command.amount
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise _bad("amount must be a positive whole number of cents")
    if command.category not in CATEGORIES:
        raise _bad(f"category must be one of {', '.join(CATEGORIES)} (the GC-7's Part B)")
    if command.covers not in COVERS:
        raise _bad("covers must be 'occasion' or 'license_period'")
    if command.covers == "occasion" and not command.occasion:
        raise _bad("an expense for an occasion names the occasion")
    if command.covers == "license_period" and command.occasion is not None:
        raise _bad("an expense for the license period names no occasion")


def decide(state: ExpenseState, command: RecordExpense) -> list[Event]:
    """Record one expense, numbered after the stream's last (the GC-7 line it becomes),
    in the license period the night runs under."""
    check_expense(command)
    return [
        ExpenseRecorded(
            number=state.count + 1,
            payee=command.payee,
            address=command.address,
            description=command.description,
            amount=command.amount,
            category=command.category,
            covers=command.covers,
            occasion=command.occasion,
            period_start=state.period_start,
            period_end=state.period_end,
            recorded_by=command.recorded_by,
            recorded_at=command.now_ms,
        )
    ]


def evolve(state: ExpenseState, event: Event) -> ExpenseState:
    """The state after one event of the stream."""
    if isinstance(event, ExpenseRecorded):
        return replace(
            state,
            version=state.version + 1,
            count=state.count + 1,
            total=state.total + event.amount,
        )
    return replace(state, version=state.version + 1)
