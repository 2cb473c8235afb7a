"""What every game family shares: a placed bet, a settlement, the round view, the Game port.

A game owns its round (docs/ARCHITECTURE.md "A game owns its round"): it is a pure state
machine with its own state type (``play``), its own steps and its own settlement, which may
come in parts. The table (``services.tables.rules``) keeps what every game shares: money
(bets placed and taken back), limits, the order of commands and the lifecycle (open, a
round open for bets, no more bets, the round in play, closed). Randomness and secrets reach
a game only through :meth:`Game.prepare`, which the table actor's adapter calls with its
:class:`Chance`; every other method is pure: no I/O, clock or randomness.

Games with one outcome per round (roulette, the wheels) implement the smaller
:class:`OutcomeGame` and run through ``services.games.single_outcome``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from events.base import Event
from events.records import fast_init
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


def for_one(n: int) -> int:
    """The "to 1" odds of a payout stated "N for 1": N for 1 gives back N times the stake
    in all, the stake included, so it is N - 1 to 1. The one place such odds are
    converted (docs/RULES.md, Hazard's numbers bet, 4620.12(c)(6))."""
    if n < 2:
        raise ValueError(f"{n} for 1 returns no more than the stake")
    return n - 1


def is_whole_number(value: object) -> bool:
    """A JSON integer (``True`` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_stake(config: Mapping[str, JSON], amount: object, regulatory_max: int, cite: str) -> int:
    """A stake within the table's ``min_bet`` and ``max_bet`` (which its game keeps at or
    under ``regulatory_max``, the section ``cite`` gives): ``bad_request`` when it is not a
    positive whole number of cents, ``under_minimum``, ``over_limit``."""
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise bad_request("amount must be a positive integer number of cents")
    cents = amount
    min_bet, max_bet = int(config["min_bet"]), int(config["max_bet"])
    if cents < min_bet:
        raise RuleError("under_minimum", f"amount {cents} is under the table minimum {min_bet}")
    if cents > max_bet:
        raise RuleError(
            "over_limit",
            f"{cents} is over the table maximum {max_bet} "
            f"(regulatory maximum {regulatory_max}, {cite})",
        )
    return cents


@fast_init  # one per bet placed, and one per bet in a round folded at start
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


class OutcomeGame(Protocol):
    """A game whose round has one outcome (roulette, the wheels); every method is pure.

    ``services.games.single_outcome.SingleOutcome`` runs it as a :class:`Game`."""

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
        """Every possible outcome, each equally likely on a fair device."""
        ...

    def draw_bounds(self, config: Mapping[str, JSON]) -> tuple[int, ...]:
        """The bounds of the uniform integers a server draw takes (roulette: one index
        below 38); the adapter draws them through the Chance."""
        ...

    def check_outcome(
        self, config: Mapping[str, JSON], raw: JSON, previous: str | None
    ) -> Mapping[str, JSON]:
        """Validate an outcome the dealer entered; ``previous`` is the last winning outcome.

        Returns the canonical outcome; raises RuleError ``invalid_outcome``.
        """
        ...

    def drawn_outcome(
        self, config: Mapping[str, JSON], draw: Sequence[int], previous: str | None
    ) -> Mapping[str, JSON]:
        """The canonical outcome for the integers ``draw`` (each below its bound of
        :meth:`draw_bounds`) drawn by the server; RuleError ``invalid_outcome`` otherwise."""
        ...

    def settle(
        self, config: Mapping[str, JSON], bets: Sequence[PlacedBet], outcome: Mapping[str, JSON]
    ) -> tuple[Settlement, ...]:
        """Settle every bet of a round against the outcome; deterministic."""
        ...

    def winning_key(self, outcome: Mapping[str, JSON]) -> str:
        """The outcome as one string (roulette: the pocket), kept as the table's last result."""
        ...

    def entered_source(self, outcome: Mapping[str, JSON]) -> str:
        """Who produced an outcome the dealer entered (the canonical ``outcome`` of
        :meth:`check_outcome`), as its ``OutcomeRecorded.source`` records it: ``dealer``
        for a wheel or a deal; at a dice game who threw (``dealer``, ``player``, ``cage``).
        A server draw is always ``rng``."""
        ...


