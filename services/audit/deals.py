"""The audit's bell jar check: every deal's bank is its sales less the cash prizes paid
from it, every sale is its count at the ticket price, and every prize redeemed is one the
flare holds (docs/AUDIT.md, "What the audit recomputes"; 4620.19, docs/RULES.md "Bell
jars").

Per deal the checker folds the stream with ``services.bell_jars.rules.evolve`` and checks,
on the state before each event:

- a sale (``TicketsSold``, on the stream of the deal that holds the bank): ``amount`` is
  ``count`` x the ticket price, and no more tickets than the receptacle holds unsold
  (4620.19(c)(15), (20); ``rules._sell``);
- a redemption (``TicketRedeemed``): a line of the deal's own flare, at that line's value
  and kind, while the line still holds a prize, of a ticket not redeemed before (it was
  defaced, 4620.19(c)(9), (c)(11));
- putting in play (``DealPutInPlay``): the deal itself first, then only deals that joined
  its receptacle (``DealCommingled`` naming it, 4620.19(c)(15));
- a closing (``DealClosed``): ``sold_out`` only when every ticket of the receptacle is
  sold, ``removed`` only once 75 % of the receptacle's prizes were awarded by count and by
  value (``rules.removal_progress``); the unsold count recorded is what the ledger leaves
  (4620.19(c)(18)).

At the end of the log each receptacle's bank (a deal alone, or the lead of a combination,
4620.19(c)(15), (20)) is recomputed: sales in, less the cash prizes paid for every deal of
it (merchandise prizes are not paid from the bank). :attr:`DealChecker.banks` holds them
and :meth:`DealChecker.figures` gives them to the report. The log records no figure of a
bank of its own (a closing records its reason and the unsold count, each checked above):
the bank is what the sales and redemptions checked at their events give, reported, not
counted as checked. Pure: reads the deals' streams only."""

from __future__ import annotations

from dataclasses import dataclass

from events.bell_jars import (
    DealClosed,
    DealCommingled,
    DealPutInPlay,
    DealRegistered,
    TicketRedeemed,
    TicketsSold,
)
from events.envelope import Envelope
from services.aggregates import DEAL_PREFIX
from services.audit.base import JSONValue
from services.audit.checking import RuleChecker, body
from services.bell_jars.limits import REMOVAL_PERCENT
from services.bell_jars.rules import evolve, removal_progress
from services.bell_jars.state import DealState

SOLD_OUT = "sold_out"
"""A deal that closed itself on its last ticket sold (``rules._sell``)."""
REMOVED = "removed"
"""A deal the member in charge took out of play: only once ``REMOVAL_PERCENT`` of its
receptacle's prizes were awarded by count and by value, 4620.19(c)(18)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Bank:
    """A receptacle's bank as the log gives it (cents)."""

    deals: tuple[str, ...]
    sales: int
    cash_prizes: int

    @property
    def balance(self) -> int:
        """Sales less the cash prizes paid: what the bank holds, 4620.19(c)(20)."""
        return self.sales - self.cash_prizes


