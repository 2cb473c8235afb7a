"""events/money.py: which event moves whose balance, read the same way from a typed event
(the balance guard) and from stored data (the projections)."""

from __future__ import annotations

from events.base import to_data
from events.money import MONEY_EVENTS, balance_moves, data_moves, money_moves
from events.tables import BetSettlement, PartSettled, WagerAdded
from tests.unit.test_events import HAND_WRITTEN


def test_stored_data_moves_money_as_the_typed_event_does() -> None:
    samples = [e for e in HAND_WRITTEN if e.NAME in MONEY_EVENTS]
    assert {e.NAME for e in samples} == MONEY_EVENTS  # every money event has a sample
    for event in samples:
        assert data_moves(event.NAME, to_data(event)) == money_moves(event), event


def test_an_added_wager_debits_and_a_part_settled_pays_per_player() -> None:
    added = WagerAdded(round=1, bet_id="b", wager_id="b:d", player="p", amount=500, kind="double")
    part = PartSettled(
        round=1,
        part="hand:1.0",
        settlements=(
            BetSettlement("b", "p", 500, "won", 1000),
            BetSettlement("b:d", "p", 500, "won", 1000),
            BetSettlement("c", "q", 200, "lost", 0),
        ),
        wagered=1200,
        paid=2000,
    )
    assert balance_moves([added, part]) == [("p", -500), ("p", 2000)]
    assert [m.kind for m in money_moves(added) + money_moves(part)] == ["wagered", "paid"]
