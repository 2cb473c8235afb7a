"""The expense actor's rules adapter."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from events.base import Event
from events.envelope import Envelope
from services.expenses import rules
from services.expenses.rules import ExpenseState, RecordExpense


class ExpenseRules:
    """What the generic actor needs to run the expense stream: the license period the
    night file gives enters here, as configuration."""

    def __init__(self, period_start: str, period_end: str) -> None:
        self.period_start = period_start
        self.period_end = period_end

    def initial(self, stream: str) -> ExpenseState:
        return ExpenseState(period_start=self.period_start, period_end=self.period_end)

    def decide(self, state: ExpenseState, command: RecordExpense) -> list[Event]:
        return rules.decide(state, command)

    def evolve(self, state: ExpenseState, event: Event) -> ExpenseState:
        return rules.evolve(state, event)

    def correlation(self, state: ExpenseState) -> str | None:
        return None

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return []  # an expense moves no player's chips

    def debtors(self, state: ExpenseState, command: RecordExpense) -> Sequence[str]:
        return ()

    def result(self, state: ExpenseState, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": envelopes[-1].seq if envelopes else state.version}
        for env in envelopes:
            out["expense"] = env.data["number"]
            out["amount"] = env.data["amount"]
            out["category"] = env.data["category"]
        return out
