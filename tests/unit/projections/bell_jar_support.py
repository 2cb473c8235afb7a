"""Hand-written bell jar deal events for the projection's tests (events/bell_jars.py)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from events.base import Event, to_data
from events.bell_jars import (
    DealClosed,
    DealCommingled,
    DealPutInPlay,
    DealRegistered,
    FlarePrize,
    TicketRedeemed,
    TicketsSold,
)
from projections.bell_jars import BellJars
from services.aggregates import deal_stream

NEW_YORK = ZoneInfo("America/New_York")

Step = tuple[str, Event]
"""One event of a deal's stream: (deal id, event)."""


def at(year: int, month: int, day: int, hour: int = 12, minute: int = 0) -> int:
    """Unix ms of a local time in New York."""
    return int(datetime(year, month, day, hour, minute, tzinfo=NEW_YORK).timestamp() * 1000)


def cash(value: int, count: int) -> FlarePrize:
    return FlarePrize(value=value, count=count, kind="cash", description="", value_basis="cash")


def item(value: int, count: int, name: str = "radio") -> FlarePrize:
    return FlarePrize(
        value=value, count=count, kind="merchandise", description=name, value_basis="cost"
    )


FLARE = (cash(5_000, 2), cash(1_000, 10), cash(200, 40))
"""A flare of 52 cash prizes worth 28,000 cents in all (lines 0, 1, 2)."""


def registered(
    deal: str,
    *,
    tickets: int = 400,
    price: int = 100,
    cost: int = 6_000,
    invoice_date: str = "2026-01-05",
    prizes: tuple[FlarePrize, ...] = FLARE,
    kind: str = "bell_jar",
    when: int | None = None,
) -> Step:
    return deal, DealRegistered(
        deal=deal,
        kind=kind,
        supplier="Acme Gaming",
        supplier_license="SUP-7",
        invoice_number=f"INV-{deal}",
        invoice_date=invoice_date,
        serial_number=f"SN-{deal}",
        form_number="F-100",
        ticket_count=tickets,
        ticket_price=price,
        cost=cost,
        prizes=prizes,
        at=at(2026, 1, 6) if when is None else when,
    )


def commingled(deal: str, lead: str, when: int) -> Step:
    return deal, DealCommingled(lead=lead, at=when)


def in_play(deal: str, when: int, *members: str) -> Step:
    return deal, DealPutInPlay(deals=(deal, *members), container="jar", column="", at=when)


def sold(deal: str, count: int, when: int, price: int = 100, amount: int | None = None) -> Step:
    paid = count * price if amount is None else amount
    return deal, TicketsSold(count=count, amount=paid, seller="s-1", at=when)


def redeemed(deal: str, line: int, value: int, when: int, kind: str = "cash") -> Step:
    return deal, TicketRedeemed(
        prize=line,
        value=value,
        kind=kind,
        ticket=f"t-{when}",
        defaced=True,
        retain_until="2027-02-01",
        redeemed_by="s-1",
        at=when,
    )


def closed(deal: str, reason: str, unsold: int, when: int) -> Step:
    return deal, DealClosed(reason=reason, unsold=unsold, at=when)


def fold(steps: list[Step], projection: BellJars | None = None) -> BellJars:
    """Fold the steps (as stored: ``to_data``) into ``projection`` (a new one by default)."""
    p = BellJars() if projection is None else projection
    for deal, ev in steps:
        p.apply(ev.NAME, deal_stream(deal), to_data(ev))
    return p


def sold_out_deal() -> list[Step]:
    """d-1: 400 tickets at $1, cost $60, every ticket sold in Q1 2026, 30 prizes paid."""
    return [
        registered("d-1"),
        in_play("d-1", at(2026, 1, 7)),
        sold("d-1", 150, at(2026, 1, 8)),
        redeemed("d-1", 0, 5_000, at(2026, 1, 8)),
        redeemed("d-1", 1, 1_000, at(2026, 1, 9)),
        sold("d-1", 250, at(2026, 2, 1)),
        *[redeemed("d-1", 2, 200, at(2026, 2, 1, 13, i)) for i in range(28)],
        closed("d-1", "sold_out", 0, at(2026, 2, 1, 14)),
    ]


def combination() -> list[Step]:
    """c-1 leads c-2 (identical, complete deals commingled, 4620.19(c)(15)): 800 tickets in
    one receptacle, 700 sold; each deal's own prizes; removed with 100 unsold."""
    return [
        registered("c-1"),
        registered("c-2"),
        commingled("c-2", "c-1", at(2026, 5, 1)),
        in_play("c-1", at(2026, 5, 1, 13), "c-2"),
        sold("c-1", 700, at(2026, 5, 2)),
        redeemed("c-1", 0, 5_000, at(2026, 5, 2)),
        redeemed("c-2", 0, 5_000, at(2026, 5, 2)),
        redeemed("c-2", 1, 1_000, at(2026, 5, 3)),
        redeemed("c-2", 2, 200, at(2026, 5, 3)),
        closed("c-1", "removed", 100, at(2026, 6, 30, 23, 30)),
        closed("c-2", "removed", 0, at(2026, 6, 30, 23, 30)),
    ]


def everything() -> list[Step]:
    removed = [
        registered("d-2", price=50, invoice_date="2025-12-20"),
        in_play("d-2", at(2026, 3, 1)),
        sold("d-2", 300, at(2026, 3, 2), price=50),
        redeemed("d-2", 0, 5_000, at(2026, 3, 2)),
        closed("d-2", "removed", 100, at(2026, 4, 2)),
    ]
    return sold_out_deal() + removed + combination()
