"""A table's pure rules: what every table game shares, whatever its round.

The table keeps money (the round's bets placed and taken back), limits, the order of
commands and the lifecycle: opened, a round open for bets, no more bets, the round in play
until the game ends it, closed. Everything else belongs to the table's game
(``services.games.base.Game``): whether a bet is on its layout, its own steps (an outcome,
a deal, an action on a hand), its settlement, which may come in parts, and its own state
(``TableState.play``). ``decide(state, command) -> events`` refuses a command with a
:class:`RuleError` carrying a stable protocol code, or returns the events it causes;
``evolve(state, event) -> state`` folds one event into the table and its game. No I/O,
clock or randomness: a game's draws enter through its step, written by the table actor's
adapter (``services.tables.actor``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from events.base import Event
from events.records import replace, replacer
from events.tables import (
    BetCancelled,
    BetPlaced,
    BetsReopened,
    NoMoreBets,
    RoundEnded,
    RoundOpened,
    RoundVoided,
    Settled,
    TableClosed,
    TableOpened,
)
from services.aggregates import RuleError
from services.games.base import Game, OutcomeMode, PlacedBet, Round, RoundPhase
from services.games.registry import game as game_named

Phase = RoundPhase


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
    play: Any = None
    """The game's own state (``Game.initial`` at opening, then every event folded)."""

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
    """One bet of a round and the bets placed before it, with a shortcut to an older
    bet so that one is found by its seq without walking the whole round
    (:func:`bet_on_layout`). Build one with :func:`placed_on`."""

    bet: PlacedBet
    previous: BetNode | None
    seq: int
    """The table's seq of the bet's ``BetPlaced`` (the last part of its bet id)."""
    shortcut: BetNode | None
    """The newest bet placed before this one's block of :data:`SHORTCUT_BLOCK` seqs."""


SHORTCUT_BLOCK = 64
"""Seqs per block of a round's bets: finding a bet walks at most one block bet by bet,
and hops over the blocks after it (a round of 20,000 bets: a few hundred steps, not
20,000)."""


def placed_on(bet: PlacedBet, seq: int, previous: BetNode | None) -> BetNode:
    """``bet``, placed at ``seq``, on top of the round's bets ``previous``."""
    if previous is None:
        return BetNode(bet, None, seq, None)
    if previous.seq // SHORTCUT_BLOCK == seq // SHORTCUT_BLOCK:
        return BetNode(bet, previous, seq, previous.shortcut)
    return BetNode(bet, previous, seq, previous)


def bet_on_layout(state: TableState, bet_id: str) -> PlacedBet | None:
    """The round's bet ``bet_id`` if it is still on the layout. A bet id is
    ``{table}.{round}.{seq}``: an id of another table or round, or not a bet's, or of a
    bet taken back, is answered without a walk; any other walks a block at most and hops
    the blocks after it, so a client naming bets cannot make the table walk a round of
    thousands of bets for each one."""
    prefix = f"{state.table}.{state.round}."
    if not bet_id.startswith(prefix) or bet_id in state.cancelled:
        return None
    digits = bet_id[len(prefix) :]
    if not (0 < len(digits) <= 19 and digits.isascii() and digits.isdigit()):
        return None
    seq = int(digits)
    node = state.placed
    while node is not None and node.seq > seq:
        shortcut = node.shortcut
        node = shortcut if shortcut is not None and shortcut.seq >= seq else node.previous
    if node is None or node.seq != seq or node.bet.bet_id != bet_id:
        return None
    return node.bet


# The table's own commands: imperatives, as the gateway parsed them. Any other command is a
# step of the table's game (``RecordOutcome``, ``DrawOutcome``, ``AddStock``, a deal …).


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
class CloseTable:
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class VoidRound:
    """A member in charge voids the round in play (docs/RULES.md "Voiding a round")."""

    reason: str


TableCommand = (
    OpenTable | OpenRound | PlaceBet | CancelBet | CallNoMoreBets | CloseTable | VoidRound
)
TABLE_COMMANDS = (
    OpenTable,
    OpenRound,
    PlaceBet,
    CancelBet,
    CallNoMoreBets,
    CloseTable,
    VoidRound,
)


def table_game(state: TableState) -> Game[Any]:
    return game_named(state.game)


def round_view(state: TableState) -> Round:
    """The round as the table's game sees it when it decides a step."""
    return Round(
        table=state.table,
        number=state.round,
        phase=state.phase,
        outcome_mode=state.outcome_mode,
        bets=list(state.bets.values()),
        next_seq=state.version + 1,
    )


def decide(state: TableState, command: Any) -> list[Event]:
    """The events ``command`` causes at this table, or a RuleError with its code. The
    table's own commands are decided here; any other is a step of the table's game."""
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
        case CloseTable():
            return _close_table(state, command)
        case VoidRound():
            return _void_round(state, command)
    return table_game(state).decide(state.config, state.play, round_view(state), command)


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
    opened = TableOpened(
        table=state.table, game=command.game, config=config, outcome_mode=command.outcome_mode
    )
    return [opened, *game.opening(config)]


def _open_round(state: TableState) -> list[Event]:
    """The dealer opens the next round; only when the previous one is settled."""
    if state.phase != "idle":
        raise RuleError(
            "round_in_progress", f"round {state.round} of {state.table} is not settled yet"
        )
    return [RoundOpened(round=state.round + 1)]


