"""Wheel games: NY 9 NYCRR 4620.6-4620.10, 4620.17, 4620.20, 4620.21 (services/games/wheels.py).

Each test names the rule it checks. Expected payouts are computed here from the regulation's
payout rule for each game (count "to 1", the bill's face, odds set on the layout, the rim
sub-section's odds, merchandise never cash), applied to what each section shows; they are not
read back from the module's tables. House edges are computed by settling a bet against every
section and compared, as exact fractions, with the edge the payout formula implies.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from math import lcm
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.aggregates import RuleError
from services.games.base import PlacedBet
from services.games.registry import GAMES
from services.games.single_outcome import SingleOutcome
from services.games.wheels import (
    BIG_NINE,
    BIG_SIX,
    CARD_WHEEL,
    COLOR_WHEEL,
    FRUIT_WHEEL,
    HORSE_RACE_WHEEL,
    MERCHANDISE_AGGREGATE_PRIZE_LIMIT_CENTS,
    MERCHANDISE_MAX_WAGER_CENTS,
    MERCHANDISE_SINGLE_PRIZE_LIMIT_CENTS,
    MERCHANDISE_WHEEL,
    MONEY_WHEEL,
    WHEEL_GAMES,
    parse_inventory,
    player_return,
    section_prize,
    sections_won_by,
)

Config = Mapping[str, Any]
FAST = settings(derandomize=True, database=None, max_examples=120, deadline=None)

NAMES = (
    "big_six",
    "big_nine",
    "money_wheel",
    "color_wheel",
    "horse_race_wheel",
    "fruit_wheel",
    "card_wheel",
    "merchandise_wheel",
)
CASH = tuple(n for n in NAMES if n != "merchandise_wheel")
BILLS = {"$1": 1, "$2": 2, "$5": 5, "$10": 10, "$20": 20}
DICE = ["1", "2", "3", "4", "5", "6"]
NINE = [str(n) for n in range(1, 10)]
CARDS = ["9", "10", "J", "Q", "K", "A"]


# ------------------------------------------------------------------------------------------
# An independent reading of the payout rules
# ------------------------------------------------------------------------------------------


def expected_odds(name: str, config: Config, section: int, space: str) -> Fraction | None:
    """The odds "to 1" a bet on ``space`` wins at on ``section`` by the regulation, or None.

    4620.6(b)(2), 4620.7(b)(2), 4620.20(b)(2), 4620.21(b)(2): by how many times it shows;
    4620.7(b)(3), 4620.8(b)(2), 4620.9(b)(2): odds on the layout (bills: their face);
    4620.17(b): the rim sub-section's odds; merchandise: a win (odds 0) where a prize shows.
    """
    sec = config["sections"][section]
    shows = sec["shows"]
    if space not in shows:
        return None
    if name == "merchandise_wheel":
        return Fraction(0) if sec.get("prize") else None
    if name == "horse_race_wheel":
        return Fraction(*sec["odds"])
    if name == "money_wheel":
        if space in BILLS:
            return Fraction(BILLS[space])
        return Fraction(*config["odds"][space])
    if name == "color_wheel" or (name == "big_nine" and space in ("diamond", "star", "eagle")):
        return Fraction(*config["odds"][space])
    return Fraction(shows.count(space))


def spaces_of(config: Config) -> list[str]:
    return sorted({s for sec in config["sections"] for s in sec["shows"]})


def formula_return(name: str, config: Config, space: str) -> Fraction:
    n = len(config["sections"])
    total = Fraction(0)
    for i in range(n):
        odds = expected_odds(name, config, i, space)
        if odds is not None and name != "merchandise_wheel":
            total += 1 + odds
    return total / n


def settle_one(name: str, config: Config, space: str, amount: int, section: int) -> Any:
    game = WHEEL_GAMES[name]
    spec = game.check_bet(config, {"space": space}, amount)
    placed = PlacedBet(bet_id="b-1", player="p-1", bet=spec, amount=amount)
    (result,) = game.settle(config, [placed], {"section": section})
    return result


def settled_return(name: str, config: Config, space: str) -> Fraction:
    """Expected amount back per unit staked, by settling one bet against every section."""
    game = WHEEL_GAMES[name]
    n = len(game.outcomes(config))
    odds = [expected_odds(name, config, i, space) for i in range(n)]
    step = lcm(*(o.denominator for o in odds if o is not None))
    amount = step * (100 // step)  # a stake the odds' denominators divide, under every max
    total = sum(settle_one(name, config, space, amount, i).paid for i in range(n))
    return Fraction(total, amount * n)


def rule_error(code: str, fn: Any, *args: Any) -> RuleError:
    with pytest.raises(RuleError) as info:
        fn(*args)
    assert info.value.code == code, info.value
    return info.value


# ------------------------------------------------------------------------------------------
# Registry and interface
# ------------------------------------------------------------------------------------------


def test_every_wheel_game_is_registered_under_its_license_name() -> None:
    """Each wheel runs through the single-outcome round (the merchandise wheel through its
    own game, which keeps the shelf)."""
    for name in NAMES:
        game = GAMES[name]
        assert isinstance(game, SingleOutcome) and game.game is WHEEL_GAMES[name]
        assert game.name == name


@pytest.mark.parametrize("name", NAMES)
def test_outcome_is_the_section_index(name: str) -> None:
    game = WHEEL_GAMES[name]
    config = game.parse_config({})
    n = len(config["sections"])
    assert list(game.outcomes(config)) == [str(i) for i in range(n)]
    for i in (0, n - 1):
        assert game.check_outcome(config, {"section": i}, None) == {"section": i}
        assert game.check_outcome(config, {"section": i}, "3") == {"section": i}
        assert game.drawn_outcome(config, (i,), None) == {"section": i}
        assert game.winning_key({"section": i}) == str(i)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    "raw",
    [
        {"section": -1},
        {"section": "big"},
        {"section": True},
        {"section": 1.0},
        {},
        {"section": 0, "pocket": "1"},
        [0],
        0,
    ],
)
def test_an_outcome_outside_the_wheel_is_refused(name: str, raw: Any) -> None:
    game = WHEEL_GAMES[name]
    config = game.parse_config({})
    rule_error("invalid_outcome", game.check_outcome, config, raw, None)


@pytest.mark.parametrize("name", NAMES)
def test_a_section_index_past_the_end_is_refused(name: str) -> None:
    game = WHEEL_GAMES[name]
    config = game.parse_config({})
    n = len(config["sections"])
    rule_error("invalid_outcome", game.check_outcome, config, {"section": n}, None)
    rule_error("invalid_outcome", game.drawn_outcome, config, (n,), None)
    rule_error("invalid_outcome", game.drawn_outcome, config, (-1,), None)


# ------------------------------------------------------------------------------------------
# Default layouts: composition (from the regulation / the documented source)
# ------------------------------------------------------------------------------------------


def test_money_wheel_default_is_the_standard_54_section_wheel() -> None:
    """4620.8(a); the standard wheel: 24 $1, 15 $2, 7 $5, 4 $10, 2 $20, one flag, one joker."""
    config = MONEY_WHEEL.parse_config({})
    counts = Counter(s["shows"][0] for s in config["sections"])
    assert counts == {"$1": 24, "$2": 15, "$5": 7, "$10": 4, "$20": 2, "flag": 1, "joker": 1}
    assert config["odds"] == {"flag": [40, 1], "joker": [40, 1]}  # the top of 4620.8(b)(2)
    assert config["max_bet"] == 500 and config["min_bet"] == 1


@pytest.mark.parametrize(
    ("name", "symbols"),
    [("big_six", DICE), ("card_wheel", CARDS), ("fruit_wheel", None)],
)
def test_three_symbol_wheels_have_the_classic_big_six_composition(
    name: str, symbols: list[str] | None
) -> None:
    """54 sections: 6 with three different symbols, 24 with a pair, 24 triples; each symbol
    shows once on 7, twice on 4 and three times on 4 sections."""
    config = WHEEL_GAMES[name].parse_config({})
    shows = [s["shows"] for s in config["sections"]]
    assert len(shows) == 54 and all(len(s) == 3 for s in shows)
    kinds = Counter(len(set(s)) for s in shows)
    assert kinds == {3: 6, 2: 24, 1: 24}
    present = sorted({x for s in shows for x in s})
    if symbols is not None:
        assert present == sorted(symbols)
    else:
        assert present == sorted(["lemon", "orange", "cherry", "apple", "grape", "banana"])
    for sym in present:
        by_count = Counter(s.count(sym) for s in shows if sym in s)
        assert by_count == {1: 7, 2: 4, 3: 4}


def test_big_nine_default_sections() -> None:
    """4620.7(a): five numbers 1-9 per number section; one diamond, star, eagle section."""
    config = BIG_NINE.parse_config({})
    shows = [s["shows"] for s in config["sections"]]
    symbols = [s[0] for s in shows if len(s) == 1]
    assert sorted(symbols) == ["diamond", "eagle", "star"]
    numbers = [s for s in shows if len(s) == 5]
    assert len(numbers) + len(symbols) == len(shows) == 21
    assert all(x in NINE for s in numbers for x in s)
    assert {x for s in numbers for x in s} == set(NINE)


def test_horse_race_default_every_horse_has_the_same_rim() -> None:
    config = HORSE_RACE_WHEEL.parse_config({})
    rims: dict[str, list[tuple[int, int]]] = {}
    for s in config["sections"]:
        assert len(s["shows"]) == 1
        rims.setdefault(s["shows"][0], []).append(tuple(s["odds"]))
    assert sorted(rims) == ["1", "2", "3", "4", "5", "6"]
    assert all(sorted(r) == [(2, 1), (3, 1), (4, 1), (8, 1)] for r in rims.values())


# ------------------------------------------------------------------------------------------
# Settlement over every section of every default layout
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_settlement_over_every_section_of_the_default_layout(name: str) -> None:
    game = WHEEL_GAMES[name]
    config = game.parse_config({})
    n = len(config["sections"])
    spaces = spaces_of(config)
    amount = 100 if name != "merchandise_wheel" else 200
    bets = [
        PlacedBet(bet_id=f"b-{i}", player=f"p-{i % 3}", bet={"space": s}, amount=amount)
        for i, s in enumerate(spaces)
    ]
    for section in range(n):
        results = game.settle(config, bets, {"section": section})
        assert [r.bet_id for r in results] == [b.bet_id for b in bets]
        for bet, result in zip(bets, results, strict=True):
            odds = expected_odds(name, config, section, bet.bet["space"])
            assert result.amount == amount and result.player == bet.player
            if odds is None:
                assert (result.result, result.paid) == ("lost", 0)
            elif name == "merchandise_wheel":
                assert (result.result, result.paid) == ("won", 0)  # 4620.10(d): never cash
            else:
                assert result.result == "won"
                assert result.paid == amount + amount * odds  # whole cents at these odds


def test_big_six_examples_of_the_text() -> None:
    """4620.6(b)(2): 1 on 1-2-3 pays 1 to 1, on 1-1-2 2 to 1, 5 on 5-5-5 3 to 1."""
    sections = ["1-2-3", "1-1-2", "5-5-5", "4-5-6", "6-6-4"]
    sections += ["3-3-3", "3-3-3", "2-2-2", "4-4-4", "6-6-6", "1-1-1"]  # no player edge
    config = BIG_SIX.parse_config({"sections": sections})
    assert settle_one("big_six", config, "1", 100, 0).paid == 200
    assert settle_one("big_six", config, "1", 100, 1).paid == 300
    assert settle_one("big_six", config, "5", 100, 2).paid == 400
    assert settle_one("big_six", config, "5", 100, 3).paid == 200
    assert settle_one("big_six", config, "1", 100, 2).result == "lost"


def test_big_nine_counts_up_to_five() -> None:
    """4620.7(b)(2): 1-1-9-9-9 pays 2 to 1 on 1; 5-5-5-5-5 pays 5 to 1 on 5."""
    sections = ["1-1-9-9-9", "5-5-5-5-5", "2-3-4-6-7", "8-8-8-8-8", "diamond", "star", "eagle"]
    sections += ["-".join([str(k)] * 5) for k in range(1, 10)]  # 16 sections: no player edge
    odds = {"diamond": 10, "star": [15, 1], "eagle": [7, 2]}
    config = BIG_NINE.parse_config({"sections": sections, "odds": odds})
    assert settle_one("big_nine", config, "1", 100, 0).paid == 300
    assert settle_one("big_nine", config, "9", 100, 0).paid == 400
    assert settle_one("big_nine", config, "5", 100, 1).paid == 600
    assert settle_one("big_nine", config, "eagle", 100, 6).paid == 450
    assert config["odds"] == {"diamond": [10, 1], "star": [15, 1], "eagle": [7, 2]}


# ------------------------------------------------------------------------------------------
# House edge: enumeration == payout formula
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASH)
def test_house_edge_of_every_space_of_every_default_layout(name: str) -> None:
    config = WHEEL_GAMES[name].parse_config({})
    for space in spaces_of(config):
        formula = formula_return(name, config, space)
        assert settled_return(name, config, space) == formula
        assert player_return(config, space, name) == formula
        assert formula < 1  # every default layout keeps an edge for the house


DOCUMENTED_EDGES = {
    "big_six": {s: Fraction(2, 9) for s in DICE},
    "fruit_wheel": {s: Fraction(2, 9) for s in ("lemon", "orange", "cherry", "apple")},
    "card_wheel": {s: Fraction(2, 9) for s in CARDS},
    "big_nine": {"1": Fraction(1, 7), "9": Fraction(1, 7), "eagle": Fraction(2, 21)},
    "money_wheel": {
        "$1": Fraction(1, 9),
        "$2": Fraction(1, 6),
        "$5": Fraction(2, 9),
        "$10": Fraction(5, 27),
        "$20": Fraction(2, 9),
        "flag": Fraction(13, 54),
        "joker": Fraction(13, 54),
    },
    "color_wheel": {
        "red": Fraction(1, 6),
        "yellow": Fraction(1, 8),
        "green": Fraction(1, 6),
        "blue": Fraction(1, 12),
        "purple": Fraction(1, 8),
    },
    "horse_race_wheel": {str(h): Fraction(1, 8) for h in range(1, 7)},
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED_EDGES))
def test_the_edges_docs_rules_md_states(name: str) -> None:
    config = WHEEL_GAMES[name].parse_config({})
    for space, edge in DOCUMENTED_EDGES[name].items():
        assert 1 - settled_return(name, config, space) == edge


def _odds_strategy(low: int = 1, high: int = 40) -> st.SearchStrategy[list[int]]:
    return st.tuples(st.integers(low, high), st.sampled_from([1, 1, 2, 4])).map(list)


@st.composite
def custom_layouts(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """A custom layout for ``name`` whose sections are well formed (edge not filtered)."""
    if name in ("big_six", "card_wheel", "fruit_wheel"):
        symbols = {"big_six": DICE, "card_wheel": CARDS}.get(name, list("ABCDEF"))
        base = [list(symbols[i : i + 3]) for i in (0, 3)]  # every symbol shows somewhere
        extra = draw(st.lists(st.lists(st.sampled_from(symbols), min_size=3, max_size=3)))
        sections: list[Any] = ["-".join(s) for s in base + extra]
        sections = draw(st.permutations(sections))
        return {"sections": sections}
    if name == "big_nine":
        base = [NINE[0:5], NINE[4:9]]
        extra = draw(st.lists(st.lists(st.sampled_from(NINE), min_size=5, max_size=5)))
        symbols = draw(st.lists(st.sampled_from(["diamond", "star", "eagle"]), max_size=6))
        sections = [*("-".join(s) for s in base + extra), "diamond", "star", "eagle", *symbols]
        odds = {s: draw(_odds_strategy()) for s in ("diamond", "star", "eagle")}
        return {"sections": draw(st.permutations(sections)), "odds": odds}
    if name == "money_wheel":
        counts = {b: draw(st.integers(1, 30)) for b in BILLS}
        sections = [b for b, c in counts.items() for _ in range(c)] + ["flag", "joker"]
        odds = {s: draw(_odds_strategy(25, 40)) for s in ("flag", "joker")}
        return {"sections": draw(st.permutations(sections)), "odds": odds}
    if name == "color_wheel":
        colours = draw(st.lists(st.sampled_from(["red", "blue", "gold", "green"]), min_size=2))
        odds = {c: draw(_odds_strategy(1, 6)) for c in set(colours)}
        return {"sections": colours, "odds": odds}
    if name == "horse_race_wheel":
        horses = draw(st.integers(2, 8))
        sections = [
            {"shows": [str(h)], "odds": draw(_odds_strategy(1, 12))}
            for h in range(1, horses + 1)
            for _ in range(draw(st.integers(1, 4)))
        ]
        return {"sections": draw(st.permutations(sections))}
    numbers = draw(st.integers(2, 12))
    sections = [
        {"shows": [str(n)], "prize": draw(st.sampled_from(["small", "big"]))}
        for n in range(1, numbers + 1)
    ]
    sections += [{"shows": [str(n)]} for n in draw(st.lists(st.integers(1, numbers)))]
    return {"sections": draw(st.permutations(sections))}


@pytest.mark.parametrize("name", NAMES)
@FAST
@given(data=st.data())
def test_house_edge_of_random_custom_layouts(name: str, data: st.DataObject) -> None:
    """Enumeration == formula for every space; a layout giving any space a player edge is
    refused (docs/RULES.md: no player edge, as at roulette); round trip of the config."""
    raw = data.draw(custom_layouts(name))
    game = WHEEL_GAMES[name]
    canonical_sections = [
        {"shows": s.split("-")} if isinstance(s, str) else dict(s) for s in raw["sections"]
    ]
    probe = {"sections": canonical_sections, "odds": {}}
    for space, odds in raw.get("odds", {}).items():
        probe["odds"][space] = odds
    returns = {s: formula_return(name, probe, s) for s in spaces_of(probe)}
    if name != "merchandise_wheel" and max(returns.values()) > 1:
        rule_error("invalid_config", game.parse_config, raw)
        return
    config = game.parse_config(raw)
    assert config["layout"] == "custom"
    assert game.parse_config(config) == config
    for space in spaces_of(config):
        formula = formula_return(name, config, space)
        assert formula == returns[space]
        assert settled_return(name, config, space) == formula


# ------------------------------------------------------------------------------------------
# Bets: spec, limits, rounding
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_bad_bets(name: str) -> None:
    game = WHEEL_GAMES[name]
    config = game.parse_config({})
    space = spaces_of(config)[0]
    limit = int(config["max_bet"])
    rule_error("invalid_bet", game.check_bet, config, {"space": "no-such-space"}, 100)
    rule_error("bad_request", game.check_bet, config, "1", 100)
    rule_error("bad_request", game.check_bet, config, {}, 100)
    rule_error("bad_request", game.check_bet, config, {"space": 1}, 100)
    rule_error("bad_request", game.check_bet, config, {"space": space}, 0)
    rule_error("bad_request", game.check_bet, config, {"space": space}, True)
    rule_error("bad_request", game.check_bet, config, {"space": space}, 1.5)
    rule_error("over_limit", game.check_bet, config, {"space": space}, limit + 1)
    assert game.check_bet(config, {"space": space}, limit) == {"space": space}
    extra_code = "merchandise_wager" if name == "merchandise_wheel" else "bad_request"
    rule_error(extra_code, game.check_bet, config, {"space": space, "kind": "x"}, 100)


@pytest.mark.parametrize("name", NAMES)
def test_under_the_table_minimum(name: str) -> None:
    game = WHEEL_GAMES[name]
    config = game.parse_config({"min_bet": 25})
    space = spaces_of(config)[0]
    rule_error("under_minimum", game.check_bet, config, {"space": space}, 24)
    assert game.check_bet(config, {"space": space}, 25) == {"space": space}


def test_maximum_bets_by_game() -> None:
    """$5 on 4620.6-4620.9, 4620.17, 4620.20, 4620.21; $2 on merchandise wheels, 4620.10(c)."""
    for name in NAMES:
        game = WHEEL_GAMES[name]
        cap = 200 if name == "merchandise_wheel" else 500
        assert game.parse_config({})["max_bet"] == cap
        assert game.parse_config({"max_bet": 50})["max_bet"] == 50
        rule_error("invalid_config", game.parse_config, {"max_bet": cap + 1})
        rule_error("invalid_config", game.parse_config, {"max_bet": 0})
        rule_error("invalid_config", game.parse_config, {"min_bet": 0})
        rule_error("invalid_config", game.parse_config, {"min_bet": 60, "max_bet": 50})
    assert MERCHANDISE_MAX_WAGER_CENTS == 200


@pytest.mark.parametrize(
    "bet",
    [
        {"space": "1", "item": "teddy-bear"},
        {"space": "1", "merchandise": ["watch"]},
        {"space": "1", "prize": "large"},
        {"item": "teddy-bear"},
    ],
)
def test_merchandise_shall_not_be_wagered(bet: Any) -> None:
    """4620.10(c): anything offered with the wager besides the space is refused."""
    config = MERCHANDISE_WHEEL.parse_config({})
    rule_error("merchandise_wager", MERCHANDISE_WHEEL.check_bet, config, bet, 100)


def test_fractional_odds_take_only_stakes_the_denominator_divides() -> None:
    """Winnings amount * num // den are never floored: check_bet refuses other stakes."""
    config = COLOR_WHEEL.parse_config(
        {"sections": ["red", "blue", "blue", "blue"], "odds": {"red": [5, 2], "blue": [1, 3]}}
    )
    rule_error("invalid_bet", COLOR_WHEEL.check_bet, config, {"space": "red"}, 101)
    rule_error("invalid_bet", COLOR_WHEEL.check_bet, config, {"space": "blue"}, 100)
    assert settle_one("color_wheel", config, "red", 100, 0).paid == 350
    assert settle_one("color_wheel", config, "blue", 99, 1).paid == 132
    horses = HORSE_RACE_WHEEL.parse_config(
        {
            "sections": [
                {"shows": ["1"], "odds": [3, 2]},
                {"shows": ["1"], "odds": [1, 3]},
                {"shows": ["2"], "odds": [1, 1]},
                {"shows": ["2"], "odds": [1, 1]},
            ]
        }
    )
    rule_error("invalid_bet", HORSE_RACE_WHEEL.check_bet, horses, {"space": "1"}, 4)
    assert settle_one("horse_race_wheel", horses, "1", 6, 0).paid == 15
    assert settle_one("horse_race_wheel", horses, "1", 6, 1).paid == 8