@runtime_checkable
class PlayerBetRule(Protocol):
    """A game whose bets also depend on the same player's other bets of the round (Over
    and Under Seven: one space per player per roll, 4620.13(b)(1)). ``SingleOutcome``
    offers it to the table as the hook :meth:`TableHooks.check_player_bet` of a game that
    has it (and only then: the other games' bets pay nothing for it); pure."""

    def check_player_bet(
        self,
        config: Mapping[str, JSON],
        bet: Mapping[str, JSON],
        player: str,
        placed: Iterable[PlacedBet],
    ) -> None:
        """Raise RuleError (the game's own code) when ``player`` may not add the canonical
        ``bet`` to ``placed``, the round's bets still on the layout (any player's, however
        placed: by the player or by the dealer for them)."""
        ...


OutcomeMode = Literal["dealer", "rng"]
"""``dealer``: the physical device or shoe, its results entered; ``rng``: the server draws."""
RoundPhase = Literal["idle", "betting", "no_more_bets"]
"""``idle``: no round (between rounds); ``betting``: open for bets; ``no_more_bets``: the
bets are closed (the dealer's call, or a step of the game that closes them, such as a
deal) and the round is in play until its end."""

P = TypeVar("P")


@fast_init  # one each time a table's game decides a step (and the audit rechecks one)
@dataclass(frozen=True, slots=True, kw_only=True)
class Round:
    """What the table tells a game about the round when it asks it to decide a step."""

    table: str
    number: int
    """The round's number (0 before the first round)."""
    phase: RoundPhase
    outcome_mode: OutcomeMode
    bets: Sequence[PlacedBet]
    """The round's bets still on the layout, in the order placed."""
    next_seq: int
    """The seq the first event decided now will get (ids made from it are unique)."""


