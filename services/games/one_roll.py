"""What the dice games of one roll per round share (Chuck-A-Luck and Hazard, 4620.11-12;
Over and Under Seven, 4620.13): the table's limits, the roll as the round's outcome, the
settlement loop, and the exact house edge of a bet by enumerating every roll.

A round is bets, no more bets, one roll of the dice (entered by the dealer from the dice
as they lie, or drawn by the server), and its settlement; ``SingleOutcome`` runs it. The
outcome is the roll as ``services.games.dice.Roll.to_json`` writes it: ``{"dice": [faces
in the order entered or drawn], "total": n, "thrown_by": who}``. Pure: no I/O, clock or
randomness.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Final

from services.aggregates import RuleError
from services.games.base import (
    JSON,
    PlacedBet,
    Settlement,
    invalid_bet,
    invalid_config,
    invalid_outcome,
    is_whole_number,
)
from services.games.dice import (
    DICE_MAX_BET_CENTS,
    FACES,
    Roll,
    Thrower,
    dice_limits,
    drawn_roll,
    entered_roll,
    roll_bounds,
)

LIMIT_KEYS: Final = frozenset({"min_bet", "max_bet"})
"""The table options every one-roll dice game takes: its limits, lower only."""


class OneRollDice:
    """The part of a one-roll dice game that does not depend on its layout.

    A subclass sets :attr:`name`, :attr:`dice`, :attr:`throwers`, :attr:`default_thrower`,
    :attr:`cite` and :attr:`options` (its own table options besides the limits, with their
    defaults), and gives ``check_bet`` and :meth:`winning_odds`."""

    name: str
    dice: int
    throwers: tuple[Thrower, ...]
    """Who may have thrown an entered roll at this game."""
    default_thrower: Thrower
    """Who threw an entered roll that does not say (``thrown_by`` absent)."""
    cite: str
    """The section that sets the game's $5 maximum bet."""
    options: Mapping[str, bool] = {}
    """The game's own boolean table options and their defaults."""

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """The table's options in canonical form: ``min_bet`` (default 1 cent) and
        ``max_bet`` (default and ceiling :data:`~services.games.dice.DICE_MAX_BET_CENTS`,
        lower only) and the game's own options; ``invalid_config`` for anything else."""
        if not isinstance(raw, Mapping):
            raise invalid_config(f"the {self.name} options must be a table")
        unknown = sorted(str(k) for k in raw if k not in LIMIT_KEYS | set(self.options))
        if unknown:
            raise invalid_config(
                f"unknown {self.name} settings: {', '.join(unknown)} "
                f"(the odds are fixed by {self.cite})"
            )
        min_bet, max_bet = dice_limits(raw, DICE_MAX_BET_CENTS, self.cite)
        config: dict[str, JSON] = {"min_bet": min_bet, "max_bet": max_bet}
        for key, default in self.options.items():
            value = raw.get(key, default)
            if not isinstance(value, bool):
                raise invalid_config(f"{key} must be true or false")
            config[key] = value
        return config

    def outcomes(self, config: Mapping[str, JSON]) -> Sequence[str]:
        """Every ordered roll of the game's dice (6^dice, each equally likely), as its
        :meth:`winning_key`."""
        return ["-".join(map(str, faces)) for faces in all_rolls(self.dice)]

    def draw_bounds(self, config: Mapping[str, JSON]) -> tuple[int, ...]:
        """One uniform integer below 6 per die."""
        return roll_bounds(self.dice)

    def check_outcome(
        self, config: Mapping[str, JSON], raw: JSON, previous: str | None
    ) -> Mapping[str, JSON]:
        """The roll the dealer entered, ``{"dice": [faces], "thrown_by": who}`` (the
        previous roll plays no part). Codes: ``bad_request`` (not an object, ``dice`` not a
        list, another field), ``wrong_number_of_dice``, ``invalid_die_face`` (not a whole
        number from 1 to 6), ``invalid_thrower`` (not one of the game's :attr:`throwers`)."""
        try:
            roll = entered_roll(raw, self.dice, default_thrower=self.default_thrower)
        except RuleError as e:
            if e.code != "invalid_thrower":
                raise
            raise self._thrower_refused(raw.get("thrown_by")) from None
        if roll.thrown_by not in self.throwers:
            raise self._thrower_refused(roll.thrown_by)
        return roll.to_json()

    def _thrower_refused(self, thrown_by: object) -> RuleError:
        return RuleError(
            "invalid_thrower",
            f"at {self.name} the dice are thrown by {' or '.join(self.throwers)} "
            f"({self.cite.split('(')[0]}), not {thrown_by!r}",
        )

    def drawn_outcome(
        self, config: Mapping[str, JSON], draw: Sequence[int], previous: str | None
    ) -> Mapping[str, JSON]:
        """The roll of a server draw (``thrown_by`` ``rng``)."""
        return drawn_roll(draw, self.dice).to_json()

    def winning_key(self, outcome: Mapping[str, JSON]) -> str:
        """The faces joined by ``-`` in the order entered or drawn (``"2-5-5"``)."""
        return "-".join(str(f) for f in outcome["dice"])

    def entered_source(self, outcome: Mapping[str, JSON]) -> str:
        """Who threw the entered roll (its ``thrown_by``)."""
        return str(outcome["thrown_by"])

    def winning_odds(self, faces: tuple[int, ...]) -> Callable[[Mapping[str, JSON]], int | None]:
        """For the faces of a roll, a function from a canonical bet to its odds "to 1"
        when it wins, None when it loses."""
        raise NotImplementedError

    def faces(self, outcome: Mapping[str, JSON]) -> tuple[int, ...]:
        """The faces of an outcome as :meth:`check_outcome` or :meth:`drawn_outcome` wrote
        it; ``invalid_outcome`` for anything else."""
        dice = outcome.get("dice") if isinstance(outcome, Mapping) else None
        if (
            not isinstance(dice, list | tuple)
            or len(dice) != self.dice
            or not all(is_whole_number(f) and 1 <= f <= FACES for f in dice)
        ):
            raise invalid_outcome(f"a {self.name} outcome is a roll of {self.dice} dice")
        return tuple(dice)

    def settle(
        self, config: Mapping[str, JSON], bets: Sequence[PlacedBet], outcome: Mapping[str, JSON]
    ) -> tuple[Settlement, ...]:
        """Every bet, in the order placed: a winning bet pays back ``amount * (odds + 1)``
        (odds "to 1", whole numbers, so whole cents), a losing one 0."""
        odds_of = self.winning_odds(self.faces(outcome))
        make = Settlement
        out: list[Settlement] = []
        append = out.append
        for placed in bets:
            try:
                odds = odds_of(placed.bet)
            except (KeyError, TypeError):
                raise invalid_bet(f"bet {placed.bet_id} is not a {self.name} bet") from None
            amount = placed.amount
            if odds is None:
                append(make(placed.bet_id, placed.player, amount, "lost", 0))
            else:
                append(make(placed.bet_id, placed.player, amount, "won", amount * (odds + 1)))
        return tuple(out)

    def house_edge(self, config: Mapping[str, JSON], bet: Mapping[str, JSON]) -> Fraction:
        """The exact house edge of a canonical bet: one minus what a unit stake gets back
        on average over every equally likely roll, each settled by :meth:`settle`."""
        return house_edge_by_enumeration(self, config, bet)


def all_rolls(dice: int) -> list[tuple[int, ...]]:
    """Every ordered roll of ``dice`` dice (6^dice), in lexicographic order."""
    return list(itertools.product(range(1, FACES + 1), repeat=dice))


def house_edge_by_enumeration(
    game: OneRollDice, config: Mapping[str, JSON], bet: Mapping[str, JSON]
) -> Fraction:
    """``1 - paid / (stake * 6^dice)``: a 1-cent bet settled through ``game.settle`` on
    every ordered roll (the house edge per unit staked; negative would favour the
    player)."""
    placed = [PlacedBet(bet_id="b", player="p", bet=bet, amount=1)]
    rolls = all_rolls(game.dice)
    paid = 0
    for faces in rolls:
        outcome = Roll(faces=faces, thrown_by="rng").to_json()
        [settled] = game.settle(config, placed, outcome)
        paid += settled.paid
    return 1 - Fraction(paid, len(rolls))
