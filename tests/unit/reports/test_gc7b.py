"""The GC-7B (services/reports/gc7b.py): per table and the cage, chips issued and redeemed,
the drop, what was paid, the house result; it reconciles to the cent with the bankroll
projection, and its PDF read back holds the figures."""

from __future__ import annotations

import io
import random
from datetime import date

import pypdf
import pytest

from projections.bankroll import Bankrolls
from projections.cash_control import CashControl
from services.reports.form import Amount, Form, Value, to_pdf
from services.reports.gc7b import (
    UnknownOccasion,
    build_gc7b,
    cash_summary,
    concluded_on,
    reconciliation,
)
from tests.unit.reports.nights import (
    NOV_29_2026_NOON_UTC,
    Entry,
    fold,
    license_recorded,
    two_nights,
)
from tests.unit.reports.support import NEW_YORK, at, pdf_text


def _line(form: Form, number: str) -> Value:
    return next(line.value for sec in form.sections for line in sec.lines if line.number == number)


def _gc7b(bankrolls: Bankrolls, cash: CashControl, occasion: str) -> Form:
    return build_gc7b(
        occasion,
        cash_control=cash,
        bankrolls=bankrolls,
        organization="St. Mary's",
        timezone=NEW_YORK,
    )


@pytest.mark.parametrize("seed", range(5))
def test_it_reconciles_with_the_bankrolls_to_the_cent(seed: int) -> None:
    bankrolls, cash, _e, _s = fold(two_nights(seed))
    for occasion in ("2026-11-29", "2026-12-06"):
        summary = cash_summary(cash, occasion)
        totals = bankrolls.occasions[occasion]
        assert (summary.issued, summary.redeemed) == (totals["issued"], totals["redeemed"])
        assert (summary.drop, summary.paid) == (totals["handle"], totals["paid_out"])
        assert summary.house_result == totals["house_win"]
        form = _gc7b(bankrolls, cash, occasion)
        assert _line(form, "7") == Amount(cents=totals["issued"] - totals["redeemed"])
        assert _line(form, "9") == Amount(cents=totals["house_win"])
        for difference in ("8", "10", "13", "16"):
            assert _line(form, difference) == Amount(cents=0)
    org = bankrolls.organization
    held = reconciliation(cash, bankrolls, "2026-12-06")
    assert held.cage_net_projected == org["issued"] - org["redeemed"] == held.cage_net_on_forms
    assert {t.table for t in held.tables} == set(bankrolls.tables)
    for t in held.tables:
        row = bankrolls.tables[t.table]
        assert (t.drop_projected, t.paid_projected) == (row["handle"], row["paid_out"])
        figures = [x for o in cash.occasions for x in cash_summary(cash, o).tables]
        assert t.drop_on_forms == sum(x.drop for x in figures if x.table == t.table)
        assert t.paid_on_forms == sum(x.paid for x in figures if x.table == t.table)
        assert t.difference == 0
    for table, row in bankrolls.tables.items():
        figures = [
            t for o in cash.occasions for t in cash_summary(cash, o).tables if t.table == table
        ]
        assert sum(t.rounds for t in figures) == row["rounds"]


