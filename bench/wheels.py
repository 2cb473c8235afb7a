"""Wheel settlement: one money-wheel round that holds 10,000 bets (``--only wheel_settle``).

Times ``MONEY_WHEEL.settle(config, bets, outcome)`` on the standard 54-section wheel, bets on
every betting space ($1 … $20, flag, joker) from 200 players, median of several runs. The
configuration is a fresh copy of the canonical one (as the table state holds it after a
replay), so the first run also pays for compiling the layout once.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any

from bench.common import Result, at_most, progress
from bench.settle import median_ms
from services.games.base import PlacedBet
from services.games.wheels import MONEY_WHEEL

BETS = 10_000
SPACES = ("$1", "$2", "$5", "$10", "$20", "flag", "joker")


def round_of(config: Mapping[str, Any], count: int, seed: int = 11) -> list[PlacedBet]:
    """``count`` canonical money-wheel bets (as check_bet returns them), seeded."""
    rng = random.Random(seed)
    bets = []
    for i in range(count):
        amount = rng.randint(1, 500)
        spec = MONEY_WHEEL.check_bet(config, {"space": rng.choice(SPACES)}, amount)
        bets.append(
            PlacedBet(bet_id=f"w.1.{i + 2}", player=f"p-{i % 200}", bet=spec, amount=amount)
        )
    return bets


def run(quick: bool) -> list[Result]:
    runs = 5 if quick else 11
    progress(f"wheel_settle: {BETS:,} money-wheel bets, median of {runs} runs")
    config = copy.deepcopy(MONEY_WHEEL.parse_config({}))
    bets = round_of(config, BETS)
    section = 15  # a $20 section of the standard layout
    outcome = {"section": section}
    settle_ms, _ = median_ms(lambda: MONEY_WHEEL.settle(config, bets, outcome), runs)
    won = sum(1 for s in MONEY_WHEEL.settle(config, bets, outcome) if s.result == "won")
    return [
        at_most(
            f"3e MONEY_WHEEL.settle, {BETS:,} bets",
            settle_ms,
            "ms",
            20,
            note=f"median of {runs}; standard 54-section wheel, {won:,} winners on section "
            f"{section} ($20); bets on all seven spaces",
            digits=2,
        )
    ]
