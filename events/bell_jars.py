"""Events of a bell jar deal's stream ``deal:<id>`` (9 NYCRR 4620.19; bell jars include coin
boards, merchandise boards and seal cards, 4620.1(q)).

The tickets are physical, bought from a licensed supplier: the server never prints, sells
or draws one. A deal's stream is its ledger: what was bought (the invoice, the serial and
form numbers, the flare's prize table), when it was put in play, every sale recorded at
the jar or the vending machine into its cash bank, every winning ticket redeemed (defaced
and kept a year), and how it left play. Deals that are identical and complete may share one
receptacle and one bank (4620.19(c)(15)): the bank is kept on the stream of the first deal
of the combination (its *lead*), and each other deal's stream says which lead it joined.
Money is integer cents; times are unix ms; dates are ISO ``YYYY-MM-DD``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from events.base import Event, event


class FlarePrize(NamedTuple):
    """One line of the flare's prize table: ``count`` winning tickets of ``value`` cents
    each. ``kind`` is ``cash`` or ``merchandise`` (4620.19(c)(8): merchandise only on
    banded tickets, merchandise boards and seal cards); a merchandise line names its item
    (``description``) and how its value was set (``value_basis``: ``cost``, or
    ``fair_market_value`` for a donated item; ``cash`` for a cash prize)."""

    value: int
    count: int  # type: ignore[assignment]  # the flare line's count, not tuple.count
    kind: str
    description: str
    value_basis: str


@event("DealRegistered")
@dataclass(frozen=True, slots=True, kw_only=True)
class DealRegistered(Event):
    """The member in charge registered a deal as it arrived from the supplier. The serial
    numbers of the tickets, the flare and the invoice matched (4620.19(c)(17)); the price,
    every prize and the flare's total were within the limits in force (4620.19(b)(2)-(4)).
    ``kind`` is ``bell_jar``, ``coin_board``, ``merchandise_board``, ``seal_card`` or
    ``banded``; ``cost`` is what the organization paid for the deal, bought on
    ``invoice_date``; ``prizes`` is the flare's prize table, in its order (a redemption
    names a line by its index)."""

    deal: str
    kind: str
    supplier: str
    supplier_license: str
    invoice_number: str
    invoice_date: str
    serial_number: str
    form_number: str
    ticket_count: int
    ticket_price: int
    cost: int
    prizes: tuple[FlarePrize, ...]
    at: int


@event("DealCommingled")
@dataclass(frozen=True, slots=True, kw_only=True)
class DealCommingled(Event):
    """This complete deal, never sold from, joined the receptacle and the bank of the deal
    ``lead`` (4620.19(c)(15)): its sales are recorded on the lead's stream from now on; its
    redemptions stay on its own."""

    lead: str
    at: int


@event("DealPutInPlay")
@dataclass(frozen=True, slots=True, kw_only=True)
class DealPutInPlay(Event):
    """The deal (with ``deals``, the combination it leads: every deal of the receptacle,
    this one first) was offered for sale from ``container`` (``jar`` or
    ``vending_machine``; ``column`` labels a vending machine's stacking column,
    4620.19(c)(16)). Its cash bank opens empty (4620.19(c)(20))."""

    deals: tuple[str, ...]
    container: str
    column: str
    at: int


@event("TicketsSold")
@dataclass(frozen=True, slots=True, kw_only=True)
class TicketsSold(Event):
    """``count`` tickets sold from the receptacle for ``amount`` cents (count x price),
    into the bank of this (lead) deal; ``seller`` is who recorded it (the token's
    subject)."""

    count: int
    amount: int
    seller: str
    at: int


@event("TicketRedeemed")
@dataclass(frozen=True, slots=True, kw_only=True)
class TicketRedeemed(Event):
    """A winning ticket of this deal was surrendered (4620.19(c)(9)) and its prize paid:
    line ``prize`` of the flare, ``value`` cents, ``kind`` as the flare line says (a
    merchandise prize awards the item at its value). The ticket was defaced and is kept
    until ``retain_until``, one year on (4620.19(c)(11)); ``ticket`` is what identifies
    it in the organization's file (its number, when it has one). When the deal is in a
    combination, the lead's bank paid it."""

    prize: int
    value: int
    kind: str
    ticket: str
    defaced: bool
    retain_until: str
    redeemed_by: str
    at: int


@event("DealClosed")
@dataclass(frozen=True, slots=True, kw_only=True)
class DealClosed(Event):
    """The deal left play: ``reason`` ``sold_out`` (every ticket of the receptacle sold:
    it closes itself) or ``removed`` (the member in charge took it out of play, allowed
    only once 75 % of its prizes were awarded by count and by value, 4620.19(c)(18));
    ``unsold`` tickets are recorded as kept. A combination closes all its deals at once
    (each deal's stream records its own ``DealClosed``)."""

    reason: str
    unsold: int
    at: int
