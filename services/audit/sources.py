"""The audit's outcome-source check: every outcome a table records names a source its
table's mode and game allow (docs/AUDIT.md, "What the audit recomputes"; docs/RULES.md).

- At an RNG table every outcome and every roll is the server's draw: source ``rng``.
- At a dealer table an entered outcome's source is what its game says produced it
  (``OutcomeGame.entered_source``): ``dealer`` for a wheel, roulette or a deal; at a dice
  game of one roll who threw (``dealer``, ``player`` or ``cage``), never ``rng``.
- A roll of a dice game of several rolls is thrown by the one whose roll it is or tumbled
  in the cage: the dealer's by ``dealer`` or ``cage``, a player's by ``player`` or
  ``cage`` (4620.14(b)(2), 4620.15(c)(5); ``services.games.dice_rounds.roll_of``).

Pure: reads ``TableOpened``, ``OutcomeRecorded`` and ``DiceRolled`` only."""

from __future__ import annotations

from dataclasses import dataclass

from events.dice import DiceRolled
from events.envelope import Envelope
from events.tables import OutcomeRecorded, TableOpened
from services.aggregates import TABLE_PREFIX
from services.audit.checking import RuleChecker, body
from services.games.dice import ENTERED_THROWERS
from services.games.dice_rounds import DEALER_TURN, PLAYER_TURN
from services.games.registry import GAMES
from services.games.single_outcome import SingleOutcome

RNG_SOURCE = "rng"
"""The source of every outcome the server draws."""
CAGE = "cage"
"""A roll tumbled in the cage (4620.11(b), 4620.14(b)(2), 4620.15(c)(5))."""


@dataclass(frozen=True, slots=True)
class _Opened:
    game: str
    outcome_mode: str


def allowed_sources(game: str, outcome_mode: str, outcome: dict[str, object]) -> tuple[str, ...]:
    """The sources an ``OutcomeRecorded`` of ``outcome`` may name at a table of ``game`` in
    ``outcome_mode`` (the module docstring's rule)."""
    if outcome_mode == RNG_SOURCE:
        return (RNG_SOURCE,)
    rules = GAMES.get(game)
    if not isinstance(rules, SingleOutcome):
        return ()  # no game of several steps records an OutcomeRecorded
    try:
        source = rules.game.entered_source(outcome)
    except (KeyError, TypeError, ValueError):
        return ()
    return (source,) if source in ENTERED_THROWERS else ()


def allowed_throwers(turn: str, outcome_mode: str) -> tuple[str, ...]:
    """Who may throw a ``DiceRolled`` of ``turn`` (the module docstring's rule)."""
    if outcome_mode == RNG_SOURCE:
        return (RNG_SOURCE,)
    if turn == DEALER_TURN:
        return ("dealer", CAGE)
    if turn == PLAYER_TURN:
        return ("player", CAGE)
    return ()


class SourceChecker(RuleChecker):
    """Every outcome and roll of every table names a source its mode and game allow."""

    name: str = "sources"
    types: frozenset[str] | None = frozenset(
        {TableOpened.NAME, OutcomeRecorded.NAME, DiceRolled.NAME}
    )

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, _Opened] = {}

    def read(self, envelope: Envelope) -> None:
        """Learn a table's game and mode; check each outcome's and roll's source."""
        if not envelope.stream.startswith(TABLE_PREFIX):
            return
        ev = body(self, envelope)
        if isinstance(ev, TableOpened):
            self.tables[envelope.stream] = _Opened(ev.game, ev.outcome_mode)
            return
        opened = self.tables.get(envelope.stream)
        if opened is None or ev is None:
            return  # a table not read from its opening: its mode is not known
        if isinstance(ev, OutcomeRecorded):
            self.checked["outcomes"] += 1
            allowed = allowed_sources(opened.game, opened.outcome_mode, dict(ev.outcome))
            if ev.source not in allowed:
                self.differs(
                    envelope,
                    f"OutcomeRecorded round {ev.round}: source at a {opened.outcome_mode} "
                    f"{opened.game} table",
                    list(allowed),
                    ev.source,
                )
        elif isinstance(ev, DiceRolled):
            self.checked["rolls"] += 1
            throwers = allowed_throwers(ev.turn, opened.outcome_mode)
            if ev.thrown_by not in throwers:
                self.differs(
                    envelope,
                    f"DiceRolled round {ev.round} ({ev.turn}): thrown_by at a "
                    f"{opened.outcome_mode} table",
                    list(throwers),
                    ev.thrown_by,
                )

    def abandon(self, stream: str) -> None:
        """A table whose event cannot be read is checked no further."""
        self.tables.pop(stream, None)
