"""The audit's expense check: every ``ExpenseRecorded`` of the ``expenses`` stream is one
the expense rules allow, numbered after the one before (docs/AUDIT.md, "What the audit
recomputes"; docs/RULES.md "Expenses").

An expense is a fact the member in charge entered, so nothing of it can be recomputed; what
can be checked is that it is one ``services.expenses.rules.check_expense`` lets through
(a payee, its address and a description, GML 195-f(1); an amount of positive whole cents;
a category of the GC-7's Part B, 5624.21; an occasion when it covers one and none when it
covers the license period), and that its ``number`` (its line on the GC-7) follows the
stream's last. Pure: reads the expense stream only."""

from __future__ import annotations

from events.envelope import Envelope
from events.expenses import ExpenseRecorded
from services.aggregates import EXPENSES, RuleError
from services.audit.checking import RuleChecker, body
from services.expenses.rules import RecordExpense, check_expense


class ExpenseChecker(RuleChecker):
    """Every recorded expense against the rules that admit one, and its numbering."""

    name: str = "expenses"
    types: frozenset[str] | None = frozenset({ExpenseRecorded.NAME})

    def __init__(self) -> None:
        super().__init__()
        self.numbers: dict[str, int] = {}
        """Per stream: the last expense number read."""

    def read(self, envelope: Envelope) -> None:
        """Check one expense: the rules admit it, and it is numbered after the last."""
        ev = body(self, envelope)
        if not isinstance(ev, ExpenseRecorded):
            return
        self.checked["expenses"] += 1
        if envelope.stream != EXPENSES:
            self.differs(envelope, "ExpenseRecorded: its stream", EXPENSES, envelope.stream)
        last = self.numbers.get(envelope.stream, 0)
        if ev.number != last + 1:
            self.differs(envelope, "ExpenseRecorded: its number on the GC-7", last + 1, ev.number)
        self.numbers[envelope.stream] = ev.number
        try:
            check_expense(
                RecordExpense(
                    payee=ev.payee,
                    address=ev.address,
                    description=ev.description,
                    amount=ev.amount,
                    category=ev.category,
                    covers=ev.covers,
                    occasion=ev.occasion,
                    recorded_by=ev.recorded_by,
                    now_ms=ev.recorded_at,
                )
            )
        except RuleError as e:
            self.differs(envelope, f"ExpenseRecorded: {e.message}", "an expense the rules admit",
                         e.code)  # fmt: skip
