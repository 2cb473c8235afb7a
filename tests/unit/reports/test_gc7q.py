"""GC-7Q, the quarterly statement of bell jar operations (services/reports/gc7q.py; 9 NYCRR
4624.1): the form's lines are the bell jar projection's quarter to the cent, from deals
played through their pure rules; a quarter with no sales is zeros; the lines add up for any
set of deals; the PDF holds the figures; the deadline is 15 days after the quarter."""

from __future__ import annotations

import csv
import io
from datetime import date
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.bell_jars import BellJars
from services.reports import gc7q
from services.reports.form import Amount, Form, to_csv, to_pdf
from tests.unit.projections import bell_jar_support as hand
from tests.unit.reports.support import NEW_YORK, Deal, at, bell_jars, pdf_text

ORG = {
    "organization": "St. Mary's Parish Council",
    "games_of_chance_id": "GC-ID-77",
    "address": "12 Main Street, Albany NY 12207",
    "license_number": "GC-2026-0042",
}


def lines(form: Form) -> dict[str, Any]:
    """Every numbered line of the form: its value (cents for an amount)."""
    out: dict[str, Any] = {}
    for section in form.sections:
        for line in section.lines:
            value = line.value
            out[line.number] = value.cents if isinstance(value, Amount) else value
    return out


def schedule(form: Form) -> tuple[tuple[Any, ...], ...]:
    [section] = [s for s in form.sections if s.title.startswith("Schedule 1")]
    assert section.table is not None
    return section.table.rows


def fourth_quarter() -> BellJars:
    """Four deals of 20 tickets at $1 (cost $4 each) in Q4 2026, played by the rules:
    a sells out; b is removed with 5 unsold once 3 of its 4 prizes were paid; c was bought
    in Q4 and is still in play; d was bought in Q3 and sells out in Q4."""
    a = Deal("a", invoice_date="2026-10-02", when=at(2026, 10, 3))
    a.in_play(at(2026, 10, 3)).sell(12, at(2026, 10, 4)).redeem(0, 1, when=at(2026, 10, 4))
    a.sell(8, at(2026, 10, 10)).redeem(1, 2, when=at(2026, 10, 11))
    b = Deal("b", invoice_date="2026-11-01", when=at(2026, 11, 2))
    b.in_play(at(2026, 11, 2)).sell(15, at(2026, 11, 3)).redeem(0, 1, 1, when=at(2026, 11, 3))
    b.remove(at(2026, 12, 31, 23, 30))
    c = Deal("c", invoice_date="2026-12-01", when=at(2026, 12, 2), cost=650)
    c.in_play(at(2026, 12, 2)).sell(3, at(2026, 12, 3))
    d = Deal("d", invoice_date="2026-09-30", when=at(2026, 9, 30), cost=300)
    d.in_play(at(2026, 9, 30)).sell(20, at(2026, 10, 1)).redeem(0, when=at(2026, 10, 1))
    return bell_jars(a, b, c, d)


def test_the_lines_are_the_projections_quarter_to_the_cent() -> None:
    p = fourth_quarter()
    q = p.quarter(2026, 4)
    form = gc7q.build(q, **ORG)
    got = lines(form)
    assert {k: got[k] for k in gc7q_lines()} == {k: q[k] for k in gc7q_lines()}
    # The same figures worked out from the deals: a, b and d closed in Q4 (T = 3).
    assert got["A1"] == 3
    assert got["A2"] == 3 * 20 * 100  # ideal handle, box Q
    assert got["A3"] == (500 + 200 + 200 + 100) + (500 + 200 + 200) + 500  # cash prizes, box R
    assert got["A4"] == 5 * 100  # b's 5 unsold tickets, box S
    assert got["A5"] == 400 + 400 + 650  # a, b and c were bought in Q4; d in Q3
    assert got["A6"] == got["A3"] + got["A4"] + got["A5"]
    assert got["A7"] == got["A2"] - got["A6"] == 6_000 - 2_400 - 500 - 1_450
    assert got["B8"] == 83  # 5 % of 1,650 cents is 82.5: rounded up
    assert got["B9"] == 1_650 - 83
    # Schedule 1: a line per closed deal in order of closing, then the boxes T, Q, R, S.
    rows = schedule(form)
    assert [r[0] for r in rows] == ["d", "a", "b", "T = 3"]
    total = rows[-1]
    assert (total[6], total[7], total[9]) == (
        Amount(cents=got["A2"]),
        Amount(cents=got["A3"]),
        Amount(cents=got["A4"]),
    )
    assert form.due == date(2027, 1, 15)
    assert ("Games of Chance ID", "GC-ID-77") in form.header
    assert ("Quarter", "4 (October 1 - December 31)") in form.header


