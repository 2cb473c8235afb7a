"""GC-7R, the raffle financial statement (services/reports/gc7r.py; 9 NYCRR 4624.1, GML
195-f(2)): for every raffle kind, the statement of each round is the raffle projection's
figures to the cent, from raffles played through their pure rules; each prize awarded
with its description and fair market value; the deadline 30 days after the occasion of the
round's drawing, for a raffle over several weeks too; the PDF holds the figures."""

from __future__ import annotations

import copy
import csv
import io
from datetime import date
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.aggregates import RuleError
from services.raffles import queen_of_hearts as qoh
from services.raffles.rules import draw_sizes
from services.raffles.state import RevealCard, TryKey
from services.reports import gc7r
from services.reports.form import Amount, Form, to_csv, to_pdf
from tests.unit.raffles.support import (
    Raffle,
    fifty_fifty_config,
    qoh_config,
    standard_config,
    tc_config,
)
from tests.unit.reports.support import NEW_YORK, at, pdf_text, raffles, view_of

MONEY = ("5", "5a", "6", "7", "8", "9")


def lines(form: Form) -> dict[str, Any]:
    """Every numbered line (the first of a number): its value, cents for an amount."""
    out: dict[str, Any] = {}
    for section in form.sections:
        for line in section.lines:
            value = line.value
            out.setdefault(line.number, value.cents if isinstance(value, Amount) else value)
    return out


def prize_rows(form: Form) -> list[tuple[Any, ...]]:
    [section] = [s for s in form.sections if s.title == "Prizes actually awarded"]
    assert section.table is not None
    return list(section.table.rows)


def reconciles(got: dict[str, Any]) -> bool:
    """Line 5 (+ 5a) = 6 + 7 + 8 + 9: the round's money, to the cent."""
    return got["5"] + got.get("5a", 0) == got["6"] + got["7"] + got["8"] + got["9"]


def queen_of_hearts() -> Raffle:
    """Three weekly drawings on Saturdays at 8 pm; 500 tickets printed at $1: a 6:1
    consolation (9C), a 15:1 joker, then the queen of hearts on week 3."""
    r = Raffle(
        "queen_of_hearts",
        qoh_config(price=100, tickets_printed=500, first_drawing_at=at(2026, 11, 21, 20)),
    )
    r.method()
    weeks = (
        (3, at(2026, 11, 21, 20), "9C"),
        (4, at(2026, 11, 28, 20), "JK1"),
        (5, at(2026, 12, 5, 20), "QH"),
    )
    for position, (count, drawn, card) in enumerate(weeks, start=1):
        r.sell(count, now=drawn - 3_600_000, occasion=f"night-{position}")
        r.draw(0, now=drawn)
        r.run(RevealCard(now_ms=drawn + 60_000, position=position, card=card))
    return r


def test_a_queen_of_hearts_has_a_statement_per_week_reconciling_to_the_projection() -> None:
    view = view_of(raffles(("qoh", queen_of_hearts())), "qoh")
    forms = [gc7r.build(view, timezone=NEW_YORK, round_number=n) for n in (1, 2, 3)]
    got = [lines(f) for f in forms]
    assert [g["2"] for g in got] == [3, 4, 5] == [view["rounds"][k]["tickets"] for k in "123"]
    assert [g["2a"] for g in got] == [3, 7, 12]
    assert [g["4"] for g in got] == [497, 493, 488]  # printed and not sold by the week's end
    assert [g["5"] for g in got] == [300, 400, 500]
    assert all(reconciles(g) for g in got)
    # Each week brings forward what the last held for the grand prize: the whole pool.
    assert [g["5a"] for g in got] == [0, 300, 700]
    assert [g["9"] for g in got] == [300, 700, 0]
    # 6:1 and 15:1 on the $1 ticket, then 60 % of the $12 pool; the licensee pays the
    # consolations from its share and keeps 40 % of the pool (4620.23(b)(8), (b)(10)-(11)).
    assert [g["6"] for g in got] == [600, 1_500, 720]
    assert [g["8"] for g in got] == [-600, -1_500, 480]
    assert sum(g["6"] + g["7"] for g in got) == view["prizes_paid"]
    assert sum(g["8"] for g in got) == view["profit_kept"]
    assert got[-1]["9"] == view["open"] == 0
    [grand] = prize_rows(forms[2])[:-1]
    assert grand[1] == "grand prize" and "60% of the grand prize pool" in grand[2]
    assert grand[4] == Amount(cents=720)
    assert [f.period.split(", ")[1] for f in forms] == ["week 1", "week 2", "week 3"]
    assert all(("Status", "concluded") in f.header for f in forms)


