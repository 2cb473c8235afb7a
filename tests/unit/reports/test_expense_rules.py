"""The expense stream's pure rules (services/expenses/rules.py): one expense one event,
numbered, in the night's license period; what GML 195-f(1) and Part B (5624.21) need is
checked, each refusal ``bad_request``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from events.expenses import ExpenseRecorded
from services.aggregates import RuleError
from services.expenses.actor import ExpenseRules
from services.expenses.rules import CATEGORIES, RecordExpense, decide, evolve

RULES = ExpenseRules("2026-11-01", "2026-12-31")
GOOD = RecordExpense(
    payee="Acme Gaming Supply",
    address="1 Main St, Albany NY",
    description="Roulette layout",
    amount=12_345,
    category="equipment_and_supplies",
    covers="occasion",
    occasion="2026-11-29",
    recorded_by="mic-1",
    now_ms=1_795_953_600_000,
)


def test_an_expense_is_one_event_numbered_in_the_license_period() -> None:
    state = RULES.initial("expenses")
    first = decide(state, GOOD)
    assert first == [
        ExpenseRecorded(
            number=1,
            payee="Acme Gaming Supply",
            address="1 Main St, Albany NY",
            description="Roulette layout",
            amount=12_345,
            category="equipment_and_supplies",
            covers="occasion",
            occasion="2026-11-29",
            period_start="2026-11-01",
            period_end="2026-12-31",
            recorded_by="mic-1",
            recorded_at=1_795_953_600_000,
        )
    ]
    state = evolve(state, first[0])
    rent = replace(GOOD, category="rent", amount=50_000, covers="license_period", occasion=None)
    (second,) = decide(state, rent)
    assert isinstance(second, ExpenseRecorded)
    assert (second.number, second.occasion, second.covers) == (2, None, "license_period")
    state = evolve(state, second)
    assert (state.version, state.count, state.total) == (2, 2, 62_345)


def test_the_categories_are_part_b_of_the_gc7() -> None:
    """5624.21: equipment and supplies, rent to licensed lessors, services, license fees,
    other."""
    assert list(CATEGORIES) == [
        "equipment_and_supplies",
        "rent",
        "services",
        "license_fees",
        "other",
    ]


@pytest.mark.parametrize(
    "change",
    [
        {"payee": " "},
        {"address": ""},
        {"description": "\t"},
        {"amount": 0},
        {"amount": -1},
        {"amount": True},
        {"amount": 1.5},
        {"category": "prizes"},
        {"covers": "quarter"},
        {"covers": "occasion", "occasion": None},
        {"covers": "license_period", "occasion": "2026-11-29"},
        {"address": "x" * 301},
    ],
)
def test_what_the_gc7_cannot_show_is_refused(change: dict[str, object]) -> None:
    """GML 195-f(1): each payee with its address and what was bought; an amount in whole
    cents above zero; a category of Part B."""
    with pytest.raises(RuleError) as refused:
        decide(RULES.initial("expenses"), replace(GOOD, **change))  # type: ignore[arg-type]
    assert refused.value.code == "bad_request"
