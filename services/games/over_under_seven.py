"""Over and Under Seven (NY 9 NYCRR 4620.13), licensed under its 4620.1(h) name "Under and
Over Seven": two dice, one roll a round, three spaces.

The dice are thrown by the player or the dealer, or tumbled in the cage or chute
(4620.13(b)(1)); the dealer enters the faces and who threw (``thrown_by``, default
``dealer``), or the server draws them. A player backs one space per roll (the text's "any
one of the three spaces", reading D-6) unless the table sets ``allow_several_spaces``.
Readings and the exact house edge of every space: docs/RULES.md "Over and Under Seven".
Pure: no I/O, clock or randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Final

from services.aggregates import RuleError
from services.games.base import (
    JSON,
    PlacedBet,
    bad_request,
    check_stake,
    invalid_bet,
)
from services.games.dice import DICE_MAX_BET_CENTS, ENTERED_THROWERS, Thrower
from services.games.one_roll import OneRollDice

__all__ = [
    "ALLOW_SEVERAL_SPACES",
    "OVER_UNDER_SEVEN",
    "SPACES",
    "SPACE_ODDS",
    "OverUnderSeven",
]

TWO_DICE: Final = 2  # 4620.13(a)(2): two dice
SEVEN: Final = 7

SPACE_ODDS: Final[Mapping[str, int]] = {
    "under_7": 1,  # 4620.13(b)(1): a total of 2-6, "even or 1-to-1"
    "seven": 4,  # a total of 7, "4-to-1"
    "over_7": 1,  # a total of 8-12, "even or 1-to-1"
}
"""The three spaces of the layout (4620.13(a)(3)) and their odds "to 1"."""
SPACES: Final[tuple[str, ...]] = tuple(SPACE_ODDS)

ALLOW_SEVERAL_SPACES: Final = "allow_several_spaces"
"""The table option (default false) that lets one player back more than one space on the
same roll; by default a second space is ``one_space_per_roll`` (reading D-6)."""


def space_of(total: int) -> str:
    """The space a total of two dice wins: ``under_7`` (2-6), ``seven``, ``over_7`` (8-12)."""
    if total < SEVEN:
        return "under_7"
    return "seven" if total == SEVEN else "over_7"


class OverUnderSeven(OneRollDice):
    """Over and Under Seven under 4620.13; implements ``base.OutcomeGame`` and
    ``base.PlayerBetRule``."""

    name = "under_and_over_seven"
    dice = TWO_DICE
    throwers: tuple[Thrower, ...] = ENTERED_THROWERS
    default_thrower: Thrower = "dealer"
    cite = "4620.13(b)(2)"
    options: Mapping[str, bool] = {ALLOW_SEVERAL_SPACES: False}

    def every_bet(self) -> list[dict[str, JSON]]:
        """The three spaces, in layout order."""
        return [{"space": s} for s in SPACES]

    def check_bet(self, config: Mapping[str, JSON], bet: JSON, amount: int) -> Mapping[str, JSON]:
        """``{"space": "under_7" | "seven" | "over_7"}``. ``bad_request`` (not an object,
        ``space`` missing or not a string, another field, a bad amount), ``invalid_bet``
        (not one of the three spaces), ``under_minimum``, ``over_limit`` ($5,
        4620.13(b)(2))."""
        if not isinstance(bet, Mapping):
            raise bad_request('an Over and Under Seven bet is an object {"space": name}')
        extra = sorted(str(k) for k in bet if k != "space")
        if extra:
            raise bad_request(f"unknown fields for an Over and Under Seven bet: {', '.join(extra)}")
        space = bet.get("space")
        if not isinstance(space, str):
            raise bad_request('an Over and Under Seven bet needs "space", a string')
        if space not in SPACE_ODDS:
            raise invalid_bet(f"{space!r} is not a space of the layout ({', '.join(SPACES)})")
        check_stake(config, amount, DICE_MAX_BET_CENTS, self.cite)
        return {"space": space}

    def check_player_bet(
        self,
        config: Mapping[str, JSON],
        bet: Mapping[str, JSON],
        player: str,
        placed: Iterable[PlacedBet],
    ) -> None:
        """One space per player per roll (4620.13(b)(1), reading D-6): a bet of ``player``
        on another space than one of their bets still on the layout this round (placed by
        them or by the dealer for them) is ``one_space_per_roll``, unless the table sets
        ``allow_several_spaces``. More on the same space is one wager on one space.

        Every bet of a player still on the layout is on one space (this rule let each
        on), so the player's newest one tells it: the walk stops there, and a player
        with thousands of bets this roll does not make each further bet walk them all."""
        if config.get(ALLOW_SEVERAL_SPACES):
            return
        space = bet["space"]
        backed = next((other.bet.get("space") for other in placed if other.player == player), space)
        if backed != space:
            raise RuleError(
                "one_space_per_roll",
                f"{player} already backs {backed} this roll: a player wagers on any one of "
                f"the three spaces (4620.13(b)(1)); the table option {ALLOW_SEVERAL_SPACES} "
                "allows more",
            )

    def winning_odds(self, faces: tuple[int, ...]) -> Callable[[Mapping[str, JSON]], int | None]:
        """The one space the total wins, at its odds."""
        won = space_of(sum(faces))
        odds = SPACE_ODDS[won]
        return lambda bet: odds if bet["space"] == won else None


OVER_UNDER_SEVEN: Final = OverUnderSeven()
"""The game, as the table rules use it (a ``base.OutcomeGame``), under its license name
``under_and_over_seven`` (``services.license.GAME_ALIASES`` maps ``over_and_under_seven``,
4620.13's title, to it)."""