def test_a_raffle_over_several_weeks_owes_a_statement_30_days_after_each_weeks_occasion() -> None:
    view = view_of(raffles(("qoh", queen_of_hearts())), "qoh")
    due = gc7r.statements_due(view, NEW_YORK)
    assert [(d.round, d.concluded_on, d.due) for d in due] == [
        (1, date(2026, 11, 21), date(2026, 12, 21)),
        (2, date(2026, 11, 28), date(2026, 12, 28)),
        (3, date(2026, 12, 5), date(2027, 1, 4)),
    ]
    assert [gc7r.build(view, timezone=NEW_YORK, round_number=d.round).due for d in due] == [
        d.due for d in due
    ]
    # An occasion from 6 pm to 4 am concludes the next day: its statement is due a day later.
    night = (at(2026, 11, 21, 18), at(2026, 11, 22, 4))
    first = gc7r.statements_due(view, NEW_YORK, [night])[0]
    assert (first.concluded_on, first.due) == (date(2026, 11, 22), date(2026, 12, 22))


def test_a_week_whose_winner_has_not_searched_is_not_concluded() -> None:
    cut = Raffle("queen_of_hearts", qoh_config(price=100, first_drawing_at=at(2026, 11, 21, 20)))
    cut.method()
    cut.sell(2, now=at(2026, 11, 21, 19))
    cut.draw(1, now=at(2026, 11, 21, 20))
    view = view_of(raffles(("q", cut)), "q")
    [due] = gc7r.statements_due(view, NEW_YORK)
    assert not due.concluded
    form = gc7r.build(view, timezone=NEW_YORK)
    assert ("Status", "not concluded: the figures may still change") in form.header
    assert prize_rows(form) == [("", "Total", "", "", Amount(cents=0))]
    assert reconciles(lines(form))


def test_a_standard_raffle_shows_each_prize_at_its_fair_market_value() -> None:
    r = Raffle("standard", standard_config(tickets_printed=300))
    r.method()
    r.sell(280)
    r.draw(0, 0)
    view = view_of(raffles(("parish", r)), "parish")
    form = gc7r.build(view, timezone=NEW_YORK, organization="St. Mary's", address="12 Main St")
    got = lines(form)
    assert (got["1"], got["2"], got["3"], got["4"]) == (300, 280, 500, 20)
    assert "2a" not in got and "5a" not in got  # one round: the raffle itself
    assert got["5"] == 280 * 500 == view["sales"]
    assert (got["6"], got["7"]) == (50_000, 80_000)  # the cash prize; the television's value
    assert got["8"] == 140_000 - 130_000 == view["profit_kept"]
    assert got["9"] == 0 and reconciles(got)
    rows = prize_rows(form)
    assert sorted((row[2], row[3], row[4]) for row in rows[:-1]) == [
        ("Cash", "cash", Amount(cents=50_000)),
        ("Television", "merchandise", Amount(cents=80_000)),
    ]
    assert rows[-1] == ("", "Total", "", "", Amount(cents=130_000))
    assert form.organization == "St. Mary's" and ("Address", "12 Main St") in form.header
    assert ("Games of Chance ID", "GC-ID-77") in form.header


