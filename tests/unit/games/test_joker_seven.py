"""Joker Seven rules: NY 9 NYCRR 4620.16 and the project's readings J-1 to J-8.

Each test names the rule it checks. Hands are picked by hand for every square; the exact
counts behind the house edges are checked three ways: against closed forms, against every
hand of a smaller deck settled one by one, and against the table in docs/RULES.md (parsed,
so a table that drifts from the code fails). Randomness is seeded.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from math import comb, perm, prod
from pathlib import Path
from typing import Any

import pytest

from services.aggregates import RuleError
from services.games.base import PlacedBet, Settlement
from services.games.cards import DECK, JOKER, RANKS, SUITS
from services.games.joker_seven import (
    DRAW_BOUNDS,
    JOKER_SEVEN,
    JOKER_SEVEN_DECK,
    MAX_BET_CENTS,
    PAYOUT_ODDS,
    SQUARES,
    canonical_hand,
    deal_positions,
    draw_of_positions,
    hands_counted,
    house_edges,
    pair_count,
    square_win_counts,
    winning_squares,
)
from services.games.registry import GAMES
from services.games.single_outcome import SingleOutcome
from services.night import NightError, parse_night
from tests.conftest import night_doc

G = JOKER_SEVEN
CONFIG = G.parse_config({})
ALL_SQUARES = [
    "red_4_or_more",
    "red_exactly_4",
    "red_exactly_5",
    "red_exactly_6",
    "red_exactly_7",
    "black_4_or_more",
    "black_exactly_4",
    "black_exactly_5",
    "black_exactly_6",
    "black_exactly_7",
    "no_pairs",
    "two_pairs",
    "one_joker",
    "two_jokers",
    "pair_A",
    "pair_2",
    "pair_3",
    "pair_4",
    "pair_5",
    "pair_6",
    "pair_7",
    "pair_8",
    "pair_9",
    "pair_10",
    "pair_J",
    "pair_Q",
    "pair_K",
    "prial",
]


def rule_error(code: str, fn: Any, *args: Any) -> RuleError:
    with pytest.raises(RuleError) as info:
        fn(*args)
    assert info.value.code == code, info.value
    return info.value


def hand(text: str) -> dict[str, Any]:
    return {"cards": cards(text)}


def cards(text: str) -> list[str]:
    return text.split()


def wins(text: str) -> set[str]:
    """The squares a hand wins, found by settling a 1-cent bet on every square."""
    return {s.bet_id for s in settle_all(text) if s.result == "won"}


def settle_all(text: str, amount: int = 1) -> tuple[Settlement, ...]:
    bets = [PlacedBet(bet_id=sq, player="p", bet={"square": sq}, amount=amount) for sq in SQUARES]
    return G.settle(CONFIG, bets, G.check_outcome(CONFIG, hand(text), None))


def paid(text: str, square: str, amount: int = 100) -> int:
    bet = PlacedBet(bet_id="b", player="p", bet={"square": square}, amount=amount)
    [s] = G.settle(CONFIG, [bet], G.check_outcome(CONFIG, hand(text), None))
    return s.paid


# ------------------------------------------------------------------------------------------
# The deck and the layout
# ------------------------------------------------------------------------------------------


def test_the_deck_is_52_cards_and_two_alike_jokers_4620_16_a() -> None:
    assert len(JOKER_SEVEN_DECK) == 54
    assert Counter(JOKER_SEVEN_DECK) == Counter({**dict.fromkeys(DECK, 1), JOKER: 2})
    assert hands_counted() == comb(54, 7) == 177_100_560


def test_28_squares_at_the_odds_the_text_fixes_4620_16_d_e_reading_j8() -> None:
    assert list(SQUARES) == ALL_SQUARES and len(SQUARES) == 28
    for c in ("red", "black"):  # 4620.16(d)
        assert PAYOUT_ODDS[f"{c}_4_or_more"] == 1
        assert [PAYOUT_ODDS[f"{c}_exactly_{n}"] for n in (4, 5, 6, 7)] == [2, 5, 15, 25]
    assert PAYOUT_ODDS["no_pairs"] == PAYOUT_ODDS["two_pairs"] == 3  # 4620.16(e)
    assert PAYOUT_ODDS["one_joker"] == 3 and PAYOUT_ODDS["two_jokers"] == 20
    assert {PAYOUT_ODDS[f"pair_{r}"] for r in RANKS} == {9}
    assert PAYOUT_ODDS["prial"] == 12
    # Odds are no table setting.
    rule_error("invalid_config", G.parse_config, {"odds": {"prial": 20}})


def test_joker_seven_is_a_registered_game_the_license_accepts_4620_1_n() -> None:
    registered = GAMES["joker_seven"]
    assert isinstance(registered, SingleOutcome) and registered.game is JOKER_SEVEN
    assert G.name == "joker_seven"
    doc = night_doc("org-a")
    doc["license"] = {**doc["license"], "games": ["joker_seven"]}
    doc["tables"] = [
        {"id": "j7-1", "game": "joker_seven", "outcome_mode": "dealer"},
        {"id": "j7-2", "game": "joker_seven", "outcome_mode": "rng", "options": {"max_bet": 200}},
    ]
    tables = {t.id: t for t in parse_night(doc).tables}
    assert tables["j7-1"].config == {"min_bet": 1, "max_bet": 500}
    assert tables["j7-2"].config == {"min_bet": 1, "max_bet": 200}
    doc["tables"][1]["options"] = {"max_bet": 600}
    with pytest.raises(NightError, match=r"j7-2.*4620\.16\(f\)"):
        parse_night(doc)


# ------------------------------------------------------------------------------------------
# Colour bets, 4620.16(d), J-1, J-6
# ------------------------------------------------------------------------------------------


def test_four_of_a_colour_wins_4_or_more_and_exactly_4_of_that_colour_only_4620_16_d_j1() -> None:
    won = wins("AH 3D 5H 8D 2S 9C KS")  # 4 red, 3 black
    assert {"red_4_or_more", "red_exactly_4"} <= won
    assert not {sq for sq in won if sq.startswith("black_")}
    assert paid("AH 3D 5H 8D 2S 9C KS", "red_4_or_more") == 200  # even money
    assert paid("AH 3D 5H 8D 2S 9C KS", "red_exactly_4") == 300  # 2 to 1
    assert paid("AH 3D 5H 8D 2S 9C KS", "black_4_or_more") == 0  # one bet per colour, J-1


@pytest.mark.parametrize(
    ("text", "count", "odds"),
    [
        ("AS 3C 5S 8C 9S QH KD", 5, 5),
        ("AS 3C 5S 8C 9S QC KD", 6, 15),
        ("AS 3C 5S 8C 9S QC KC", 7, 25),
    ],
)
def test_exactly_five_six_seven_of_a_colour_4620_16_d(text: str, count: int, odds: int) -> None:
    won = wins(text)
    assert "black_4_or_more" in won and f"black_exactly_{count}" in won
    assert {f"black_exactly_{n}" for n in (4, 5, 6, 7)} & won == {f"black_exactly_{count}"}
    assert paid(text, f"black_exactly_{count}") == 100 * (odds + 1)
    assert paid(text, "black_4_or_more") == 200


def test_jokers_have_no_colour_4620_16_e_1_reading_j6() -> None:
    # Six red and a joker: exactly six red, never seven.
    won = wins("AH 3D 5H 8D 9H QD JOKER")
    assert "red_exactly_6" in won and "red_exactly_7" not in won
    # Three red, three black and a joker: neither colour reaches four.
    assert not {sq for sq in wins("AH 3D 5H 8S 9C QS JOKER") if sq.startswith(("red", "black"))}
    # Three red, two black and two jokers.
    assert not {sq for sq in wins("AH 3D 5H 8S 9C JOKER JOKER") if sq[:3] in ("red", "bla")}


# ------------------------------------------------------------------------------------------
# Pairs, 4620.16(e), J-2, J-3
# ------------------------------------------------------------------------------------------


def test_pairs_are_counted_per_rank_and_two_jokers_are_one_pair_4620_16_e_1() -> None:
    assert pair_count(cards("AS 2S 3S 4S 5S 6S 7S")) == 0
    assert pair_count(cards("AS AH 3S 4S 5S 6S JOKER")) == 1  # a single joker pairs nothing
    assert pair_count(cards("AS AH AD 4S 5S 6S 7S")) == 1  # a prial holds one pair
    assert pair_count(cards("AS AH AD AC 5S 6S 7S")) == 2  # four of a kind, two pairs
    assert pair_count(cards("AS 2H 3D 4C 5S JOKER JOKER")) == 1  # two jokers, one pair
    assert pair_count(cards("AS AH 3D 4C 5S JOKER JOKER")) == 2  # and another pair: two
    assert pair_count(cards("AS AH 3D 3C 5S 5D 7S")) == 3


def test_no_pairs_wins_only_without_any_pair_4620_16_e_reading_j2() -> None:
    assert "no_pairs" in wins("AS 2H 3D 4C 5S 6H 8D")
    assert paid("AS 2H 3D 4C 5S 6H 8D", "no_pairs") == 400  # 3 to 1
    assert "no_pairs" in wins("AS 2H 3D 4C 5S 6H JOKER")  # one joker pairs with nothing
    assert "no_pairs" not in wins("AS AH 3D 4C 5S 6H 8D")
    assert "no_pairs" not in wins("AS 2H 3D 4C 5S JOKER JOKER")  # two jokers are a pair
    # J-2: a separate square from two pairs; a hand with no pair loses two pairs.
    assert "two_pairs" not in wins("AS 2H 3D 4C 5S 6H 8D")


@pytest.mark.parametrize(
    "text",
    [
        "AS AH 3D 3C 5S 6H 8D",  # two pairs
        "AS AH 3D 3C 5S 5H 8D",  # three pairs
        "AS AH AD 3C 3S 6H 8D",  # a prial and a pair
        "AS AH AD 3C 3S 3H 8D",  # two prials
        "AS AH AD AC 5S 6H 8D",  # four of a kind, 4620.16(e)(2)
        "AS AH 3D 4C 5S JOKER JOKER",  # two jokers and another pair, 4620.16(e)(1)
    ],
)
def test_two_pairs_wins_on_at_least_two_pairs_paid_once_4620_16_e_reading_j3(text: str) -> None:
    assert "two_pairs" in wins(text) and "no_pairs" not in wins(text)
    assert paid(text, "two_pairs") == 400


@pytest.mark.parametrize(
    "text",
    [
        "AS AH 3D 4C 5S 6H 8D",
        "AS AH AD 4C 5S 6H 8D",
        "AS AH 3D 4C 5S 6H JOKER",
        "AS 2H 3D 4C 5S JOKER JOKER",
    ],
)
def test_one_pair_is_not_two_pairs_4620_16_e(text: str) -> None:
    assert "two_pairs" not in wins(text)


# ------------------------------------------------------------------------------------------
# Jokers, specific pairs, prial, 4620.16(e), J-4, J-5
# ------------------------------------------------------------------------------------------


def test_one_joker_and_two_jokers_4620_16_e_and_e_1() -> None:
    one = wins("AS 2H 3D 4C 5S 6H JOKER")
    assert "one_joker" in one and "two_jokers" not in one
    assert paid("AS 2H 3D 4C 5S 6H JOKER", "one_joker") == 400
    two = wins("AS 2H 3D 4C 5S JOKER JOKER")
    assert "two_jokers" in two and "one_joker" not in two  # the joker bet loses on two
    assert paid("AS 2H 3D 4C 5S JOKER JOKER", "two_jokers") == 2100
    assert not {"one_joker", "two_jokers"} & wins("AS 2H 3D 4C 5S 6H 8D")


def test_a_specific_pair_wins_on_two_or_more_of_its_rank_paid_once_4620_16_e_reading_j5() -> None:
    won = wins("10S 10H 3D 4C 5S 6H 8D")
    assert {sq for sq in won if sq.startswith("pair_")} == {"pair_10"}
    assert paid("10S 10H 3D 4C 5S 6H 8D", "pair_10") == 1000  # 9 to 1
    assert paid("10S 10H 10D 4C 5S 6H 8D", "pair_10") == 1000  # within a prial, (e)(1)
    assert paid("10S 10H 10D 10C 5S 6H 8D", "pair_10") == 1000  # four of a kind, (e)(2)
    assert paid("10S 2H 3D 4C 5S 6H 8D", "pair_10") == 0
    two_pairs = wins("KS KH QD QC 5S 6H 8D")
    assert {"pair_K", "pair_Q"} <= two_pairs and "pair_5" not in two_pairs


def test_two_jokers_never_win_a_specific_pair_reading_j5() -> None:
    assert not {sq for sq in wins("AS 2H 3D 4C 5S JOKER JOKER") if sq.startswith("pair_")}


def test_prial_wins_on_three_or_more_of_a_rank_paid_once_4620_16_e_reading_j4() -> None:
    assert "prial" not in wins("AS AH 3D 3C 5S 6H 8D")
    assert paid("AS AH AD 4C 5S 6H 8D", "prial") == 1300  # 12 to 1
    assert paid("AS AH AD AC 5S 6H 8D", "prial") == 1300  # four of a kind, (e)(2)
    assert paid("AS AH AD 3C 3S 3H 8D", "prial") == 1300  # two prials, once
    assert "prial" not in wins("AS AH 3D 4C 5S JOKER JOKER")  # jokers are no rank


def test_four_of_a_kind_pays_each_square_once_4620_16_e_2() -> None:
    won = wins("AS AH AD AC 5S 6H 8D")
    assert {"pair_A", "two_pairs", "prial"} <= won and "no_pairs" not in won
    # Each square is one settlement: paid once, never once per pair found.
    by_square = {s.bet_id: s.paid for s in settle_all("AS AH AD AC 5S 6H 8D", 100)}
    assert by_square["pair_A"] == 1000 and by_square["two_pairs"] == 400
    assert by_square["prial"] == 1300


# ------------------------------------------------------------------------------------------
# Settlement
# ------------------------------------------------------------------------------------------


def test_settlement_is_one_result_per_bet_in_the_order_placed() -> None:
    outcome = G.check_outcome(CONFIG, hand("AS AH 3D 4C 5S 6H JOKER"), None)
    bets = [
        PlacedBet(bet_id="t.1.3", player="p-2", bet={"square": "prial"}, amount=500),
        PlacedBet(bet_id="t.1.1", player="p-1", bet={"square": "pair_A"}, amount=250),
        PlacedBet(bet_id="t.1.2", player="p-1", bet={"square": "one_joker"}, amount=7),
        PlacedBet(bet_id="t.1.4", player="p-2", bet={"square": "pair_A"}, amount=1),
    ]
    assert G.settle(CONFIG, bets, outcome) == (
        Settlement("t.1.3", "p-2", 500, "lost", 0),
        Settlement("t.1.1", "p-1", 250, "won", 2500),
        Settlement("t.1.2", "p-1", 7, "won", 28),
        Settlement("t.1.4", "p-2", 1, "won", 10),
    )
    assert G.settle(CONFIG, [], outcome) == ()


def test_settle_refuses_a_bet_off_the_layout_or_a_bad_outcome() -> None:
    outcome = G.check_outcome(CONFIG, hand("AS AH 3D 4C 5S 6H JOKER"), None)
    off = PlacedBet(bet_id="b", player="p", bet={"square": "pair_1"}, amount=1)
    rule_error("invalid_bet", G.settle, CONFIG, [off], outcome)
    rule_error(
        "invalid_bet",
        G.settle,
        CONFIG,
        [PlacedBet(bet_id="b", player="p", bet={}, amount=1)],
        outcome,
    )
    good = PlacedBet(bet_id="b", player="p", bet={"square": "prial"}, amount=1)
    rule_error("invalid_outcome", G.settle, CONFIG, [good], hand("AS AS 3D 4C 5S 6H 7H"))


# ------------------------------------------------------------------------------------------
# Configuration and bets: every bad input with its code
# ------------------------------------------------------------------------------------------


def test_configuration_defaults_limits_and_canonical_form_4620_16_f() -> None:
    assert CONFIG == {"min_bet": 1, "max_bet": MAX_BET_CENTS} and MAX_BET_CENTS == 500
    assert G.parse_config(CONFIG) == CONFIG
    assert G.parse_config({"max_bet": 200, "min_bet": 25}) == {"min_bet": 25, "max_bet": 200}
    assert G.parse_config({"max_bet": 500}) == CONFIG


@pytest.mark.parametrize(
    "raw",
    [
        {"max_bet": 501},  # over $5, 4620.16(f)
        {"max_bet": 0},
        {"max_bet": -5},
        {"max_bet": 2.5},
        {"max_bet": True},
        {"max_bet": "500"},
        {"min_bet": 0},
        {"min_bet": 101, "max_bet": 100},  # no bet could be placed
        {"squares": ["prial"]},  # an unknown setting
    ],
)
def test_configuration_refusals(raw: dict[str, Any]) -> None:
    rule_error("invalid_config", G.parse_config, raw)


def test_configuration_that_is_not_an_object_is_refused() -> None:
    rule_error("invalid_config", G.parse_config, ["max_bet", 500])


def test_a_bet_on_every_square_is_canonical() -> None:
    for sq in SQUARES:
        assert G.check_bet(CONFIG, {"square": sq}, 100) == {"square": sq}


@pytest.mark.parametrize(
    ("bet", "amount", "code"),
    [
        ("prial", 100, "bad_request"),  # not an object
        (["prial"], 100, "bad_request"),
        ({}, 100, "bad_request"),  # no square
        ({"square": 7}, 100, "bad_request"),  # not a string
        ({"square": None}, 100, "bad_request"),
        ({"square": "prial", "odds": 20}, 100, "bad_request"),  # another field
        ({"square": "prial"}, 0, "bad_request"),
        ({"square": "prial"}, -100, "bad_request"),
        ({"square": "prial"}, True, "bad_request"),
        ({"square": "prial"}, 2.5, "bad_request"),
        ({"square": "three_jokers"}, 100, "invalid_bet"),  # not a square
        ({"square": "pair_1"}, 100, "invalid_bet"),
        ({"square": "pair_JOKER"}, 100, "invalid_bet"),
        ({"square": "PRIAL"}, 100, "invalid_bet"),
        ({"square": "red_exactly_3"}, 100, "invalid_bet"),
        ({"square": "prial"}, 501, "over_limit"),  # $5, 4620.16(f)
    ],
)
def test_bet_refusals(bet: Any, amount: Any, code: str) -> None:
    rule_error(code, G.check_bet, CONFIG, bet, amount)


def test_table_limits_over_limit_and_under_minimum() -> None:
    config = G.parse_config({"max_bet": 200, "min_bet": 25})
    assert G.check_bet(config, {"square": "prial"}, 200) == {"square": "prial"}
    assert G.check_bet(config, {"square": "prial"}, 25) == {"square": "prial"}
    err = rule_error("over_limit", G.check_bet, config, {"square": "prial"}, 201)
    assert "4620.16(f)" in err.message
    rule_error("under_minimum", G.check_bet, config, {"square": "prial"}, 24)
    assert G.check_bet(CONFIG, {"square": "prial"}, 500) == {"square": "prial"}


# ------------------------------------------------------------------------------------------
# Dealer-entered hands: canonical, and every refusal says why (4620.16(a), (c), J-7)
# ------------------------------------------------------------------------------------------


def test_an_entered_hand_canonicalises() -> None:
    a = G.check_outcome(CONFIG, {"cards": ["joker", " 10h", "as", "KD", "3c", "Joker", "js"]}, None)
    b = G.check_outcome(CONFIG, hand("JOKER KD JS 3C AS JOKER 10H"), "AS 2S 3S 4S 5S 6S 7S")
    assert a == b == {"cards": ["AS", "3C", "10H", "JS", "KD", "JOKER", "JOKER"]}
    assert G.winning_key(a) == "AS 3C 10H JS KD JOKER JOKER"
    assert canonical_hand(cards("JOKER KS AS 10D 10C")) == ("AS", "10C", "10D", "KS", "JOKER")
    assert G.check_outcome(CONFIG, a, None) == a  # canonical in, canonical out
    assert G.check_outcome(CONFIG, {"cards": ("AC", "AD", "AH", "AS", "2C", "2D", "2H")}, None)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (["AS", "2S", "3S", "4S", "5S", "6S", "7S"], "object"),
        ({"cards": "AS 2S 3S 4S 5S 6S 7S"}, "list"),
        ({}, "list"),
        ({"cards": hand("AS 2S 3S 4S 5S 6S 7S")["cards"], "source": "x"}, "unknown outcome fields"),
        (hand("AS 2S 3S 4S 5S 6S"), "6 cards entered"),
        (hand("AS 2S 3S 4S 5S 6S 7S 8S"), "8 cards entered"),
        (hand(""), "0 cards entered"),
        (hand("AS 2S 3S 4S 5S 6S 1S"), "card 7"),
        (hand("AS 2S 3S 4S 5S 6S 10X"), "card 7"),
        ({"cards": ["AS", "2S", "3S", "4S", "5S", "6S", 7]}, "card 7"),
        ({"cards": ["AS", "2S", "3S", "4S", "5S", "6S", "QUEEN OF HEARTS"]}, "card 7"),
        (hand("QH 2S 3S 4S 5S 6S qh"), "QH entered more than once"),
        (hand("AS 2S 3S AS 5S 2S JOKER"), "AS, 2S entered more than once"),
        (hand("AS 2S 3S 4S JOKER JOKER JOKER"), "3 jokers entered"),
        (hand("JOKER JOKER JOKER JOKER 5S 6S 7S"), "4 jokers entered"),
    ],
)
def test_an_impossible_hand_is_invalid_outcome_saying_why(raw: Any, says: str) -> None:
    err = rule_error("invalid_outcome", G.check_outcome, CONFIG, raw, None)
    assert says in err.message, err.message


def test_outcomes_is_no_list_server_draws_use_draw_bounds() -> None:
    rule_error("invalid_outcome", G.outcomes, CONFIG)
    assert G.draw_bounds(CONFIG) == DRAW_BOUNDS == (54, 53, 52, 51, 50, 49, 48)


# ------------------------------------------------------------------------------------------
# Server draws: a partial Fisher-Yates deal, one to one with ordered deals (J-7)
# ------------------------------------------------------------------------------------------


def random_draw(rng: random.Random) -> list[int]:
    return [rng.randrange(b) for b in DRAW_BOUNDS]


def test_every_draw_deals_seven_distinct_cards_and_is_one_to_one_with_ordered_deals() -> None:
    rng = random.Random(4620_16)
    assert prod(DRAW_BOUNDS) == perm(54, 7)  # as many draws as ordered deals
    seen: dict[tuple[int, ...], tuple[int, ...]] = {}
    for _ in range(5_000):
        draw = tuple(random_draw(rng))
        positions = deal_positions(draw)
        assert len(set(positions)) == 7 and all(0 <= p < 54 for p in positions)
        assert draw_of_positions(positions) == draw  # the draw is recovered from its deal
        assert seen.setdefault(positions, draw) == draw  # no two draws deal the same
        outcome = G.drawn_outcome(CONFIG, draw, None)
        assert G.check_outcome(CONFIG, outcome, None) == outcome  # a legal, canonical hand
        assert Counter(outcome["cards"]) == Counter(JOKER_SEVEN_DECK[p] for p in positions)
    for _ in range(5_000):  # and every ordered deal comes from a draw in range
        positions = tuple(rng.sample(range(54), 7))
        draw = draw_of_positions(positions)
        assert all(0 <= d < b for d, b in zip(draw, DRAW_BOUNDS, strict=True))
        assert deal_positions(draw) == positions


def test_draw_extremes() -> None:
    assert deal_positions([0] * 7) == (0, 1, 2, 3, 4, 5, 6)
    assert deal_positions([b - 1 for b in DRAW_BOUNDS]) == (53, 0, 1, 2, 3, 4, 5)
    assert G.drawn_outcome(CONFIG, [53, 51, 0, 0, 0, 0, 0], None) == {
        "cards": ["3C", "4C", "5C", "6C", "7C", "JOKER", "JOKER"]
    }


@pytest.mark.parametrize(
    "draw",
    [
        [0] * 6,
        [0] * 8,
        [54, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 48],
        [-1, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, True, 0, 0, 0],
        [0, 0, 0, 1.0, 0, 0, 0],
        "0000000",
        7,
    ],
)
def test_a_draw_out_of_its_bounds_is_invalid_outcome(draw: Any) -> None:
    rule_error("invalid_outcome", G.drawn_outcome, CONFIG, draw, None)


def test_a_deal_that_is_not_seven_distinct_positions_has_no_draw() -> None:
    rule_error("invalid_outcome", draw_of_positions, [0, 1, 2, 3, 4, 5, 5])
    rule_error("invalid_outcome", draw_of_positions, [0, 1, 2, 3, 4, 5])
    rule_error("invalid_outcome", draw_of_positions, [0, 1, 2, 3, 4, 5, 54])


# ------------------------------------------------------------------------------------------
# Exact counts and house edges
# ------------------------------------------------------------------------------------------


def test_counts_of_the_full_deck_agree_with_closed_forms() -> None:
    w = square_win_counts()
    assert w["red_exactly_7"] == w["black_exactly_7"] == comb(26, 7)
    assert w["two_jokers"] == comb(52, 5)
    assert w["one_joker"] == 2 * comb(52, 6)
    for r in RANKS:  # at least two of the rank's four, anything else from the other 50
        assert w[f"pair_{r}"] == sum(comb(4, c) * comb(50, 7 - c) for c in (2, 3, 4))
    # No pairs: seven ranks; or one joker and six ranks.
    assert w["no_pairs"] == comb(13, 7) * 4**7 + 2 * comb(13, 6) * 4**6
    # Seven cards of the 52 always hold four of one colour (hands without a joker).
    neither = hands_counted() - w["red_4_or_more"] - w["black_4_or_more"]
    assert neither == 2 * comb(26, 3) * comb(26, 3) + 2 * comb(26, 3) * comb(26, 2)


@pytest.mark.parametrize(
    ("ranks", "suits"),
    [
        (("A", "7", "10", "K"), SUITS),  # 18 cards: four of a kind, seven of a colour
        (("A", "2", "3", "4", "5", "J", "Q"), ("D", "S")),  # 16 cards: seven ranks, no pair
        (("2", "9", "10", "Q"), ("C", "D", "H")),  # 14 cards, two red suits to one black
    ],
)
def test_counts_equal_every_hand_of_a_smaller_deck_settled_one_by_one(
    ranks: tuple[str, ...], suits: tuple[str, ...]
) -> None:
    deck = [r + s for r in ranks for s in suits] + [JOKER, JOKER]
    bets = [PlacedBet(bet_id=sq, player="p", bet={"square": sq}, amount=1) for sq in SQUARES]
    won: Counter[str] = Counter()
    hands = 0
    for dealt in itertools.combinations(deck, 7):
        hands += 1
        for s in G.settle(CONFIG, bets, {"cards": list(dealt)}):
            if s.result == "won":
                won[s.bet_id] += 1
    assert hands == hands_counted(ranks, suits) == comb(len(deck), 7)
    assert {sq: won[sq] for sq in SQUARES} == square_win_counts(ranks, suits)


def test_the_smaller_decks_together_reach_every_square() -> None:
    counted = [
        square_win_counts(("A", "7", "10", "K")),
        square_win_counts(("A", "2", "3", "4", "5", "J", "Q"), ("D", "S")),
        square_win_counts(("2", "9", "10", "Q"), ("C", "D", "H")),
    ]
    reached = {sq for counts in counted for sq, n in counts.items() if n}
    assert reached >= set(SQUARES) - {f"pair_{r}" for r in ("3", "6", "8")}
    assert counted[1]["no_pairs"] and counted[0]["red_exactly_7"] and counted[0]["two_pairs"]


def independent_wins(cards: Sequence[str]) -> set[str]:
    """The squares a hand wins, as the rules of 4620.16 read, written out a second time."""
    ranks = [c[:-1] for c in cards if c != JOKER]
    jokers = len(cards) - len(ranks)
    reds = sum(c[-1] in "DH" for c in cards if c != JOKER)
    blacks = len(ranks) - reds
    by_rank = Counter(ranks)
    pairs = sum(n // 2 for n in by_rank.values()) + (jokers == 2)
    out: set[str] = set()
    for name, k in (("red", reds), ("black", blacks)):
        if k >= 4:
            out |= {f"{name}_4_or_more", f"{name}_exactly_{k}"}
    out |= {"no_pairs"} if pairs == 0 else set()
    out |= {"two_pairs"} if pairs >= 2 else set()
    out |= {"one_joker"} if jokers == 1 else set()
    out |= {"two_jokers"} if jokers == 2 else set()
    out |= {f"pair_{r}" for r, n in by_rank.items() if n >= 2}
    out |= {"prial"} if any(n >= 3 for n in by_rank.values()) else set()
    return out


def test_settle_agrees_with_the_rules_on_a_seeded_sample_of_full_deck_hands() -> None:
    rng = random.Random(16)
    bets = [PlacedBet(bet_id=sq, player="p", bet={"square": sq}, amount=1) for sq in SQUARES]
    seen: Counter[str] = Counter()
    for _ in range(3_000):
        outcome = G.drawn_outcome(CONFIG, random_draw(rng), None)
        settled = {s.bet_id for s in G.settle(CONFIG, bets, outcome) if s.result == "won"}
        assert settled == independent_wins(outcome["cards"]) == winning_squares(outcome["cards"])
        seen.update(settled)
    assert len(seen) >= 25  # the sample reached nearly every square


ROW = re.compile(
    r"^\| `(?P<square>\w+)` \| (?P<odds>\d+) \| (?P<wins>[\d,]+) \| (?P<edge>-?\d+/\d+) \| "
    r"(?P<pct>-?[\d.]+) % \|$"
)


def rules_table(project_root: Path) -> dict[str, dict[str, str]]:
    text = (project_root / "docs" / "RULES.md").read_text()
    section = text.split("## Joker Seven (4620.16)", 1)[1].split("\n## ", 1)[0]
    rows = [m.groupdict() for line in section.splitlines() if (m := ROW.match(line))]
    assert len(rows) == len({r["square"] for r in rows})
    return {r["square"]: r for r in rows}


def test_the_house_edges_in_rules_md_are_the_counted_ones(project_root: Path) -> None:
    table = rules_table(project_root)
    assert list(table) == list(SQUARES)
    edges = house_edges()
    w = square_win_counts()
    for sq, row in table.items():
        assert int(row["odds"]) == PAYOUT_ODDS[sq], sq
        assert int(row["wins"].replace(",", "")) == w[sq], sq
        assert Fraction(row["edge"]) == edges[sq], sq
        assert row["pct"] == f"{float(edges[sq] * 100):.2f}", sq
    assert "177,100,560" in (project_root / "docs" / "RULES.md").read_text()
    assert all(e > 0 for e in edges.values())  # every square favours the house


def test_house_edges_are_the_expected_return_of_the_counts() -> None:
    w = square_win_counts()
    edges = house_edges()
    assert edges["two_jokers"] == 1 - Fraction(21 * comb(52, 5), comb(54, 7)) == Fraction(110, 159)
    for sq in SQUARES:
        assert edges[sq] == 1 - Fraction((PAYOUT_ODDS[sq] + 1) * w[sq], hands_counted())


def test_square_win_counts_takes_only_ranks_and_suits_of_the_deck() -> None:
    for ranks, suits in [(("A", "1"), SUITS), (("A", "A"), SUITS), (RANKS, ("H", "X"))]:
        with pytest.raises(ValueError):
            square_win_counts(ranks, suits)
        with pytest.raises(ValueError):
            hands_counted(ranks, suits)
