"""The cash control by occasion (projections/cash_control.py): split by occasion, its tables
and cage are the bankroll projection's to the cent; it round-trips through its snapshot."""

from __future__ import annotations

import pytest

from projections.cash_control import CashControl
from tests.unit.reports.nights import fold, two_nights

FIELDS = ("handle", "paid_out", "house_win", "rounds", "bets")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_summed_over_the_occasions_it_is_the_bankrolls(seed: int) -> None:
    bankrolls, cash, _expenses, _sheets = fold(two_nights(seed))
    assert list(cash.occasions) == ["2026-11-29", "2026-12-06"]
    for table, row in bankrolls.tables.items():
        for f in FIELDS:
            split = sum(
                cash.occasion_bankrolls(o).tables.get(table, {}).get(f, 0) for o in cash.occasions
            )
            assert split == row[f], (table, f)
    for occasion, totals in bankrolls.occasions.items():
        own = cash.occasion_bankrolls(occasion).organization
        assert {k: own[k] for k in totals} == totals


def test_the_calendar_knows_each_occasions_license_period_and_each_tables_game() -> None:
    _b, cash, _e, _s = fold(two_nights(1))
    assert cash.of_period("2026-11-01_2026-12-31") == ["2026-11-29", "2026-12-06"]
    assert cash.of_period("2027-01-01_2027-02-28") == []
    assert cash.games == {"roulette-1": "roulette", "roulette-2": "roulette", "bj-1": "black_jack"}
    assert cash.occasions["2026-11-29"]["license_number"] == "GC-2026-0042"


def test_it_round_trips_through_its_snapshot() -> None:
    _b, cash, _e, _s = fold(two_nights(4))
    again = CashControl()
    again.restore(cash.snapshot())
    assert again.snapshot() == cash.snapshot()