class Chance(Protocol):
    """Randomness and secrets as an actor's rules adapter provides them (tables, raffles):
    the only place where they enter. A game's :meth:`Game.prepare` writes what it takes
    from here into the step, as data; the pure ``decide`` then checks and records it."""

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` from a CSPRNG (unbiased: no modulo)."""
        ...

    def salt(self) -> str:
        """A fresh random salt (32 hex digits) for a commitment."""
        ...

    def seal(self, context: str, plain: bytes) -> str:
        """``plain`` encrypted and authenticated under the server's key, bound to
        ``context`` (the table and what it is, such as ``bj-1/shoe/3``); text for an event."""
        ...

    def unseal(self, context: str, sealed: str) -> bytes:
        """The plain bytes of :meth:`seal`; ValueError when ``sealed`` was not sealed by this
        server for ``context``."""
        ...


class TableHooks(Protocol):
    """What a game adds to :class:`Game` when its bets depend on the player's other bets
    (one space per roll, one bet per kind) or may outlive a round (Bang's big six and big
    eight ride from game to game). Optional: the table calls each hook only on a game that
    has it (``getattr``), so every other game is unchanged. Pure."""

    def check_player_bet(
        self,
        config: Mapping[str, JSON],
        play: Any,
        player: str,
        bet: Mapping[str, JSON],
        placed: Iterable[PlacedBet],
    ) -> None:
        """After :meth:`Game.check_bet` accepted ``bet`` (canonical), whether ``player`` may
        place it now (one bet per player, per kind, per space): RuleError with the game's
        code. ``placed`` walks the round's bets on the table's layout, newest first, as far
        as it is read (a game that keeps its own layout in ``play`` may ignore it)."""
        ...

    def check_cancel(
        self, config: Mapping[str, JSON], play: Any, bet_id: str, player: str | None
    ) -> None:
        """Before the table takes a bet back: RuleError when the game says it must stay
        (``bet_in_action``: a roll has applied to it) or is not on its layout any more
        (``unknown_bet``: settled). ``player`` is set when a player cancels their own."""
        ...

    def closing(self, config: Mapping[str, JSON], play: Any, round: Round) -> list[Event]:
        """The events that return every wager still on the layout when the table closes
        between rounds (a bet riding across rounds), before ``TableClosed``."""
        ...


class Game(Protocol[P]):
    """A table game that owns its round. ``P`` is its state type (``play``), folded from
    every event of the table's stream and kept across rounds (a merchandise wheel's shelf,
    a Black Jack shoe). Every method but :meth:`prepare` is pure."""

    name: str
    """The game's name as the license and the night file list it (``roulette``)."""

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """Validate a table's game options and return them in canonical form (RuleError
        ``invalid_config`` for options the regulations do not allow)."""
        ...

    def initial(self, config: Mapping[str, JSON]) -> P:
        """The game's state when its table is opened (before the opening events fold)."""
        ...

    def opening(self, config: Mapping[str, JSON]) -> list[Event]:
        """Events of the game that follow ``TableOpened`` (a merchandise wheel's opening
        inventory); usually none."""
        ...

    def check_bet(
        self, config: Mapping[str, JSON], play: P, bet: JSON, amount: int
    ) -> Mapping[str, JSON]:
        """The canonical form of a bet of ``amount`` cents placed while the round is open
        for bets, or RuleError: ``bad_request`` (malformed), ``invalid_bet`` (not on this
        layout), ``wager_not_offered``, ``over_limit``, ``invalid_amount`` (a stake whose
        payout would need a fraction of a cent), or a game's own code."""
        ...

    def prepare(
        self, config: Mapping[str, JSON], play: P, round: Round, step: Any, chance: Chance
    ) -> Any:
        """The step with what only chance or the server's secrets can give written into
        it as data (a draw, a shuffle, a sealed card and its salt); the step itself when it
        needs none. Called by the table actor's adapter against the exact state the step is
        decided on. Must not refuse: a step it cannot complete is left for ``decide`` to
        refuse with its code."""
        ...

    def decide(self, config: Mapping[str, JSON], play: P, round: Round, step: Any) -> list[Event]:
        """The events of one of the game's own steps (any command that is not one of the
        table's), or RuleError with its code. ``wrong_game`` for a step of another game.

        A step may close the bets (its events then begin with ``NoMoreBets``), move money
        beyond the first bet (``WagerAdded``), settle some wagers (``PartSettled``) and end
        the round (``Settled`` for a round of one outcome, else ``RoundEnded``): the money
        of those events is read in one place, ``events.money``."""
        ...

    def evolve(self, config: Mapping[str, JSON], play: P, event: Event) -> P:
        """Fold one event of the table's stream (the table's own events too: a bet placed,
        a round opened) into the game's state."""
        ...

    def void(self, config: Mapping[str, JSON], play: P, round: Round) -> list[Event]:
        """The events that return every wager of the round in play not yet settled (result
        ``returned``, paid its amount) and end the round, after a ``RoundVoided``."""
        ...

    def closed(self, play: P) -> bool:
        """Whether the game has closed its table by itself (a merchandise wheel at its
        aggregate prize limit): every later command gets ``table_closed``."""
        ...

    def debtors(self, play: P, round: Round, step: Any) -> Sequence[str]:
        """Players whose balance the step may debit (a double, a split, an insurance)."""
        ...

    def view(self, config: Mapping[str, JSON], play: P, round: Round) -> dict[str, JSON]:
        """What every reader of the table may see of the game's state (no secret: never a
        face-down card or the order of a shoe)."""
        ...

    def result(self, events: Sequence[Event]) -> dict[str, JSON]:
        """The game's part of a command's reply, from the events it caused."""
        ...
