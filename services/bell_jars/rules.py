"""A bell jar deal's pure rules: ``decide(state, command) -> events``, ``evolve(state, event)``.

9 NYCRR 4620.19 (bell jars, coin boards, merchandise boards, seal cards: 4620.1(q)). The
tickets are physical: the server keeps the deal's ledger (registration, play, sales into
its own bank, redemptions, how it left play) and never sells or draws a ticket. No I/O,
clock or randomness: ``now_ms`` enters as command data, and so do the states of the other
deals a command concerns (a combination's lead or its other deals), read by the server.

Also here: the organization's serial registry (``deal-serials``), whose claims make a
serial number registrable once (:func:`claim_serial`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

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
from events.records import replace
from services.aggregates import RuleError
from services.bell_jars.limits import (
    DEFAULT_LIMITS,
    MAX_DEAL_COST_CENTS,
    MAX_FLARE_LINES,
    MAX_TEXT,
    MAX_TICKETS_PER_DEAL,
    REMOVAL_PERCENT,
    RETENTION_YEARS,
    DealLimits,
)
from services.bell_jars.quarters import is_iso_date, quarter_end_ms, years_on
from services.bell_jars.state import (
    CASH_ONLY_KINDS,
    CONTAINERS,
    KINDS,
    LICENSED_AS,
    PRIZE_KINDS,
    VALUE_BASES,
    CloseCommingled,
    Commingle,
    DealCommand,
    DealState,
    PutDealInPlay,
    RecordSale,
    RedeemTicket,
    RegisterDeal,
    RemoveDeal,
)

DATE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def decide(
    state: DealState,
    command: DealCommand,
    limits: DealLimits = DEFAULT_LIMITS,
    licensed: frozenset[str] | None = None,
) -> list[Event]:
    """The events ``command`` causes on this deal, or a RuleError with its code.
    ``licensed``: the games on the license (None: not checked, for a rule test)."""
    if isinstance(command, RegisterDeal):
        check_registration(state, command, limits, licensed)
        check_serial_holder(state, command)
        return [_registered(state, command)]
    if not state.registered:
        raise RuleError("unknown_deal", f"no deal {state.deal} was registered")
    match command:
        case Commingle():
            return _commingle(state, command)
        case PutDealInPlay():
            return _put_in_play(state, command)
        case RecordSale():
            return _sell(state, command)
        case RedeemTicket():
            return _redeem(state, command)
        case RemoveDeal():
            return _remove(state, command)
        case CloseCommingled():
            return _close_commingled(state, command)
    raise RuleError("bad_request", f"unknown command {command!r}")  # pragma: no cover


# Registration.


def _text(value: str, name: str) -> None:
    if not value.strip() or len(value) > MAX_TEXT:
        raise RuleError("invalid_deal", f"{name} must be 1 to {MAX_TEXT} characters")


def check_licensed(command: RegisterDeal, licensed: frozenset[str] | None) -> None:
    """A deal is played only under a game the license lists (4620.2): its type's game
    (``LICENSED_AS``: banded tickets are bell jar tickets) must be on it:
    ``game_not_licensed``."""
    if licensed is None:
        return
    game = LICENSED_AS[command.kind]
    if game not in licensed:
        raise RuleError(
            "game_not_licensed",
            f"a {command.kind} deal is played as {game}, which the license does not list "
            "(4620.2: a game is conducted only if listed on the license)",
        )


def check_registration(
    state: DealState,
    command: RegisterDeal,
    limits: DealLimits = DEFAULT_LIMITS,
    licensed: frozenset[str] | None = None,
) -> None:
    """Everything a registration must meet but the serial registry: a deal id used once
    (``deal_exists``); a type the license lists (``game_not_licensed``, 4620.2, see
    :func:`check_licensed`); its facts well formed (``invalid_deal``); the serial numbers of the
    deal, the tickets, the flare and the invoice equal (``serial_mismatch``, 4620.19(c)(17));
    the price within the single-wager limit (``price_over_limit``, (b)(2)); each prize within
    the single-prize limit (``prize_over_limit``, (b)(3), reading BJAR-1); the flare's total
    within the per-deal aggregate (``flare_over_limit``, (b)(4), reading BJAR-5); merchandise
    only on a type that may award it (``merchandise_not_allowed``, (c)(8)); no more winning
    tickets than tickets (``too_many_prizes``, (c)(5))."""
    if state.registered:
        raise RuleError("deal_exists", f"deal {state.deal} is registered already")
    if command.kind not in KINDS:
        raise RuleError("invalid_deal", f"kind must be one of {', '.join(KINDS)}")
    check_licensed(command, licensed)
    for name in ("supplier", "supplier_license", "invoice_number", "serial_number", "form_number"):
        _text(getattr(command, name), name)
    if not DATE.match(command.invoice_date) or not is_iso_date(command.invoice_date):
        raise RuleError("invalid_deal", "invoice_date must be a date YYYY-MM-DD")
    if not 0 < command.ticket_count <= MAX_TICKETS_PER_DEAL:
        raise RuleError("invalid_deal", f"ticket_count must be from 1 to {MAX_TICKETS_PER_DEAL:,}")
    if command.ticket_price <= 0:
        raise RuleError("invalid_deal", "ticket_price must be a positive number of cents")
    if not 0 <= command.cost <= MAX_DEAL_COST_CENTS:
        raise RuleError("invalid_deal", f"cost must be from 0 to {MAX_DEAL_COST_CENTS} cents")
    if not 0 < len(command.prizes) <= MAX_FLARE_LINES:
        raise RuleError("invalid_deal", f"the flare lists 1 to {MAX_FLARE_LINES} prize lines")
    for i, p in enumerate(command.prizes):
        _check_line(i, p)
    serials = {
        "tickets": command.ticket_serial,
        "flare": command.flare_serial,
        "invoice": command.invoice_serial,
    }
    differ = [f"{k} {v!r}" for k, v in serials.items() if v != command.serial_number]
    if differ:
        raise RuleError(
            "serial_mismatch",
            f"the deal's serial number {command.serial_number!r} differs from the "
            f"{', '.join(differ)}; a deal is put in play only when they match (4620.19(c)(17))",
        )
    if command.ticket_price > limits.max_ticket_price:
        raise RuleError(
            "price_over_limit",
            f"a ticket of {command.ticket_price} cents is over the single-wager limit of "
            f"{limits.max_ticket_price} cents (4620.19(b)(2))",
        )
    for i, p in enumerate(command.prizes):
        if p.value > limits.max_single_prize:
            raise RuleError(
                "prize_over_limit",
                f"prize line {i} of {p.value} cents is over the single-prize limit of "
                f"{limits.max_single_prize} cents (4620.19(b)(3))",
            )
    total = sum(p.value * p.count for p in command.prizes)
    if total > limits.max_deal_prizes:
        raise RuleError(
            "flare_over_limit",
            f"the flare's prizes total {total} cents, over the limit of "
            f"{limits.max_deal_prizes} cents a deal (4620.19(b)(4))",
        )
    if command.kind in CASH_ONLY_KINDS:
        for i, p in enumerate(command.prizes):
            if p.kind != "cash":
                raise RuleError(
                    "merchandise_not_allowed",
                    f"a {command.kind} awards cash only; prize line {i} is merchandise "
                    "(4620.19(c)(8))",
                )
    winners = sum(p.count for p in command.prizes)
    if winners > command.ticket_count:
        raise RuleError(
            "too_many_prizes",
            f"the flare lists {winners} winning tickets in a deal of {command.ticket_count}",
        )


def _check_line(i: int, p: FlarePrize) -> None:
    if p.value <= 0 or p.count <= 0:
        raise RuleError("invalid_deal", f"prize line {i}: value and count must be positive")
    if p.kind not in PRIZE_KINDS:
        raise RuleError("invalid_deal", f"prize line {i}: kind must be 'cash' or 'merchandise'")
    if p.kind == "cash":
        if p.value_basis != "cash" or p.description:
            raise RuleError(
                "invalid_deal", f"prize line {i}: a cash prize has no description or basis"
            )
        return
    if p.value_basis not in VALUE_BASES:
        raise RuleError(
            "invalid_deal",
            f"prize line {i}: a merchandise prize is valued at 'cost' or 'fair_market_value'",
        )
    _text(p.description, f"prize line {i}'s description")


def check_serial_holder(state: DealState, command: RegisterDeal) -> None:
    """The serial number is this deal's in the organization's registry, never another's
    (``duplicate_serial``)."""
    holder = command.serial_holder
    if holder != state.deal:
        other = f"deal {holder}" if holder else "another deal"
        raise RuleError(
            "duplicate_serial",
            f"serial number {command.serial_number!r} is registered to {other}; "
            "a deal is registered once",
        )


def _registered(state: DealState, c: RegisterDeal) -> DealRegistered:
    return DealRegistered(
        deal=state.deal,
        kind=c.kind,
        supplier=c.supplier,
        supplier_license=c.supplier_license,
        invoice_number=c.invoice_number,
        invoice_date=c.invoice_date,
        serial_number=c.serial_number,
        form_number=c.form_number,
        ticket_count=c.ticket_count,
        ticket_price=c.ticket_price,
        cost=c.cost,
        prizes=c.prizes,
        at=c.now_ms,
    )


# Commingling and play.


def _deal_commingled(state: DealState) -> RuleError:
    return RuleError(
        "deal_commingled",
        f"deal {state.deal} is commingled into deal {state.lead}: "
        f"its play, sales and removal go through {state.lead}",
    )


def check_complete(state: DealState) -> None:
    """A deal that may still open a receptacle or join one: registered, never put in play,
    nothing sold or redeemed, not closed (``deal_not_complete``, 4620.19(c)(15): no unsold
    portion of a deal is commingled)."""
    if state.in_play or state.closed or state.sold or state.awarded_count:
        raise RuleError(
            "deal_not_complete",
            f"deal {state.deal} was offered for sale already; only complete deals are "
            "commingled (4620.19(c)(15))",
        )


def check_commingle(lead: DealState, member: DealState | None, member_id: str) -> None:
    """Whether ``member`` may join ``lead``'s receptacle: a registered deal
    (``unknown_deal``), other than the lead, not in another combination
    (``deal_commingled``), complete (``deal_not_complete``), identical to the lead in type,
    form number, tickets, price and prizes (``deals_differ``, 4620.19(c)(15)). A deal that
    joined ``lead`` already may (a retry finishes a combination)."""
    if member is None or not member.registered:
        raise RuleError("unknown_deal", f"no deal {member_id} was registered")
    if member.deal == lead.deal:
        raise RuleError("bad_request", "a deal is not commingled with itself")
    if member.lead is not None and member.lead != lead.deal:
        raise _deal_commingled(member)
    check_complete(member)
    if member.terms != lead.terms:
        raise RuleError(
            "deals_differ",
            f"deal {member.deal} differs from deal {lead.deal} in type, form number, ticket "
            "count, price or prizes; only identical deals are commingled (4620.19(c)(15))",
        )


def _commingle(state: DealState, command: Commingle) -> list[Event]:
    """This deal joins the lead's receptacle and bank (once; again into the same lead is
    nothing new)."""
    lead = command.lead
    if lead.lead is not None:
        raise _deal_commingled(lead)
    check_complete(lead)
    check_commingle(lead, state, state.deal)
    if state.lead == lead.deal:
        return []
    return [DealCommingled(lead=lead.deal, at=command.now_ms)]


def check_put_in_play(state: DealState, command: PutDealInPlay) -> None:
    """A deal goes into play once, complete, from a jar or a vending machine's labelled
    stacking column (4620.19(a)(1), (c)(16)), with the deals it leads each checked by
    :func:`check_commingle`; a deal commingled into another goes into play through it."""
    if state.lead is not None:
        raise _deal_commingled(state)
    if state.closed:
        raise RuleError("deal_closed", f"deal {state.deal} is out of play")
    if state.in_play:
        raise RuleError("deal_in_play", f"deal {state.deal} is in play already")
    check_complete(state)
    if command.container not in CONTAINERS:
        raise RuleError("bad_request", "container must be 'jar' or 'vending_machine'")
    if command.container == "vending_machine" and not command.column.strip():
        raise RuleError(
            "bad_request",
            "a vending machine's deal names its stacking column (4620.19(c)(16))",
        )
    if command.container == "jar" and command.column:
        raise RuleError("bad_request", "a jar has no column")
    if len(command.column) > MAX_TEXT:
        raise RuleError("bad_request", f"column is at most {MAX_TEXT} characters")
    if len(set(command.commingle)) != len(command.commingle):
        raise RuleError("bad_request", "commingle names each deal once")
    other = sorted({f for f in command.column_forms if f != state.form_number})
    if command.container == "vending_machine" and other:
        raise RuleError(
            "column_in_use",
            f"column {command.column!r} dispenses form number {other[0]!r}; deals of "
            "different form numbers never share a stacking column (4620.19(c)(16))",
        )


def _put_in_play(state: DealState, command: PutDealInPlay) -> list[Event]:
    """Every deal named in ``commingle`` must have joined this one (the server marks them
    first); the receptacle's bank opens empty (4620.19(c)(20))."""
    check_put_in_play(state, command)
    if len(command.members) != len(command.commingle):
        raise RuleError("bad_request", "the combination was not read")  # pragma: no cover
    for deal_id, member in zip(command.commingle, command.members, strict=True):
        check_commingle(state, member, deal_id)
        assert member is not None
        if member.lead != state.deal:
            raise RuleError(
                "deal_not_commingled",
                f"deal {deal_id} has not joined deal {state.deal}'s receptacle; retry",
            )
    return [
        DealPutInPlay(
            deals=(state.deal, *command.commingle),
            container=command.container,
            column=command.column,
            at=command.now_ms,
        )
    ]


