"""The limits of a bell jar deal, each with where it comes from (9 NYCRR 4620.19(b)).

The regulation sends each figure to the General Municipal Law; the figures below are read
from a secondary copy of GML 189 and are marked in docs/RULES.md "Bell jars" for the
operator to confirm. An operator may only lower them (``[bell_jars]`` in the night file,
:class:`DealLimits`); a higher figure is refused when the night file is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

MAX_TICKET_PRICE_CENTS: Final = 600
"""The single-wager limit, 4620.19(b)(2) -> GML 189(5)(c): $6 a ticket (each ticket is one
wager, reading BJAR-6). [GML figure: the operator confirms it.]"""
MAX_SINGLE_PRIZE_CENTS: Final = 100_000
"""The single-prize limit, 4620.19(b)(3): $1,000, the bell jar figure of GML 189(5)(c)
rather than the general 189(5)(a) the rule names (reading BJAR-1). [GML figure.]"""
MAX_DEAL_PRIZES_CENTS: Final = 600_000
"""The aggregate of a deal's prizes, 4620.19(b)(4) -> GML 189(6)(a)(2): $6,000 per deal
(reading BJAR-5: per deal; merchandise counted at its value). [GML figure.]"""
REMOVAL_PERCENT: Final = 75
"""A deal offered for sale leaves play only once this share of its prizes was awarded,
4620.19(c)(18), by count and by value both (reading BJAR-2)."""
RETENTION_YEARS: Final = 1
"""A redeemed winning ticket is defaced and kept one year, 4620.19(c)(11) (reading BJAR-3:
the rule's year, not the guideline's six months)."""
MAX_FLARE_LINES: Final = 100
"""Lines of a flare's prize table: an input bound against typing errors, not a rule."""
MAX_TICKETS_PER_DEAL: Final = 1_000_000
"""Tickets in one deal: an input bound (a supplier's deal holds a few thousand)."""
MAX_DEAL_COST_CENTS: Final = 100_000_000
"""What one deal may have cost ($1,000,000): an input bound against typing errors."""
MAX_TEXT: Final = 200
"""Characters of a supplier, license, invoice, serial, form number or prize description."""
DEFAULT_TIMEZONE: Final = "America/New_York"
"""The organization's timezone when the night file names none: its calendar quarters
(GC-7Q) and the dates of retention are taken there."""


@dataclass(frozen=True, slots=True)
class DealLimits:
    """The limits in force for the organization's deals (each at most the figure above)."""

    max_ticket_price: int = MAX_TICKET_PRICE_CENTS
    max_single_prize: int = MAX_SINGLE_PRIZE_CENTS
    max_deal_prizes: int = MAX_DEAL_PRIZES_CENTS

    def problem(self) -> str | None:
        """Why these limits cannot be in force (one above its statutory figure, or not a
        positive amount), or None."""
        for name, value, top in (
            ("max_ticket_price", self.max_ticket_price, MAX_TICKET_PRICE_CENTS),
            ("max_single_prize", self.max_single_prize, MAX_SINGLE_PRIZE_CENTS),
            ("max_deal_prizes", self.max_deal_prizes, MAX_DEAL_PRIZES_CENTS),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= top:
                return f"bell_jars.{name} must be a number of cents from 1 to {top} (lower only)"
        return None


DEFAULT_LIMITS: Final = DealLimits()
