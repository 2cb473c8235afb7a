"""The table actor's rules adapter: table rules, chance, balance moves and replies.

Randomness and the server's secrets enter a table here and nowhere else: before a step of
the table's game is decided, the game's ``prepare`` takes what it needs from the adapter's
:class:`~services.chance.ServerChance` (a draw, a shuffle's seed, a sealed card) against
the exact state the step is decided on, and writes it into the step as data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from events.base import Event
from events.envelope import Envelope
from events.money import balance_moves
from services.aggregates import TABLE_PREFIX
from services.chance import ServerChance
from services.tables import rules
from services.tables.rules import TABLE_COMMANDS, PlaceBet, TableState


class TableRules:
    """What the generic actor needs to run one table's stream."""

    def __init__(self, chance: ServerChance) -> None:
        self.chance = chance

    def initial(self, stream: str) -> TableState:
        return TableState(table=stream.removeprefix(TABLE_PREFIX))

    def decide(self, state: TableState, command: Any) -> list[Event]:
        if state.opened and not isinstance(command, TABLE_COMMANDS):
            game = rules.table_game(state)
            command = game.prepare(
                state.config, state.play, rules.round_view(state), command, self.chance
            )
        return rules.decide(state, command)

    def evolve(self, state: TableState, event: Event) -> TableState:
        return rules.evolve(state, event)

    def correlation(self, state: TableState) -> str | None:
        """Events of a round carry the round as correlation id (``roulette-1#12``)."""
        return f"{state.table}#{state.round}" if state.round else None

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return balance_moves(events)

    def debtors(self, state: TableState, command: Any) -> Sequence[str]:
        """The bettor of a bet; for a step of the game, whom the game says it may debit."""
        if isinstance(command, PlaceBet):
            return (command.player,)
        if state.opened and not isinstance(command, TABLE_COMMANDS):
            game = rules.table_game(state)
            return game.debtors(state.play, rules.round_view(state), command)
        return ()

    def result(self, state: TableState, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        """The reply: the last seq and round; the bet id of a bet; the game's part (the
        outcome and payouts, a merchandise wheel's awards, a hand's cards)."""
        out: dict[str, Any] = {"seq": envelopes[-1].seq if envelopes else state.version}
        if state.round:
            out["round"] = state.round
        for env in envelopes:
            if env.type == "BetPlaced":
                out["bet_id"] = env.data["bet_id"]
        if envelopes and state.opened:
            out.update(rules.table_game(state).result([env.event() for env in envelopes]))
        return out
