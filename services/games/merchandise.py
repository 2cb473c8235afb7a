"""A merchandise wheel's shelf and control sheet, 4620.10: pure rules.

Wagers are money, prizes only merchandise (4620.10(c), (d)). Each winning bet is handed one
item of the prize class its section names, first stocked first awarded. The wheel keeps the
value awarded so far (its control sheet's aggregate, 4620.10(e)) under the aggregate prize
limit of GML 189(6)(a)(1) (a table setting, ``aggregate_prize_limit``):

- a bet is accepted only if, for every section it could win on, the round's winners on that
  section could all be handed an item (``out_of_stock`` otherwise) without the aggregate
  passing the limit (``prize_limit`` otherwise). The limit is therefore never exceeded,
  however many bets win at once, and no winner is ever owed an item the wheel cannot give;
- the wheel closes itself (``PrizeLimitReached``) when the aggregate reaches the limit, or
  when no item next in line on its shelf can be awarded any more without passing it.

The wheel's game (:data:`MERCHANDISE`) is a round of one outcome whose state carries the
shelf: it checks a bet's exposure, hands out the awards after each settlement, takes a
restock (``AddStock``) between or during rounds, and closes the table at the limit.
No I/O, clock or randomness.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from events.base import Event
from events.merchandise import (
    MerchandiseAwarded,
    MerchandiseStocked,
    PrizeLimitReached,
    StockItem,
)
from events.records import replace
from events.tables import BetCancelled, BetPlaced, BetSettlement, RoundOpened, Settled
from services.aggregates import RuleError
from services.games.base import JSON, Round
from services.games.single_outcome import OutcomePlay, SingleOutcome
from services.games.wheels import (
    MERCHANDISE_WHEEL as WHEEL_RULES,
)
from services.games.wheels import (
    parse_inventory,
    section_prize,
    sections_won_by,
)

MERCHANDISE_WHEEL = "merchandise_wheel"
"""The game name of merchandise wheels (4620.1; not counted toward 4620.2's five types)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Shelf:
    """What a merchandise wheel holds: items left by prize class (oldest first), every item
    id ever stocked, the value awarded so far and the round's exposure by section."""

    limit: int
    aggregate: int = 0
    by_prize: Mapping[str, tuple[StockItem, ...]] = field(default_factory=dict)
    stocked: frozenset[str] = frozenset()
    exposure: Mapping[int, int] = field(default_factory=dict)
    """Bets of the current round that would win on each section (section index -> count)."""

    @property
    def headroom(self) -> int:
        """Value that may still be awarded before the aggregate limit, GML 189(6)(a)(1)."""
        return self.limit - self.aggregate

    def items(self) -> list[StockItem]:
        """Every item on the shelf, by prize class then oldest first."""
        return [item for prize in sorted(self.by_prize) for item in self.by_prize[prize]]


def stock_items(raw: Iterable[Mapping[str, Any]]) -> tuple[StockItem, ...]:
    """Canonical inventory entries (``services.games.wheels.parse_inventory``) as items."""
    return tuple(
        StockItem(
            item=str(entry["item"]),
            prize=str(entry["prize"]),
            value=int(entry["value"]),
            donated=bool(entry.get("donated", False)),
        )
        for entry in raw
    )


def check_restock(shelf: Shelf, items: Sequence[StockItem]) -> None:
    """An item id names one item of the control sheet for the whole life of the wheel."""
    seen: set[str] = set()
    for item in items:
        if item.item in shelf.stocked or item.item in seen:
            raise RuleError(
                "duplicate_item", f"item {item.item!r} is already on this wheel's control sheet"
            )
        seen.add(item.item)


def stocked(shelf: Shelf, items: Sequence[StockItem]) -> Shelf:
    """The shelf with ``items`` added at the back of their prize classes."""
    by_prize = dict(shelf.by_prize)
    for item in items:
        by_prize[item.prize] = (*by_prize.get(item.prize, ()), item)
    return replace(shelf, by_prize=by_prize, stocked=shelf.stocked | {item.item for item in items})


def _award_value(shelf: Shelf, prize: str, winners: int) -> int | None:
    """Value of the first ``winners`` items of a class, or None if the shelf has fewer."""
    items = shelf.by_prize.get(prize, ())
    if winners > len(items):
        return None
    return sum(item.value for item in items[:winners])


def check_exposure(shelf: Shelf, config: Mapping[str, Any], space: str) -> None:
    """Refuse a bet some of whose possible wins could not be honoured, 4620.10(d), (e).

    For every section the bet wins on, the section's winners (this bet included) must each
    get an item of the section's prize class, and the value handed out must fit under the
    aggregate prize limit."""
    for section in sections_won_by(config, space, MERCHANDISE_WHEEL):
        prize = section_prize(config, section)
        if prize is None:
            continue
        winners = shelf.exposure.get(section, 0) + 1
        value = _award_value(shelf, prize, winners)
        if value is None:
            raise RuleError(
                "out_of_stock",
                f"not enough {prize!r} on the shelf for every winner on section {section}",
            )
        if value > shelf.headroom:
            raise RuleError(
                "prize_limit",
                f"a win on section {section} would take the prizes awarded at this wheel past "
                f"the aggregate limit of {shelf.limit} cents (GML 189(6)(a)(1)); "
                f"{shelf.headroom} cents remain",
            )


def exposed(shelf: Shelf, config: Mapping[str, Any], space: str, delta: int) -> Shelf:
    """The round's exposure after a bet on ``space`` is placed (+1) or cancelled (-1)."""
    exposure = dict(shelf.exposure)
    for section in sections_won_by(config, space, MERCHANDISE_WHEEL):
        if section_prize(config, section) is not None:
            exposure[section] = exposure.get(section, 0) + delta
    return replace(shelf, exposure=exposure)


def awards(
    shelf: Shelf,
    config: Mapping[str, Any],
    round_: int,
    section: int,
    settlements: Sequence[BetSettlement],
) -> list[Event]:
    """Hand each winning bet, in the order placed, the oldest item of its section's prize
    class; then close the wheel if it reached its aggregate limit (4620.10(e))."""
    prize = section_prize(config, section)
    winners = [s for s in settlements if s.result == "won"]
    events: list[Event] = []
    aggregate = shelf.aggregate
    if prize is not None and winners:
        items = shelf.by_prize.get(prize, ())
        if len(winners) > len(items):  # pragma: no cover - check_exposure prevents it
            raise RuleError("out_of_stock", f"not enough {prize!r} for every winner")
        for winner, item in zip(winners, items, strict=False):
            aggregate += item.value
            events.append(
                MerchandiseAwarded(
                    round=round_,
                    bet_id=winner.bet_id,
                    player=winner.player,
                    item=item.item,
                    prize=item.prize,
                    value=item.value,
                    donated=item.donated,
                    aggregate=aggregate,
                )
            )
        if aggregate > shelf.limit:  # pragma: no cover - check_exposure prevents it
            raise RuleError("prize_limit", "the awards would pass the aggregate prize limit")
    left = shelf
    for ev in events:
        left = awarded(left, ev)  # type: ignore[arg-type]
    if limit_reached(left):
        events.append(PrizeLimitReached(aggregate=aggregate, limit=shelf.limit))
    return events


def limit_reached(shelf: Shelf) -> bool:
    """Whether the wheel must close: the aggregate reached the limit, or the shelf holds
    items but none of those next in line (the oldest of each prize class, as they are
    awarded) fits under the limit any more, so no win could be honoured. An empty shelf
    waits for a restock."""
    if shelf.aggregate >= shelf.limit:
        return True
    next_in_line = [items[0].value for items in shelf.by_prize.values() if items]
    return bool(next_in_line) and min(next_in_line) > shelf.headroom


def awarded(shelf: Shelf, event: MerchandiseAwarded) -> Shelf:
    """The shelf after an item left it for a winner."""
    by_prize = dict(shelf.by_prize)
    by_prize[event.prize] = tuple(i for i in by_prize.get(event.prize, ()) if i.item != event.item)
    if not by_prize[event.prize]:
        del by_prize[event.prize]
    return replace(shelf, by_prize=by_prize, aggregate=event.aggregate)


@dataclass(frozen=True, slots=True, kw_only=True)
class AddStock:
    """A member in charge puts merchandise on a merchandise wheel's shelf, 4620.10(e)."""

    items: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class MerchandisePlay(OutcomePlay):
    """A merchandise wheel's state: its recent outcomes and its shelf."""

    shelf: Shelf
    bet_spaces: Mapping[str, str] = field(default_factory=dict)
    """The space of each bet of the round (bet id -> space), to take back its exposure."""
    closed: bool = False


class MerchandiseWheel(SingleOutcome):
    """The merchandise wheel: wagers in money, prizes only merchandise (4620.10)."""

    def initial(self, config: Mapping[str, JSON]) -> MerchandisePlay:
        return MerchandisePlay(shelf=Shelf(limit=int(config["aggregate_prize_limit"])))

    def opening(self, config: Mapping[str, JSON]) -> list[Event]:
        """The opening inventory of the control sheet, 4620.10(e)."""
        if not config.get("inventory"):
            return []
        return [MerchandiseStocked(items=stock_items(config["inventory"]), source="opening")]

    def check_bet(
        self, config: Mapping[str, JSON], play: MerchandisePlay, bet: JSON, amount: int
    ) -> Mapping[str, JSON]:
        """A bet on the layout that every winner on its sections could be handed an item
        for, under the aggregate limit (``out_of_stock``, ``prize_limit``)."""
        spec = self.game.check_bet(config, bet, amount)
        check_exposure(play.shelf, config, str(spec["space"]))
        return spec

    def decide(
        self, config: Mapping[str, JSON], play: MerchandisePlay, round: Round, step: Any
    ) -> list[Event]:
        if isinstance(step, AddStock):
            return _add_stock(config, play.shelf, step)
        return super().decide(config, play, round, step)

    def outcome_and_settlement(
        self,
        config: Mapping[str, JSON],
        play: MerchandisePlay,
        round: Round,
        outcome: Mapping[str, JSON],
        source: str,
    ) -> list[Event]:
        """The round's outcome and settlement, then an item for each winner, 4620.10(d)."""
        events = super().outcome_and_settlement(config, play, round, outcome, source)
        settled = events[-1]
        assert isinstance(settled, Settled)
        section = int(outcome["section"])
        return events + awards(play.shelf, config, round.number, section, settled.settlements)

    def evolve(self, config: Mapping[str, JSON], play: MerchandisePlay, event: Event) -> Any:
        shelf = play.shelf
        match event:
            case RoundOpened():
                return replace(play, shelf=replace(shelf, exposure={}), bet_spaces={})
            case BetPlaced():
                space = str(event.bet["space"])
                spaces = {**play.bet_spaces, event.bet_id: space}
                return replace(play, shelf=exposed(shelf, config, space, +1), bet_spaces=spaces)
            case BetCancelled():
                space = play.bet_spaces[event.bet_id]
                return replace(play, shelf=exposed(shelf, config, space, -1))
            case MerchandiseStocked():
                return replace(play, shelf=stocked(shelf, event.items))
            case MerchandiseAwarded():
                return replace(play, shelf=awarded(shelf, event))
            case PrizeLimitReached():
                return replace(play, closed=True)
        return super().evolve(config, play, event)

    def closed(self, play: MerchandisePlay) -> bool:
        """Closed by itself at its aggregate prize limit (``PrizeLimitReached``), 4620.10(e)."""
        return play.closed

    def view(
        self, config: Mapping[str, JSON], play: MerchandisePlay, round: Round
    ) -> dict[str, JSON]:
        """The recent outcomes and the prize position: value awarded, limit, what is on
        the shelf."""
        shelf = play.shelf
        on_shelf = {p: len(items) for p, items in sorted(shelf.by_prize.items())}
        return {
            **super().view(config, play, round),
            "prizes": {
                "aggregate": shelf.aggregate,
                "limit": shelf.limit,
                "headroom": shelf.headroom,
                "on_shelf": on_shelf,
            },
        }

    def result(self, events: Sequence[Event]) -> dict[str, JSON]:
        """Besides the outcome: the items awarded, the items stocked and a closing."""
        out = super().result(events)
        for ev in events:
            if isinstance(ev, MerchandiseAwarded):
                award = {
                    "bet_id": ev.bet_id,
                    "player": ev.player,
                    "item": ev.item,
                    "prize": ev.prize,
                    "value": ev.value,
                }
                out.setdefault("awards", []).append(award)
            elif isinstance(ev, MerchandiseStocked):
                out["stocked"] = len(ev.items)
            elif isinstance(ev, PrizeLimitReached):
                out["closed"] = "prize_limit"
        return out


def _add_stock(config: Mapping[str, JSON], shelf: Shelf, command: AddStock) -> list[Event]:
    """Restock a merchandise wheel: every item valid for its layout, none over the single
    prize limit (4620.10(d), GML 189(5)(a)) and none already on its control sheet."""
    if not isinstance(command.items, list) or not command.items:
        raise RuleError("bad_request", "items must be a non-empty list of merchandise")
    try:
        items = stock_items(parse_inventory(config, command.items))
    except RuleError as e:
        if e.code != "invalid_config":
            raise
        raise RuleError("invalid_stock", e.message) from None
    check_restock(shelf, items)
    return [MerchandiseStocked(items=items, source="restock")]


MERCHANDISE: Final = MerchandiseWheel(WHEEL_RULES)
"""The merchandise wheel's game, as tables run it."""
