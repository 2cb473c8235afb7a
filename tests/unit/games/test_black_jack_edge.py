"""The house edges of docs/RULES.md "Black Jack (4620.5)" are the ones tools/black_jack_edge.py
computes, and that computation pays what the game pays: the natural's odds and every tie
under each option come from the game's own rules (services/games/black_jack_state.py)."""

from __future__ import annotations

import importlib.util
import re
import sys
from fractions import Fraction
from pathlib import Path
from types import ModuleType

import pytest

from services.games.black_jack_state import natural_odds, tie_result

ROOT = Path(__file__).resolve().parents[3]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "black_jack_edge", ROOT / "tools" / "black_jack_edge.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["black_jack_edge"] = module
    spec.loader.exec_module(module)
    return module


EDGE = _tool()
RESULT = {"push": 0, "lost": -1}


def _documented() -> dict[int, float]:
    """The infinite-deck column of the RULES.md table (tie option -> %)."""
    text = (ROOT / "docs" / "RULES.md").read_text()
    rows = re.findall(r"^\| ([123]) \([^|]*\) \| [^|]+ \| ([0-9.]+) % \|", text, re.M)
    assert len(rows) == 3, rows
    return {int(option): float(edge) for option, edge in rows}


@pytest.mark.parametrize("option", [1, 2, 3])
def test_the_computation_pays_what_the_game_pays_4620_5_h(option: int) -> None:
    model = EDGE.OPTIONS[option]
    assert model["nat_pay"] == Fraction(*natural_odds(option))
    assert model["nat_vs_nat"] == RESULT[tie_result(option, both_natural=True)]
    assert model["tie"] == RESULT[tie_result(option, both_natural=False)]


@pytest.mark.parametrize("option", [1, 2, 3])
def test_the_infinite_deck_edge_is_the_documented_one(option: int) -> None:
    edge = EDGE.infinite_deck_edge(option)
    assert isinstance(edge, Fraction)
    assert round(float(edge) * 100, 4) == _documented()[option]


def test_option_3_less_option_2_is_the_chance_of_two_naturals() -> None:
    assert EDGE.infinite_deck_edge(3) - EDGE.infinite_deck_edge(2) == Fraction(64, 28561)