def test_settle_refuses_a_bet_not_on_the_layout() -> None:
    config = MONEY_WHEEL.parse_config({})
    for bet in ({"space": "$3"}, {}, {"space": ["$1"]}):
        placed = PlacedBet(bet_id="b-1", player="p", bet=bet, amount=100)
        rule_error("invalid_bet", MONEY_WHEEL.settle, config, [placed], {"section": 0})
    placed = PlacedBet(bet_id="b-1", player="p", bet={"space": "$1"}, amount=100)
    rule_error("invalid_outcome", MONEY_WHEEL.settle, config, [placed], {"section": 54})


def test_settle_is_the_same_for_an_equal_copy_of_the_config() -> None:
    """The compiled layout is cached by identity and by content: a copy settles the same."""
    config = MONEY_WHEEL.parse_config({"odds": {"flag": 25}})
    bets = [
        PlacedBet(bet_id=f"b-{i}", player="p", bet={"space": s}, amount=100)
        for i, s in enumerate([*BILLS, "flag", "joker"])
    ]
    for section in range(54):
        first = MONEY_WHEEL.settle(config, bets, {"section": section})
        again = MONEY_WHEEL.settle(copy.deepcopy(config), bets, {"section": section})
        assert first == again


# ------------------------------------------------------------------------------------------
# Configuration
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_canonical_config_parses_to_itself(name: str) -> None:
    game = WHEEL_GAMES[name]
    for raw in ({}, {"layout": "standard"}):
        config = game.parse_config(raw)
        assert config["layout"] == "standard"
        assert game.parse_config(config) == config
        assert game.parse_config(copy.deepcopy(config)) == config