def test_a_standard_raffle_with_several_drawings_is_due_after_its_last() -> None:
    first, second = at(2027, 1, 9, 20), at(2027, 1, 30, 20)
    r = Raffle(
        "standard",
        standard_config(
            first_drawing_at=first,
            drawings=[first, second],
            prizes=[
                {"description": "Hamper", "value": 5_000, "cash": False, "drawing": 1},
                {"description": "Cash", "value": 20_000, "drawing": 2},
            ],
        ),
    )
    r.method()
    r.sell(100, now=at(2027, 1, 2))
    r.draw(0, now=first)
    early = gc7r.statements_due(view_of(raffles(("s", r)), "s"), NEW_YORK)
    assert [(d.concluded, d.due) for d in early] == [(False, date(2027, 2, 8))]
    r.draw(0, now=second)
    view = view_of(raffles(("s", r)), "s")
    [final] = gc7r.statements_due(view, NEW_YORK)
    assert (final.concluded, final.due) == (True, date(2027, 3, 1))
    got = lines(gc7r.build(view, timezone=NEW_YORK))
    assert (got["6"], got["7"], got["8"]) == (20_000, 5_000, 50_000 - 25_000)


def test_a_fifty_fifty_lists_its_book_prices_and_leaves_printed_blank_when_unknown() -> None:
    r = Raffle("fifty_fifty", fifty_fifty_config())
    r.method()
    r.sell(3, amount=500)  # the book of 3
    r.sell(2)
    r.draw(1)
    view = view_of(raffles(("ff", r)), "ff")
    form = gc7r.build(view, timezone=NEW_YORK)
    [tickets] = [s for s in form.sections if s.title == "Tickets"]
    prices = [(x.label, x.value) for x in tickets.lines if x.number == "3"]
    assert prices == [
        ("Price of one ticket", Amount(cents=200)),
        ("Price of a book of 3 tickets", Amount(cents=500)),
    ]
    got = lines(form)
    assert got["1"] is None and got["4"] is None and "tickets_printed" in tickets.note
    assert (got["2"], got["5"], got["6"], got["8"]) == (5, 900, 450, 450)
    assert reconciles(got)


def treasure_chest() -> Raffle:
    """Two occasions a week apart: every key fails on the first (the chest carries over),
    the last key handed out opens the lock on the second."""
    r = Raffle("treasure_chest", tc_config(keys=8, first_drawing_at=at(2026, 12, 1, 21)))
    r.method()
    for occasion, drawn in enumerate((at(2026, 12, 1, 21), at(2026, 12, 8, 21))):
        r.sell(5 + occasion, now=drawn - 3_600_000)
        r.draw(*([0] * len(draw_sizes(r.state))), now=drawn)
        keys = list(r.state.handed)
        for i, key in enumerate(keys):
            opens = occasion == 1 and i == len(keys) - 1
            r.run(TryKey(now_ms=drawn + 60_000, key=key, opened=opens))
    assert r.state.ended
    return r


def test_a_treasure_chest_has_a_statement_per_occasion_with_the_chest_carried() -> None:
    view = view_of(raffles(("tc", treasure_chest())), "tc")
    due = gc7r.statements_due(view, NEW_YORK)
    assert [(d.round, d.due, d.concluded) for d in due] == [
        (1, date(2026, 12, 31), True),
        (2, date(2027, 1, 7), True),
    ]
    one, two = (lines(gc7r.build(view, timezone=NEW_YORK, round_number=n)) for n in (1, 2))
    chest = view["carry_overs"][0]["chest"]
    assert one["9"] == chest == two["5a"] and two["9"] == 0
    assert reconciles(one) and reconciles(two)
    assert one["6"] + two["6"] == view["prizes_paid"]
    assert one["8"] + two["8"] == view["profit_kept"]
    rows = prize_rows(gc7r.build(view, timezone=NEW_YORK, round_number=2))
    assert [row[1] for row in rows[:-1]] == ["primary prize"] * 5 + ["treasure chest"]


def test_the_pdf_and_the_csv_hold_the_figures() -> None:
    view = view_of(raffles(("qoh", queen_of_hearts())), "qoh")
    form = gc7r.build(view, timezone=NEW_YORK, round_number=3)
    text = pdf_text(to_pdf(form))
    for figure in ("GC-7R", "week 3", "488", "5.00", "7.00", "7.20", "4.80", "2027-01-04"):
        assert figure in text, figure
    assert "60% of the grand prize pool" in text and "GC-ID-77" in text
    rows = list(csv.reader(io.StringIO(to_csv(form))))
    assert ["header", "", "due", "2027-01-04"] in rows
    assert {r[2]: r[4] for r in rows if r[0] == "line"}["6"] == "7.20"


