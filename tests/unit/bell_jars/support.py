"""Builders for the bell jar rule tests: a deal registered, put in play, sold from."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from events.bell_jars import FlarePrize
from services.bell_jars import rules
from services.bell_jars.state import (
    Commingle,
    DealState,
    PutDealInPlay,
    RecordSale,
    RedeemTicket,
    RegisterDeal,
)

NOW = 1_795_000_000_000  # 2026-11-18 (UTC)
FLARE = (
    FlarePrize(500, 1, "cash", "", "cash"),
    FlarePrize(200, 2, "cash", "", "cash"),
    FlarePrize(100, 1, "cash", "", "cash"),
)
"""Four prizes worth $10 in a deal of 20 tickets at $1."""


def registration(deal: str = "d-1", serial: str = "S-1", **over: Any) -> RegisterDeal:
    fields: dict[str, Any] = {
        "kind": "bell_jar",
        "supplier": "Acme Gaming Supply",
        "supplier_license": "SUP-77",
        "invoice_number": "INV-9",
        "invoice_date": "2026-11-20",
        "serial_number": serial,
        "ticket_serial": serial,
        "flare_serial": serial,
        "invoice_serial": serial,
        "form_number": "F-1",
        "ticket_count": 20,
        "ticket_price": 100,
        "cost": 400,
        "prizes": FLARE,
        "now_ms": NOW,
        "serial_holder": deal,
    }
    fields.update(over)
    return RegisterDeal(**fields)


def registered(deal: str = "d-1", serial: str = "S-1", **over: Any) -> DealState:
    state = DealState(deal=deal)
    return rules.fold(state, rules.decide(state, registration(deal, serial, **over)))


def apply(state: DealState, command: Any) -> DealState:
    return rules.fold(state, rules.decide(state, command))


def in_play(deal: str = "d-1", **over: Any) -> DealState:
    return apply(registered(deal, **over), PutDealInPlay(container="jar", column="", now_ms=NOW))


def sell(state: DealState, count: int) -> DealState:
    return apply(
        state,
        RecordSale(count=count, amount=count * state.ticket_price, seller="s", now_ms=NOW),
    )


def redeem(
    state: DealState, line: int, ticket: str, *, lead: DealState | None = None, at: int = NOW
) -> DealState:
    return apply(
        state, RedeemTicket(prize=line, ticket=ticket, redeemed_by="s", now_ms=at, lead=lead)
    )


def combination(*ids: str) -> list[DealState]:
    """The first deal leads the others, all registered identical and put in play."""
    deals = [registered(d, f"S-{d}") for d in ids]
    lead = deals[0]
    members = [apply(m, Commingle(lead=lead, now_ms=NOW)) for m in deals[1:]]
    lead = apply(
        lead,
        PutDealInPlay(
            container="jar", column="", now_ms=NOW, commingle=ids[1:], members=tuple(members)
        ),
    )
    return [lead, *members]


def closed_at(state: DealState, at: int) -> DealState:
    return replace(state, closed=True, closed_at=at, closed_reason="sold_out")