def gc7q_lines() -> tuple[str, ...]:
    return ("A1", "A2", "A3", "A4", "A5", "A6", "A7", "B8", "B9")


def test_a_quarter_with_no_sales_is_filed_with_zeros() -> None:
    p = fourth_quarter()
    form = gc7q.build(p.quarter(2027, 1), **ORG)
    assert lines(form) == {k: 0 for k in gc7q_lines()}
    assert schedule(form) == (
        ("T = 0", "", "", "", 0, "", *(Amount(cents=0),) * 2, 0, Amount(cents=0)),
    )
    assert form.due == date(2027, 4, 15)
    text = pdf_text(to_pdf(form))
    assert "A7" in text and "0.00" in text and "2027-04-15" in text


def test_the_pdf_read_back_holds_the_figures() -> None:
    q = fourth_quarter().quarter(2026, 4)
    text = pdf_text(to_pdf(gc7q.build(q, **ORG)))
    for figure in ("60.00", "24.00", "5.00", "14.50", "43.50", "16.50", "0.83", "15.67"):
        assert figure in text, figure
    assert "2027-01-15" in text
    for name in ("GC-7Q", "St. Mary's Parish Council", "GC-ID-77", "12 Main Street", "S-b"):
        assert name in text, name


def test_the_csv_holds_every_line_and_schedule_row() -> None:
    q = fourth_quarter().quarter(2026, 4)
    rows = list(csv.reader(io.StringIO(to_csv(gc7q.build(q, **ORG)))))
    by_number = {r[2]: r[4] for r in rows if r[0] == "line"}
    assert by_number["A7"] == "16.50" and by_number["B8"] == "0.83" and by_number["A1"] == "3"
    deals = [r[2] for r in rows if r[0] == "row" and r[1].startswith("Schedule 1")]
    assert deals == ["d", "a", "b", "T = 3"]
    assert ["header", "", "due", "2027-01-15"] in rows


def test_anomalies_of_the_quarter_are_printed_for_the_auditor() -> None:
    steps = [
        hand.registered("x"),
        hand.in_play("x", hand.at(2026, 1, 7)),
        hand.sold("x", 10, hand.at(2026, 1, 8), amount=999),  # not 10 x $1
        hand.closed("x", "removed", 390, hand.at(2026, 1, 9)),
    ]
    form = gc7q.build(hand.fold(steps).quarter(2026, 1), **ORG)
    assert any("sale_amount_mismatch" in n for n in form.notes)


def test_the_deadline_is_15_days_after_each_quarter_end_4624_1() -> None:
    assert [gc7q.due_date(2026, n) for n in (1, 2, 3, 4)] == [
        date(2026, 4, 15),
        date(2026, 7, 15),
        date(2026, 10, 15),
        date(2027, 1, 15),
    ]
    # A leap year's first quarter still ends on 31 March.
    assert gc7q.quarter_last_day(2028, 1) == date(2028, 3, 31)
    assert gc7q.due_date(2028, 1) == date(2028, 4, 15)
    assert [gc7q.quarter_last_day(2027, n) for n in (2, 3, 4)] == [
        date(2027, 6, 30),
        date(2027, 9, 30),
        date(2027, 12, 31),
    ]