def _not_in_play(state: DealState) -> RuleError:
    return RuleError("deal_not_in_play", f"deal {state.deal} has not been put in play")


def _sell(state: DealState, command: RecordSale) -> list[Event]:
    """Tickets sold from the receptacle into its bank, count x price (``amount_mismatch``),
    never more than it holds unsold (``more_than_unsold``); the sale of the last ticket
    closes the deal (``DealClosed`` ``sold_out``)."""
    if state.lead is not None:
        raise _deal_commingled(state)
    if not state.in_play:
        raise _not_in_play(state)
    if state.closed:
        raise RuleError("deal_closed", f"deal {state.deal} is out of play")
    if command.count <= 0:
        raise RuleError("bad_request", "count must be a positive number of tickets")
    expected = command.count * state.ticket_price
    if command.amount != expected:
        raise RuleError(
            "amount_mismatch",
            f"{command.count} ticket(s) at {state.ticket_price} cents are {expected} cents, "
            f"not {command.amount}",
        )
    unsold = state.receptacle_tickets - state.sold
    if command.count > unsold:
        raise RuleError(
            "more_than_unsold",
            f"the receptacle holds {unsold} unsold ticket(s); {command.count} cannot be sold",
        )
    events: list[Event] = [
        TicketsSold(
            count=command.count, amount=command.amount, seller=command.seller, at=command.now_ms
        )
    ]
    if command.count == unsold:
        events.append(DealClosed(reason="sold_out", unsold=0, at=command.now_ms))
    return events


