"""Builders shared by the raffle rule tests: configurations, and a raffle driven by commands
through the pure ``decide``/``evolve`` exactly as the actor drives it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from events.base import Event
from services.aggregates import RuleError
from services.raffles import queen_of_hearts as qoh
from services.raffles.rules import decide, evolve
from services.raffles.state import (
    HoldDrawing,
    RaffleCommand,
    RaffleState,
    RecordDrawingMethod,
    SellTicket,
    SetupRaffle,
)

NOW = 1_795_000_000_000
"""A fixed instant (2026-11-18, UTC) standing for the gateway's clock."""
DAY = 86_400_000


def common(**over: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "name": "Parish raffle",
        "organization": "St. Mary's Parish Council",
        "identification_number": "GC-ID-77",
        "location": "Parish hall, 12 Main St",
        "price": 500,
        "first_drawing_at": NOW + 30 * DAY,
    }
    raw.update(over)
    return raw


def standard_config(**over: Any) -> dict[str, Any]:
    raw = common(
        prizes=[
            {"description": "Television", "value": 80_000, "cash": False},
            {"description": "Cash", "value": 50_000},
        ]
    )
    raw.update(over)
    return raw


def fifty_fifty_config(**over: Any) -> dict[str, Any]:
    raw = common(price=200, bundles=[{"tickets": 3, "price": 500}])
    raw.update(over)
    return raw


def qoh_config(**over: Any) -> dict[str, Any]:
    raw = common(price=100, board="physical", first_drawing_at=NOW + 3 * DAY)
    raw.update(over)
    return raw


def tc_config(**over: Any) -> dict[str, Any]:
    raw = common(price=100, keys=12, profit_bp=3333, first_drawing_at=NOW + DAY)
    raw.update(over)
    return raw


SALTS = tuple(f"salt-{i:02d}" for i in range(1, 55))


def server_board(cards: Sequence[str] = qoh.DECK) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A server-dealt board (cards in position order) and its commitments."""
    return tuple(cards), qoh.commit(cards, SALTS)


class Raffle:
    """A raffle's state moved only by the events ``decide`` returns."""

    def __init__(self, kind: str, raw: dict[str, Any], commitments: Sequence[str] = ()) -> None:
        self.state = RaffleState(raffle="r-1")
        self.log: list[Event] = []
        self.run(SetupRaffle(kind=kind, config=raw, board_commitments=tuple(commitments)))

    def run(self, command: RaffleCommand) -> list[Event]:
        events = decide(self.state, command)
        for ev in events:
            self.state = evolve(self.state, ev)
        self.log += events
        return events

    def method(self, method: str = "rng") -> None:
        self.run(RecordDrawingMethod(method=method, description="drawn in plain view"))

    def sell(self, count: int = 1, *, now: int = NOW, **kw: Any) -> list[Event]:
        amount = kw.pop("amount", count * self.state.config["price"])
        return self.run(SellTicket(count=count, amount=amount, now_ms=now, **kw))

    def draw(self, *draws: int, now: int = NOW) -> list[Event]:
        return self.run(HoldDrawing(now_ms=now, draws=draws))


def of_type(events: Sequence[Event], cls: type[Event]) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def refused(raffle: Raffle, command: object) -> str:
    """The code ``decide`` refuses ``command`` with; the state is left as it was."""
    before = raffle.state
    with pytest.raises(RuleError) as e:
        decide(raffle.state, command)  # type: ignore[arg-type]
    assert raffle.state is before
    return e.value.code
