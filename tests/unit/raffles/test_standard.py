"""Standard raffles and the 50/50 (services/raffles/standard.py), 4620.22."""

from __future__ import annotations

import pytest

from events.raffles import DrawingHeld, PrizeAwarded, ProfitKept, RaffleEnded, TicketSold
from services.aggregates import RuleError
from services.raffles import tickets
from services.raffles.state import CloseSales, HoldDrawing, RecordDrawingMethod, SellTicket
from tests.unit.raffles.support import (
    DAY,
    NOW,
    Raffle,
    common,
    fifty_fifty_config,
    of_type,
    refused,
    standard_config,
)


def test_a_sale_records_serials_price_and_the_ticket_face() -> None:
    """4620.22(a)(1): the ticket (its face by hash, serial, price) is kept with the sale."""
    r = Raffle("standard", standard_config())
    (sold,) = r.sell(3, occasion="night-1")
    assert isinstance(sold, TicketSold)
    assert sold.serials == (1, 2, 3) and sold.amount == 1500 and sold.price == 500
    assert sold.channel == "door" and sold.purchaser is None and sold.occasion == "night-1"
    assert sold.face_hash == r.state.face_hash and len(sold.face_hash) == 64
    (more,) = r.sell(2)
    assert more.serials == (4, 5)


def test_a_serial_sold_twice_is_refused() -> None:
    r = Raffle("standard", standard_config())
    r.sell(1, serial=7)
    assert refused(r, SellTicket(count=1, amount=500, now_ms=NOW, serial=7)) == "serial_taken"
    assert refused(r, SellTicket(count=2, amount=1000, now_ms=NOW, serial=6)) == "serial_taken"


def test_a_price_that_is_not_the_raffles_price_is_refused() -> None:
    """4620.22(b)(10)."""
    r = Raffle("standard", standard_config())
    assert refused(r, SellTicket(count=1, amount=499, now_ms=NOW)) == "wrong_price"


def test_a_sale_more_than_180_days_before_the_last_drawing_is_refused() -> None:
    """4620.22(b)(9): measured from the last drawing of a multi-date raffle."""
    raw = standard_config(
        drawings=[NOW + 30 * DAY, NOW + 200 * DAY],
        prizes=[
            {"description": "A", "value": 100, "drawing": 1},
            {"description": "B", "value": 100, "drawing": 2},
        ],
    )
    r = Raffle("standard", raw)
    assert refused(r, SellTicket(count=1, amount=500, now_ms=NOW)) == "too_early"
    r.sell(1, now=NOW + 20 * DAY)  # 180 days before the last drawing


def test_drawing_before_the_method_is_recorded_is_refused() -> None:
    """4620.22(b)(3): the method is announced before drawing a ticket."""
    r = Raffle("standard", standard_config())
    r.sell(5)
    assert refused(r, HoldDrawing(now_ms=NOW, draws=(0, 0))) == "method_not_recorded"
    r.method("rng")
    assert r.state.method == "rng"


def test_the_method_cannot_change_after_a_drawing() -> None:
    raw = standard_config(
        drawings=[NOW + 30 * DAY, NOW + 40 * DAY],
        prizes=[
            {"description": "A", "value": 100, "drawing": 1},
            {"description": "B", "value": 100, "drawing": 2},
        ],
    )
    r = Raffle("standard", raw)
    r.method("hand")
    r.method("rng")  # changing it before any drawing is allowed
    r.sell(3)
    r.draw(1)
    command = RecordDrawingMethod(method="hand", description="by hand")
    assert refused(r, command) == "method_fixed"


def test_each_ticket_is_equally_likely_index_k_picks_the_kth_ticket() -> None:
    """4620.22(a): a uniform index over the sorted drum is a uniform ticket."""
    for k in range(6):
        r = Raffle("fifty_fifty", fifty_fifty_config())
        r.sell(2, serial=40)
        r.sell(4, serial=3)
        r.method("rng")
        held = of_type(r.draw(k), DrawingHeld)[0]
        assert held.winners[0].serial == [3, 4, 5, 6, 40, 41][k]
        assert held.eligible == 6


