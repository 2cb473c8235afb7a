"""The GC-7 (services/reports/gc7.py): gross receipts and prizes by game, each expense by
Part B category with its payee and address, the net proceeds and their use, due 7 days
after the license period (4624.1; GML 195-f(1)); its figures are the projections' to the
cent, in its CSV and in its PDF read back."""

from __future__ import annotations

import io
from datetime import date
from typing import Any

import pypdf
import pytest

from services.reports.form import Amount, Form, to_csv, to_pdf
from services.reports.gc7 import UnknownPeriod, build_gc7
from tests.unit.reports.nights import (
    NOV_29_2026_NOON_UTC,
    Entry,
    expense,
    fold,
    license_recorded,
    two_nights,
)

PERIOD = "2026-11-01_2026-12-31"


def lines(form: Form) -> dict[str, Any]:
    return {line.number: line.value for s in form.sections for line in s.lines}


def merchandise_wheel(ts: int) -> list[Entry]:
    """A wheel that awards a purchased $40 item and a donated $25 one."""
    stream = "table:merch-1"
    items = [
        {"item": "radio", "prize": "A", "value": 4_000, "donated": False},
        {"item": "basket", "prize": "B", "value": 2_500, "donated": True},
    ]
    opened = {
        "table": "merch-1",
        "game": "merchandise_wheel",
        "config": {"aggregate_prize_limit": 1_000_000},
        "outcome_mode": "rng",
    }
    out: list[Entry] = [
        ("TableOpened", stream, opened, ts),
        ("MerchandiseStocked", stream, {"items": items}, ts),
    ]
    aggregate = 0
    for i, item in enumerate(items):
        aggregate += item["value"]
        award = {
            "round": i + 1,
            "bet_id": f"merch-1.{i}",
            "player": "p-1",
            "item": item["item"],
            "prize": item["prize"],
            "value": item["value"],
            "donated": item["donated"],
            "aggregate": aggregate,
        }
        out.append(("MerchandiseAwarded", stream, award, ts + i))
    return out


def night_with_expenses(seed: int) -> list[Entry]:
    return [
        *two_nights(seed),
        *merchandise_wheel(NOV_29_2026_NOON_UTC + 3_600_000),
        expense(1, "equipment_and_supplies", 12_345),
        expense(2, "rent", 50_000, covers="license_period", occasion=None),
        expense(3, "services", 7_500, occasion="2026-12-06"),
        # Another license period's expense is not on this GC-7.
        expense(4, "other", 99_999, period_start="2027-01-01", period_end="2027-02-28"),
    ]


def gc7(entries: list[Entry], **night: Any) -> Form:
    _b, cash, expenses, sheets = fold(entries)
    return build_gc7(
        PERIOD,
        cash_control=cash,
        expenses=expenses.items,
        control_sheets=sheets.all_sheets(),
        organization="St. Mary's Parish Council",
        timezone="America/New_York",
        **night,
    )


@pytest.mark.parametrize("seed", [1, 2])
def test_its_figures_are_the_projections_to_the_cent(seed: int) -> None:
    entries = night_with_expenses(seed)
    bankrolls, *_ = fold(entries)
    form = gc7(entries)
    got = lines(form)
    handle = sum(t["handle"] for t in bankrolls.tables.values())
    paid = sum(t["paid_out"] for t in bankrolls.tables.values())
    assert got["A1"] == Amount(cents=handle)
    assert got["A2"] == Amount(cents=paid)
    assert got["A3"] == Amount(cents=4_000)  # purchased merchandise, at cost
    assert got["A6"] == Amount(cents=2_500)  # donated: shown, not deducted (4622.13)
    assert got["A5"] == Amount(cents=handle - paid - 4_000)
    assert [got[f"B{i}"] for i in range(1, 7)] == [
        Amount(cents=c) for c in (12_345, 50_000, 7_500, 0, 0, 69_845)
    ]
    assert got["D3"] == Amount(cents=handle - paid - 4_000 - 69_845)
    by_game = {row[0]: row for row in form.sections[0].table.rows}  # type: ignore[union-attr]
    roulette = [t for n, t in bankrolls.tables.items() if n.startswith("roulette")]
    assert by_game["Roulette"][1:] == (
        2,
        Amount(cents=sum(t["handle"] for t in roulette)),
        Amount(cents=sum(t["paid_out"] for t in roulette)),
        Amount(cents=sum(t["house_win"] for t in roulette)),
    )


def test_each_expense_has_its_payee_address_and_what_it_is_for() -> None:
    """GML 195-f(1): each item of expense with the name and address of its payee."""
    part_b = gc7(night_with_expenses(1)).sections[1]
    assert part_b.table is not None
    assert [row[:5] for row in part_b.table.rows] == [
        (1, "Equipment and supplies", "Payee 1", "1 Main St, Albany NY", "Item 1"),
        (2, "Rent to licensed lessors", "Payee 2", "2 Main St, Albany NY", "Item 2"),
        (
            3,
            "Services (including preparing GC-7s and bookkeeping)",
            "Payee 3",
            "3 Main St, Albany NY",
            "Item 3",
        ),
    ]
    assert [row[5] for row in part_b.table.rows] == ["2026-11-29", "license period", "2026-12-06"]


def test_it_is_due_seven_days_after_the_license_period() -> None:
    """4624.1; GML 195-f(1): within seven days after the conclusion of the license period."""
    form = gc7(two_nights(1))
    assert form.due == date(2027, 1, 7)
    assert "4624.1" in form.due_rule and "195-f(1)" in form.due_rule
    assert dict(form.header)["Occasions"] == "2026-11-29, 2026-12-06"


def test_the_use_of_proceeds_is_the_night_files_else_blank_to_fill_in() -> None:
    assert lines(gc7(two_nights(1)))["E1"] == "(to fill in)"
    assert lines(gc7(two_nights(1)))["C1"] is None  # additional license fees: not computed
    given = gc7(two_nights(1), use_of_proceeds="The parish food pantry", member_in_charge="Ann Lee")
    assert lines(given)["E1"] == "The parish food pantry"
    assert dict(given.header)["Member in charge"] == "Ann Lee"


def test_a_period_never_recorded_is_unknown() -> None:
    _b, cash, expenses, _sheets = fold([license_recorded()])
    with pytest.raises(UnknownPeriod):
        build_gc7(
            "2027-01-01_2027-02-28",
            cash_control=cash,
            expenses=expenses.items,
            control_sheets=[],
            organization="x",
            timezone="America/New_York",
        )


def test_its_csv_and_its_pdf_hold_the_figures() -> None:
    form = gc7(night_with_expenses(3))
    got = lines(form)
    rows = to_csv(form).splitlines()
    label = "Net proceeds before additional license fees (D1 - D2)"
    assert f"line,Part D. Net proceeds,D3,{label},{got['D3'].plain()}" in rows
    text = " ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(to_pdf(form))).pages)
    for number in ("A1", "A2", "A5", "B6", "D3"):
        assert got[number].text() in text, number
    assert "Payee 2" in text and "2 Main St, Albany NY" in text
    assert "2027-01-07" in text