def test_one_statement_per_quarter_of_the_license_period() -> None:
    assert gc7q.quarters_of_period(date(2026, 11, 1), date(2026, 12, 31)) == [(2026, 4)]
    assert gc7q.quarters_of_period(date(2026, 3, 31), date(2027, 4, 1)) == [
        (2026, 1),
        (2026, 2),
        (2026, 3),
        (2026, 4),
        (2027, 1),
        (2027, 2),
    ]
    assert gc7q.quarters_of_period(date(2026, 5, 1), date(2026, 4, 30)) == []
    due = gc7q.statements_due(date(2026, 11, 1), date(2027, 10, 31))
    assert [(d.quarter, d.due) for d in due] == [
        ("2026-Q4", date(2027, 1, 15)),
        ("2027-Q1", date(2027, 4, 15)),
        ("2027-Q2", date(2027, 7, 15)),
        ("2027-Q3", date(2027, 10, 15)),
        ("2027-Q4", date(2028, 1, 15)),
    ]


deal_plans = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=3),  # quarter of the invoice in 2026
        st.integers(min_value=0, max_value=400),  # tickets sold
        st.integers(min_value=0, max_value=3),  # prizes of the $50 line paid
        st.integers(min_value=0, max_value=40),  # prizes of the $2 line paid
        st.integers(min_value=0, max_value=20_000),  # cost
        st.booleans(),  # closed in Q2
        st.sampled_from([50, 100, 200]),  # price
    ),
    max_size=6,
)


@given(deal_plans)
@settings(max_examples=150, deadline=None, derandomize=True)
def test_the_a_and_b_lines_add_up_for_any_set_of_deals(plans: list[Any]) -> None:
    steps: list[hand.Step] = []
    for i, (invoice_q, sold, big, small, cost, closes, price) in enumerate(plans):
        deal = f"d-{i}"
        invoice = f"2026-{3 * invoice_q - 2:02d}-15"
        steps += [
            hand.registered(deal, price=price, cost=cost, invoice_date=invoice),
            hand.in_play(deal, hand.at(2026, 4, 2)),
        ]
        if sold:
            steps.append(hand.sold(deal, sold, hand.at(2026, 4, 3), price=price))
        steps += [hand.redeemed(deal, 0, 5_000, hand.at(2026, 4, 4)) for _ in range(big)]
        steps += [hand.redeemed(deal, 2, 200, hand.at(2026, 4, 5)) for _ in range(small)]
        if closes:
            steps.append(hand.closed(deal, "removed", 400 - sold, hand.at(2026, 6, 29)))
    form = gc7q.build(hand.fold(steps).quarter(2026, 2), **ORG)
    got = lines(form)
    assert got["A6"] == got["A3"] + got["A4"] + got["A5"]
    assert got["A7"] == got["A2"] - got["A6"]
    # B8: the least whole cent not under 5 % of A7; nothing on a loss.
    if got["A7"] > 0:
        assert got["B8"] * 100 >= 5 * got["A7"] > (got["B8"] - 1) * 100
    else:
        assert got["B8"] == 0
    assert got["B9"] == got["A7"] - got["B8"]
    rows = schedule(form)
    closing = [p for p in plans if p[5]]
    assert got["A1"] == len(closing) == len(rows) - 1
    total = rows[-1]
    assert total[6] == Amount(cents=sum(400 * p[6] for p in closing)) == Amount(cents=got["A2"])
    cash = sum(5_000 * p[2] + 200 * p[3] for p in closing)
    assert total[7] == Amount(cents=cash) == Amount(cents=got["A3"])
    assert total[9] == Amount(cents=sum((400 - p[1]) * p[6] for p in closing))
    assert got["A5"] == sum(p[4] for p in plans if p[0] == 2)


def test_a_quarter_of_another_time_zone_counts_its_own_days() -> None:
    # Closed at 23:30 in New York on 31 March: the first quarter there, the second in UTC.
    steps = [
        hand.registered("z"),
        hand.in_play("z", hand.at(2026, 3, 1)),
        hand.sold("z", 400, hand.at(2026, 3, 2)),
        hand.closed("z", "sold_out", 0, hand.at(2026, 3, 31, 23, 30)),
    ]
    new_york = gc7q.build(hand.fold(steps, BellJars(NEW_YORK)).quarter(2026, 1), **ORG)
    utc = gc7q.build(hand.fold(steps, BellJars("UTC")).quarter(2026, 1), **ORG)
    assert (lines(new_york)["A1"], lines(utc)["A1"]) == (1, 0)
    assert ("Time zone of the quarter", "UTC") in utc.header
