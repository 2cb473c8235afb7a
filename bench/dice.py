"""Dice settlement: one Hazard round that holds 10,000 bets (``--only dice_settle``).

Times ``HAZARD.settle(config, bets, outcome)``, the pure settlement of every bet, over bets
of every kind of 4620.12(c)(1)-(7) from 200 players (seeded), median of several runs. Two
rolls are timed: a triple (the specific triple, any triple, the numbers bet and the chuck
number win; low, high, odd and even lose) and a roll of three faces.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from bench.common import Result, at_most, progress
from bench.settle import median_ms
from services.games.base import PlacedBet
from services.games.three_dice import HAZARD, SPECIFIC_TRIPLE_MAX_BET_CENTS

BETS = 10_000


def round_of(config: Mapping[str, Any], count: int, seed: int = 12) -> list[PlacedBet]:
    """``count`` canonical Hazard bets (as check_bet returns them) on every kind, seeded."""
    rng = random.Random(seed)
    kinds = HAZARD.every_bet()
    bets = []
    for i in range(count):
        spec = rng.choice(kinds)
        top = SPECIFIC_TRIPLE_MAX_BET_CENTS if spec["kind"] == "specific_triple" else 500
        amount = rng.randint(1, top)
        canonical = HAZARD.check_bet(config, spec, amount)
        bets.append(
            PlacedBet(bet_id=f"h.1.{i + 2}", player=f"p-{i % 200}", bet=canonical, amount=amount)
        )
    return bets


def run(quick: bool) -> list[Result]:
    runs = 5 if quick else 11
    progress(f"dice_settle: {BETS:,} Hazard bets, median of {runs} runs")
    config = HAZARD.parse_config({})
    bets = round_of(config, BETS)
    rolls = {
        "a triple, 3-3-3": {"dice": [3, 3, 3], "total": 9, "thrown_by": "cage"},
        "2-4-5": {"dice": [2, 4, 5], "total": 11, "thrown_by": "cage"},
    }
    timed: dict[str, float] = {}
    winners: dict[str, int] = {}
    for name, outcome in rolls.items():
        timed[name], _ = median_ms(lambda o=outcome: HAZARD.settle(config, bets, o), runs)
        winners[name] = sum(1 for s in HAZARD.settle(config, bets, outcome) if s.result == "won")
    worst = max(timed.values())
    return [
        at_most(
            f"3f HAZARD.settle, {BETS:,} bets",
            worst,
            "ms",
            20,
            note=f"median of {runs}, the slower of two rolls ("
            + "; ".join(f"{n}: {timed[n]:.2f} ms, {winners[n]:,} winners" for n in rolls)
            + "); bets of every kind of 4620.12(c)(1)-(7)",
            digits=2,
        )
    ]
