"""What every check of the audit shares: a discrepancy, and the shape of a checker.

The audit reads the org log once, in order, and hands each event to the checkers that
asked for its type; each checker recomputes one kind of figure with the pure rules and
records what it checked and what did not match (docs/AUDIT.md)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from events.envelope import Envelope

JSONValue = None | bool | int | str | list["JSONValue"] | dict[str, "JSONValue"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Discrepancy:
    """One figure the log records that the rules (or the chain) do not give."""

    check: str
    """The checker that found it (``settlements``, ``chains``, ``balances``, …)."""
    stream: str
    seq: int | None
    """The event's seq in its stream (``None`` for a figure of a whole stream or player)."""
    what: str
    """What differs, readably: ``Settled round 212: bet b7 paid``."""
    expected: JSONValue
    """What the rules (or the chain) give."""
    found: JSONValue
    """What the log records."""
    log_id: str | None = None


class Checker(Protocol):
    """One kind of recomputation over the org log, fed in log order."""

    name: str
    types: frozenset[str] | None
    """The event types it reads (``None``: every event)."""
    checked: Counter[str]
    """What it checked, counted by kind (``{"settlement": 1200, "round": 300}``)."""
    discrepancies: list[Discrepancy]

    def observe(self, envelope: Envelope) -> None:
        """Take one event of the log (of one of :attr:`types`), in log order."""
        ...

    def finish(self) -> None:
        """The log has ended: check what can only be checked at the end."""
        ...
