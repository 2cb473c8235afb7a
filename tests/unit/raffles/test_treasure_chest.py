"""The Treasure Chest raffle (services/raffles/treasure_chest.py), 4620.24."""

from __future__ import annotations

import pytest

from events.raffles import (
    AnnouncementRaised,
    ChestCarriedOver,
    DrawingHeld,
    KeyTried,
    PrizeAwarded,
    ProceedsAllocated,
    ProfitKept,
    RaffleEnded,
)
from services.aggregates import RuleError
from services.raffles import treasure_chest as tc
from services.raffles.rules import draw_sizes
from services.raffles.state import (
    CloseSales,
    HoldDrawing,
    RaiseDueAnnouncements,
    SellTicket,
    TryKey,
)
from tests.unit.raffles.support import (
    DAY,
    NOW,
    Raffle,
    of_type,
    refused,
    standard_config,
    tc_config,
)


def occasion(r: Raffle, sold: int, now: int = NOW) -> DrawingHeld:
    """Sell ``sold`` tickets and hold the occasion's drawing (first tickets, first keys)."""
    for _ in range(sold):
        r.sell(1, now=now)
    sizes = draw_sizes(r.state)
    held: DrawingHeld = of_type(r.draw(*([0] * len(sizes)), now=now), DrawingHeld)[0]
    return held


def fail_all(r: Raffle, held: DrawingHeld, now: int = NOW) -> list[object]:
    events: list[object] = []
    for w in held.winners:
        assert w.key is not None
        events += r.run(TryKey(now_ms=now, key=w.key, opened=False))
    return events


def test_the_split_of_b_2_to_4_adds_up_to_the_cent() -> None:
    """4620.24(b)(2) designated profit, (b)(3) 10 % of the rest in five parts, (b)(4) the
    rest into the chest."""
    config = tc.parse_config(tc_config())
    profit, part, chest = tc.split(config, 100_000, carried=False)
    assert (profit, part, chest) == (33_330, 1_333, 60_005)
    assert profit + 5 * part + chest == 100_000


def test_after_a_carry_over_60_percent_goes_into_the_chest() -> None:
    """4620.24(b)(10): 60 % of the next occasion's proceeds is added (docs/RULES.md)."""
    config = tc.parse_config(tc_config())
    profit, part, chest = tc.split(config, 100_000, carried=True)
    assert chest == 60_000 and part == 1_333
    assert profit == 100_000 - 5 * 1_333 - 60_000
    for sales in (0, 1, 7, 99, 12_345, 10**9 + 3):
        for carried in (False, True):
            p, q, c = tc.split(config, sales, carried)
            assert p + 5 * q + c == sales and min(p, q, c) >= 0


def test_an_occasion_draws_five_tickets_each_with_a_key_and_a_fifth_of_the_primary_pool() -> None:
    """4620.24(b)(6)-(7)."""
    r = Raffle("treasure_chest", tc_config())
    r.method()
    for _ in range(10):
        r.sell(1)
    events = r.draw(9, 0, 0, 0, 0, 11, 0, 0, 0, 0)
    (alloc,) = of_type(events, ProceedsAllocated)
    assert (alloc.sales, alloc.profit, alloc.prizes, alloc.pool) == (1000, 333, 65, 602)
    assert of_type(events, ProfitKept)[0].amount == 333
    (held,) = of_type(events, DrawingHeld)
    assert [w.serial for w in held.winners] == [10, 1, 2, 3, 4]
    assert [w.key for w in held.winners] == [12, 1, 2, 3, 4]
    prizes = of_type(events, PrizeAwarded)
    assert [(p.serial, p.amount, p.prize) for p in prizes] == [
        (s, 13, "primary") for s in (10, 1, 2, 3, 4)
    ]
    assert r.state.pool == 602
    assert refused(r, SellTicket(count=1, amount=100, now_ms=NOW)) == "sales_closed"