def _place_bet(state: TableState, command: PlaceBet) -> list[Event]:
    """A bet is accepted only while the round is open for bets, 4620.4(c)(1); the game
    says whether it is a bet on its layout, within its limits, and (a game with the hook
    ``TableHooks.check_player_bet``) whether this player may add it to the bets on the
    layout."""
    if state.phase == "idle":
        raise RuleError("round_not_open", f"no round of {state.table} is open for bets")
    if state.phase == "no_more_bets":
        raise RuleError(
            "bets_closed",
            f"round {state.round} of {state.table} is closed for bets (no more bets, 4620.4(c)(1))",
        )
    game = table_game(state)
    bet = game.check_bet(state.config, state.play, command.bet, command.amount)
    check_player_bet = getattr(game, "check_player_bet", None)
    if check_player_bet is not None:  # a game's own rule on who bets (TableHooks)
        check_player_bet(state.config, state.play, command.player, bet, _round_bets(state))
    seq = state.version + 1
    bet_id = f"{state.table}.{state.round}.{seq}"
    return [
        BetPlaced(
            round=state.round, bet_id=bet_id, player=command.player, bet=bet, amount=command.amount
        )
    ]


def _round_bets(state: TableState) -> Iterator[PlacedBet]:
    """The round's bets still on the layout, newest first, walked only as far as read."""
    node = state.placed
    while node is not None:
        if node.bet.bet_id not in state.cancelled:
            yield node.bet
        node = node.previous


def _cancel_bet(state: TableState, command: CancelBet) -> list[Event]:
    """A bet may be taken back only before no more bets, 4620.4(c)(1), and only while its
    game lets it go (a bet a roll has applied to stays, ``TableHooks.check_cancel``)."""
    check_cancel = getattr(table_game(state), "check_cancel", None)
    if check_cancel is not None:
        check_cancel(state.config, state.play, command.bet_id, command.player)
    placed = bet_on_layout(state, command.bet_id)
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


def _close_table(state: TableState, command: CloseTable) -> list[Event]:
    """A table closes only between rounds, so that no bet is left unsettled; a bet still
    riding then (``TableHooks.closing``) is returned first."""
    if state.phase != "idle":
        raise RuleError(
            "round_in_progress", f"round {state.round} of {state.table} is not settled yet"
        )
    closing = getattr(table_game(state), "closing", None)
    returned = [] if closing is None else closing(state.config, state.play, round_view(state))
    return [*returned, TableClosed(reason=command.reason)]


def _void_round(state: TableState, command: VoidRound) -> list[Event]:
    """Void the round in play: every wager not yet settled goes back to its player, and
    the round ends (the game says which wagers and how). Not before a round is open."""
    if state.phase == "idle":
        raise RuleError("round_not_open", f"no round of {state.table} is in play")
    voided = RoundVoided(round=state.round, reason=command.reason)
    return [voided, *table_game(state).void(state.config, state.play, round_view(state))]


def evolve(state: TableState, event: Event) -> TableState:
    """Fold one event into the table's state, and into its game's."""
    version = state.version + 1
    if isinstance(event, TableOpened):
        game = game_named(event.game)
        return replace(
            state,
            version=version,
            opened=True,
            game=event.game,
            config=event.config,
            outcome_mode="rng" if event.outcome_mode == "rng" else "dealer",
            # the game folds its table's opening too (Black Jack learns its mode from it)
            play=game.evolve(event.config, game.initial(event.config), event),
        )
    game = table_game(state)
    play = game.evolve(state.config, state.play, event)
    closed = state.closed or game.closed(play)
    match event:
        case BetPlaced():
            placed = PlacedBet(
                bet_id=event.bet_id, player=event.player, bet=event.bet, amount=event.amount
            )
            node = placed_on(placed, version, state.placed)
            return _after_bet(state, version, play, closed, node)
        case RoundOpened():
            return replace(
                state,
                version=version,
                play=play,
                closed=closed,
                round=event.round,
                phase="betting",
                placed=None,
                cancelled=frozenset(),
            )
        case BetCancelled():
            cancelled = state.cancelled | {event.bet_id}
            return replace(state, version=version, play=play, closed=closed, cancelled=cancelled)
        case NoMoreBets():
            return replace(state, version=version, play=play, closed=closed, phase="no_more_bets")
        case BetsReopened():
            return replace(state, version=version, play=play, closed=closed, phase="betting")
        case Settled() | RoundEnded():
            return replace(
                state,
                version=version,
                play=play,
                closed=closed,
                phase="idle",
                placed=None,
                cancelled=frozenset(),
            )
        case TableClosed():
            return replace(state, version=version, play=play, closed=True)
    return _after_step(state, version, play, closed)


_after_bet = replacer(TableState, "version", "play", "closed", "placed")
"""``replace(state, version=, play=, closed=, placed=)``, for the fold of every bet."""
_after_step = replacer(TableState, "version", "play", "closed")
"""``replace(state, version=, play=, closed=)``, for the fold of a step of the game."""


def fold(state: TableState, events: Sequence[Event]) -> TableState:
    for ev in events:
        state = evolve(state, ev)
    return state
