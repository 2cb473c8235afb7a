"""Hand-written samples of every raffle event (for tests/unit/test_events.py)."""

from __future__ import annotations

from events.base import Event
from events.raffles import (
    AnnouncementRaised,
    CardRevealed,
    ChestCarriedOver,
    DrawingHeld,
    DrawingMethodRecorded,
    KeyTried,
    PrizeAwarded,
    ProceedsAllocated,
    ProfitKept,
    RaffleEnded,
    RaffleOpened,
    RaffleSalesClosed,
    TicketSold,
    Winner,
)

RAFFLE_SAMPLES: list[Event] = [
    RaffleOpened(
        raffle="qoh-1",
        kind="queen_of_hearts",
        config={"price": 100, "board": {"mode": "physical"}, "bundles": []},
    ),
    RaffleOpened(
        raffle="qoh-2",
        kind="queen_of_hearts",
        config={"price": 100, "board": {"mode": "server", "commitments": [], "root": "ab"}},
        sealed_board="c2VhbGVkIGJvYXJk",
    ),
    DrawingMethodRecorded(method="rng", description="the server's CSPRNG, shown on screen"),
    TicketSold(
        round=3,
        serials=(41, 42),
        amount=200,
        price=100,
        channel="online",
        face_hash="f" * 64,
        at=1_795_000_000_000,
        occasion="night-1",
        purchaser="pur-9",
        location_state="NY",
        location_sealed="c2VhbGVk",
    ),
    TicketSold(
        round=1, serials=(7,), amount=500, price=500, channel="door", face_hash="e" * 64, at=1
    ),
    RaffleSalesClosed(round=3),
    DrawingHeld(
        round=2,
        drawing=2,
        method="hand",
        eligible=30,
        winners=(Winner(12, 4), Winner(3, None)),
        at=1_795_000_000_000,
    ),
    ProceedsAllocated(round=2, sales=100_000, profit=33_335, prizes=6_665, pool=60_000),
    PrizeAwarded(
        round=2, serial=12, prize="primary", amount=1_333, cash=True, description="one fifth"
    ),
    ProfitKept(round=2, amount=-400, reason="consolation"),
    CardRevealed(round=5, serial=9, position=17, card="10S", salt="ab12", queen_of_hearts=False),
    KeyTried(round=2, serial=12, key=4, opened=False),
    ChestCarriedOver(round=2, chest=120_005, keys_removed=(1, 4, 6, 8, 9), keys_left=7),
    AnnouncementRaised(round=7, kind="treasure_chest_170_days", text="drawn next occasion"),
    RaffleEnded(reason="the queen of hearts was found"),
]