def test_the_deadline_is_30_calendar_days_after_the_occasion_4624_1() -> None:
    assert gc7r.due_date(date(2026, 12, 5)) == date(2027, 1, 4)
    assert gc7r.due_date(date(2028, 1, 30)) == date(2028, 2, 29)  # a leap year
    assert gc7r.due_date(date(2027, 1, 30)) == date(2027, 3, 1)
    assert gc7r.due_date(date(2028, 2, 1)) == date(2028, 3, 2)
    # A drawing outside every window concludes on its own day in the organization's zone.
    late = at(2026, 12, 31, 23, 30)
    windows = [(at(2026, 12, 1, 18), at(2026, 12, 2, 4)), (None, None)]
    assert gc7r.occasion_concluded_on(late, NEW_YORK, windows) == date(2026, 12, 31)
    assert gc7r.occasion_concluded_on(late, "UTC") == date(2027, 1, 1)


@pytest.mark.parametrize(("round_number", "code"), [(0, "no_such_round"), (9, "no_such_round")])
def test_a_round_the_raffle_never_had_is_refused(round_number: int, code: str) -> None:
    view = view_of(raffles(("qoh", queen_of_hearts())), "qoh")
    before = copy.deepcopy(view)
    with pytest.raises(RuleError) as e:
        gc7r.build(view, timezone=NEW_YORK, round_number=round_number)
    assert e.value.code == code and view == before


def test_a_round_without_a_drawing_owes_no_statement_yet() -> None:
    r = Raffle("queen_of_hearts", qoh_config(price=100, first_drawing_at=at(2026, 11, 21, 20)))
    r.method()
    r.sell(2, now=at(2026, 11, 21, 19))
    view = view_of(raffles(("q", r)), "q")
    before = copy.deepcopy(view)
    with pytest.raises(RuleError) as e:
        gc7r.build(view, timezone=NEW_YORK)
    assert e.value.code == "not_drawn" and view == before
    assert gc7r.statements_due(view, NEW_YORK) == []


weeks_played = st.lists(
    st.tuples(st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=53)),
    min_size=1,
    max_size=8,
)


@given(weeks_played)
@settings(max_examples=60, deadline=None, derandomize=True)
def test_every_week_of_any_queen_of_hearts_reconciles_to_the_cent(weeks: list[Any]) -> None:
    """Whatever is sold and turned up, each week's line 5 + 5a = 6 + 7 + 8 + 9, the weeks
    add up to the projection's prizes and profit, and the last week holds the pool."""
    r = Raffle("queen_of_hearts", qoh_config(price=100, first_drawing_at=at(2026, 11, 21, 20)))
    r.method()
    for week, (count, pick) in enumerate(weeks):
        drawn = at(2026, 11, 21, 20) + week * 7 * 86_400_000
        r.sell(count, now=drawn - 3_600_000)
        r.draw(0, now=drawn)
        left = [c for c in qoh.DECK if c not in r.state.revealed.values()]
        card = left[pick % len(left)]
        position = next(p for p in range(1, 55) if p not in r.state.revealed)
        r.run(RevealCard(now_ms=drawn + 60_000, position=position, card=card))
        if r.state.ended:
            break
    view = view_of(raffles(("q", r)), "q")
    got = [
        lines(gc7r.build(view, timezone=NEW_YORK, round_number=d.round))
        for d in gc7r.statements_due(view, NEW_YORK)
    ]
    assert all(reconciles(g) for g in got)
    assert sum(g["6"] + g["7"] for g in got) == view["prizes_paid"]
    assert sum(g["8"] for g in got) == view["profit_kept"]
    assert got[-1]["9"] == view["pool"] == view["open"]
    assert got[-1]["2a"] == view["tickets"]
