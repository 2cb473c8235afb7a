"""The games the server can run at a table, by the name the license lists them under."""

from __future__ import annotations

from collections.abc import Mapping

from services.games.base import OutcomeGame
from services.games.joker_seven import JOKER_SEVEN
from services.games.roulette import ROULETTE
from services.games.wheels import WHEEL_GAMES

GAMES: Mapping[str, OutcomeGame] = {
    ROULETTE.name: ROULETTE,
    **WHEEL_GAMES,
    JOKER_SEVEN.name: JOKER_SEVEN,
}


def game(name: str) -> OutcomeGame:
    """The table game called ``name``; KeyError when the server has no rules for it."""
    return GAMES[name]