class DealChecker(RuleChecker):
    """Every sale, redemption and closing of every deal, and each bank at the end."""

    name: str = "deals"
    types: frozenset[str] | None = frozenset(
        cls.NAME
        for cls in (
            DealRegistered,
            DealCommingled,
            DealPutInPlay,
            TicketsSold,
            TicketRedeemed,
            DealClosed,
        )
    )

    def __init__(self) -> None:
        super().__init__()
        self.deals: dict[str, DealState] = {}
        self.skipped: set[str] = set()
        self.banks: dict[str, Bank] = {}

    def read(self, envelope: Envelope) -> None:
        """Check one event of a deal's stream against the state before it; fold it."""
        if not envelope.stream.startswith(DEAL_PREFIX) or envelope.stream in self.skipped:
            return
        deal = envelope.stream.removeprefix(DEAL_PREFIX)
        state = self.deals.get(deal)
        if state is None:
            if envelope.type != DealRegistered.NAME:
                self.skipped.add(envelope.stream)
                self.checked["deals not read from their start"] += 1
                return
            state = DealState(deal=deal)
        ev = body(self, envelope)
        if ev is None:
            self.skipped.add(envelope.stream)
            return
        if isinstance(ev, TicketsSold):
            self._sale(envelope, state, ev)
        elif isinstance(ev, TicketRedeemed):
            self._redemption(envelope, state, ev)
        elif isinstance(ev, DealClosed):
            self._closing(envelope, state, ev)
        elif isinstance(ev, DealPutInPlay):
            self._put_in_play(envelope, deal, ev)
        try:
            self.deals[deal] = evolve(state, ev)
        except Exception as e:  # a tampered event the rules cannot fold: named, not fatal
            self.differs(
                envelope, f"{envelope.type}: the deal's rules cannot fold it", None, repr(e)
            )
            self.skipped.add(envelope.stream)

    def _sale(self, envelope: Envelope, state: DealState, ev: TicketsSold) -> None:
        self.checked["sales"] += 1
        price = ev.count * state.ticket_price
        if ev.amount != price:
            self.differs(
                envelope, f"TicketsSold: {ev.count} at {state.ticket_price}", price, ev.amount
            )
        unsold = state.receptacle_tickets - state.sold
        if not 0 < ev.count <= unsold:
            self.differs(envelope, "TicketsSold: tickets the receptacle holds", unsold, ev.count)

    def _redemption(self, envelope: Envelope, state: DealState, ev: TicketRedeemed) -> None:
        self.checked["redemptions"] += 1
        if not 0 <= ev.prize < len(state.prizes):
            self.differs(
                envelope, "TicketRedeemed: a line of the flare", len(state.prizes), ev.prize
            )
            return
        line = state.prizes[ev.prize]
        what = f"TicketRedeemed line {ev.prize}"
        if ev.value != line.value:
            self.differs(envelope, f"{what}: value", line.value, ev.value)
        if ev.kind != line.kind:
            self.differs(envelope, f"{what}: kind", line.kind, ev.kind)
        if state.awarded[ev.prize] >= line.count:
            self.differs(
                envelope,
                f"{what}: prizes left on the flare",
                line.count,
                state.awarded[ev.prize] + 1,
            )
        if ev.ticket in state.tickets:
            self.differs(envelope, f"{what}: ticket redeemed before", None, ev.ticket)

    def _put_in_play(self, envelope: Envelope, deal: str, ev: DealPutInPlay) -> None:
        """The receptacle's deals: this one first, then each deal that joined it
        (``DealCommingled`` naming this one its lead; ``rules._put_in_play``, 4620.19(c)(15))."""
        self.checked["put in play"] += 1
        deals = list(ev.deals)
        if not deals or deals[0] != deal:
            first = deals[0] if deals and isinstance(deals[0], str) else repr(deals[:1])
            self.differs(envelope, "DealPutInPlay: the deal itself first", deal, first)
        for member in deals[1:]:
            joined = self.deals.get(member) if isinstance(member, str) else None
            if joined is None or joined.lead != deal:
                self.differs(
                    envelope,
                    "DealPutInPlay: a deal that joined this one's receptacle",
                    f"a deal commingled into {deal}",
                    member if isinstance(member, str) else repr(member),
                )

    def _closing(self, envelope: Envelope, state: DealState, ev: DealClosed) -> None:
        self.checked["closings"] += 1
        if state.lead is not None:
            return  # a member of a combination: its lead's ledger holds the receptacle
        left = state.receptacle_tickets - state.sold
        if ev.reason == REMOVED:
            members = [self.deals[d] for d in state.deals[1:] if d in self.deals]
            progress = removal_progress([state, *members])
            if not progress["met"]:
                self.differs(
                    envelope,
                    f"DealClosed removed: {REMOVAL_PERCENT} % of the prizes awarded by count "
                    "and by value",
                    [progress["total_count"], progress["total_value"]],
                    [progress["awarded_count"], progress["awarded_value"]],
                )
        if ev.reason == SOLD_OUT and left != 0:
            self.differs(envelope, "DealClosed sold_out: tickets left unsold", 0, left)
        if ev.unsold != left:
            self.differs(envelope, "DealClosed: unsold", left, ev.unsold)

    def abandon(self, stream: str) -> None:
        """A deal whose event cannot be read is checked no further."""
        self.skipped.add(stream)

    def finish(self) -> None:
        """Each receptacle's bank: its sales less every cash prize of its deals (none for
        a receptacle a deal of which was not read whole: its figures would be partial)."""
        for deal, state in sorted(self.deals.items()):
            if state.lead is not None or not state.in_play:
                continue
            members = state.deals or (deal,)
            if any(not isinstance(d, str) or DEAL_PREFIX + d in self.skipped for d in members):
                continue  # a forged member (named at its event) or a deal not read whole
            cash = sum(self.deals[d].cash_paid for d in members if d in self.deals)
            self.banks[deal] = Bank(deals=tuple(members), sales=state.sales, cash_prizes=cash)

    def figures(self) -> dict[str, list[dict[str, JSONValue]]]:
        """What the report shows beside the checks: every receptacle's bank (its deals,
        sales, cash prizes and bank, cents), by its lead deal, 4620.19(c)(15), (20)."""
        return {
            "banks": [
                {
                    "deal": deal,
                    "deals": list(bank.deals),
                    "sales": bank.sales,
                    "cash_prizes": bank.cash_prizes,
                    "bank": bank.balance,
                }
                for deal, bank in sorted(self.banks.items())
            ]
        }
