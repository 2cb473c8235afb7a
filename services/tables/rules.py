"""A table's pure rules: the round lifecycle every table game shares.

``decide(state, command) -> events`` refuses a command with a :class:`RuleError` carrying a
stable protocol code, or returns the events it causes; ``evolve(state, event) -> state``
folds one event. The layout-specific questions (is this a bet on the layout, is this an
outcome of the device, what does each bet pay) go to the table's :class:`Game`.
No I/O, clock or randomness: the RNG draw enters as the ``index`` of :class:`DrawOutcome`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple

from events.base import Event
from events.merchandise import MerchandiseAwarded, MerchandiseStocked, PrizeLimitReached
from events.tables import (
    BetCancelled,
    BetPlaced,
    BetSettlement,
    NoMoreBets,
    OutcomeRecorded,
    RoundOpened,
    Settled,
    TableClosed,
    TableOpened,
)
from services.aggregates import RuleError
from services.games.base import OutcomeGame as Game
from services.games.base import PlacedBet
from services.games.registry import game as game_named
from services.games.wheels import parse_inventory
from services.tables import merchandise
from services.tables.merchandise import MERCHANDISE_WHEEL, Shelf

Phase = Literal["idle", "betting", "no_more_bets"]
OutcomeMode = Literal["dealer", "rng"]
RECENT_OUTCOMES = 20
"""How many past outcomes the table state keeps for tablets (a display setting)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TableState:
    """A table folded from its stream. ``version`` is the seq of the last event folded."""

    table: str
    version: int = 0
    game: str = ""
    config: Mapping[str, Any] = field(default_factory=dict)
    outcome_mode: OutcomeMode = "dealer"
    opened: bool = False
    closed: bool = False
    round: int = 0
    phase: Phase = "idle"
    placed: BetNode | None = None
    """The round's bets, newest first, as an immutable linked list: placing a bet shares
    the rest, so a round of thousands of bets costs no copying."""
    cancelled: frozenset[str] = frozenset()
    last_outcome: str | None = None
    recent: tuple[str, ...] = ()
    shelf: Shelf | None = None
    """A merchandise wheel's prizes and control-sheet aggregate (None at other games)."""

    @property
    def bets(self) -> dict[str, PlacedBet]:
        """The round's bets still on the layout, in the order placed, by bet id."""
        newest_first: list[PlacedBet] = []
        node = self.placed
        while node is not None:
            if node.bet.bet_id not in self.cancelled:
                newest_first.append(node.bet)
            node = node.previous
        return {b.bet_id: b for b in reversed(newest_first)}


class BetNode(NamedTuple):
    """One bet of a round and the bets placed before it."""

    bet: PlacedBet
    previous: BetNode | None


# Commands: imperatives, as the gateway parsed them.


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenTable:
    game: str
    config: Mapping[str, Any]
    outcome_mode: OutcomeMode


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenRound:
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class PlaceBet:
    player: str
    bet: Any
    amount: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelBet:
    bet_id: str
    player: str | None = None
    """When set (a player cancels), only that player's own bet may be cancelled."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallNoMoreBets:
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordOutcome:
    outcome: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class DrawOutcome:
    index: int
    """Index into ``game.outcomes(config)``, drawn uniformly by the actor's CSPRNG."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseTable:
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AddStock:
    """A member in charge puts merchandise on a merchandise wheel's shelf, 4620.10(e)."""

    items: Any


TableCommand = (
    OpenTable
    | OpenRound
    | PlaceBet
    | CancelBet
    | CallNoMoreBets
    | RecordOutcome
    | DrawOutcome
    | CloseTable
    | AddStock
)


def table_game(state: TableState) -> Game:
    return game_named(state.game)


def decide(state: TableState, command: TableCommand) -> list[Event]:
    """The events ``command`` causes at this table, or a RuleError with its code."""
    if isinstance(command, OpenTable):
        return _open_table(state, command)
    if not state.opened:
        raise RuleError("unknown_table", f"table {state.table} has not been opened")
    if state.closed:
        raise RuleError("table_closed", f"table {state.table} is closed")
    match command:
        case OpenRound():
            return _open_round(state)
        case PlaceBet():
            return _place_bet(state, command)
        case CancelBet():
            return _cancel_bet(state, command)
        case CallNoMoreBets():
            return _no_more_bets(state)
        case RecordOutcome():
            return _record_outcome(state, command)
        case DrawOutcome():
            return _draw_outcome(state, command)
        case CloseTable():
            return _close_table(state, command)
        case AddStock():
            return _add_stock(state, command)
    raise RuleError("bad_request", f"unknown command {command!r}")  # pragma: no cover


