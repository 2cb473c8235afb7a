"""The Treasure Chest raffle (9 NYCRR 4620.24). Pure: no I/O, clock or randomness.

Prize tickets are sold each occasion. At the drawing the licensee's designated percentage
of the occasion's sales is kept as profit, 10 % of the rest makes five equal primary
prizes, the rest goes into the chest (after a carry-over: 60 % of the occasion's sales,
(b)(10)). Five prize tickets are drawn; each winner gets a fifth of the primary pool and
the key hung under a key ticket drawn for them, and tries it on the lock. Exactly one
unmarked key opens it (the marked master key stays with the member in charge and is never
drawn). If none opens, those keys leave play and the chest carries over to the next
occasion; when the lock opens the chest is paid and the raffle ends.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from events.base import Event
from events.raffles import (
    AnnouncementRaised,
    ChestCarriedOver,
    DrawingHeld,
    KeyTried,
    PrizeAwarded,
    ProceedsAllocated,
    ProfitKept,
    RaffleEnded,
    Winner,
)
from services.aggregates import RuleError
from services.raffles import serials as runs
from services.raffles import tickets
from services.raffles.state import RaffleState, TryKey

PRIMARY_PERCENT: Final = 10
"""10 percent of what is left after the profit is the primary prize pool, 4620.24(b)(3)."""
PRIMARY_PRIZES: Final = 5
"""The primary pool is divided into five equal parts for five drawn tickets,
4620.24(b)(3), (b)(6)."""
CARRY_OVER_PERCENT: Final = 60
"""After a carry-over, 60 percent of the next occasion's ticket sales is added to the
chest, 4620.24(b)(10) (docs/RULES.md: how this reads with (b)(2)-(4))."""
ANNOUNCEMENT_DAYS: Final = 170
"""On or about 170 days after ticket sales started, an occasion without a chest winner
announces that the remaining tickets will be drawn at the next occasion until the chest is
won, 4620.24(b)(12)."""
BASIS_POINTS: Final = 10_000
MIN_KEYS: Final = PRIMARY_PRIZES
"""Enough keys for the five winners of the first occasion, 4620.24(b)(7)."""
MAX_KEYS: Final = 1_000
"""Keys a raffle may list: an operator setting (the licensee's house rules, 4620.24(a))."""
DEFAULT_INTERVAL_DAYS: Final = 7
"""Days between occasions assumed for the 180-day rule of 4620.22(b)(9) (a setting)."""

KEYS: Final = tickets.COMMON_KEYS | {"keys", "profit_bp", "interval_days"}


def parse_config(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A Treasure Chest: the common settings plus ``keys`` (how many unmarked keys are in
    play at the start, one of which opens the lock, 4620.24(a)), ``profit_bp`` (the
    licensee's designated percentage in basis points, 3333 = 33.33 %, 4620.24(b)(2)) and
    ``interval_days`` (days between occasions, default 7)."""
    tickets.check_keys(raw, KEYS)
    config = tickets.parse_common(raw, "treasure_chest")
    config["keys"] = tickets._int(raw, "keys", low=MIN_KEYS, high=MAX_KEYS)
    config["profit_bp"] = tickets._int(raw, "profit_bp", low=0, high=BASIS_POINTS)
    config["interval_days"] = tickets._int(
        raw, "interval_days", low=1, high=366, default=DEFAULT_INTERVAL_DAYS
    )
    return config


def split(config: Mapping[str, Any], sales: int, carried: bool) -> tuple[int, int, int]:
    """An occasion's ticket money as (profit, one primary prize, added to the chest), to
    the cent: ``profit + 5 * part + chest == sales``.

    The designated percentage is kept as profit (rounded down), 4620.24(b)(2); a fifth of
    10 % of the rest (rounded down) is one primary prize, (b)(3); the rest goes into the
    chest, (b)(4). After a carry-over the chest gets 60 % of the sales (rounded down),
    (b)(10), the primary prizes stay as (b)(3) gives them, and the licensee keeps what
    remains."""
    designated = sales * config["profit_bp"] // BASIS_POINTS
    part = (sales - designated) * PRIMARY_PERCENT // 100 // PRIMARY_PRIZES
    if carried:
        chest = sales * CARRY_OVER_PERCENT // 100
        return sales - PRIMARY_PRIZES * part - chest, part, chest
    return designated, part, sales - designated - PRIMARY_PRIZES * part


def scheduled_ms(state: RaffleState) -> int:
    """When this occasion's drawing is due: the first drawing, then ``interval_days``
    after the last drawing held."""
    if state.last_drawing_ms is None:
        first: int = state.config["first_drawing_at"]
        return first
    days: int = state.config["interval_days"]
    return state.last_drawing_ms + days * tickets.DAY_MS


def check_sale(state: RaffleState, amount: int) -> None:
    """A sale may not push the chest (as this occasion would fill it) over the prize
    limits, 4620.22(b)(1)."""
    _profit, part, chest = split(state.config, state.round_sales + amount, state.round > 1)
    tickets.check_prize_limits(
        state.config, state.pool + chest, state.awarded + PRIMARY_PRIZES * part
    )


def continued(state: RaffleState) -> bool:
    """A drawing already failed this occasion: only in the final occasion after the
    170-day announcement, where tickets are drawn until the chest is won, 4620.24(b)(12)."""
    return bool(state.tried) and not state.handed


def final_round(state: RaffleState) -> bool:
    return state.announced_round is not None and state.round > state.announced_round


def check_can_draw(state: RaffleState) -> None:
    if state.handed:
        raise RuleError(
            "keys_pending", "every key handed out must be tried before the next drawing"
        )


def eligible(state: RaffleState) -> tuple[int, ...]:
    """This occasion's prize tickets, ascending (in a continued drawing, those not drawn
    yet; all of them again once every one was drawn)."""
    if continued(state):
        every = tuple(runs.each(state.round_serials))
        left = tuple(s for s in every if s not in state.drawn_in_round)
        return left or every
    return tuple(runs.each(state.round_serials))


def winners_needed(state: RaffleState) -> int:
    """Five prize tickets, 4620.24(b)(6); a continued drawing draws up to five."""
    if continued(state):
        return min(PRIMARY_PRIZES, len(eligible(state)), len(state.keys_in_play))
    return PRIMARY_PRIZES


def keys_needed(state: RaffleState, winners: int) -> int:
    """A key ticket for each winner while keys are left, 4620.24(b)(7)."""
    return min(winners, len(state.keys_in_play))


def check_hand_keys(state: RaffleState, keys: Sequence[int], winners: int) -> None:
    if len(keys) != keys_needed(state, winners) or len(set(keys)) != len(keys):
        raise RuleError("bad_request", f"draw {keys_needed(state, winners)} different key tickets")
    for k in keys:
        if k not in state.keys_in_play:
            raise RuleError("key_not_in_play", f"key {k} is not on the board")


def drawing_events(
    state: RaffleState,
    serials: Sequence[int],
    keys: Sequence[int],
    method: str,
    eligible_count: int,
    now_ms: int,
) -> list[Event]:
    """The occasion's split and its five winners with their keys, 4620.24(b)(2)-(7)."""
    events: list[Event] = []
    part = 0
    if not continued(state):
        profit, part, chest = split(state.config, state.round_sales, state.round > 1)
        events += [
            ProceedsAllocated(
                round=state.round,
                sales=state.round_sales,
                profit=profit,
                prizes=PRIMARY_PRIZES * part,
                pool=chest,
            ),
            ProfitKept(
                round=state.round,
                amount=profit,
                reason="the licensee's share of the occasion's sales (4620.24(b)(2), (b)(10))",
            ),
        ]
    winners = tuple(Winner(s, keys[i] if i < len(keys) else None) for i, s in enumerate(serials))
    events.append(
        DrawingHeld(
            round=state.round,
            drawing=state.drawings + 1,
            method=method,
            eligible=eligible_count,
            winners=winners,
            at=now_ms,
        )
    )
    if not continued(state):
        events += [
            PrizeAwarded(
                round=state.round,
                serial=s,
                prize="primary",
                amount=part,
                cash=True,
                description="one fifth of the primary prize pool (4620.24(b)(6))",
            )
            for s in serials
        ]
    return events


def try_key(state: RaffleState, command: TryKey) -> list[Event]:
    """A winner tries the key handed to them, 4620.24(b)(7). The key that opens wins the
    chest and ends the raffle, (b)(11); keys that fail leave play, and when every key of
    the occasion failed the chest carries over, (b)(8)-(10) (in the final occasion after
    the 170-day announcement, the drawing continues instead, (b)(12))."""
    serial = state.handed.get(command.key)
    if serial is None:
        raise RuleError(
            "key_not_in_play", f"key {command.key} was not handed to a winner of this drawing"
        )
    if not command.opened and state.keys_in_play == {command.key}:
        raise RuleError(
            "lock_must_open",
            "this is the last key in play: exactly one unmarked key opens the lock (4620.24(a))",
        )
    events: list[Event] = [
        KeyTried(round=state.round, serial=serial, key=command.key, opened=command.opened)
    ]
    if command.opened:
        events += [
            PrizeAwarded(
                round=state.round,
                serial=serial,
                prize="secondary",
                amount=state.pool,
                cash=True,
                description="the treasure chest (4620.24(b)(11))",
            ),
            RaffleEnded(reason="the treasure chest was opened"),
        ]
        return events
    if len(state.handed) == 1 and not final_round(state):
        removed = (*state.tried, command.key)
        events.append(
            ChestCarriedOver(
                round=state.round,
                chest=state.pool,
                keys_removed=tuple(sorted(removed)),
                keys_left=len(state.keys_in_play) - 1,
            )
        )
    return events


def announcement(state: RaffleState, now_ms: int) -> list[Event]:
    """The 170-day announcement, raised by the raffle itself on or after day 170 of ticket
    sales while the chest is not won, 4620.24(b)(12): with the raffle's first command from
    then on, or when the server's clock looks in (``RaiseDueAnnouncements``, hourly)."""
    if (
        state.announced_round is not None
        or state.first_sale_ms is None
        or now_ms - state.first_sale_ms < ANNOUNCEMENT_DAYS * tickets.DAY_MS
    ):
        return []
    return [
        AnnouncementRaised(
            round=state.round,
            kind="treasure_chest_170_days",
            text=(
                "The secondary prize has not been awarded: the remaining tickets will be "
                "drawn during the next occasion until a winner of the secondary prize is "
                "awarded (4620.24(b)(12))"
            ),
        )
    ]
