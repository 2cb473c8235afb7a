"""The table actor's adapter: a server draw is taken from its Chance against the state the
step is decided on, and enters the pure rules as data (docs/ARCHITECTURE.md "Chance")."""

from __future__ import annotations

import random
from typing import Any

from events.tables import OutcomeRecorded, Settled
from services.chance import ServerChance, seal_key
from services.games.single_outcome import DrawOutcome
from services.tables.actor import TableRules
from services.tables.rules import CallNoMoreBets, OpenRound, OpenTable, PlaceBet, TableState, fold


def _table(rules: TableRules, game: str, config: dict[str, Any], bet: dict[str, Any]) -> TableState:
    state = rules.initial("table:t")
    for command in (
        OpenTable(game=game, config=config, outcome_mode="rng"),
        OpenRound(),
        PlaceBet(player="p-1", bet=bet, amount=100),
        CallNoMoreBets(),
    ):
        state = fold(state, rules.decide(state, command))
    return state


def _rules(seed: int) -> TableRules:
    return TableRules(ServerChance(seal_key(b"k" * 32), random.Random(seed)))


def test_a_joker_seven_draw_deals_seven_distinct_cards_from_the_chance() -> None:
    seen = set()
    for seed in range(20):
        rules = _rules(seed)
        state = _table(rules, "joker_seven", {}, {"square": "no_pairs"})
        recorded, settled = rules.decide(state, DrawOutcome())
        assert isinstance(recorded, OutcomeRecorded) and recorded.source == "rng"
        cards = recorded.outcome["cards"]
        assert len(cards) == 7 and cards.count("JOKER") <= 2
        assert len({c for c in cards if c != "JOKER"}) == len([c for c in cards if c != "JOKER"])
        assert isinstance(settled, Settled) and len(settled.settlements) == 1
        seen.add(tuple(cards))
    assert len(seen) == 20  # the draws come from the seeded CSPRNG stand-in, not a constant


def test_the_same_seed_draws_the_same_pocket_and_the_draw_is_data() -> None:
    pockets = []
    for _ in range(2):
        rules = _rules(7)
        state = _table(rules, "roulette", {}, {"kind": "red"})
        recorded = rules.decide(state, DrawOutcome())[0]
        assert isinstance(recorded, OutcomeRecorded)
        pockets.append(recorded.outcome["pocket"])
    assert pockets[0] == pockets[1]
    # a draw already in the step is used as it is (the pure rules take it as data)
    state = _table(_rules(1), "roulette", {}, {"kind": "red"})
    recorded = _rules(2).decide(state, DrawOutcome(draw=(0,)))[0]
    assert isinstance(recorded, OutcomeRecorded) and recorded.outcome["pocket"] == "0"
