"""The games the server can run at a table, by the name the license lists them under."""

from __future__ import annotations

from collections.abc import Mapping

from services.games.base import Game
from services.games.roulette import ROULETTE

GAMES: Mapping[str, Game] = {ROULETTE.name: ROULETTE}


def game(name: str) -> Game:
    """The table game called ``name``; KeyError when the server has no rules for it."""
    return GAMES[name]
