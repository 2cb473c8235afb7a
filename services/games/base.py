"""What every game family shares: the rule error, a placed bet, a settlement, the Game port.

Pure: no I/O, clock or randomness. A game module (roulette, wheels, dice, cards) implements
the :class:`Game` protocol; the table rules (``services.tables.rules``) run the generic round
lifecycle (open, bets, no more bets, outcome, settlement) and ask the game for everything
that depends on the layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from events.tables import BetSettlement
from services.aggregates import RuleError

JSON = Any
"""A JSON-like value (dict, list, str, int, bool, None) as clients send it."""

SettlementResult = Literal["won", "lost", "push", "returned"]


def bad_request(message: str) -> RuleError:
    """A malformed spec (not an object, a missing or mistyped field)."""
    return RuleError("bad_request", message)


def invalid_bet(message: str) -> RuleError:
    """Not a bet on this layout."""
    return RuleError("invalid_bet", message)


def invalid_config(message: str) -> RuleError:
    """Table options the regulations do not allow."""
    return RuleError("invalid_config", message)


def invalid_outcome(message: str) -> RuleError:
    """Not an outcome of this device."""
    return RuleError("invalid_outcome", message)


def is_whole_number(value: object) -> bool:
    """A JSON integer (``True`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlacedBet:
    """A bet on the layout: who, what (the game's canonical bet spec) and how much (cents)."""

    bet_id: str
    player: str
    bet: Mapping[str, JSON]
    amount: int


Settlement = BetSettlement
"""How one bet ended (``events.tables.BetSettlement``): the game's answer is what the
``Settled`` event records, so an audit recomputes it field for field."""


class Game(Protocol):
    """The layout-specific part of a table game; every method is pure."""

    name: str
    """The game's name as the license and the night file list it (``roulette``)."""

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """Validate a table's game options and return them in canonical form.

        Raises :class:`RuleError` (code ``invalid_config``) for options the regulations do
        not allow, such as a limit above the regulatory maximum or wagers that exclude
        each other.
        """
        ...

    def check_bet(self, config: Mapping[str, JSON], bet: JSON, amount: int) -> Mapping[str, JSON]:
        """Return the canonical form of ``bet`` for ``amount`` cents, or raise RuleError.

        Codes: ``bad_request`` (malformed spec), ``invalid_bet`` (not a bet on this layout),
        ``wager_not_offered`` (a table option that is off), ``over_limit``.
        """
        ...

    def outcomes(self, config: Mapping[str, JSON]) -> Sequence[str]:
        """Every possible outcome, each equally likely on a fair device (the RNG draws one)."""
        ...

    def check_outcome(
        self, config: Mapping[str, JSON], raw: JSON, previous: str | None
    ) -> Mapping[str, JSON]:
        """Validate an outcome the dealer entered; ``previous`` is the last winning outcome.

        Returns the canonical outcome; raises RuleError ``invalid_outcome``.
        """
        ...

    def drawn_outcome(
        self, config: Mapping[str, JSON], index: int, previous: str | None
    ) -> Mapping[str, JSON]:
        """The canonical outcome for ``outcomes(config)[index]`` drawn by the server's RNG."""
        ...

    def settle(
        self, config: Mapping[str, JSON], bets: Sequence[PlacedBet], outcome: Mapping[str, JSON]
    ) -> tuple[Settlement, ...]:
        """Settle every bet of a round against the outcome; deterministic."""
        ...

    def winning_key(self, outcome: Mapping[str, JSON]) -> str:
        """The outcome as one string (roulette: the pocket), kept as the table's last result."""
        ...
