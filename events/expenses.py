"""Events of the expense stream ``expenses``: what the games of chance cost, for the GC-7.

Each expense is one fact the member in charge records: the payee and address, what was
bought or paid for, the amount, the category of the GC-7's Part B and what it is for (one
occasion, or the whole license period). GML 195-f(1) asks for "each item of expense
incurred or paid ... the name and address of each payee" (docs/FORMS.md "Expenses")."""

from __future__ import annotations

from dataclasses import dataclass

from events.base import Event, event


@event("ExpenseRecorded")
@dataclass(frozen=True, slots=True, kw_only=True)
class ExpenseRecorded(Event):
    """An expense of the games of chance, ``amount`` cents paid or owed to ``payee``.

    ``number`` counts the organization's expenses from 1 (the line's reference on the
    GC-7); ``covers`` is ``occasion`` (then ``occasion`` names it) or ``license_period``
    (then ``occasion`` is None); ``period_start`` and ``period_end`` are the license
    period it falls in, as the night file gives it."""

    number: int
    payee: str
    address: str
    description: str
    amount: int
    category: str
    covers: str
    occasion: str | None
    period_start: str
    period_end: str
    recorded_by: str
    recorded_at: int