def _open_table(state: TableState, command: OpenTable) -> list[Event]:
    """Open a table once with a validated configuration; reopening with the same is a no-op."""
    game = game_named(command.game)
    config = game.parse_config(command.config)
    if state.opened:
        if (state.game, dict(state.config), state.outcome_mode) == (
            command.game,
            dict(config),
            command.outcome_mode,
        ):
            return []
        raise RuleError(
            "conflict",
            f"table {state.table} is already open with another configuration; "
            "a table's configuration is fixed for its stream",
        )
    opened: list[Event] = [
        TableOpened(
            table=state.table, game=command.game, config=config, outcome_mode=command.outcome_mode
        )
    ]
    if command.game == MERCHANDISE_WHEEL and config.get("inventory"):
        # The opening inventory of the control sheet, 4620.10(e).
        items = merchandise.stock_items(config["inventory"])
        opened.append(MerchandiseStocked(items=items, source="opening"))
    return opened


def _open_round(state: TableState) -> list[Event]:
    """The dealer opens the next round; only when the previous one is settled."""
    if state.phase != "idle":
        raise RuleError(
            "round_in_progress", f"round {state.round} of {state.table} is not settled yet"
        )
    return [RoundOpened(round=state.round + 1)]


def _place_bet(state: TableState, command: PlaceBet) -> list[Event]:
    """A bet is accepted only while the round is open for bets, 4620.4(c)(1)."""
    if state.phase == "idle":
        raise RuleError("round_not_open", f"no round of {state.table} is open for bets")
    if state.phase == "no_more_bets":
        raise RuleError(
            "bets_closed",
            f"round {state.round} of {state.table} is closed for bets (no more bets, 4620.4(c)(1))",
        )
    bet = table_game(state).check_bet(state.config, command.bet, command.amount)
    if state.shelf is not None:
        merchandise.check_exposure(state.shelf, state.config, bet["space"])
    seq = state.version + 1
    bet_id = f"{state.table}.{state.round}.{seq}"
    return [
        BetPlaced(
            round=state.round, bet_id=bet_id, player=command.player, bet=bet, amount=command.amount
        )
    ]


def _cancel_bet(state: TableState, command: CancelBet) -> list[Event]:
    """A bet may be taken back only before no more bets, 4620.4(c)(1)."""
    placed = state.bets.get(command.bet_id)
    if placed is None or (command.player is not None and placed.player != command.player):
        raise RuleError("unknown_bet", f"no bet {command.bet_id} in the current round")
    if state.phase != "betting":
        raise RuleError("bets_closed", f"round {state.round} of {state.table} is closed for bets")
    return [
        BetCancelled(
            round=state.round, bet_id=placed.bet_id, player=placed.player, amount=placed.amount
        )
    ]


def _no_more_bets(state: TableState) -> list[Event]:
    """The dealer's call "No more bets", 4620.4(c)(1)."""
    if state.phase != "betting":
        raise RuleError("round_not_open", f"no round of {state.table} is open for bets")
    return [NoMoreBets(round=state.round)]


def _require_closed_round(state: TableState) -> None:
    if state.phase == "idle":
        raise RuleError("round_not_open", f"no round of {state.table} is in play")
    if state.phase == "betting":
        raise RuleError(
            "bets_open",
            f"round {state.round} of {state.table}: call no more bets before the outcome",
        )


def _record_outcome(state: TableState, command: RecordOutcome) -> list[Event]:
    """The dealer enters the physical device's result; the game validates it."""
    if state.outcome_mode != "dealer":
        raise RuleError("wrong_mode", f"{state.table} draws its outcomes: use draw_outcome")
    _require_closed_round(state)
    game = table_game(state)
    outcome = game.check_outcome(state.config, command.outcome, state.last_outcome)
    return _outcome_and_settlement(state, game, outcome, "dealer")


def _draw_outcome(state: TableState, command: DrawOutcome) -> list[Event]:
    """The server's CSPRNG draws the outcome (its index enters as data)."""
    if state.outcome_mode != "rng":
        raise RuleError("wrong_mode", f"{state.table} has a physical device: use record_outcome")
    _require_closed_round(state)
    game = table_game(state)
    outcome = game.drawn_outcome(state.config, command.index, state.last_outcome)
    return _outcome_and_settlement(state, game, outcome, "rng")


