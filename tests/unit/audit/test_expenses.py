"""The expense check: expenses the real rules record pass; one whose amount is not
positive whole cents, whose payee is blank, whose category is not of Part B, or whose
number skips is named with its stream and seq (docs/AUDIT.md; GML 195-f(1), 5624.21)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from services.audit.expenses import ExpenseChecker
from services.expenses.rules import ExpenseState, decide, evolve
from tests.unit.audit.support import Log, named, run, tampered
from tests.unit.reports.test_expense_rules import CALENDAR, GOOD


def expenses() -> Log:
    """Three expenses through the real rules, each command's event sealed."""
    state = ExpenseState()
    log = Log()
    for command in (
        GOOD,
        replace(GOOD, category="rent", amount=50_000, covers="license_period", occasion=None),
        replace(GOOD, payee="Hall Co", amount=1),
    ):
        events = decide(state, command, CALENDAR)
        for ev in events:
            state = evolve(state, ev)
        log.append("expenses", events, actor="mic-1")
    return log


def test_recorded_expenses_pass_and_are_counted() -> None:
    checker = run(ExpenseChecker(), expenses().envelopes)
    assert checker.discrepancies == []
    assert checker.checked["expenses"] == 3


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (_set("amount", -500), "amount must be a positive whole number"),
        (_set("amount", 0), "amount must be a positive whole number"),
        (_set("amount", 12.5), "amount must be a positive whole number"),
        (_set("payee", "  "), "payee"),
        (_set("category", "prizes"), "category"),
        (_set("number", 7), "its number on the GC-7"),
    ],
    ids=["negative", "zero", "fractional", "no-payee", "category", "number"],
)
def test_a_forged_expense_is_named(change: Callable[[dict[str, Any]], None], said: str) -> None:
    envelopes = expenses().envelopes
    log = tampered(envelopes, 1, change)
    checker = run(ExpenseChecker(), log)
    [found] = named(checker.discrepancies, log[1])
    assert said in found.what
    assert all(d.seq == log[1].seq or "number" in d.what for d in checker.discrepancies)
