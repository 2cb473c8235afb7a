"""A pure driver for the dice games of several rolls: the real table rules
(``services.tables.rules``) behind the table actor's own adapter (``TableRules``), with the
server's Chance on a seeded generator, folding every event as the actor would."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from events.base import Event
from events.money import money_moves
from services.aggregates import RuleError
from services.chance import ServerChance, seal_key
from services.games.dice_rounds import RollDice
from services.tables.actor import TableRules
from services.tables.rules import (
    CallNoMoreBets,
    CancelBet,
    CloseTable,
    OpenRound,
    OpenTable,
    PlaceBet,
    TableState,
    VoidRound,
)

SECRET = b"dice test secret, 32 bytes long!"


class DiceTable:
    """One table: its state, every event it wrote and the players' balances."""

    def __init__(
        self,
        game: str,
        mode: str = "dealer",
        *,
        seed: int = 1,
        chips: int = 100_000,
        **options: Any,
    ) -> None:
        self.rules = TableRules(ServerChance(seal_key(SECRET), random.Random(seed)))
        self.state: TableState = self.rules.initial("table:t1")
        self.events: list[Event] = []
        self.chips = chips
        self.balance: Counter[str] = Counter()
        self.do(OpenTable(game=game, config=options, outcome_mode=mode))  # type: ignore[arg-type]

    def do(self, command: Any) -> list[Event]:
        """Decide and fold ``command``; the balance guard's check (no balance below zero)."""
        events = self.rules.decide(self.state, command)
        moved = Counter(self.balance)
        for ev in events:
            for m in money_moves(ev):
                moved[m.player] += m.cents
        assert all(self.chips + v >= 0 for v in moved.values()), "insufficient funds"
        self.balance = moved
        for ev in events:
            self.state = self.rules.evolve(self.state, ev)
            self.events.append(ev)
        return events

    def refused(self, command: Any) -> str:
        """The code ``command`` is refused with; the state is unchanged."""
        before = self.state
        try:
            self.rules.decide(self.state, command)
        except RuleError as e:
            assert self.state is before
            return e.code
        raise AssertionError(f"{command!r} was not refused")

    # --- the ops, as the gateway builds them ---------------------------------------------

    def open(self) -> None:
        self.do(OpenRound())

    def bet(self, player: str, kind: str, amount: int) -> str:
        [placed] = self.do(PlaceBet(player=player, bet={"kind": kind}, amount=amount))
        return str(placed.bet_id)  # type: ignore[attr-defined]

    def close_bets(self) -> None:
        self.do(CallNoMoreBets())

    def roll(
        self,
        dice: Iterable[int] | None = None,
        player: str | None = None,
        thrown_by: str | None = None,
    ) -> list[Event]:
        step = RollDice(
            player=player, dice=None if dice is None else list(dice), thrown_by=thrown_by
        )
        return self.do(step)

    def cancel(self, bet_id: str, player: str | None = None) -> list[Event]:
        return self.do(CancelBet(bet_id=bet_id, player=player))

    def void(self) -> list[Event]:
        return self.do(VoidRound(reason="test"))

    def close(self) -> list[Event]:
        return self.do(CloseTable(reason="night over"))

    @property
    def view(self) -> dict[str, Any]:
        from services.tables.rules import round_view, table_game

        return table_game(self.state).view(
            self.state.config, self.state.play, round_view(self.state)
        )

    def refold(self) -> TableState:
        """The table folded again from its events alone (what a restart does)."""
        state = self.rules.initial("table:t1")
        for ev in self.events:
            state = self.rules.evolve(state, ev)
        return state


__all__ = ["DiceTable", "replace"]