def test_a_standard_raffle_draws_its_prizes_in_order_one_per_ticket() -> None:
    r = Raffle("standard", standard_config())
    r.sell(4)
    r.method("rng")
    events = r.draw(1, 1)
    held = of_type(events, DrawingHeld)[0]
    assert [w.serial for w in held.winners] == [2, 3]
    prizes = of_type(events, PrizeAwarded)
    assert [(p.serial, p.amount, p.cash) for p in prizes] == [(2, 80_000, False), (3, 50_000, True)]
    # The licensee keeps the ticket money less the prizes' value (here a loss).
    assert of_type(events, ProfitKept)[0].amount == 2000 - 130_000
    assert of_type(events, RaffleEnded) and r.state.ended
    assert refused(r, SellTicket(count=1, amount=500, now_ms=NOW)) == "raffle_ended"


def test_a_winner_is_out_of_later_drawings_by_hand_too() -> None:
    raw = standard_config(
        drawings=[NOW + 30 * DAY, NOW + 40 * DAY],
        prizes=[
            {"description": "A", "value": 100, "drawing": 1},
            {"description": "B", "value": 100, "drawing": 2},
        ],
    )
    r = Raffle("standard", raw)
    r.method("hand")
    r.sell(3)
    r.run(HoldDrawing(now_ms=NOW, serials=(2,)))
    assert refused(r, HoldDrawing(now_ms=NOW, serials=(2,))) == "ineligible_ticket"
    assert refused(r, HoldDrawing(now_ms=NOW, serials=(9,))) == "ineligible_ticket"
    assert refused(r, HoldDrawing(now_ms=NOW, draws=(0,))) == "wrong_method"
    r.run(HoldDrawing(now_ms=NOW, serials=(3,)))
    assert r.state.ended


def test_selling_after_the_drum_is_closed_is_refused() -> None:
    r = Raffle("standard", standard_config())
    r.sell(1)
    r.run(CloseSales(now_ms=NOW))
    assert refused(r, SellTicket(count=1, amount=500, now_ms=NOW)) == "sales_closed"
    assert refused(r, CloseSales(now_ms=NOW)) == "sales_closed"


def test_a_prize_over_the_single_prize_limit_refuses_the_setup() -> None:
    """4620.22(b)(1), GML 189(5)(b)."""
    raw = standard_config(
        prizes=[{"description": "Car", "value": tickets.DEFAULT_MAX_SINGLE_PRIZE + 1}]
    )
    with pytest.raises(RuleError) as e:
        Raffle("standard", raw)
    assert e.value.code == "prize_over_limit"


def test_prizes_over_the_series_limit_refuse_the_setup() -> None:
    """GML 189(6)(b): the raffle's prizes together."""
    raw = standard_config(
        max_series_prizes=1000,
        prizes=[{"description": "A", "value": 600}, {"description": "B", "value": 600}],
    )
    with pytest.raises(RuleError) as e:
        Raffle("standard", raw)
    assert e.value.code == "prize_over_limit"


def test_fifty_fifty_pays_half_rounded_down_and_keeps_the_rest() -> None:
    r = Raffle("fifty_fifty", fifty_fifty_config())
    r.sell(1)  # 200
    r.sell(3, amount=500)  # a bundle
    r.sell(1)
    r.method("rng")
    events = r.draw(0)
    (prize,) = of_type(events, PrizeAwarded)
    (profit,) = of_type(events, ProfitKept)
    assert r.state.total_sales == 900
    assert prize.amount == 450 and profit.amount == 450 and prize.prize == "fifty_fifty"
    odd = Raffle("fifty_fifty", common(price=101, prize_percent=50))
    odd.sell(1)
    odd.method("rng")
    events = odd.draw(0)
    assert of_type(events, PrizeAwarded)[0].amount == 50
    assert of_type(events, ProfitKept)[0].amount == 51


def test_a_fifty_fifty_sale_that_would_push_the_prize_over_its_limit_is_refused() -> None:
    r = Raffle("fifty_fifty", common(price=1000, max_single_prize=1500))
    r.sell(3)  # prize 1500
    assert refused(r, SellTicket(count=1, amount=1000, now_ms=NOW)) == "prize_over_limit"


def test_no_drawing_without_enough_tickets() -> None:
    r = Raffle("standard", standard_config())
    r.method("rng")
    r.sell(1)
    assert refused(r, HoldDrawing(now_ms=NOW, draws=(0, 0))) == "not_enough_tickets"