def test_no_key_opens_the_chest_carries_over_and_those_keys_leave_play() -> None:
    """4620.24(b)(8)-(10)."""
    r = Raffle("treasure_chest", tc_config())
    r.method()
    held = occasion(r, 10)
    events = fail_all(r, held)
    (carried,) = of_type(events, ChestCarriedOver)
    assert carried.chest == 602 and carried.keys_removed == (1, 2, 3, 4, 5)
    assert carried.keys_left == 7 and r.state.keys_in_play == frozenset(range(6, 13))
    assert r.state.round == 2 and r.state.sales_open
    # The next occasion adds 60 % of its sales to the chest.
    held = occasion(r, 10)
    assert r.state.pool == 602 + 600
    assert [w.key for w in held.winners] == [6, 7, 8, 9, 10]
    assert [w.serial for w in held.winners] == [11, 12, 13, 14, 15]


def test_the_key_that_opens_wins_the_chest_and_ends_the_raffle() -> None:
    """4620.24(b)(7), (b)(11)."""
    r = Raffle("treasure_chest", tc_config())
    r.method()
    held = occasion(r, 10)
    key = held.winners[2].key
    assert key is not None
    events = r.run(TryKey(now_ms=NOW, key=key, opened=True))
    assert of_type(events, KeyTried)[0].opened
    (prize,) = of_type(events, PrizeAwarded)
    assert prize.prize == "secondary" and prize.amount == 602 and prize.serial == 3
    assert of_type(events, RaffleEnded) and r.state.ended and r.state.pool == 0


def test_a_key_that_is_not_in_play_is_refused() -> None:
    r = Raffle("treasure_chest", tc_config())
    r.method()
    held = occasion(r, 10)
    assert refused(r, TryKey(now_ms=NOW, key=11, opened=False)) == "key_not_in_play"
    key = held.winners[0].key
    assert key is not None
    r.run(TryKey(now_ms=NOW, key=key, opened=False))
    assert refused(r, TryKey(now_ms=NOW, key=key, opened=False)) == "key_not_in_play"
    assert refused(r, HoldDrawing(now_ms=NOW, draws=(0,) * 10)) == "keys_pending"


def test_the_last_key_in_play_must_open_the_lock() -> None:
    """4620.24(a): exactly one unmarked key opens the lock."""
    r = Raffle("treasure_chest", tc_config(keys=6))
    r.method()
    fail_all(r, occasion(r, 5))
    held = occasion(r, 5)
    assert [w.key for w in held.winners] == [6, None, None, None, None]
    assert refused(r, TryKey(now_ms=NOW, key=6, opened=False)) == "lock_must_open"
    r.run(TryKey(now_ms=NOW, key=6, opened=True))
    assert r.state.ended


def test_five_tickets_are_needed_for_a_drawing() -> None:
    r = Raffle("treasure_chest", tc_config())
    r.method()
    for _ in range(4):
        r.sell(1)
    assert draw_sizes(r.state) == ()
    assert refused(r, HoldDrawing(now_ms=NOW, draws=(0,) * 10)) == "not_enough_tickets"


def test_hand_drawn_keys_must_be_in_play() -> None:
    r = Raffle("treasure_chest", tc_config())
    r.method("hand")
    for _ in range(5):
        r.sell(1)
    serials = (1, 2, 3, 4, 5)
    assert refused(r, HoldDrawing(now_ms=NOW, serials=serials, keys=(1, 2, 3, 4, 13))) == (
        "key_not_in_play"
    )
    assert refused(r, HoldDrawing(now_ms=NOW, serials=serials, keys=(1, 1, 3, 4, 5))) == (
        "bad_request"
    )
    r.run(HoldDrawing(now_ms=NOW, serials=serials, keys=(5, 4, 3, 2, 1)))
    assert dict(r.state.handed) == {5: 1, 4: 2, 3: 3, 2: 4, 1: 5}


