"""What readers see of a deal: the flare (everyone, players included) and the staff view.

The flare shows what is printed on it and the prizes awarded so far, struck through as
4620.19(c)(3) allows, and nothing else: no tickets left, no sales (4620.19(c)(2), reading
BJAR-4). The staff view (sellers, the member in charge, auditors, ops) adds the bank, the
profit or loss, the prizes left and the progress to the 75 % rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from services.bell_jars.limits import REMOVAL_PERCENT
from services.bell_jars.rules import removal_progress
from services.bell_jars.state import DealState

Lookup = Callable[[str], DealState | None]
"""A deal's state by id (the supervisor's)."""


def shown_to_players(state: DealState, lookup: Lookup) -> bool:
    """A deal's flare is shown once its deal is in play (itself, or through its lead)."""
    if state.in_play:
        return True
    lead = lookup(state.lead) if state.lead else None
    return lead is not None and lead.in_play


def flare_view(state: DealState) -> dict[str, Any]:
    """The flare: the deal's serial, form number, type and price, and each prize line with
    its value, its winning tickets and how many were awarded (struck through)."""
    return {
        "deal": state.deal,
        "kind": state.kind,
        "serial_number": state.serial_number,
        "form_number": state.form_number,
        "ticket_price": state.ticket_price,
        "prizes": [
            {
                "line": i,
                "value": p.value,
                "count": p.count,
                "kind": p.kind,
                "description": p.description,
                "awarded": state.awarded[i],
            }
            for i, p in enumerate(state.prizes)
        ],
    }


def status(state: DealState, lead: DealState | None) -> str:
    """``registered``, ``commingled`` (joined a lead not in play yet), ``in_play``, or
    ``closed``."""
    if state.closed or (lead is not None and lead.closed):
        return "closed"
    if state.in_play or (lead is not None and lead.in_play):
        return "in_play"
    return "commingled" if state.lead else "registered"


def staff_view(state: DealState, lookup: Lookup) -> dict[str, Any]:
    """Everything the ledger holds of a deal. A combination's bank (its sales, the cash
    prizes of all its deals) is shown on its lead; each other deal names its lead and shows
    its own prizes."""
    lead = lookup(state.lead) if state.lead else None
    head = lead if lead is not None else state
    deals = [head] + [d for d in (lookup(x) for x in head.deals[1:]) if d is not None]
    if not head.deals:
        deals = [head, *([state] if state is not head else [])]
    cash_out = sum(d.cash_paid for d in deals)
    merchandise = sum(d.merchandise_paid for d in deals)
    cost = sum(d.cost for d in deals)
    bank = head.sales - cash_out
    progress = removal_progress(deals)
    view = flare_view(state)
    view.update(
        {
            "status": status(state, lead),
            "supplier": state.supplier,
            "supplier_license": state.supplier_license,
            "invoice_number": state.invoice_number,
            "invoice_date": state.invoice_date,
            "ticket_count": state.ticket_count,
            "cost": state.cost,
            "registered_at": state.registered_at,
            "lead": state.lead,
            "deals": list(head.deals) or [state.deal],
            "container": head.container,
            "column": head.column,
            "in_play_at": head.in_play_at or None,
            "prizes_left": [p.count - state.awarded[i] for i, p in enumerate(state.prizes)],
            "cash_prizes": state.cash_paid,
            "merchandise_prizes": state.merchandise_paid,
            "closed": state.closed or (lead is not None and lead.closed),
            "closed_reason": (state.closed_reason or (lead.closed_reason if lead else "")) or None,
            "unsold": state.unsold,
            "receptacle": {
                "tickets": head.receptacle_tickets,
                "sold": head.sold,
                "unsold": head.receptacle_tickets - head.sold,
                "bank": {"sales": head.sales, "cash_prizes": cash_out, "balance": bank},
                "merchandise_prizes": merchandise,
                "cost": cost,
                "profit_or_loss": bank - merchandise - cost,
                "removal": {
                    "percent": REMOVAL_PERCENT,
                    "by_count": [progress["awarded_count"], progress["total_count"]],
                    "by_value": [progress["awarded_value"], progress["total_value"]],
                    "met": progress["met"],
                },
            },
        }
    )
    return view