def test_a_standard_layout_with_other_sections_is_refused() -> None:
    config = dict(BIG_SIX.parse_config({}))
    config["sections"] = list(reversed(config["sections"]))
    rule_error("invalid_config", BIG_SIX.parse_config, config)
    custom = BIG_SIX.parse_config({**config, "layout": "custom"})
    assert custom["layout"] == "custom"


def test_string_shorthand_equals_objects() -> None:
    short = FRUIT_WHEEL.parse_config(
        {"sections": ["a-b-c", "d-e-f", "a-a-a", "b-b-b", "c-c-c", "d-d-d", "e-e-e", "f-f-f"]}
    )
    assert short["sections"][0] == {"shows": ["a", "b", "c"]}
    assert short["odds"] == {}


def test_money_wheel_flag_and_joker_odds_range() -> None:
    """4620.8(b)(2): flag and joker from 25 to 1 through 40 to 1, inclusive."""
    for ok in (25, 40, [65, 2]):
        config = MONEY_WHEEL.parse_config({"odds": {"flag": ok, "joker": ok}})
        assert Fraction(*config["odds"]["flag"]) == (ok if isinstance(ok, int) else Fraction(65, 2))
    for bad in (24, 41, [49, 2], [81, 2], 0, -30, "40", [40], True):
        rule_error("invalid_config", MONEY_WHEEL.parse_config, {"odds": {"flag": bad}})
    rule_error("invalid_config", MONEY_WHEEL.parse_config, {"odds": {"$1": 2}})


