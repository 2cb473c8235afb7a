"""What readers see of a deal (services/bell_jars/views.py): the flare for players
(4620.19(c)(2), (c)(3), reading BJAR-4), the ledger for staff."""

from __future__ import annotations

from services.bell_jars.state import DealState
from services.bell_jars.views import Lookup, flare_view, shown_to_players, staff_view
from tests.unit.bell_jars.support import combination, in_play, redeem, registered, sell


def lookup_of(*states: DealState) -> Lookup:
    by_id = {s.deal: s for s in states}
    return by_id.get


def test_the_flare_shows_the_printed_facts_and_the_prizes_awarded_only() -> None:
    state = redeem(sell(in_play(), 7), 1, "T-1")
    flare = flare_view(state)
    assert set(flare) == {"deal", "kind", "serial_number", "form_number", "ticket_price", "prizes"}
    assert [p["awarded"] for p in flare["prizes"]] == [0, 1, 0]
    assert all(
        set(p) == {"line", "value", "count", "kind", "description", "awarded"}
        for p in flare["prizes"]
    )
    text = repr(flare)
    assert "sold" not in text and "sales" not in text and "unsold" not in text


def test_players_see_a_flare_once_its_deal_is_in_play() -> None:
    lead, b = combination("a", "b")
    lookup = lookup_of(lead, b)
    assert not shown_to_players(registered(), lookup)
    assert shown_to_players(lead, lookup) and shown_to_players(b, lookup)


def test_the_staff_view_has_the_bank_the_profit_and_the_75_percent_progress() -> None:
    state = redeem(sell(in_play(), 12), 0, "T-1")
    view = staff_view(state, lookup_of(state))
    receptacle = view["receptacle"]
    assert receptacle["bank"] == {"sales": 1200, "cash_prizes": 500, "balance": 700}
    assert receptacle["profit_or_loss"] == 700 - 400
    assert receptacle["unsold"] == 8 and view["prizes_left"] == [0, 2, 1]
    assert receptacle["removal"] == {
        "percent": 75,
        "by_count": [1, 4],
        "by_value": [500, 1000],
        "met": False,
    }


def test_a_combinations_bank_holds_every_deals_cash_prizes() -> None:
    lead, b = combination("a", "b")
    lead = sell(lead, 30)
    b = redeem(b, 0, "B-1", lead=lead)
    lookup = lookup_of(lead, b)
    for state in (lead, b):
        receptacle = staff_view(state, lookup)["receptacle"]
        assert receptacle["bank"] == {"sales": 3000, "cash_prizes": 500, "balance": 2500}
        assert receptacle["cost"] == 800 and receptacle["tickets"] == 40
    assert staff_view(b, lookup)["lead"] == "a" and staff_view(b, lookup)["status"] == "in_play"
