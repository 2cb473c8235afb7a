"""Builders for the form tests: bell jar deals and raffles driven by commands through their
pure rules (``decide``/``evolve``), their events folded into the real projections, and a
PDF's text read back."""

from __future__ import annotations

import io
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pypdf import PdfReader

from events.base import Event, to_data
from events.bell_jars import FlarePrize
from projections.bell_jars import BellJars
from projections.raffles import Raffles
from services.aggregates import deal_stream
from services.bell_jars import rules
from services.bell_jars.state import (
    DealCommand,
    DealState,
    PutDealInPlay,
    RecordSale,
    RedeemTicket,
    RegisterDeal,
    RemoveDeal,
)
from tests.unit.raffles.support import Raffle

NEW_YORK = "America/New_York"

FLARE = (
    FlarePrize(500, 1, "cash", "", "cash"),
    FlarePrize(200, 2, "cash", "", "cash"),
    FlarePrize(100, 1, "cash", "", "cash"),
)
"""Four cash prizes worth $10 in all (lines 0, 1, 2), for a deal of 20 tickets at $1."""


def at(year: int, month: int, day: int, hour: int = 12, minute: int = 0) -> int:
    """Unix ms of a local time in New York."""
    moment = datetime(year, month, day, hour, minute, tzinfo=ZoneInfo(NEW_YORK))
    return int(moment.timestamp() * 1000)


class Deal:
    """A bell jar deal moved only by the events its pure rules decide."""

    def __init__(
        self,
        deal: str,
        *,
        invoice_date: str,
        when: int,
        tickets: int = 20,
        price: int = 100,
        cost: int = 400,
        prizes: tuple[FlarePrize, ...] = FLARE,
    ) -> None:
        self.state = DealState(deal=deal)
        self.log: list[Event] = []
        self.tickets = 0
        self.run(
            RegisterDeal(
                kind="bell_jar",
                supplier="Acme Gaming Supply",
                supplier_license="SUP-77",
                invoice_number=f"INV-{deal}",
                invoice_date=invoice_date,
                serial_number=f"S-{deal}",
                ticket_serial=f"S-{deal}",
                flare_serial=f"S-{deal}",
                invoice_serial=f"S-{deal}",
                form_number="F-1",
                ticket_count=tickets,
                ticket_price=price,
                cost=cost,
                prizes=prizes,
                now_ms=when,
                serial_holder=deal,
            )
        )

    def run(self, command: DealCommand) -> Deal:
        events = rules.decide(self.state, command)
        self.state = rules.fold(self.state, events)
        self.log += events
        return self

    def in_play(self, when: int) -> Deal:
        return self.run(PutDealInPlay(container="jar", column="", now_ms=when))

    def sell(self, count: int, when: int) -> Deal:
        amount = count * self.state.ticket_price
        return self.run(RecordSale(count=count, amount=amount, seller="s-1", now_ms=when))

    def redeem(self, *lines: int, when: int) -> Deal:
        for line in lines:
            self.tickets += 1
            ticket = f"{self.state.deal}-t{self.tickets}"
            self.run(RedeemTicket(prize=line, ticket=ticket, redeemed_by="s-1", now_ms=when))
        return self

    def remove(self, when: int) -> Deal:
        return self.run(RemoveDeal(now_ms=when))


def bell_jars(*deals: Deal) -> BellJars:
    """The bell jar projection folded from the deals' events, one deal after the other."""
    p = BellJars(NEW_YORK)
    for d in deals:
        for ev in d.log:
            p.apply(ev.NAME, deal_stream(d.state.deal), to_data(ev))
    return p


def raffles(*pairs: tuple[str, Raffle]) -> Raffles:
    """The raffle projection folded from each raffle's events (``(raffle id, raffle)``)."""
    p = Raffles()
    for raffle, r in pairs:
        for ev in r.log:
            p.apply(ev.NAME, f"raffle:{raffle}", to_data(ev))
    return p


def view_of(p: Raffles, raffle: str) -> dict[str, Any]:
    v = p.view(raffle)
    assert v is not None
    return v


def pdf_text(pdf: bytes) -> str:
    """Every page's text, as pypdf extracts it."""
    assert pdf.startswith(b"%PDF-")
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