def _sections(name: str, sections: Sequence[Any], **kw: Any) -> dict[str, Any]:
    return {"sections": list(sections), **kw}


GOOD_BIG_SIX = ["1-2-3", "4-5-6", "1-1-1", "2-2-2", "3-3-3", "4-4-4", "5-5-5", "6-6-6"]

INVALID_LAYOUTS: list[tuple[str, dict[str, Any]]] = [
    ("big_six", {"layout": "grand"}),
    ("big_six", {"layout": "custom"}),
    ("big_six", {"colour": "red"}),
    ("big_six", _sections("big_six", ["1-2-3"])),  # one section
    ("big_six", _sections("big_six", "1-2-3")),  # not a list
    ("big_six", _sections("big_six", [*GOOD_BIG_SIX, "1-2"])),  # two dice
    ("big_six", _sections("big_six", [*GOOD_BIG_SIX, "1-2-7"])),  # no 7 on a die
    ("big_six", _sections("big_six", GOOD_BIG_SIX[2:] + ["1-2-3"] * 40)),  # 4-6 pay? edge
    ("big_six", _sections("big_six", ["1-2-3"] * 10)),  # 4, 5, 6 pay nothing
    ("big_six", _sections("big_six", GOOD_BIG_SIX, odds={"1": 2})),  # odds are fixed
    ("big_six", _sections("big_six", [*GOOD_BIG_SIX, {"shows": ["1", "2", "3"], "odds": 1}])),
    ("big_six", _sections("big_six", [*GOOD_BIG_SIX, {"shows": ["1", "2", "3"], "x": 1}])),
    ("big_six", _sections("big_six", [*GOOD_BIG_SIX, {"shows": [1, 2, 3]}])),
    ("big_six", _sections("big_six", [*GOOD_BIG_SIX, 123])),
    ("big_six", _sections("big_six", [*GOOD_BIG_SIX, "1--2"])),
    ("big_nine", {"sections": ["1-2-3-4-5", "5-6-7-8-9", "diamond", "star", "eagle"] * 4}),
    ("big_nine", {"sections": ["1-2-3-4", "5-6-7-8-9", "diamond", "star", "eagle"] * 4}),
    ("big_nine", {"sections": ["1-2-3-4-5", "5-6-7-8-9", "diamond", "star"] * 9, "odds": {}}),
    ("big_nine", {"odds": {"diamond": 0}}),
    ("big_nine", {"odds": {"moon": 3}}),
    ("money_wheel", {"sections": ["$1", "$2", "$5", "$10", "$20", "flag"] * 9}),  # no joker
    ("money_wheel", {"sections": ["$1", "$3"] * 20}),
    ("money_wheel", {"sections": ["$1", "$2", "$5", "$10", "$20", "flag", "joker"]}),  # edge
    ("color_wheel", {"sections": ["red", "blue", "blue"]}),  # odds not on the layout
    ("color_wheel", {"sections": ["red", "blue"], "odds": {"red": 1, "blue": 1, "pink": 1}}),
    ("color_wheel", {"sections": ["red", "blue"], "odds": {"red": 2, "blue": 1}}),  # edge
    ("color_wheel", {"sections": ["red-blue", "blue"], "odds": {"red": 1, "blue": 1}}),
    ("color_wheel", {"sections": [{"shows": [" red"]}, "blue"], "odds": {"red": 1, "blue": 1}}),
    ("horse_race_wheel", {"sections": ["1", "2"]}),  # no odds on the rim
    ("horse_race_wheel", {"sections": [{"shows": ["01"], "odds": 1}, {"shows": ["2"], "odds": 1}]}),
    ("horse_race_wheel", {"sections": [{"shows": ["x"], "odds": 1}, {"shows": ["2"], "odds": 1}]}),
    ("horse_race_wheel", {"sections": [{"shows": ["1"], "odds": 2}, {"shows": ["2"], "odds": 1}]}),
    ("fruit_wheel", {"sections": ["a-b-c", "d-e-a", "a-a-a", "b-b-b"] * 3}),  # five types
    ("fruit_wheel", {"sections": ["a-b-c", "d-e-f", "g-a-a", "b-b-b"] * 3}),  # seven types
    ("card_wheel", {"sections": ["9-10-J", "Q-K-A", "8-8-8"]}),
    ("card_wheel", {"sections": ["9-10-J", "Q-K-Q"] * 5}),  # the ace pays nothing
    ("merchandise_wheel", {"sections": [{"shows": ["1"]}, {"shows": ["2"]}]}),  # no prize
    ("merchandise_wheel", {"sections": [{"shows": ["1", "1"], "prize": "x"}, "2"]}),
    ("merchandise_wheel", {"sections": [{"shows": ["1"], "prize": ""}, "2"]}),
    ("merchandise_wheel", {"single_prize_limit": MERCHANDISE_SINGLE_PRIZE_LIMIT_CENTS + 1}),
    ("merchandise_wheel", {"aggregate_prize_limit": MERCHANDISE_AGGREGATE_PRIZE_LIMIT_CENTS + 1}),
    ("merchandise_wheel", {"inventory": [{"item": "a", "prize": "small", "value": 40_001}]}),
    ("merchandise_wheel", {"inventory": [{"item": "a", "prize": "gold", "value": 100}]}),
    ("merchandise_wheel", {"inventory": "teddy"}),
    ("big_six", {"sections": [*GOOD_BIG_SIX, {"shows": ["1", "2", "3"], "prize": "x"}]}),
]


