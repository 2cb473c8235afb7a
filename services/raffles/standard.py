"""Standard raffles and the 50/50 (9 NYCRR 4620.22): fixed prizes drawn on scheduled dates,
or half the take to one ticket. Pure: no I/O, clock or randomness."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from events.base import Event
from events.raffles import DrawingHeld, PrizeAwarded, ProfitKept, RaffleEnded, Winner
from services.aggregates import RuleError
from services.raffles import serials as runs
from services.raffles import tickets
from services.raffles.state import RaffleState

STANDARD_KEYS: Final = tickets.COMMON_KEYS | {"prizes", "drawings", "one_prize_per_ticket"}
FIFTY_FIFTY_KEYS: Final = tickets.COMMON_KEYS | {"prize_percent"}
MAX_PRIZES: Final = 1_000
"""Prizes one standard raffle may list: an operator setting, not a rule."""
FIFTY_FIFTY_DEFAULT_PERCENT: Final = 50
"""A 50/50 pays half of the ticket money to the winner; the regulation names the game
(4620.22(a)(2)) but sets no share, so the share is a setting with this default."""


def parse_standard(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A standard raffle: ``prizes`` (``description``, ``value`` in cents, ``cash``
    (default true), ``drawing`` (1-based, default 1)), ``drawings`` (unix ms, ascending,
    the first equal to ``first_drawing_at``; default ``[first_drawing_at]``) and
    ``one_prize_per_ticket`` (default true: a ticket that won is out of later draws).

    Each prize is within GML 189(5)(b) and all of them within 189(6)(b), 4620.22(b)(1):
    else ``prize_over_limit``."""
    tickets.check_keys(raw, STANDARD_KEYS)
    config = tickets.parse_common(raw, "standard")
    drawings_raw = raw.get("drawings", [config["first_drawing_at"]])
    if (
        not isinstance(drawings_raw, list | tuple)
        or not drawings_raw
        or not all(isinstance(d, int) and not isinstance(d, bool) for d in drawings_raw)
    ):
        raise tickets.fail("drawings must be a non-empty list of times (unix ms)")
    drawings = list(drawings_raw)
    if drawings != sorted(set(drawings)) or drawings[0] != config["first_drawing_at"]:
        raise tickets.fail("drawings must ascend from first_drawing_at, each once")
    prizes_raw = raw.get("prizes")
    if not isinstance(prizes_raw, list | tuple) or not 1 <= len(prizes_raw) <= MAX_PRIZES:
        raise tickets.fail(f"prizes must list 1 to {MAX_PRIZES} prizes")
    prizes: list[dict[str, Any]] = []
    for p in prizes_raw:
        if not isinstance(p, Mapping):
            raise tickets.fail("each prize is {description, value, cash, drawing}")
        tickets.check_keys(p, frozenset({"description", "value", "cash", "drawing"}))
        prize = {
            "description": tickets._text(p, "description"),
            "value": tickets._int(p, "value", low=1, high=tickets.MAX_SERIES_LIMIT),
            "cash": tickets._bool(p, "cash", True),
            "drawing": tickets._int(p, "drawing", low=1, high=len(drawings), default=1),
        }
        prizes.append(prize)
    if {p["drawing"] for p in prizes} != set(range(1, len(drawings) + 1)):
        raise tickets.fail("every drawing must have at least one prize")
    for p in prizes:
        tickets.check_prize_limits(config, p["value"], 0)
    tickets.check_prize_limits(config, sum(p["value"] for p in prizes), 0)
    config["drawings"] = drawings
    config["prizes"] = prizes
    config["one_prize_per_ticket"] = tickets._bool(raw, "one_prize_per_ticket", True)
    return config


