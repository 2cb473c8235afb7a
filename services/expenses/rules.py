"""The expense stream's pure rules: one ``record_expense`` is one line of the GC-7's Part B.

GML 195-f(1) asks the statement to show "each item of expense incurred or paid, and each
expenditure made or to be made, other than prizes", with "the name and address of each
payee" and a "detailed description of the merchandise or services". The categories are the
GC-7's Part B as the predecessor rule 9 NYCRR 5624.21 gives it (docs/FORMS.md "Expenses",
docs/RULES.md "Expenses"). No clock, no I/O: the time and what the log started (the
occasions and the license periods, :class:`Calendar`) enter as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
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


Period = tuple[str, str]
"""A license period: its first and last day (``YYYY-MM-DD``)."""

UNKNOWN_OCCASION: Final = "unknown_occasion"
UNKNOWN_LICENSE_PERIOD: Final = "unknown_license_period"


def period_key(period: Period) -> str:
    """A license period's key (``2026-11-01_2026-12-31``), as the GC-7's in the catalog."""
    return f"{period[0]}_{period[1]}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Calendar:
    """What the log started, as an expense needs it: each occasion with the license period
    it ran under (``occasions``), every license period recorded (``periods``) and the one
    the night runs under (``current``). Given by the actor's adapter, as data."""

    occasions: Mapping[str, Period] = field(default_factory=dict)
    periods: frozenset[Period] = frozenset()
    current: Period = ("", "")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpenseState:
    """The stream's position, how many expenses it holds and their total (cents)."""

    version: int = 0
    count: int = 0
    total: int = 0


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
    license_period: str | None = None
    """With ``covers`` ``license_period``: the period's key (:func:`period_key`); None,
    the night's."""


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
    if command.covers == "occasion" and command.license_period is not None:
        raise _bad("an expense for an occasion takes the license period of its occasion")


def period_of(command: RecordExpense, calendar: Calendar) -> Period:
    """The license period whose GC-7 shows the expense (4624.1: one statement per license
    period): the one its occasion ran under, or the one it names, by default the night's.
    An occasion the log did not start is ``unknown_occasion``, a period the license stream
    did not record ``unknown_license_period``."""
    if command.covers == "occasion":
        assert command.occasion is not None  # check_expense: an occasion expense names it
        period = calendar.occasions.get(command.occasion)
        if period is None:
            raise RuleError(UNKNOWN_OCCASION, f"no occasion {command.occasion!r} was started")
        return period
    if command.license_period is None:
        return calendar.current
    for period in calendar.periods:
        if period_key(period) == command.license_period:
            return period
    raise RuleError(
        UNKNOWN_LICENSE_PERIOD, f"no license period {command.license_period!r} was recorded"
    )


def decide(state: ExpenseState, command: RecordExpense, calendar: Calendar) -> list[Event]:
    """Record one expense, numbered after the stream's last (the GC-7 line it becomes), in
    the license period of its occasion or the one it names (:func:`period_of`)."""
    check_expense(command)
    start, end = period_of(command, calendar)
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
            period_start=start,
            period_end=end,
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