@pytest.mark.parametrize(("name", "raw"), INVALID_LAYOUTS)
def test_layouts_that_do_not_validate(name: str, raw: dict[str, Any]) -> None:
    rule_error("invalid_config", WHEEL_GAMES[name].parse_config, raw)


def test_the_invalid_layouts_differ_from_valid_ones_only_in_their_fault() -> None:
    """Guard for the table above: the good bases it builds on do parse."""
    BIG_SIX.parse_config({"sections": GOOD_BIG_SIX})
    COLOR_WHEEL.parse_config({"sections": ["red", "blue"], "odds": {"red": 1, "blue": 1}})
    CARD_WHEEL.parse_config({"sections": ["9-10-J", "Q-K-A"] * 5})


# ------------------------------------------------------------------------------------------
# Merchandise wheels
# ------------------------------------------------------------------------------------------

MERCH_SECTIONS = [
    {"shows": ["1", "red"], "prize": "small"},
    {"shows": ["2"]},
    {"shows": ["2", "red"], "prize": "large"},
    {"shows": ["1"]},
]


M = "merchandise_wheel"


def test_merchandise_wins_where_the_space_shows_and_a_prize_is_named() -> None:
    """4620.10(a)-(b), (d): won where the space shows on a prize section; paid 0 always."""
    config = MERCHANDISE_WHEEL.parse_config({"sections": MERCH_SECTIONS})
    assert sections_won_by(config, "1", M) == (0,)
    assert sections_won_by(config, "2", M) == (2,)
    assert sections_won_by(config, "red", M) == (0, 2)
    assert [section_prize(config, i) for i in range(4)] == ["small", None, "large", None]
    rule_error("invalid_outcome", section_prize, config, 4)
    rule_error("invalid_bet", sections_won_by, config, "3", M)
    for section in range(4):
        for space in ("1", "2", "red"):
            result = settle_one("merchandise_wheel", config, space, 200, section)
            assert result.paid == 0
            assert (result.result == "won") == (section in sections_won_by(config, space, M))


