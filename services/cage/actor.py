"""The cage actor's rules adapter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from events.base import Event
from events.envelope import Envelope
from events.money import balance_moves
from services.cage import rules
from services.cage.rules import CageCommand, CageState, CashOut


class CageRules:
    """What the generic actor needs to run the cage's stream."""

    def __init__(self, max_transaction: int) -> None:
        self.max_transaction = max_transaction

    def initial(self, stream: str) -> CageState:
        return replace(CageState(), max_transaction=self.max_transaction)

    def decide(self, state: CageState, command: CageCommand) -> list[Event]:
        return rules.decide(state, command)

    def evolve(self, state: CageState, event: Event) -> CageState:
        return rules.evolve(state, event)

    def correlation(self, state: CageState) -> str | None:
        return None

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return balance_moves(events)

    def debtors(self, state: CageState, command: CageCommand) -> Sequence[str]:
        return (command.player,) if isinstance(command, CashOut) else ()

    def result(self, state: CageState, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": envelopes[-1].seq if envelopes else state.version}
        for env in envelopes:
            out["player"] = env.data["player"]
            out["amount"] = env.data["amount"]
        return out