def retain_until(now_ms: int, timezone: str) -> str:
    """The date a ticket redeemed at ``now_ms`` is kept until: the same calendar date
    :data:`RETENTION_YEARS` on, in the organization's timezone (29 February: 1 March, so
    never short of a year), 4620.19(c)(11)."""
    return years_on(now_ms, timezone, RETENTION_YEARS)


def _redeem(state: DealState, command: RedeemTicket) -> list[Event]:
    """A winning ticket of this deal, surrendered (4620.19(c)(9)): a line of the flare that
    still holds a prize (``prize_not_available``), a ticket not redeemed before
    (``ticket_redeemed``: it was defaced), while the deal is in play (through its lead when
    commingled; ``deal_not_in_play``) or out of play within the calendar quarter it closed
    in (``deal_reported``: its GC-7Q figures are final after it)."""
    lead = state if state.lead is None else command.lead
    if lead is None or lead.deal != (state.lead or state.deal) or not lead.in_play:
        raise _not_in_play(state)
    closed_at = state.closed_at if state.closed else (lead.closed_at if lead.closed else None)
    if closed_at is not None and command.now_ms >= quarter_end_ms(closed_at, command.timezone):
        raise RuleError(
            "deal_reported",
            f"deal {state.deal} closed in a calendar quarter that is over: its figures are "
            "reported and it takes no more redemptions",
        )
    if not 0 <= command.prize < len(state.prizes):
        raise RuleError(
            "prize_not_available", f"the flare of deal {state.deal} has no line {command.prize}"
        )
    line = state.prizes[command.prize]
    if state.awarded[command.prize] >= line.count:
        raise RuleError(
            "prize_not_available",
            f"every prize of line {command.prize} ({line.count} of {line.value} cents) "
            "was awarded already",
        )
    ticket = command.ticket.strip()
    if not ticket or len(ticket) > MAX_TEXT:
        raise RuleError("bad_request", f"ticket must be 1 to {MAX_TEXT} characters")
    if ticket in state.tickets:
        raise RuleError("ticket_redeemed", f"ticket {ticket!r} was redeemed and defaced already")
    return [
        TicketRedeemed(
            prize=command.prize,
            value=line.value,
            kind=line.kind,
            ticket=ticket,
            defaced=True,
            retain_until=retain_until(command.now_ms, command.timezone),
            redeemed_by=command.redeemed_by,
            at=command.now_ms,
        )
    ]


