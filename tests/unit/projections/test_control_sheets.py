"""The control-sheet projection (projections/control_sheets.py), 4620.10(e): folded from the
events the table rules emit, it agrees with the wheel's own shelf, conserves merchandise,
and a snapshot restores to the same sheets."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from events.base import Event, to_data
from events.codec import encode
from projections.control_sheets import ControlSheets
from services.aggregates import RuleError
from services.games.merchandise import AddStock
from services.games.single_outcome import RecordOutcome
from services.tables.rules import (
    CallNoMoreBets,
    CloseTable,
    OpenRound,
    OpenTable,
    PlaceBet,
    TableState,
    decide,
    fold,
)

SECTIONS = [
    {"shows": ["1"], "prize": "mug"},
    {"shows": ["2"], "prize": "bear"},
    {"shows": ["3"]},
]


def open_wheel(table: str, limit: int) -> tuple[TableState, list[Event]]:
    config = {
        "sections": SECTIONS,
        "aggregate_prize_limit": limit,
        "inventory": [
            {"item": f"{table}-mug-1", "prize": "mug", "value": 300},
            {"item": f"{table}-bear-1", "prize": "bear", "value": 900, "donated": True},
        ],
    }
    state = TableState(table=table)
    events = decide(
        state, OpenTable(game="merchandise_wheel", config=config, outcome_mode="dealer")
    )
    return fold(state, events), events


def feed(sheets: ControlSheets, table: str, events: list[Event], ts: int) -> None:
    for n, event in enumerate(events):
        sheets.apply(type(event).NAME, f"table:{table}", to_data(event), ts + n)


def play(
    state: TableState, rng: random.Random, serial: list[int]
) -> tuple[TableState, list[Event]]:
    """One round with a restock, random bets (refusals skipped) and a random section."""
    events: list[Event] = []
    serial[0] += 1
    commands: list[Any] = [
        AddStock(
            items=[
                {
                    "item": f"r-{serial[0]}",
                    "prize": rng.choice(["mug", "bear"]),
                    "value": rng.randrange(1, 800),
                }
            ]
        ),
        OpenRound(),
        *(
            PlaceBet(player=f"p-{rng.randrange(5)}", bet={"space": rng.choice("123")}, amount=100)
            for _ in range(rng.randrange(8))
        ),
        CallNoMoreBets(),
        RecordOutcome(outcome={"section": rng.randrange(len(SECTIONS))}),
    ]
    for command in commands:
        if state.closed:
            break
        try:
            new = decide(state, command)
        except RuleError as e:
            assert e.code in ("out_of_stock", "prize_limit")
            continue
        events += new
        state = fold(state, new)
    return state, events


def test_a_non_merchandise_table_has_no_sheet() -> None:
    sheets = ControlSheets()
    state = TableState(table="roulette-1")
    feed(
        sheets,
        "roulette-1",
        decide(state, OpenTable(game="roulette", config={}, outcome_mode="rng")),
        1,
    )
    assert sheets.sheets == {}


def test_the_sheet_lists_each_award_with_its_round_value_and_time() -> None:
    sheets = ControlSheets()
    state, events = open_wheel("w-1", 5_000)
    feed(sheets, "w-1", events, 1_000)
    for command in (
        OpenRound(),
        PlaceBet(player="p-1", bet={"space": "2"}, amount=100),
        CallNoMoreBets(),
    ):
        new = decide(state, command)
        state = fold(state, new)
        feed(sheets, "w-1", new, 2_000)
    outcome = decide(state, RecordOutcome(outcome={"section": 1}))
    feed(sheets, "w-1", outcome, 3_000)
    sheet = sheets.sheet("w-1")
    assert sheet is not None
    [award] = sheet["awarded"]
    assert award["round"] == 1 and award["player"] == "p-1" and award["item"] == "w-1-bear-1"
    assert award["value"] == 900 and award["donated"] is True and award["aggregate"] == 900
    assert award["at"] == 3_000 + [type(e).NAME for e in outcome].index("MerchandiseAwarded")
    assert sheet["aggregate"] == 900 and sheet["distance_to_limit"] == 4_100
    assert [i["item"] for i in sheet["inventory"]] == ["w-1-mug-1"]
    assert sheet["inventory_value"] == 300 and sheet["stocked_value"] == 1_200
    assert sheet["closed"] is None


def test_a_wheel_closed_by_its_dealer_is_marked_closed() -> None:
    sheets = ControlSheets()
    state, events = open_wheel("w-1", 5_000)
    feed(sheets, "w-1", events, 1)
    feed(sheets, "w-1", decide(state, CloseTable(reason="end of night")), 7)
    sheet = sheets.sheet("w-1")
    assert sheet is not None and sheet["closed"] == "closed" and sheet["closed_at"] == 7


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), limit=st.integers(300, 6_000))
def test_the_sheet_agrees_with_the_shelf_and_survives_a_snapshot(seed: int, limit: int) -> None:
    rng = random.Random(seed)
    sheets = ControlSheets()
    tables = {}
    for table in ("w-1", "w-2"):
        tables[table], events = open_wheel(table, limit)
        feed(sheets, table, events, 0)
    serial = [0]
    for step in range(10):
        table = rng.choice(sorted(tables))
        tables[table], events = play(tables[table], rng, serial)
        feed(sheets, table, events, step)
        if step == 5:  # a checkpoint in the middle restores to the same sheets
            restored = ControlSheets()
            restored.restore(sheets.snapshot())
            sheets = restored
    for table, state in tables.items():
        sheet = sheets.sheet(table)
        shelf = state.play.shelf
        assert sheet is not None and shelf is not None
        assert sheet["aggregate"] == shelf.aggregate <= sheet["limit"] == limit
        assert sheet["aggregate"] == sum(a["value"] for a in sheet["awarded"])
        assert sorted(i["item"] for i in sheet["inventory"]) == sorted(
            i.item for i in shelf.items()
        )
        assert sheet["stocked_value"] == sheet["aggregate"] + sheet["inventory_value"]
        assert (sheet["closed"] == "prize_limit") == state.closed
        awarded = [a["item"] for a in sheet["awarded"]]
        assert len(awarded) == len(set(awarded))


def test_each_projection_names_every_event_type_it_folds() -> None:
    """The runner hands a projection only its ``types``: folding every sample event through
    the runner's routing gives the same state as handing each projection everything."""
    import events.raffles
    from events.base import registered
    from projections.bankroll import Bankrolls
    from projections.raffles import Raffles
    from projections.runner import fold_payloads
    from tests.unit.test_events import ALL_SAMPLES, _seal

    raffle_types = {n for n, c in registered().items() if c.__module__ == events.raffles.__name__}
    assert Raffles.types == raffle_types
    # Every sample outside raffle streams (a raffle's samples are not one coherent raffle;
    # the raffle projection folds every raffle event type, as asserted above, and nothing
    # of other streams).
    streams = {"events.cage": "cage", "events.license": "license"}
    payloads = [
        encode(_seal(body, stream=streams.get(type(body).__module__, "table:t-1")))
        for body in ALL_SAMPLES
        if type(body).NAME not in raffle_types
    ]
    routed = [Bankrolls(), ControlSheets(), Raffles()]
    fold_payloads(routed, payloads)
    for projection in routed:
        alone = type(projection)()
        fold_payloads([alone], payloads)  # one projection: every event, unfiltered
        assert alone.snapshot() == projection.snapshot()
