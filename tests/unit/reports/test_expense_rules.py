"""The expense stream's pure rules (services/expenses/rules.py): one expense one event,
numbered, in the license period of its occasion or the one it names; what GML 195-f(1) and
Part B (5624.21) need is checked, each refusal ``bad_request``; an occasion the log did not
start is ``unknown_occasion``, a period it did not record ``unknown_license_period``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from events.expenses import ExpenseRecorded
from services.aggregates import RuleError
from services.expenses.actor import ExpenseRules, calendar_of
from services.expenses.rules import CATEGORIES, Calendar, RecordExpense, decide, evolve

NOV_DEC = ("2026-11-01", "2026-12-31")
JAN = ("2027-01-01", "2027-01-31")
CALENDAR = Calendar(
    occasions={"2026-11-29": NOV_DEC, "2026-12-06": NOV_DEC, "2027-01-15": JAN},
    periods=frozenset({NOV_DEC, JAN}),
    current=JAN,
)
"""Three occasions over two license periods; the night runs under the second."""
RULES = ExpenseRules(lambda: CALENDAR)
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
    first = RULES.decide(state, GOOD)
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
    (second,) = decide(state, rent, CALENDAR)
    assert isinstance(second, ExpenseRecorded)
    assert (second.number, second.occasion, second.covers) == (2, None, "license_period")
    # A period expense names no period: the night's (the current one).
    assert (second.period_start, second.period_end) == JAN
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
        decide(RULES.initial("expenses"), replace(GOOD, **change), CALENDAR)  # type: ignore[arg-type]
    assert refused.value.code == "bad_request"


@pytest.mark.parametrize(
    ("occasion", "period"),
    [("2026-11-29", NOV_DEC), ("2026-12-06", NOV_DEC), ("2027-01-15", JAN)],
)
def test_an_occasion_expense_falls_in_the_license_period_its_occasion_ran_under(
    occasion: str, period: tuple[str, str]
) -> None:
    """Whatever period the night runs under now, the expense is on its occasion's GC-7."""
    (event,) = decide(RULES.initial("expenses"), replace(GOOD, occasion=occasion), CALENDAR)
    assert isinstance(event, ExpenseRecorded)
    assert (event.occasion, event.period_start, event.period_end) == (occasion, *period)


def test_a_period_expense_names_its_period() -> None:
    rent = replace(GOOD, covers="license_period", occasion=None)
    for key, period in (("2026-11-01_2026-12-31", NOV_DEC), ("2027-01-01_2027-01-31", JAN)):
        (event,) = decide(RULES.initial("expenses"), replace(rent, license_period=key), CALENDAR)
        assert isinstance(event, ExpenseRecorded)
        assert (event.period_start, event.period_end) == period


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"occasion": "2026-11-30"}, "unknown_occasion"),
        ({"occasion": "2026-11-01_2026-12-31"}, "unknown_occasion"),
        (
            {
                "covers": "license_period",
                "occasion": None,
                "license_period": "2026-01-01_2026-12-31",
            },
            "unknown_license_period",
        ),
        (
            {"covers": "license_period", "occasion": None, "license_period": "2026-11-29"},
            "unknown_license_period",
        ),
        ({"license_period": "2026-11-01_2026-12-31"}, "bad_request"),
    ],
)
def test_an_occasion_or_period_the_log_did_not_start_is_refused(
    change: dict[str, object], code: str
) -> None:
    """The rules decide nothing for an occasion never started or a period never recorded
    (no event: the stream is unchanged); an occasion expense takes its occasion's period."""
    with pytest.raises(RuleError) as refused:
        decide(RULES.initial("expenses"), replace(GOOD, **change), CALENDAR)  # type: ignore[arg-type]
    assert refused.value.code == code


def test_the_calendar_knows_the_nights_occasion_before_the_projection_folds_it() -> None:
    """The night file starts its occasion and records its period at opening; an occasion
    the projection folded keeps the period it ran under."""
    folded = {"2026-11-29": {"period_start": NOV_DEC[0], "period_end": NOV_DEC[1]}}
    calendar = calendar_of(folded, [NOV_DEC], occasion="2027-01-15", period=JAN)
    assert calendar.occasions == {"2026-11-29": NOV_DEC, "2027-01-15": JAN}
    assert calendar.periods == {NOV_DEC, JAN} and calendar.current == JAN
    again = calendar_of(folded, [NOV_DEC], occasion="2026-11-29", period=JAN)
    assert again.occasions == {"2026-11-29": NOV_DEC}