def removal_progress(deals: Sequence[DealState]) -> Mapping[str, int | bool]:
    """The prizes of a receptacle's deals awarded so far, by count and by value, against
    the flares' totals, and whether both reach :data:`REMOVAL_PERCENT` (reading BJAR-2; a
    combination counts as one: all its flares together)."""
    count = sum(d.awarded_count for d in deals)
    total_count = sum(d.total_prizes for d in deals)
    value = sum(d.awarded_value for d in deals)
    total_value = sum(d.total_value for d in deals)
    met = count * 100 >= REMOVAL_PERCENT * total_count and value * 100 >= (
        REMOVAL_PERCENT * total_value
    )
    return {
        "awarded_count": count,
        "total_count": total_count,
        "awarded_value": value,
        "total_value": total_value,
        "met": met,
    }


def _remove(state: DealState, command: RemoveDeal) -> list[Event]:
    """Out of play only once 75 % of the receptacle's prizes were awarded by count and by
    value (``too_few_prizes_awarded``, 4620.19(c)(18)); the unsold tickets are recorded on
    this (lead) deal's stream, where the receptacle's sales are."""
    if state.lead is not None:
        raise _deal_commingled(state)
    if not state.in_play:
        raise _not_in_play(state)
    if state.closed:
        raise RuleError("deal_closed", f"deal {state.deal} is out of play")
    members = [m for m in command.members if m is not None and m.lead == state.deal]
    if len(members) != len(state.deals) - 1:
        raise RuleError("bad_request", "the combination was not read")  # pragma: no cover
    p = removal_progress([state, *members])
    if not p["met"]:
        raise RuleError(
            "too_few_prizes_awarded",
            f"{p['awarded_count']} of {p['total_count']} prizes by count and "
            f"{p['awarded_value']} of {p['total_value']} cents by value were awarded; a deal "
            f"leaves play once {REMOVAL_PERCENT} % of both were (4620.19(c)(18))",
        )
    unsold = state.receptacle_tickets - state.sold
    return [DealClosed(reason="removed", unsold=unsold, at=command.now_ms)]