def test_a_space_on_no_prize_section_is_a_bet_that_never_wins() -> None:
    """docs/RULES.md, Wheel games 9: such a space is taken and always settles as lost."""
    sections = [*MERCH_SECTIONS, {"shows": ["house"]}]
    config = MERCHANDISE_WHEEL.parse_config({"sections": sections})
    assert sections_won_by(config, "house", M) == ()
    for section in range(len(sections)):
        result = settle_one("merchandise_wheel", config, "house", 100, section)
        assert (result.result, result.paid) == ("lost", 0)


def test_sections_won_by_on_a_cash_wheel() -> None:
    config = BIG_SIX.parse_config({})
    won = sections_won_by(config, "1", "big_six")
    assert won == tuple(i for i, s in enumerate(config["sections"]) if "1" in s["shows"])
    assert section_prize(config, 0) is None


def test_merchandise_config_defaults_and_inventory() -> None:
    config = MERCHANDISE_WHEEL.parse_config({})
    assert config["single_prize_limit"] == MERCHANDISE_SINGLE_PRIZE_LIMIT_CENTS == 40_000
    assert config["aggregate_prize_limit"] == MERCHANDISE_AGGREGATE_PRIZE_LIMIT_CENTS
    assert config["inventory"] == []
    stocked = MERCHANDISE_WHEEL.parse_config(
        {
            "single_prize_limit": 5_000,
            "aggregate_prize_limit": 20_000,
            "inventory": [
                {"item": "bear-1", "prize": "small", "value": 800},
                {"item": "tv-1", "prize": "large", "value": 5_000, "donated": True},
            ],
        }
    )
    assert stocked["inventory"] == [
        {"item": "bear-1", "prize": "small", "value": 800, "donated": False},
        {"item": "tv-1", "prize": "large", "value": 5_000, "donated": True},
    ]
    assert MERCHANDISE_WHEEL.parse_config(stocked) == stocked
    rule_error(
        "invalid_config",
        MERCHANDISE_WHEEL.parse_config,
        {"single_prize_limit": 500, "inventory": [{"item": "a", "prize": "small", "value": 501}]},
    )


