"""A bell jar deal's state, folded from its stream ``deal:<id>``, and the commands it takes.

Money is integer cents. Every field is immutable, so ``decide`` can never change a state
by accident; a command may carry another deal's state as data (the lead of a combination,
its other deals), read by the server before the command is decided, never by the rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from events.bell_jars import FlarePrize

KINDS = ("bell_jar", "coin_board", "merchandise_board", "seal_card", "banded")
"""The types of deal, 4620.1(q); (c)(4) names banded tickets."""
CASH_ONLY_KINDS = frozenset({"bell_jar", "coin_board"})
"""Types whose prizes are cash only, 4620.19(c)(8): merchandise is for banded tickets,
merchandise boards and seal cards."""
LICENSED_AS = {
    "bell_jar": "bell_jar",
    "banded": "bell_jar",
    "coin_board": "coin_board",
    "merchandise_board": "merchandise_board",
    "seal_card": "seal_card",
}
"""The game of the license (4620.1(q)) each type of deal is played under: banded tickets
are bell jar tickets (4620.19(c)(4), (c)(8)); coin boards, merchandise boards and seal
cards are listed by their own names."""
CONTAINERS = ("jar", "vending_machine")
"""Where a deal's tickets are offered, 4620.19(a)(1), (c)(1)."""
PRIZE_KINDS = ("cash", "merchandise")
VALUE_BASES = ("cost", "fair_market_value")
"""How a merchandise prize is valued: what it cost, or its fair market value when it was
donated (reading BJAR-5)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DealState:
    """A deal folded from its stream; ``version`` is the seq of the last event folded."""

    deal: str
    version: int = 0
    registered: bool = False
    kind: str = ""
    supplier: str = ""
    supplier_license: str = ""
    invoice_number: str = ""
    invoice_date: str = ""
    serial_number: str = ""
    form_number: str = ""
    ticket_count: int = 0
    ticket_price: int = 0
    cost: int = 0
    prizes: tuple[FlarePrize, ...] = ()
    registered_at: int = 0
    lead: str | None = None
    """The deal whose receptacle and bank this one joined (``DealCommingled``)."""
    in_play: bool = False
    """Put in play itself (a lead or a lone deal; a commingled deal is in play through its
    lead)."""
    deals: tuple[str, ...] = ()
    """The receptacle's deals, this one first (a lead or a lone deal once in play)."""
    container: str = ""
    column: str = ""
    in_play_at: int = 0
    sold: int = 0
    """Tickets sold from the receptacle (recorded on the lead's stream)."""
    sales: int = 0
    """Cents taken into the receptacle's bank."""
    awarded: tuple[int, ...] = ()
    """Winning tickets of this deal redeemed, by flare line."""
    cash_paid: int = 0
    merchandise_paid: int = 0
    """The value of the merchandise prizes awarded from this deal."""
    tickets: frozenset[str] = frozenset()
    """The identifiers of this deal's winning tickets redeemed (each is defaced)."""
    closed: bool = False
    closed_reason: str = ""
    closed_at: int = 0
    unsold: int = 0

    @property
    def total_prizes(self) -> int:
        """The number of winning tickets on the flare."""
        return sum(p.count for p in self.prizes)

    @property
    def total_value(self) -> int:
        """The value of every prize on the flare (cents)."""
        return sum(p.value * p.count for p in self.prizes)

    @property
    def awarded_count(self) -> int:
        return sum(self.awarded)

    @property
    def awarded_value(self) -> int:
        return self.cash_paid + self.merchandise_paid

    @property
    def receptacle_tickets(self) -> int:
        """Tickets in this deal's receptacle: its own, or the combination's it leads
        (identical deals, 4620.19(c)(15))."""
        return self.ticket_count * max(1, len(self.deals))

    @property
    def terms(self) -> tuple[object, ...]:
        """What commingled deals must share, 4620.19(c)(15): type, form number, tickets per
        deal, price, and the amount and denomination of the prizes."""
        return (
            self.kind,
            self.form_number,
            self.ticket_count,
            self.ticket_price,
            tuple((p.value, p.count, p.kind, p.description, p.value_basis) for p in self.prizes),
        )


# Commands: imperatives, as the gateway parsed them; ``now_ms`` is stamped by the gateway.


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterDeal:
    kind: str
    supplier: str
    supplier_license: str
    invoice_number: str
    invoice_date: str
    serial_number: str
    ticket_serial: str
    """The serial number read off the tickets."""
    flare_serial: str
    invoice_serial: str
    form_number: str
    ticket_count: int
    ticket_price: int
    cost: int
    prizes: tuple[FlarePrize, ...]
    now_ms: int
    serial_holder: str | None = None
    """The deal the serial number is registered to in the organization's registry
    (``deal-serials``), claimed by the server for this deal before it is decided; another
    deal there: ``duplicate_serial``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PutDealInPlay:
    container: str
    column: str
    now_ms: int
    commingle: tuple[str, ...] = ()
    """The other deals to share this one's receptacle and bank (4620.19(c)(15))."""
    members: tuple[DealState | None, ...] = ()
    """Their states as the server read them after marking each (None: no such deal), in
    the order of ``commingle``."""
    column_forms: tuple[str, ...] = ()
    """The form numbers of the other deals in play from the same vending machine column,
    as the server read them (4620.19(c)(16))."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Commingle:
    """The server marks a deal as joining ``lead``'s receptacle (no client sends it)."""

    lead: DealState
    now_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordSale:
    count: int
    amount: int
    seller: str
    now_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RedeemTicket:
    prize: int
    """The flare line's index."""
    ticket: str
    redeemed_by: str
    now_ms: int
    lead: DealState | None = None
    """For a commingled deal: its lead's state, as the server read it."""
    timezone: str = "America/New_York"
    """The organization's timezone (its quarters, its dates)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveDeal:
    now_ms: int
    members: tuple[DealState | None, ...] = ()
    """The states of the other deals of the combination, as the server read them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseCommingled:
    """The server closes a deal of a combination its lead closed (no client sends it)."""

    lead: str
    reason: str
    at: int


DealCommand = (
    RegisterDeal
    | PutDealInPlay
    | Commingle
    | RecordSale
    | RedeemTicket
    | RemoveDeal
    | CloseCommingled
)
