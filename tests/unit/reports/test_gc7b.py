"""The GC-7B (services/reports/gc7b.py): per table and the cage, chips issued and redeemed,
the drop, what was paid, the house result; it reconciles to the cent with the bankroll
projection, and its PDF read back holds the figures."""

from __future__ import annotations

import io
import random
from datetime import date

import pypdf
import pytest

from services.reports.form import Amount, to_pdf
from services.reports.gc7b import UnknownOccasion, build_gc7b, cash_summary, concluded_on
from tests.unit.reports.nights import Entry, fold, license_recorded, two_nights
from tests.unit.reports.support import NEW_YORK, at


@pytest.mark.parametrize("seed", range(5))
def test_it_reconciles_with_the_bankrolls_to_the_cent(seed: int) -> None:
    bankrolls, cash, _e, _s = fold(two_nights(seed))
    for occasion in ("2026-11-29", "2026-12-06"):
        summary = cash_summary(cash, occasion)
        totals = bankrolls.occasions[occasion]
        assert (summary.issued, summary.redeemed) == (totals["issued"], totals["redeemed"])
        assert summary.house_result == totals["house_win"]
        assert summary.difference == 0
    for table, row in bankrolls.tables.items():
        figures = [
            t for o in cash.occasions for t in cash_summary(cash, o).tables if t.table == table
        ]
        assert sum(t.drop for t in figures) == row["handle"]
        assert sum(t.paid for t in figures) == row["paid_out"]
        assert sum(t.house_result for t in figures) == row["house_win"]
        assert sum(t.rounds for t in figures) == row["rounds"]


def test_a_chip_the_tables_do_not_account_for_shows_as_a_difference() -> None:
    """The reconciliation is a check: the cage's cash, the tables and the players' chips are
    summed apart, so a settlement a table's figures miss leaves a difference."""
    entries = two_nights(7)
    rng = random.Random(7)
    i = next(i for i, e in enumerate(entries) if e[0] == "Settled" and e[2]["paid"])
    _b, cash, _e, _s = fold(entries)
    summary = cash_summary(cash, "2026-11-29")
    assert summary.difference == 0
    lost = rng.randrange(1, 100)
    cash.occasion_bankrolls("2026-11-29").tables[entries[i][1].removeprefix("table:")][
        "paid_out"
    ] -= lost
    # The table's house result grows by what it missed: the cage's cash falls short of it.
    assert cash_summary(cash, "2026-11-29").difference == -lost


def test_it_is_due_7_days_after_its_occasion_and_its_pdf_holds_the_figures() -> None:
    _b, cash, _e, _s = fold(two_nights(2))
    form = build_gc7b(
        "2026-11-29", cash_control=cash, organization="St. Mary's", timezone="America/New_York"
    )
    # Within 7 days of the night (NYC DCWP), not with the GC-7 on 2027-01-07.
    assert form.due == date(2026, 12, 6)
    assert "7 days after the occasion concluded" in form.due_rule
    assert "2026-11-29" in form.period
    summary = cash_summary(cash, "2026-11-29")
    text = " ".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(to_pdf(form))).pages)
    for cents in (summary.issued, summary.redeemed, summary.cage_net, summary.held_by_players):
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
    _b, cash, _e, _s = fold([license_recorded(), _windowed("night", starts, ends)])
    info = cash.occasions["night"]
    assert concluded_on(info, NEW_YORK) == concluded
    form = build_gc7b("night", cash_control=cash, organization="St. Mary's", timezone=NEW_YORK)
    assert form.due == due
