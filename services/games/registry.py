"""The games the server can run at a table, by the name the license lists them under."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.games.bang import BANG
from services.games.base import Game
from services.games.beat_the_dealer import BEAT_THE_DEALER
from services.games.black_jack import BLACK_JACK
from services.games.joker_seven import JOKER_SEVEN
from services.games.merchandise import MERCHANDISE
from services.games.over_under_seven import OVER_UNDER_SEVEN
from services.games.roulette import ROULETTE
from services.games.single_outcome import SingleOutcome
from services.games.three_dice import CHUCK_A_LUCK, HAZARD
from services.games.wheels import WHEEL_GAMES

GAMES: Mapping[str, Game[Any]] = {
    ROULETTE.name: SingleOutcome(ROULETTE),
    **{name: SingleOutcome(g) for name, g in WHEEL_GAMES.items()},
    MERCHANDISE.name: MERCHANDISE,
    JOKER_SEVEN.name: SingleOutcome(JOKER_SEVEN),
    BLACK_JACK.name: BLACK_JACK,
    # The dice games of one roll (4620.11-4620.13).
    CHUCK_A_LUCK.name: SingleOutcome(CHUCK_A_LUCK),
    HAZARD.name: SingleOutcome(HAZARD),
    OVER_UNDER_SEVEN.name: SingleOutcome(OVER_UNDER_SEVEN),
    # The dice games of several rolls per round (4620.14, 4620.15).
    BEAT_THE_DEALER.name: BEAT_THE_DEALER,
    BANG.name: BANG,
}
"""Every game a table may play: each owns its round (``services.games.base.Game``)."""


def game(name: str) -> Game[Any]:
    """The table game called ``name``; KeyError when the server has no rules for it."""
    return GAMES[name]