def _close_commingled(state: DealState, command: CloseCommingled) -> list[Event]:
    """A deal of a combination closes with its lead, at the lead's time (its unsold
    tickets are on the lead's record); once."""
    if state.lead != command.lead:
        raise RuleError("deal_not_commingled", f"deal {state.deal} is not in {command.lead}")
    if state.closed:
        return []
    return [DealClosed(reason=command.reason, unsold=0, at=command.at)]


def evolve(state: DealState, event: Event) -> DealState:
    """Fold one event into the deal's state."""
    version = state.version + 1
    match event:
        case DealRegistered():
            return replace(
                state,
                version=version,
                registered=True,
                kind=event.kind,
                supplier=event.supplier,
                supplier_license=event.supplier_license,
                invoice_number=event.invoice_number,
                invoice_date=event.invoice_date,
                serial_number=event.serial_number,
                form_number=event.form_number,
                ticket_count=event.ticket_count,
                ticket_price=event.ticket_price,
                cost=event.cost,
                prizes=tuple(event.prizes),
                registered_at=event.at,
                awarded=(0,) * len(event.prizes),
            )
        case DealCommingled():
            return replace(state, version=version, lead=event.lead)
        case DealPutInPlay():
            return replace(
                state,
                version=version,
                in_play=True,
                deals=tuple(event.deals),
                container=event.container,
                column=event.column,
                in_play_at=event.at,
            )
        case TicketsSold():
            return replace(
                state,
                version=version,
                sold=state.sold + event.count,
                sales=state.sales + event.amount,
            )
        case TicketRedeemed():
            awarded = list(state.awarded)
            awarded[event.prize] += 1
            cash = event.value if event.kind == "cash" else 0
            return replace(
                state,
                version=version,
                awarded=tuple(awarded),
                cash_paid=state.cash_paid + cash,
                merchandise_paid=state.merchandise_paid + event.value - cash,
                tickets=state.tickets | {event.ticket},
            )
        case DealClosed():
            return replace(
                state,
                version=version,
                closed=True,
                closed_reason=event.reason,
                closed_at=event.at,
                unsold=event.unsold,
            )
    return replace(state, version=version)


def fold(state: DealState, events: Sequence[Event]) -> DealState:
    for ev in events:
        state = evolve(state, ev)
    return state


# The organization's serial registry (stream ``deal-serials``).


def claim_serial(claims: Mapping[str, str], serial: str, deal: str, now_ms: int) -> list[Event]:
    """Claim ``serial`` for ``deal``: once (claimed for it already: nothing new); claimed
    for another deal: ``duplicate_serial``."""
    holder = claims.get(serial)
    if holder == deal:
        return []
    if holder is not None:
        raise RuleError(
            "duplicate_serial",
            f"serial number {serial!r} is registered to deal {holder}; a deal is registered once",
        )
    return [DealSerialClaimed(serial=serial, deal=deal, at=now_ms)]