def _outcome_and_settlement(
    state: TableState, game: Game, outcome: Mapping[str, Any], source: str
) -> list[Event]:
    settlements = settle_round(state, game, outcome)
    events: list[Event] = [
        OutcomeRecorded(round=state.round, outcome=outcome, source=source),
        Settled(
            round=state.round,
            outcome=outcome,
            settlements=settlements,
            wagered=sum([s.amount for s in settlements]),
            paid=sum([s.paid for s in settlements]),
        ),
    ]
    if state.shelf is not None:
        events += merchandise.awards(
            state.shelf, state.config, state.round, outcome["section"], settlements
        )
    return events


def settle_round(
    state: TableState, game: Game, outcome: Mapping[str, Any]
) -> tuple[BetSettlement, ...]:
    """Every bet of the round, in the order placed, settled by the game's payout table."""
    return game.settle(state.config, list(state.bets.values()), outcome)


def _close_table(state: TableState, command: CloseTable) -> list[Event]:
    """A table closes only between rounds, so that no bet is left unsettled."""
    if state.phase != "idle":
        raise RuleError(
            "round_in_progress", f"round {state.round} of {state.table} is not settled yet"
        )
    return [TableClosed(reason=command.reason)]


def _add_stock(state: TableState, command: AddStock) -> list[Event]:
    """Restock a merchandise wheel: every item valid for its layout, none over the single
    prize limit (4620.10(d), GML 189(5)(a)) and none already on its control sheet."""
    if state.shelf is None:
        raise RuleError("wrong_game", f"{state.table} is not a merchandise wheel")
    if not isinstance(command.items, list) or not command.items:
        raise RuleError("bad_request", "items must be a non-empty list of merchandise")
    try:
        items = merchandise.stock_items(parse_inventory(state.config, command.items))
    except RuleError as e:
        if e.code != "invalid_config":
            raise
        raise RuleError("invalid_stock", e.message) from None
    merchandise.check_restock(state.shelf, items)
    return [MerchandiseStocked(items=items, source="restock")]


def evolve(state: TableState, event: Event) -> TableState:
    """Fold one event into the table's state."""
    version = state.version + 1
    match event:
        case TableOpened():
            shelf = None
            if event.game == MERCHANDISE_WHEEL:
                shelf = Shelf(limit=int(event.config["aggregate_prize_limit"]))
            return replace(
                state,
                version=version,
                opened=True,
                game=event.game,
                config=event.config,
                outcome_mode="rng" if event.outcome_mode == "rng" else "dealer",
                shelf=shelf,
            )
        case RoundOpened():
            return replace(
                state,
                version=version,
                round=event.round,
                phase="betting",
                placed=None,
                cancelled=frozenset(),
                shelf=None if state.shelf is None else replace(state.shelf, exposure={}),
            )
        case BetPlaced():
            placed = PlacedBet(
                bet_id=event.bet_id, player=event.player, bet=event.bet, amount=event.amount
            )
            shelf = state.shelf
            if shelf is not None:
                shelf = merchandise.exposed(shelf, state.config, event.bet["space"], +1)
            return replace(
                state, version=version, placed=BetNode(placed, state.placed), shelf=shelf
            )
        case BetCancelled():
            shelf = state.shelf
            if shelf is not None:
                space = state.bets[event.bet_id].bet["space"]
                shelf = merchandise.exposed(shelf, state.config, space, -1)
            return replace(
                state, version=version, cancelled=state.cancelled | {event.bet_id}, shelf=shelf
            )
        case MerchandiseStocked() if state.shelf is not None:
            return replace(
                state, version=version, shelf=merchandise.stocked(state.shelf, event.items)
            )
        case MerchandiseAwarded() if state.shelf is not None:
            return replace(state, version=version, shelf=merchandise.awarded(state.shelf, event))
        case PrizeLimitReached():
            return replace(state, version=version, closed=True)
        case NoMoreBets():
            return replace(state, version=version, phase="no_more_bets")
        case OutcomeRecorded():
            key = table_game(state).winning_key(event.outcome)
            recent = (key, *state.recent)[:RECENT_OUTCOMES]
            return replace(state, version=version, last_outcome=key, recent=recent)
        case Settled():
            return replace(state, version=version, phase="idle", placed=None, cancelled=frozenset())
        case TableClosed():
            return replace(state, version=version, closed=True)
    return replace(state, version=version)


def fold(state: TableState, events: Sequence[Event]) -> TableState:
    for ev in events:
        state = evolve(state, ev)
    return state