def test_the_170_day_announcement_is_raised_by_the_raffle_itself() -> None:
    """4620.24(b)(12): announced during the occasion on or about day 170 of sales; the next
    occasion draws the remaining tickets until the chest is won."""
    r = Raffle("treasure_chest", tc_config(keys=20))
    r.method()
    fail_all(r, occasion(r, 5))
    day_169 = NOW + 169 * DAY
    for _ in range(5):
        assert not of_type(r.sell(1, now=day_169), AnnouncementRaised)
    day_170 = NOW + 170 * DAY
    (announced,) = of_type(r.draw(*([0] * 10), now=day_170), AnnouncementRaised)
    assert announced.round == 2 and r.state.announced_round == 2
    fail_all(r, of_type(r.log, DrawingHeld)[-1], now=day_170)
    assert r.state.round == 3
    # The final occasion: when its five keys fail, the drawing goes on in the same occasion.
    held = occasion(r, 6, now=day_170 + 7 * DAY)
    events = fail_all(r, held, now=day_170 + 7 * DAY)
    assert not of_type(events, ChestCarriedOver) and r.state.round == 3
    assert draw_sizes(r.state)[:1] == (1,)  # the one ticket of the occasion not drawn yet
    more = of_type(r.draw(0, 0, now=day_170 + 7 * DAY), DrawingHeld)[0]
    assert [w.serial for w in more.winners] == [16]
    assert not of_type(r.log[-1:], PrizeAwarded)  # no second primary prize


def test_the_server_clock_raises_the_announcement_when_no_one_touches_the_raffle() -> None:
    """4620.24(b)(12) by itself: the hourly look-in raises it once, on day 170, not before."""
    r = Raffle("treasure_chest", tc_config(keys=20))
    r.method()
    fail_all(r, occasion(r, 5))
    assert r.run(RaiseDueAnnouncements(now_ms=NOW + 169 * DAY)) == []
    (announced,) = r.run(RaiseDueAnnouncements(now_ms=NOW + 170 * DAY))
    assert isinstance(announced, AnnouncementRaised) and r.state.announced_round == 2
    assert r.run(RaiseDueAnnouncements(now_ms=NOW + 171 * DAY)) == []  # once


def test_the_server_clock_raises_nothing_at_other_raffles() -> None:
    r = Raffle("standard", standard_config())
    r.method()
    r.sell(3)
    assert r.run(RaiseDueAnnouncements(now_ms=NOW + 400 * DAY)) == []


def test_profit_percentage_is_basis_points_within_100_percent() -> None:
    with pytest.raises(RuleError) as e:
        Raffle("treasure_chest", tc_config(profit_bp=10_001))
    assert e.value.code == "invalid_config"
    with pytest.raises(RuleError) as e:
        Raffle("treasure_chest", tc_config(keys=4))
    assert e.value.code == "invalid_config"


def test_a_sale_that_would_push_the_chest_over_its_limit_is_refused() -> None:
    r = Raffle("treasure_chest", tc_config(price=1000, max_single_prize=1800))
    r.sell(2)
    # A third ticket would fill the chest with 3000 - 999 - 5 * 40 = 1801.
    assert tc.split(r.state.config, 3000, False)[2] == 1801
    assert refused(r, SellTicket(count=1, amount=1000, now_ms=NOW)) == "prize_over_limit"


def test_the_drum_may_close_before_the_drawing_and_one_drawing_per_occasion() -> None:
    r = Raffle("treasure_chest", tc_config())
    r.method("hand")
    for _ in range(5):
        r.sell(1)
    r.run(CloseSales(now_ms=NOW))
    r.run(HoldDrawing(now_ms=NOW, serials=(1, 2, 3, 4, 5), keys=(1, 2, 3, 4, 5)))
    for key in (1, 2, 3, 4):
        r.run(TryKey(now_ms=NOW, key=key, opened=False))
    assert refused(r, HoldDrawing(now_ms=NOW, serials=(1,), keys=(6,))) == "keys_pending"
    r.run(TryKey(now_ms=NOW, key=5, opened=False))
    assert r.state.round == 2 and not r.state.drawn_in_round