def parse_fifty_fifty(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A 50/50: one drawing at ``first_drawing_at``; ``prize_percent`` (1-100, default
    :data:`FIFTY_FIFTY_DEFAULT_PERCENT`) of the ticket money to the one winner."""
    tickets.check_keys(raw, FIFTY_FIFTY_KEYS)
    config = tickets.parse_common(raw, "fifty_fifty")
    config["prize_percent"] = tickets._int(
        raw, "prize_percent", low=1, high=100, default=FIFTY_FIFTY_DEFAULT_PERCENT
    )
    return config


def last_drawing_ms(state: RaffleState) -> int:
    """The date scheduled for the drawing of the raffle's last ticket, 4620.22(b)(9)."""
    drawings: Sequence[int] = state.config.get("drawings") or [state.config["first_drawing_at"]]
    return drawings[-1]


def fifty_fifty_prize(config: Mapping[str, Any], sales: int) -> int:
    """The 50/50 prize: ``prize_percent`` of the ticket money, rounded down to the cent
    (the odd cent stays with the licensee)."""
    percent: int = config["prize_percent"]
    return sales * percent // 100


def check_sale(state: RaffleState, amount: int) -> None:
    """A 50/50 sale may not push its prize over the limits of GML 189(5)(b), 189(6)(b)."""
    if state.kind == "fifty_fifty":
        prize = fifty_fifty_prize(state.config, state.total_sales + amount)
        tickets.check_prize_limits(state.config, prize, state.awarded)


def prizes_of_drawing(config: Mapping[str, Any], drawing: int) -> list[Mapping[str, Any]]:
    return [p for p in config["prizes"] if p["drawing"] == drawing]


def winners_needed(state: RaffleState) -> int:
    if state.kind == "fifty_fifty":
        return 1
    return len(prizes_of_drawing(state.config, state.drawings + 1))


def eligible(state: RaffleState) -> tuple[int, ...]:
    """Every ticket sold and not excluded (a standard raffle's earlier winners when one
    prize per ticket), ascending: each is equally likely, 4620.22(a)."""
    if state.kind == "standard" and state.config["one_prize_per_ticket"]:
        return tuple(s for s in runs.each(state.sold) if s not in state.excluded)
    return tuple(runs.each(state.sold))


def drawing_events(
    state: RaffleState, serials: Sequence[int], method: str, eligible_count: int, now_ms: int
) -> list[Event]:
    """The drawing's winners and prizes; after the last drawing the licensee keeps what the
    tickets brought beyond the prizes' value and the raffle ends."""
    number = state.drawings + 1
    events: list[Event] = [
        DrawingHeld(
            round=state.round,
            drawing=number,
            method=method,
            eligible=eligible_count,
            winners=tuple(Winner(s, None) for s in serials),
            at=now_ms,
        )
    ]
    if state.kind == "fifty_fifty":
        prize = fifty_fifty_prize(state.config, state.total_sales)
        events += [
            PrizeAwarded(
                round=state.round,
                serial=serials[0],
                prize="fifty_fifty",
                amount=prize,
                cash=True,
                description=f"{state.config['prize_percent']}% of the ticket money",
            ),
            ProfitKept(
                round=state.round,
                amount=state.total_sales - prize,
                reason="the ticket money beyond the 50/50 prize",
            ),
            RaffleEnded(reason="the 50/50 was drawn"),
        ]
        return events
    awarded = 0
    for serial, won in zip(serials, prizes_of_drawing(state.config, number), strict=True):
        awarded += won["value"]
        events.append(
            PrizeAwarded(
                round=state.round,
                serial=serial,
                prize="prize",
                amount=won["value"],
                cash=won["cash"],
                description=won["description"],
            )
        )
    if number == len(state.config["drawings"]):
        events += [
            ProfitKept(
                round=state.round,
                amount=state.total_sales - state.awarded - awarded,
                reason="the ticket money less the value of every prize",
            ),
            RaffleEnded(reason="the last prize was drawn"),
        ]
    return events


def check_hand_serials(state: RaffleState, serials: Sequence[int], pool: Sequence[int]) -> None:
    allowed = set(pool)
    if len(set(serials)) != len(serials):
        raise RuleError("ineligible_ticket", "a ticket can be drawn only once per drawing")
    for s in serials:
        if s not in allowed:
            raise RuleError("ineligible_ticket", f"ticket {s} is not in the drum for this drawing")