@pytest.mark.parametrize(
    ("items", "code"),
    [
        ([{"item": "a", "prize": "small", "value": 40_001}], "prize_over_limit"),
        ([{"item": "a", "prize": "small", "value": 100}] * 2, "duplicate_item"),
        ([{"item": "a", "prize": "gold", "value": 100}], "invalid_config"),
        ([{"item": "a", "prize": "small", "value": 0}], "invalid_config"),
        ([{"item": "a", "prize": "small", "value": True}], "invalid_config"),
        ([{"item": "a", "prize": "small", "value": 1, "donated": "no"}], "invalid_config"),
        ([{"item": "", "prize": "small", "value": 1}], "invalid_config"),
        ([{"item": "a", "prize": "small", "value": 1, "cash": 5}], "invalid_config"),
        (["a"], "invalid_config"),
        ({"item": "a"}, "invalid_config"),
    ],
)
def test_parse_inventory_refusals(items: Any, code: str) -> None:
    config = MERCHANDISE_WHEEL.parse_config({})
    rule_error(code, parse_inventory, config, items)


def test_parse_inventory_for_restocking() -> None:
    config = MERCHANDISE_WHEEL.parse_config({"single_prize_limit": 1_000})
    items = parse_inventory(config, [{"item": "mug-7", "prize": "medium", "value": 1_000}])
    assert items == ({"item": "mug-7", "prize": "medium", "value": 1_000, "donated": False},)
    rule_error(
        "prize_over_limit",
        parse_inventory,
        config,
        [{"item": "mug-8", "prize": "medium", "value": 1_001}],
    )