def test_money_that_moved_before_any_occasion_shows_as_a_difference() -> None:
    """The bankroll projection counts every money event; a GC-7B only its occasion's. Chips
    sold and a bet lost before the log's first ``OccasionStarted`` are on no GC-7B: lines
    13 and 16 show them, to the cent, on every occasion's form."""
    rng = random.Random(7)
    sold, lost = rng.randrange(1_000, 9_000), rng.randrange(1, 40) * 25
    early = NOV_29_2026_NOON_UTC - 3_600_000
    before = [
        ("ChipsIssued", "cage", {"player": "p-0", "amount": sold}, early),
        (
            "BetPlaced",
            "table:roulette-1",
            {"round": 0, "bet_id": "early", "player": "p-0", "bet": {}, "amount": lost},
            early + 1,
        ),
        (
            "Settled",
            "table:roulette-1",
            {
                "round": 0,
                "outcome": {},
                "settlements": [{"bet_id": "early", "player": "p-0", "result": "lost", "paid": 0}],
                "wagered": lost,
                "paid": 0,
            },
            early + 2,
        ),
    ]
    entries = two_nights(7)
    bankrolls, cash, _e, _s = fold([entries[0], *before, *entries[1:]])
    for occasion in ("2026-11-29", "2026-12-06"):
        form = _gc7b(bankrolls, cash, occasion)
        assert _line(form, "8") == _line(form, "10") == Amount(cents=0)  # the occasion agrees
        assert _line(form, "13") == Amount(cents=-sold)
        assert _line(form, "16") == Amount(cents=-lost)
        tables = {t.table: t for t in reconciliation(cash, bankrolls, occasion).tables}
        assert tables["bj-1"].difference == tables["roulette-2"].difference == 0
        roulette = tables["roulette-1"]
        assert roulette.drop_projected - roulette.drop_on_forms == lost
        assert roulette.difference == -lost
    text = pdf_text(to_pdf(_gc7b(bankrolls, cash, "2026-11-29")))
    assert Amount(cents=-sold).text() in text and Amount(cents=-lost).text() in text


def test_it_is_due_7_days_after_its_occasion_and_its_pdf_holds_the_figures() -> None:
    _b, cash, _e, _s = fold(two_nights(2))
    form = _gc7b(_b, cash, "2026-11-29")
    # Within 7 days of the night (NYC DCWP), not with the GC-7 on 2027-01-07.
    assert form.due == date(2026, 12, 6)
    assert "7 days after the occasion concluded" in form.due_rule
    assert "2026-11-29" in form.period
    summary = cash_summary(cash, "2026-11-29")
    text = " ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(to_pdf(form))).pages)
    for cents in (summary.issued, summary.redeemed, summary.cage_net, summary.house_result):
        assert Amount(cents=cents).text() in text
    for t in summary.tables:
        assert t.table in text and Amount(cents=t.house_result).text() in text
    assert "field list was not found" in text


def test_an_occasion_never_started_is_unknown() -> None:
    _b, cash, _e, _s = fold(two_nights(1))
    with pytest.raises(UnknownOccasion):
        cash_summary(cash, "2027-01-02")


def _windowed(
    occasion: str, starts: tuple[int, int, int, int], ends: tuple[int, int, int, int]
) -> Entry:
    data = {
        "occasion": occasion,
        "name": f"Night {occasion}",
        "starts_at": at(*starts),
        "ends_at": at(*ends),
    }
    return ("OccasionStarted", "license", data, at(*starts))


@pytest.mark.parametrize(
    ("starts", "ends", "concluded", "due"),
    [
        # An evening: it concludes the day it began.
        ((2026, 12, 5, 19), (2026, 12, 5, 23), date(2026, 12, 5), date(2026, 12, 12)),
        # Past midnight: it concludes the next day, and is due 7 days after that.
        ((2026, 12, 5, 19), (2026, 12, 6, 1), date(2026, 12, 6), date(2026, 12, 13)),
        # Past midnight into the next license period: the GC-7's date, the earlier one.
        ((2026, 12, 31, 20), (2027, 1, 1, 2), date(2027, 1, 1), date(2027, 1, 7)),
    ],
)
def test_the_deadline_counts_from_the_last_day_of_the_occasions_window(
    starts: tuple[int, int, int, int],
    ends: tuple[int, int, int, int],
    concluded: date,
    due: date,
) -> None:
    bankrolls, cash, _e, _s = fold([license_recorded(), _windowed("night", starts, ends)])
    info = cash.occasions["night"]
    assert concluded_on(info, NEW_YORK) == concluded
    form = _gc7b(bankrolls, cash, "night")
    assert form.due == due
