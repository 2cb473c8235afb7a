"""The expense actor's rules adapter."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from events.base import Event
from events.envelope import Envelope
from services.expenses import rules
from services.expenses.rules import Calendar, ExpenseState, Period, RecordExpense


def calendar_of(
    occasions: Mapping[str, Mapping[str, Any]],
    periods: Iterable[Period],
    *,
    occasion: str,
    period: Period,
) -> Calendar:
    """The expense rules' :class:`~services.expenses.rules.Calendar` from the cash control
    projection's ``occasions`` (each with the ``period_start`` and ``period_end`` it ran
    under) and ``periods``, and the night's own ``occasion`` and license ``period``: the
    night file starts both when its process opens the license stream, so they are known
    before the projection has folded them."""
    ran = {
        o: (str(info.get("period_start", "")), str(info.get("period_end", "")))
        for o, info in occasions.items()
    }
    ran.setdefault(occasion, period)
    return Calendar(occasions=ran, periods=frozenset((*periods, period)), current=period)


class ExpenseRules:
    """What the generic actor needs to run the expense stream: what the log started (the
    occasions and their license periods, the night's period) enters here, read when a
    command is decided, and goes to the rules as data."""

    def __init__(self, calendar: Callable[[], Calendar]) -> None:
        self.calendar = calendar

    def initial(self, stream: str) -> ExpenseState:
        return ExpenseState()

    def decide(self, state: ExpenseState, command: RecordExpense) -> list[Event]:
        return rules.decide(state, command, self.calendar())

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
