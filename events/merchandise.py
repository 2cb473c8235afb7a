"""Events of a merchandise wheel's inventory control sheet, 4620.10(e), on its table stream.

A merchandise wheel takes wagers in money and awards only merchandise (4620.10(c), (d)): its
rounds are the table events of ``events.tables`` (every ``Settled`` pays 0), and these events
record the stock, every item awarded and the wheel closing at the aggregate prize limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from events.base import Event, event


class StockItem(NamedTuple):
    """One item of merchandise: its id, the prize class it belongs to, and its value in
    cents: the cost to the licensee or, if donated, its current retail price, 4620.10(e)."""

    item: str
    prize: str
    value: int
    donated: bool


@event("MerchandiseStocked")
@dataclass(frozen=True, slots=True, kw_only=True)
class MerchandiseStocked(Event):
    """Items put on the wheel's shelf: the opening inventory of the night file (``source``
    ``opening``) or a restock by a member in charge (``restock``; the envelope's actor says
    who)."""

    items: tuple[StockItem, ...]
    source: str


@event("MerchandiseAwarded")
@dataclass(frozen=True, slots=True, kw_only=True)
class MerchandiseAwarded(Event):
    """A winning bet of ``round`` was handed ``item``; ``aggregate`` is the value awarded at
    the wheel so far, this item included (the control sheet's running total)."""

    round: int
    bet_id: str
    player: str
    item: str
    prize: str
    value: int
    donated: bool
    aggregate: int


@event("PrizeLimitReached")
@dataclass(frozen=True, slots=True, kw_only=True)
class PrizeLimitReached(Event):
    """The value awarded at the wheel reached the aggregate limit of GML 189(6)(a)(1): the
    wheel is closed (4620.10(e)) and every later command gets ``table_closed``."""

    aggregate: int
    limit: int
