"""Merchandise wheels at the table (services/games/merchandise.py through the table rules).

4620.10: wagers in money, prizes only merchandise; the control sheet's aggregate never passes
the limit of GML 189(6)(a)(1) and the wheel closes when it reaches it.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events.base import Event
from events.merchandise import MerchandiseAwarded, MerchandiseStocked, PrizeLimitReached
from events.tables import Settled, TableOpened
from services.aggregates import RuleError
from services.games.merchandise import AddStock
from services.games.single_outcome import DrawOutcome, RecordOutcome
from services.tables.rules import (
    CallNoMoreBets,
    CancelBet,
    CloseTable,
    OpenRound,
    OpenTable,
    PlaceBet,
    TableState,
    decide,
    fold,
)

# Sections 0..5: number 1 wins a mug (twice on the wheel), 2 a bear, 3 a bike, 4 nothing.
SECTIONS: list[dict[str, Any]] = [
    {"shows": ["1"], "prize": "mug"},
    {"shows": ["2"], "prize": "bear"},
    {"shows": ["3"], "prize": "bike"},
    {"shows": ["4"]},
    {"shows": ["1"], "prize": "mug"},
    {"shows": ["2"], "prize": "bear"},
]
SECTION_OF = {"1": 0, "2": 1, "3": 2, "4": 3}


def item(name: str, prize: str, value: int, donated: bool = False) -> dict[str, Any]:
    return {"item": name, "prize": prize, "value": value, "donated": donated}


def options(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "sections": SECTIONS,
        "max_bet": 200,
        "aggregate_prize_limit": 10_000,
        "inventory": [
            item("mug-1", "mug", 500),
            item("mug-2", "mug", 700),
            item("bear-1", "bear", 1_500, donated=True),
            item("bike-1", "bike", 9_000),
        ],
    }
    base.update(overrides)
    return base


def opened(mode: str = "dealer", **overrides: Any) -> TableState:
    state = TableState(table="prize-wheel")
    command = OpenTable(game="merchandise_wheel", config=options(**overrides), outcome_mode=mode)  # type: ignore[arg-type]
    return fold(state, decide(state, command))


def run(state: TableState, *commands: object) -> tuple[TableState, list[Event]]:
    events: list[Event] = []
    for command in commands:
        new = decide(state, command)  # type: ignore[arg-type]
        events += new
        state = fold(state, new)
    return state, events


def refused(state: TableState, command: object) -> str:
    with pytest.raises(RuleError) as info:
        decide(state, command)  # type: ignore[arg-type]
    return info.value.code


def bet(space: str, player: str = "p-1", amount: int = 100) -> PlaceBet:
    return PlaceBet(player=player, bet={"space": space}, amount=amount)


def spin(section: int) -> RecordOutcome:
    return RecordOutcome(outcome={"section": section})


def test_opening_records_the_wheel_and_its_opening_inventory_4620_10_e() -> None:
    state = TableState(table="prize-wheel")
    events = decide(
        state, OpenTable(game="merchandise_wheel", config=options(), outcome_mode="dealer")
    )
    assert [type(e) for e in events] == [TableOpened, MerchandiseStocked]
    stocked = events[1]
    assert isinstance(stocked, MerchandiseStocked) and stocked.source == "opening"
    assert [(i.item, i.prize, i.value, i.donated) for i in stocked.items] == [
        ("mug-1", "mug", 500, False),
        ("mug-2", "mug", 700, False),
        ("bear-1", "bear", 1_500, True),
        ("bike-1", "bike", 9_000, False),
    ]
    shelf = fold(state, events).play.shelf
    assert shelf is not None and shelf.aggregate == 0 and shelf.limit == 10_000


def test_a_winner_is_handed_the_oldest_item_of_its_section_class_and_no_cash() -> None:
    state, _ = run(opened(), OpenRound(), bet("1", "p-1"), bet("2", "p-2"), bet("1", "p-3"))
    state, events = run(state, CallNoMoreBets(), spin(4))  # a mug section
    settled = next(e for e in events if isinstance(e, Settled))
    assert settled.paid == 0 and all(s.paid == 0 for s in settled.settlements)  # 4620.10(d)
    assert [s.result for s in settled.settlements] == ["won", "lost", "won"]
    awards = [e for e in events if isinstance(e, MerchandiseAwarded)]
    assert [(a.player, a.item, a.value, a.aggregate) for a in awards] == [
        ("p-1", "mug-1", 500, 500),
        ("p-3", "mug-2", 700, 1_200),
    ]
    assert state.play.shelf is not None and state.play.shelf.aggregate == 1_200
    assert "mug" not in state.play.shelf.by_prize


def test_a_section_that_names_no_prize_awards_nothing() -> None:
    state, _ = run(opened(), OpenRound(), bet("4"), CallNoMoreBets())
    _, events = run(state, spin(SECTION_OF["4"]))
    assert not [e for e in events if isinstance(e, MerchandiseAwarded)]


def test_a_bet_that_could_win_more_items_than_the_shelf_holds_is_refused() -> None:
    state, _ = run(opened(), OpenRound(), bet("3", "p-1"))  # one bike on the shelf
    assert refused(state, bet("3", "p-2")) == "out_of_stock"
    assert refused(state, bet("3", "p-3", amount=1)) == "out_of_stock"  # whatever the stake


def test_a_bet_that_could_pass_the_aggregate_limit_is_refused_gml_189_6_a_1() -> None:
    state = opened(aggregate_prize_limit=9_000 + 600)
    state, _ = run(state, OpenRound(), bet("3"))  # the bike fits: 9,000 <= 9,600
    state, _ = run(state, CallNoMoreBets(), spin(SECTION_OF["3"]))
    assert state.play.shelf is not None and state.play.shelf.aggregate == 9_000
    state, _ = run(state, OpenRound(), bet("1", "p-1"))  # the 500 mug fits in 600
    assert refused(state, bet("1", "p-2")) == "prize_limit"  # two mugs: 1,200
    assert refused(state, bet("2", "p-2")) == "prize_limit"  # the 1,500 bear


def test_cancelling_a_bet_frees_its_claim_on_the_shelf() -> None:
    state, events = run(opened(), OpenRound(), bet("3", "p-1"))
    bet_id = events[-1].bet_id  # type: ignore[attr-defined]
    state, _ = run(state, CancelBet(bet_id=bet_id))
    state, _ = run(state, bet("3", "p-2"))
    assert [b.player for b in state.bets.values()] == ["p-2"]


def test_a_member_in_charge_restocks_and_items_join_the_back_of_their_class() -> None:
    state, events = run(opened(), AddStock(items=[item("mug-3", "mug", 450)]))
    [stocked] = events
    assert isinstance(stocked, MerchandiseStocked) and stocked.source == "restock"
    assert state.play.shelf is not None
    assert [i.item for i in state.play.shelf.by_prize["mug"]] == ["mug-1", "mug-2", "mug-3"]


@pytest.mark.parametrize(
    ("items", "code"),
    [
        ([item("mug-1", "mug", 500)], "duplicate_item"),
        ([item("x", "mug", 1), item("x", "mug", 1)], "duplicate_item"),
        ([item("tv", "bike", 40_001)], "prize_over_limit"),
        ([item("tv", "sofa", 100)], "invalid_stock"),
        ([], "bad_request"),
        ("mug", "bad_request"),
    ],
)
def test_a_restock_that_does_not_validate_changes_nothing(items: Any, code: str) -> None:
    assert refused(opened(), AddStock(items=items)) == code


def test_restocking_a_cash_table_is_the_wrong_game() -> None:
    state = TableState(table="roulette-1")
    state = fold(state, decide(state, OpenTable(game="roulette", config={}, outcome_mode="dealer")))
    assert refused(state, AddStock(items=[item("mug-9", "mug", 100)])) == "wrong_game"


def test_merchandise_is_never_wagered_4620_10_c() -> None:
    state, _ = run(opened(), OpenRound())
    command = PlaceBet(player="p-1", bet={"space": "1", "item": "mug-1"}, amount=100)
    assert refused(state, command) == "merchandise_wager"


def test_the_wheel_closes_when_the_aggregate_reaches_the_limit_4620_10_e() -> None:
    state = opened(
        aggregate_prize_limit=1_200,
        inventory=[item("mug-1", "mug", 500), item("mug-2", "mug", 700)],
    )
    state, _ = run(state, OpenRound(), bet("1", "p-1"), bet("1", "p-2"), CallNoMoreBets())
    state, events = run(state, spin(0))
    assert isinstance(events[-1], PrizeLimitReached)
    assert events[-1].aggregate == 1_200 and events[-1].limit == 1_200
    assert state.closed
    for command in (OpenRound(), AddStock(items=[item("m", "mug", 1)]), CloseTable(reason="x")):
        assert refused(state, command) == "table_closed"


def test_the_wheel_closes_when_nothing_left_on_the_shelf_fits_under_the_limit() -> None:
    state = opened(aggregate_prize_limit=9_600)
    state, _ = run(state, OpenRound(), bet("3"), CallNoMoreBets())
    state, events = run(state, spin(SECTION_OF["3"]))  # 9,000 awarded; 600 left
    # mugs at 500 and 700 remain: the 500 mug still fits, so the wheel stays open
    assert not state.closed
    state, _ = run(state, OpenRound(), bet("1"), CallNoMoreBets())
    state, events = run(state, spin(0))  # the 500 mug: 9,500; 100 left, cheapest is 700
    assert isinstance(events[-1], PrizeLimitReached) and state.closed


def test_rng_mode_draws_a_section_and_awards_from_it() -> None:
    state, _ = run(opened("rng"), OpenRound(), bet("2"), CallNoMoreBets())
    _, events = run(state, DrawOutcome(draw=(SECTION_OF["2"],)))
    awards = [e for e in events if isinstance(e, MerchandiseAwarded)]
    assert [a.item for a in awards] == ["bear-1"] and awards[0].donated


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), limit=st.integers(500, 20_000))
def test_money_and_merchandise_are_conserved_and_the_limit_never_passed(
    seed: int, limit: int
) -> None:
    """Many rounds, many players betting every space at once, restocks between rounds:
    every wager stays with the house (no cash prizes), every item stocked is either awarded
    once or still on the shelf, and the aggregate never passes the limit."""
    rng = random.Random(seed)
    state = opened(aggregate_prize_limit=limit)
    stocked_value = sum(i["value"] for i in options()["inventory"])
    wagered = paid = awarded_value = 0
    awarded_items: Counter[str] = Counter()
    serial = 0
    for _ in range(12):
        if state.closed:
            break
        restock = []
        for _ in range(rng.randrange(4)):
            serial += 1
            restock.append(
                item(f"r-{serial}", rng.choice(["mug", "bear", "bike"]), rng.randrange(1, 3_000))
            )
        if restock:
            state, _ = run(state, AddStock(items=restock))
            stocked_value += sum(i["value"] for i in restock)
        state, _ = run(state, OpenRound())
        for n in range(rng.randrange(30)):
            try:
                state, _ = run(state, bet(rng.choice("1234"), f"p-{n % 7}", rng.randrange(1, 201)))
            except RuleError as e:
                assert e.code in ("out_of_stock", "prize_limit")
        state, events = run(state, CallNoMoreBets(), spin(rng.randrange(len(SECTIONS))))
        for e in events:
            if isinstance(e, Settled):
                wagered += e.wagered
                paid += e.paid
            if isinstance(e, MerchandiseAwarded):
                awarded_items[e.item] += 1
                awarded_value += e.value
                assert e.aggregate <= limit
        shelf = state.play.shelf
        assert shelf is not None
        assert shelf.aggregate == awarded_value <= limit
        assert stocked_value == awarded_value + sum(i.value for i in shelf.items())
    assert paid == 0
    assert all(count == 1 for count in awarded_items.values())


def test_the_wheel_closes_when_no_item_next_in_line_fits_though_a_later_one_would() -> None:
    """Items go oldest first: a cheap mug behind a dear one that no longer fits can never be
    handed out, so the wheel can honour no win and closes (docs/RULES.md 12d)."""
    state = opened(
        sections=[{"shows": ["1"], "prize": "mug"}, {"shows": ["2"]}],
        aggregate_prize_limit=900,
        inventory=[item("a", "mug", 500), item("b", "mug", 500), item("c", "mug", 300)],
    )
    state, _ = run(state, OpenRound(), bet("1"), CallNoMoreBets())
    state, events = run(state, spin(0))  # a: 500 awarded, 400 left; next in line b is 500
    assert isinstance(events[-1], PrizeLimitReached) and state.closed
