"""Hand-written samples of every bell jar event (for tests/unit/test_events.py)."""

from __future__ import annotations

from events.base import Event
from events.bell_jars import (
    DealClosed,
    DealCommingled,
    DealPutInPlay,
    DealRegistered,
    DealSerialClaimed,
    FlarePrize,
    TicketRedeemed,
    TicketsSold,
)

AT = 1_795_000_000_000

DEAL_SAMPLES: list[Event] = [
    DealRegistered(
        deal="d-1",
        kind="seal_card",
        supplier="Acme Gaming Supply",
        supplier_license="SUP-77",
        invoice_number="INV-9",
        invoice_date="2026-11-20",
        serial_number="S-100",
        form_number="F-1",
        ticket_count=2400,
        ticket_price=100,
        cost=40_000,
        prizes=(
            FlarePrize(10_000, 1, "merchandise", "A bicycle", "fair_market_value"),
            FlarePrize(500, 20, "cash", "", "cash"),
        ),
        at=AT,
    ),
    DealCommingled(lead="d-0", at=AT),
    DealPutInPlay(deals=("d-1", "d-2"), container="vending_machine", column="3", at=AT),
    TicketsSold(count=10, amount=1000, seller="seller-1", at=AT),
    TicketRedeemed(
        prize=1,
        value=500,
        kind="cash",
        ticket="T-17",
        defaced=True,
        retain_until="2027-11-27",
        redeemed_by="seller-1",
        at=AT,
    ),
    DealClosed(reason="removed", unsold=12, at=AT),
    DealSerialClaimed(serial="S-100", deal="d-1", at=AT),
]
