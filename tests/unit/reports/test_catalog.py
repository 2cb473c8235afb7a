"""The catalog (services/reports/catalog.py): every form instance that is or will be due,
soonest first, with its deadline and its cite; past it, overdue; each built by its entry."""

from __future__ import annotations

from datetime import date

import pytest

from services.reports import catalog
from services.reports.catalog import ReportInputs
from services.reports.form import Amount
from tests.unit.reports.nights import fold, license_recorded, occasion_started, two_nights


def inputs(entries: list[tuple[str, str, dict[str, object], int]]) -> ReportInputs:
    bankrolls, cash, expenses, sheets = fold(entries)  # type: ignore[arg-type]
    return ReportInputs(
        organization="St. Mary's",
        timezone="America/New_York",
        cash_control=cash,
        bankrolls=bankrolls,
        expenses=expenses,
        control_sheets=sheets,
    )


def test_every_instance_is_listed_with_its_deadline_soonest_first() -> None:
    two_periods = [
        *two_nights(1),
        license_recorded("2027-01-01", "2027-01-31"),
        occasion_started("2027-01-15", 1_800_000_000_000),
    ]
    due = catalog.due_reports(inputs(two_periods), date(2026, 12, 1))
    ours = [r for r in due if r.entry.form in ("gc7", "gc7b")]
    assert [(r.entry.form, r.instance.key, r.instance.due.isoformat()) for r in ours] == [
        # Each GC-7B 7 days after its occasion (NYC DCWP), before the GC-7 of its period.
        ("gc7b", "2026-11-29", "2026-12-06"),
        ("gc7b", "2026-12-06", "2026-12-13"),
        ("gc7", "2026-11-01_2026-12-31", "2027-01-07"),
        ("gc7b", "2027-01-15", "2027-01-22"),
        ("gc7", "2027-01-01_2027-01-31", "2027-02-07"),
    ]
    assert all("4624.1" in r.instance.due_rule for r in ours)
    assert not any(r.overdue for r in due)
    assert [r.instance.due for r in due] == sorted(r.instance.due for r in due)


def test_a_form_is_overdue_the_day_after_its_deadline() -> None:
    night = inputs(two_nights(1))
    on_the_day = [r for r in catalog.due_reports(night, date(2027, 1, 7)) if r.entry.form == "gc7"]
    assert [(r.overdue, r.days_left) for r in on_the_day] == [(False, 0)]
    after = [r for r in catalog.due_reports(night, date(2027, 1, 8)) if r.entry.form == "gc7"]
    assert all(r.overdue and r.days_left == -1 for r in after)
    view = after[0].view()
    assert view["overdue"] is True
    assert view["pdf"] == "/api/reports/gc7/2026-11-01_2026-12-31.pdf"


def test_each_instance_is_built_by_its_entry() -> None:
    night = inputs(two_nights(2))
    assert catalog.build(night, "gc7", "2026-11-01_2026-12-31").code == "GC-7"
    assert catalog.build(night, "gc7b", "2026-12-06").code == "GC-7B"
    with pytest.raises(catalog.UnknownForm):
        catalog.build(night, "gc9", "2026-12-06")
    with pytest.raises(catalog.UnknownReport):
        catalog.build(night, "gc7b", "2026-11-01_2026-12-31")  # a period is not an occasion


def test_a_night_with_nothing_recorded_has_no_gc7_due() -> None:
    due = catalog.due_reports(inputs([]), date(2026, 12, 1))
    assert [r for r in due if r.entry.form in ("gc7", "gc7b")] == []


def test_each_raffle_round_drawn_owes_a_gc7r_and_each_quarter_of_the_period_a_gc7q() -> None:
    from tests.unit.reports.support import raffles
    from tests.unit.reports.test_gc7r import queen_of_hearts

    night = inputs(two_nights(1))
    played = ReportInputs(
        organization=night.organization,
        timezone=night.timezone,
        cash_control=night.cash_control,
        bankrolls=night.bankrolls,
        expenses=night.expenses,
        control_sheets=night.control_sheets,
        raffles=raffles(("qoh", queen_of_hearts())),
    )
    due = catalog.due_reports(played, date(2026, 12, 1))
    listed = [(r.entry.form, r.instance.key, r.instance.due.isoformat()) for r in due]
    # One GC-7R a week of the Queen of Hearts, 30 days after its drawing (4624.1).
    assert [x for x in listed if x[0] == "gc7r"] == [
        ("gc7r", "qoh-round-1", "2026-12-21"),
        ("gc7r", "qoh-round-2", "2026-12-28"),
        ("gc7r", "qoh-round-3", "2027-01-04"),
    ]
    # The license period 2026-11-01 to 12-31 lies in one quarter: its GC-7Q is due 15 days
    # after the quarter's end, and is filed with zeros though no deal was sold (4624.1).
    assert [x for x in listed if x[0] == "gc7q"] == [("gc7q", "2026-Q4", "2027-01-15")]
    quarter = catalog.build(played, "gc7q", "2026-Q4")
    assert quarter.code == "GC-7Q"
    a7 = next(line for s in quarter.sections for line in s.lines if line.number == "A7")
    assert a7.value == Amount(cents=0)
    week = catalog.build(played, "gc7r", "qoh-round-2")
    assert week.code == "GC-7R" and "week 2" in week.period
    for form, key in (("gc7r", "qoh-round-9"), ("gc7r", "nope-round-1"), ("gc7q", "2027-Q1")):
        with pytest.raises(catalog.UnknownReport):
            catalog.build(played, form, key)
