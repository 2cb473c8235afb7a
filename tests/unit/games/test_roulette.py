"""Roulette rules: NY 9 NYCRR 4620.4 with NJ wagers as table options.

Each test names the rule it checks. The bets are built here from the layout geometry (not
read from the module), so the module's coverage tables are checked against an independent
description of the layout; the house edges are computed by settling every bet against every
pocket and compared with exact fractions.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.aggregates import RuleError
from services.games.base import PlacedBet, Settlement
from services.games.roulette import (
    AMERICAN_WHEEL_ORDER,
    COLOURS,
    DEFAULT_OPTION_ODDS,
    EUROPEAN_WHEEL_ORDER,
    MAX_INSIDE_BET_CENTS,
    MAX_OUTSIDE_BET_CENTS,
    RED_NUMBERS,
    ROULETTE,
    STANDARD_ODDS,
    colour_sections,
    covered,
    five_adjacent_numbers,
    payout_odds,
    player_return,
)

G = ROULETTE
Bet = dict[str, Any]

DZ_OPTIONS = ["basket", "five_adjacent", "color_six", "color_eight", "seven_numbers"]
SZ_OPTIONS = ["basket", "five_adjacent", "color_six", "color_seven", "seven_numbers"]
DZ = G.parse_config({})
SZ = G.parse_config({"wheel": "single_zero"})
DZ_ALL = G.parse_config({"options": DZ_OPTIONS})
SZ_ALL = G.parse_config({"wheel": "single_zero", "options": SZ_OPTIONS})
NUMBERS = [str(n) for n in range(1, 37)]
BLACK_NUMBERS = frozenset(NUMBERS) - RED_NUMBERS
OUTSIDE = ("column", "dozen", "low", "high", "red", "black", "odd", "even")

FAST = settings(derandomize=True, database=None, max_examples=200, deadline=None)


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def pockets(config: Mapping[str, Any]) -> list[str]:
    return list(G.outcomes(config))


def settle_one(config: Mapping[str, Any], bet: Bet, amount: int, pocket: str) -> Settlement:
    spec = G.check_bet(config, bet, amount)
    placed = PlacedBet(bet_id="b-1", player="p-1", bet=spec, amount=amount)
    (result,) = G.settle(config, [placed], {"pocket": pocket, "spun_from": None})
    return result


def paid(config: Mapping[str, Any], bet: Bet, amount: int, pocket: str) -> int:
    return settle_one(config, bet, amount, pocket).paid


def winners(config: Mapping[str, Any], bet: Bet, amount: int = 10) -> set[str]:
    """The pockets on which ``bet`` is settled as won."""
    return {p for p in pockets(config) if settle_one(config, bet, amount, p).result == "won"}


def rule_error(code: str, fn: Any, *args: Any) -> RuleError:
    with pytest.raises(RuleError) as info:
        fn(*args)
    assert info.value.code == code, info.value
    return info.value


def row(r: int) -> list[str]:
    return [str(3 * r - 2), str(3 * r - 1), str(3 * r)]


def nums(kind: str, *numbers: str) -> Bet:
    return {"kind": kind, "numbers": list(numbers)}


def standard_bets(wheel: str) -> list[Bet]:
    """Every standard 4620.4 bet on the layout, built from the layout's geometry."""
    bets: list[Bet] = []
    zero = ["0", "00"] if wheel == "double_zero" else ["0"]
    bets += [nums("straight", p) for p in zero + NUMBERS]
    for n in range(1, 37):
        if n % 3:
            bets.append(nums("split", str(n), str(n + 1)))
        if n <= 33:
            bets.append(nums("split", str(n), str(n + 3)))
    if wheel == "double_zero":
        zero_splits = [("0", "1"), ("0", "2"), ("00", "2"), ("00", "3"), ("0", "00")]
    else:
        zero_splits = [("0", "1"), ("0", "2"), ("0", "3")]
    bets += [nums("split", a, b) for a, b in zero_splits]
    bets += [nums("street", *row(r)) for r in range(1, 13)]
    bets += [
        nums("corner", str(n), str(n + 1), str(n + 3), str(n + 4)) for n in range(1, 33) if n % 3
    ]
    bets += [nums("line", *row(r), *row(r + 1)) for r in range(1, 12)]
    if wheel == "double_zero":
        bets.append({"kind": "five"})
    bets += [{"kind": "column", "column": c} for c in (1, 2, 3)]
    bets += [{"kind": "dozen", "dozen": d} for d in (1, 2, 3)]
    bets += [{"kind": k} for k in ("low", "high", "red", "black", "odd", "even")]
    return bets


def option_bets(wheel: str) -> list[Bet]:
    """Every NJ option bet of a wheel."""
    order = AMERICAN_WHEEL_ORDER if wheel == "double_zero" else EUROPEAN_WHEEL_ORDER
    if wheel == "double_zero":
        trios = [("0", "1", "2"), ("0", "2", "00"), ("00", "2", "3")]
        colour_kinds = ["color_six", "color_eight"]
    else:
        trios = [("0", "1", "2"), ("0", "2", "3")]
        colour_kinds = ["color_six", "color_seven"]
    bets: list[Bet] = [nums("basket", *t) for t in trios]
    bets += [{"kind": "five_adjacent", "center": p} for p in order]
    bets += [{"kind": k, "color": c} for k in colour_kinds for c in COLOURS]
    bets.append({"kind": "seven_numbers"})
    return bets


def house_edge(config: Mapping[str, Any], bet: Bet, amount: int = 10) -> Fraction:
    """1 - (paid back over every pocket) / (staked on every pocket): exact enumeration."""
    spec = G.check_bet(config, bet, amount)
    placed = [PlacedBet(bet_id="b", player="p", bet=spec, amount=amount)]
    back = sum(G.settle(config, placed, {"pocket": p})[0].paid for p in G.outcomes(config))
    return 1 - Fraction(back, amount * len(G.outcomes(config)))


# ------------------------------------------------------------------------------------------
# the wheel, 4620.4(a)(3)
# ------------------------------------------------------------------------------------------


def test_game_name_is_roulette() -> None:
    """The game's name as the license lists it."""
    assert G.name == "roulette"


def test_double_zero_wheel_has_36_numbers_and_0_and_00_4620_4_a_3_i() -> None:
    """4620.4(a)(3)(i): 36 numbers and the symbols 0 and 00, each pocket once."""
    assert len(AMERICAN_WHEEL_ORDER) == 38
    assert set(AMERICAN_WHEEL_ORDER) == {"0", "00", *NUMBERS}
    assert AMERICAN_WHEEL_ORDER[0] == "0"
    assert list(G.outcomes(DZ)) == list(AMERICAN_WHEEL_ORDER)


def test_single_zero_wheel_has_37_pockets_table_option() -> None:
    """The single-zero wheel (table option, NJ (e)7): 36 numbers and 0, each once."""
    assert len(EUROPEAN_WHEEL_ORDER) == 37
    assert set(EUROPEAN_WHEEL_ORDER) == {"0", *NUMBERS}
    assert list(G.outcomes(SZ)) == list(EUROPEAN_WHEEL_ORDER)


def test_0_and_00_are_opposite_on_the_double_zero_wheel() -> None:
    """On the American wheel 0 and 00 face each other: 19 pockets apart of 38."""
    assert AMERICAN_WHEEL_ORDER.index("00") - AMERICAN_WHEEL_ORDER.index("0") == 19


def test_wheel_order_data_as_published() -> None:
    """The wheel orders, clockwise from 0, as the brief lists them."""
    assert AMERICAN_WHEEL_ORDER[:5] == ("0", "28", "9", "26", "30")
    assert AMERICAN_WHEEL_ORDER[18:21] == ("1", "00", "27")
    assert AMERICAN_WHEEL_ORDER[-3:] == ("35", "14", "2")
    assert EUROPEAN_WHEEL_ORDER[:5] == ("0", "32", "15", "19", "4")
    assert EUROPEAN_WHEEL_ORDER[-3:] == ("35", "3", "26")


def test_red_numbers_are_18_and_black_the_other_18_4620_4_a_3_ii() -> None:
    """4620.4(a)(3)(ii): pockets 1..36 are red or black, 18 each; 0 and 00 are green."""
    assert len(RED_NUMBERS) == 18
    assert RED_NUMBERS.issubset(NUMBERS)
    assert len(BLACK_NUMBERS) == 18
    assert "0" not in RED_NUMBERS and "00" not in RED_NUMBERS
    assert {"1", "3", "5", "7", "9", "12", "14", "16", "18"} <= RED_NUMBERS
    assert {"2", "4", "6", "8", "10", "11", "13", "15", "17"} <= BLACK_NUMBERS


@pytest.mark.parametrize("order", [AMERICAN_WHEEL_ORDER, EUROPEAN_WHEEL_ORDER])
def test_pockets_alternate_red_and_black_except_at_the_zeros_4620_4_a_3_ii(
    order: tuple[str, ...],
) -> None:
    """4620.4(a)(3)(ii): pockets are painted alternately red and black (zeros green)."""
    n = len(order)
    for i, p in enumerate(order):
        q = order[(i + 1) % n]
        if p in ("0", "00") or q in ("0", "00"):
            continue
        assert (p in RED_NUMBERS) != (q in RED_NUMBERS), (p, q)


# ------------------------------------------------------------------------------------------
# inside bets, 4620.4(d)
# ------------------------------------------------------------------------------------------


def test_straight_pays_35_to_1_on_every_number_4620_4_d_1() -> None:
    """4620.4(d)(1): a straight wins on its number only and pays 35 to 1."""
    for p in NUMBERS:
        bet = nums("straight", p)
        assert paid(DZ, bet, 10, p) == 360
        other = "1" if p != "1" else "2"
        assert settle_one(DZ, bet, 10, other) == Settlement(
            bet_id="b-1", player="p-1", amount=10, result="lost", paid=0
        )


@pytest.mark.parametrize("zero", ["0", "00"])
def test_0_and_00_play_as_straight_bets_at_35_to_1_4620_4_d_2(zero: str) -> None:
    """4620.4(d)(2): 0 and 00 are played as any straight bet; payoff 35 to 1."""
    bet = nums("straight", zero)
    assert winners(DZ, bet) == {zero}
    assert settle_one(DZ, bet, 200, zero) == Settlement(
        bet_id="b-1", player="p-1", amount=200, result="won", paid=200 * 36
    )


def test_straight_on_0_on_the_single_zero_wheel_pays_35_to_1() -> None:
    """4620.4(d)(2) on the single-zero table option: 0 is a straight bet."""
    assert winners(SZ, nums("straight", "0")) == {"0"}
    assert paid(SZ, nums("straight", "0"), 10, "0") == 360


@pytest.mark.parametrize(
    ("a", "b"), [("17", "20"), ("1", "2"), ("2", "3"), ("33", "36"), ("35", "36"), ("1", "4")]
)
def test_split_on_a_line_between_two_numbers_pays_17_to_1_4620_4_d_3(a: str, b: str) -> None:
    """4620.4(d)(3): a split wins if either number wins; payoff 17 to 1."""
    bet = nums("split", b, a)
    assert winners(DZ, bet) == {a, b}
    assert paid(DZ, bet, 10, a) == 180
    assert paid(DZ, bet, 10, "0") == 0


@pytest.mark.parametrize("pair", [("0", "1"), ("0", "2"), ("00", "2"), ("00", "3"), ("0", "00")])
def test_zero_splits_on_the_double_zero_layout_4620_4_d_3_nj_e_2(pair: tuple[str, str]) -> None:
    """4620.4(d)(3), NJ (e)2: splits with 0 and 00 (0-00 included) pay 17 to 1."""
    bet = nums("split", *pair)
    assert winners(DZ, bet) == set(pair)
    assert paid(DZ, bet, 10, pair[0]) == 180


@pytest.mark.parametrize("pair", [("0", "1"), ("0", "2"), ("0", "3")])
def test_zero_splits_on_the_single_zero_layout(pair: tuple[str, str]) -> None:
    """Single-zero table option: 0 borders 1, 2 and 3, so 0-1, 0-2, 0-3 are splits."""
    assert winners(SZ, nums("split", *pair)) == set(pair)


@pytest.mark.parametrize(
    "pair", [("1", "3"), ("3", "4"), ("1", "5"), ("34", "37"), ("0", "3"), ("00", "1"), ("2", "2")]
)
def test_split_not_on_a_line_is_invalid_4620_4_d_3(pair: tuple[str, str]) -> None:
    """4620.4(d)(3): a split is two numbers sharing a line; others are not bets."""
    code = "bad_request" if "37" in pair else "invalid_bet"
    rule_error(code, G.check_bet, DZ, nums("split", *pair), 10)


@pytest.mark.parametrize("pair", [("0", "00"), ("00", "2"), ("00", "3")])
def test_00_splits_are_not_bets_on_a_single_zero_wheel(pair: tuple[str, str]) -> None:
    """Single zero: 00 is not on the wheel, so no bet names it."""
    rule_error("invalid_bet", G.check_bet, SZ, nums("split", *pair), 10)


@pytest.mark.parametrize("r", range(1, 13))
def test_street_covers_one_row_and_pays_11_to_1_4620_4_d_4(r: int) -> None:
    """4620.4(d)(4): a street is three numbers across the layout; payoff 11 to 1."""
    bet = nums("street", *reversed(row(r)))
    assert winners(DZ, bet) == set(row(r))
    assert paid(DZ, bet, 10, row(r)[1]) == 120


@pytest.mark.parametrize("trio", [("2", "3", "4"), ("0", "1", "2"), ("1", "2", "4"), ("1", "2")])
def test_street_that_is_not_a_row_is_invalid_4620_4_d_4(trio: tuple[str, ...]) -> None:
    """4620.4(d)(4): only the 12 rows are streets (0-1-2 is a basket, an NJ option)."""
    rule_error("invalid_bet", G.check_bet, DZ, nums("street", *trio), 10)


def test_corner_covers_a_square_and_pays_8_to_1_4620_4_d_5() -> None:
    """4620.4(d)(5): four numbers meeting at one intersection; payoff 8 to 1."""
    bet = nums("corner", "5", "1", "4", "2")
    assert winners(DZ, bet) == {"1", "2", "4", "5"}
    assert paid(DZ, bet, 10, "5") == 90
    assert winners(DZ, nums("corner", "32", "33", "35", "36")) == {"32", "33", "35", "36"}
    assert G.check_bet(DZ, bet, 10) == {"kind": "corner", "numbers": ["1", "2", "4", "5"]}


@pytest.mark.parametrize(
    "quad",
    [("3", "4", "6", "7"), ("1", "2", "3", "4"), ("0", "1", "2", "3"), ("1", "2", "4"), ("1", "5")],
)
def test_corner_that_is_not_a_square_is_invalid_4620_4_d_5(quad: tuple[str, ...]) -> None:
    """4620.4(d)(5): only 2x2 squares of the grid are corners (no 0-1-2-3 "first four")."""
    rule_error("invalid_bet", G.check_bet, DZ, nums("corner", *quad), 10)
    rule_error("invalid_bet", G.check_bet, SZ, nums("corner", *quad), 10)


def test_five_number_bet_covers_0_00_1_2_3_and_pays_6_to_1_4620_4_d_6() -> None:
    """4620.4(d)(6): the five-number bet wins on 0, 00, 1, 2 or 3; payoff 6 to 1."""
    bet = {"kind": "five"}
    assert winners(DZ, bet) == {"0", "00", "1", "2", "3"}
    assert paid(DZ, bet, 10, "00") == 70
    assert paid(DZ, bet, 10, "4") == 0
    named = {"kind": "five", "numbers": ["3", "2", "1", "00", "0"]}
    assert G.check_bet(DZ, named, 10) == {"kind": "five"}


def test_five_number_bet_naming_other_numbers_is_invalid_4620_4_d_6() -> None:
    """4620.4(d)(6): a five bet that names numbers must name exactly 0, 00, 1, 2, 3."""
    rule_error("invalid_bet", G.check_bet, DZ, nums("five", "0", "00", "1", "2", "4"), 10)
    rule_error("invalid_bet", G.check_bet, DZ, nums("five", "0", "00", "1", "2"), 10)
    rule_error("bad_request", G.check_bet, DZ, {"kind": "five", "numbers": "0,00,1,2,3"}, 10)


def test_five_number_bet_is_not_offered_on_a_single_zero_wheel_4620_4_d_6() -> None:
    """4620.4(d)(6) needs 0 and 00: a single-zero table does not offer it."""
    rule_error("wager_not_offered", G.check_bet, SZ, {"kind": "five"}, 10)
    assert "five" not in SZ["offered"]


@pytest.mark.parametrize("r", range(1, 12))
def test_line_covers_two_adjacent_rows_and_pays_5_to_1_4620_4_d_7(r: int) -> None:
    """4620.4(d)(7): the six-number bet covers two streets; payoff 5 to 1."""
    six = row(r) + row(r + 1)
    bet = nums("line", *reversed(six))
    assert winners(DZ, bet) == set(six)
    assert paid(DZ, bet, 10, six[-1]) == 60


@pytest.mark.parametrize(
    "six", [("2", "3", "4", "5", "6", "7"), ("1", "2", "3", "7", "8", "9"), ("1", "2", "3")]
)
def test_line_that_is_not_two_adjacent_rows_is_invalid_4620_4_d_7(six: tuple[str, ...]) -> None:
    """4620.4(d)(7): a line is two adjacent rows of three."""
    rule_error("invalid_bet", G.check_bet, DZ, nums("line", *six), 10)


# ------------------------------------------------------------------------------------------
# outside bets, 4620.4(e)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "first", "last"), [(1, "1", "34"), (2, "2", "35"), (3, "3", "36")]
)
def test_column_covers_12_vertical_numbers_and_pays_2_to_1_4620_4_e_1(
    column: int, first: str, last: str
) -> None:
    """4620.4(e)(1): a column is the 12 numbers above its box; payoff 2 to 1."""
    bet = {"kind": "column", "column": column}
    won = winners(DZ, bet)
    assert won == {str(n) for n in range(column, 37, 3)}
    assert len(won) == 12 and first in won and last in won
    assert paid(DZ, bet, 10, last) == 30
    assert paid(DZ, bet, 10, "0") == paid(DZ, bet, 10, "00") == 0


def test_column_boundaries_34_35_36_4620_4_e_1() -> None:
    """4620.4(e)(1): 34, 35 and 36 end columns 1, 2 and 3."""
    for column, number in ((1, "34"), (2, "35"), (3, "36")):
        for c in (1, 2, 3):
            expected = 30 if c == column else 0
            assert paid(DZ, {"kind": "column", "column": c}, 10, number) == expected


@pytest.mark.parametrize(("dozen", "low", "high"), [(1, 1, 12), (2, 13, 24), (3, 25, 36)])
def test_dozen_pays_2_to_1_4620_4_e_2(dozen: int, low: int, high: int) -> None:
    """4620.4(e)(2): 1st 12 is 1-12, 2nd 12 is 13-24, 3rd 12 is 25-36; payoff 2 to 1."""
    bet = {"kind": "dozen", "dozen": dozen}
    assert winners(DZ, bet) == {str(n) for n in range(low, high + 1)}
    assert paid(DZ, bet, 10, str(high)) == 30


def test_dozen_boundaries_12_13_24_25_4620_4_e_2() -> None:
    """4620.4(e)(2): 12 and 13, 24 and 25 fall in different dozens."""
    d = {d: {"kind": "dozen", "dozen": d} for d in (1, 2, 3)}
    assert paid(DZ, d[1], 10, "12") == 30 and paid(DZ, d[2], 10, "12") == 0
    assert paid(DZ, d[2], 10, "13") == 30 and paid(DZ, d[1], 10, "13") == 0
    assert paid(DZ, d[2], 10, "24") == 30 and paid(DZ, d[3], 10, "24") == 0
    assert paid(DZ, d[3], 10, "25") == 30 and paid(DZ, d[2], 10, "25") == 0


def test_low_and_high_pay_even_money_4620_4_e_3_4() -> None:
    """4620.4(e)(3)-(4): 1 to 18 and 19 to 36 pay even money; 18/19 is the boundary."""
    assert winners(DZ, {"kind": "low"}) == {str(n) for n in range(1, 19)}
    assert winners(DZ, {"kind": "high"}) == {str(n) for n in range(19, 37)}
    assert paid(DZ, {"kind": "low"}, 500, "18") == 1000
    assert paid(DZ, {"kind": "high"}, 500, "18") == 0
    assert paid(DZ, {"kind": "high"}, 500, "19") == 1000


def test_red_and_black_pay_even_money_4620_4_e_5_6() -> None:
    """4620.4(e)(5)-(6): black and red colour bets pay even money."""
    assert winners(DZ, {"kind": "red"}) == set(RED_NUMBERS)
    assert winners(DZ, {"kind": "black"}) == set(BLACK_NUMBERS)
    assert paid(DZ, {"kind": "red"}, 100, "1") == 200
    assert paid(DZ, {"kind": "black"}, 100, "2") == 200


def test_odd_and_even_pay_even_money_0_and_00_are_neither_4620_4_e_7_8() -> None:
    """4620.4(e)(7)-(8): odd and even pay even money; 0 and 00 are neither."""
    assert winners(DZ, {"kind": "odd"}) == {str(n) for n in range(1, 37, 2)}
    assert winners(DZ, {"kind": "even"}) == {str(n) for n in range(2, 37, 2)}
    assert paid(DZ, {"kind": "even"}, 10, "0") == 0
    assert paid(DZ, {"kind": "even"}, 10, "36") == 20


def test_0_and_00_win_for_the_house_all_bets_except_those_on_0_and_00_4620_4_c_2() -> None:
    """4620.4(c)(2): "The symbols 0 and 00 win for the house all bets except those placed
    on 0 and 00": on 0 or 00 only bets whose numbers include it win."""
    for config in (DZ, DZ_ALL):  # red, black and dozen are off at a colour table, NJ (g)
        placed = [
            PlacedBet(bet_id=str(i), player="p", bet=G.check_bet(config, b, 10), amount=10)
            for i, b in enumerate(_placeable(config))
        ]
        for zero in ("0", "00"):
            for s, pb in zip(G.settle(config, placed, {"pocket": zero}), placed, strict=True):
                on_zero = zero in covered(config, pb.bet)
                assert (s.result == "won") == on_zero, pb.bet
                if pb.bet["kind"] in OUTSIDE:
                    assert s.result == "lost" and s.paid == 0


# ------------------------------------------------------------------------------------------
# NJ table options
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("trio", [("0", "1", "2"), ("0", "2", "00"), ("00", "2", "3")])
def test_every_basket_wins_on_its_three_numbers_nj_e_3_i(trio: tuple[str, str, str]) -> None:
    """NJ (e)3i: baskets 0-1-2, 0-2-00, 00-2-3 are "three numbers"; default 11 to 1."""
    bet = nums("basket", *reversed(trio))
    assert winners(DZ_ALL, bet) == set(trio)
    for p in trio:
        assert paid(DZ_ALL, bet, 10, p) == 120
    assert paid(DZ_ALL, bet, 10, "4") == 0


def test_basket_canonical_order_is_layout_order() -> None:
    """Canonical numbers run 0, 00, 1..36 whatever order the client sent."""
    assert G.check_bet(DZ_ALL, nums("basket", "2", "00", "0"), 10) == {
        "kind": "basket",
        "numbers": ["0", "00", "2"],
    }


@pytest.mark.parametrize("trio", [("0", "1", "2"), ("0", "2", "3")])
def test_single_zero_baskets_0_1_2_and_0_2_3(trio: tuple[str, str, str]) -> None:
    """NJ (e)3i read for a single-zero wheel: the trios at 0's corners, 0-1-2 and 0-2-3."""
    bet = nums("basket", *trio)
    assert winners(SZ_ALL, bet) == set(trio)
    assert paid(SZ_ALL, bet, 10, "0") == 120


@pytest.mark.parametrize(
    ("config", "trio"),
    [
        (DZ_ALL, ("0", "1", "3")),
        (DZ_ALL, ("0", "2", "3")),
        (DZ_ALL, ("1", "2", "3")),
        (SZ_ALL, ("0", "2", "00")),
        (SZ_ALL, ("00", "2", "3")),
    ],
)
def test_other_trios_are_not_baskets_nj_e_3_i(
    config: Mapping[str, Any], trio: tuple[str, str, str]
) -> None:
    """NJ (e)3i lists the basket trios; no other trio is one."""
    rule_error("invalid_bet", G.check_bet, config, nums("basket", *trio), 10)


def test_basket_off_is_not_offered() -> None:
    """A table option that is off: wager_not_offered."""
    rule_error("wager_not_offered", G.check_bet, DZ, nums("basket", "0", "1", "2"), 10)


@pytest.mark.parametrize(
    ("wheel", "center", "five"),
    [
        ("double_zero", "0", {"14", "2", "0", "28", "9"}),
        ("double_zero", "2", {"35", "14", "2", "0", "28"}),
        ("double_zero", "28", {"2", "0", "28", "9", "26"}),
        ("double_zero", "00", {"13", "1", "00", "27", "10"}),
        ("double_zero", "17", {"20", "32", "17", "5", "22"}),
        ("single_zero", "0", {"3", "26", "0", "32", "15"}),
        ("single_zero", "26", {"35", "3", "26", "0", "32"}),
        ("single_zero", "32", {"26", "0", "32", "15", "19"}),
    ],
)
def test_five_adjacent_covers_centre_and_two_each_side_wrapping_nj_e_1_i(
    wheel: str, center: str, five: set[str]
) -> None:
    """NJ (e)1i: five adjacent numbers on the wheel, wrapping round both ends of the order."""
    config = DZ_ALL if wheel == "double_zero" else SZ_ALL
    bet = {"kind": "five_adjacent", "center": center}
    assert set(five_adjacent_numbers(wheel, center)) == five
    assert five_adjacent_numbers(wheel, center)[2] == center
    assert winners(config, bet) == five


def test_five_adjacent_is_five_straights_of_equal_value_nj_e_1_i_2() -> None:
    """NJ (e)1i(2): five straights of amount/5 each; one hits at 35 to 1, four lose."""
    bet = {"kind": "five_adjacent", "center": "17"}
    s = settle_one(DZ_ALL, bet, 50, "5")
    assert s == Settlement(bet_id="b-1", player="p-1", amount=50, result="won", paid=10 * 36)
    assert paid(DZ_ALL, bet, 50, "0") == 0
    assert paid(DZ_ALL, bet, 5 * MAX_INSIDE_BET_CENTS, "17") == MAX_INSIDE_BET_CENTS * 36


def test_five_adjacent_amount_must_be_a_multiple_of_five_nj_e_1_i_2() -> None:
    """NJ (e)1i(2): "five gaming chips or plaques, or a multiple thereof"."""
    bet = {"kind": "five_adjacent", "center": "17"}
    for amount in (1, 4, 6, 12, 999):
        rule_error("invalid_bet", G.check_bet, DZ_ALL, bet, amount)
    assert G.check_bet(DZ_ALL, bet, 5) == bet


def test_five_adjacent_limit_is_the_inside_limit_per_straight_4620_4_d() -> None:
    """4620.4(d) applies to each of the five straights: at most 5 x max_inside in all."""
    bet = {"kind": "five_adjacent", "center": "00"}
    assert G.check_bet(DZ_ALL, bet, 1000) == bet
    rule_error("over_limit", G.check_bet, DZ_ALL, bet, 1005)
    low = G.parse_config({"options": ["five_adjacent"], "max_inside": 50, "min_bet": 20})
    assert G.check_bet(low, bet, 250) == bet
    rule_error("over_limit", G.check_bet, low, bet, 255)
    rule_error("bad_request", G.check_bet, low, bet, 95)  # 19 on each straight < min 20


def test_five_adjacent_centre_must_be_a_pocket_of_this_wheel() -> None:
    """The centre is a number on the wheel replica, NJ (e)1i(1)."""
    rule_error("invalid_bet", G.check_bet, SZ_ALL, {"kind": "five_adjacent", "center": "00"}, 10)
    rule_error("bad_request", G.check_bet, DZ_ALL, {"kind": "five_adjacent", "center": 17}, 10)
    rule_error("bad_request", G.check_bet, DZ_ALL, {"kind": "five_adjacent", "center": "37"}, 10)
    rule_error("bad_request", G.check_bet, DZ_ALL, {"kind": "five_adjacent"}, 10)


def test_colour_sections_are_six_consecutive_wheel_numbers_each_nj_e_6_ii() -> None:
    """NJ (e)6ii-(e)8 (reading): from the pocket after 0, six numbers per colour in the
    order black, blue, gold, red, purple, green, zeros skipped."""
    dz = colour_sections("double_zero")
    assert dz == {
        "black": ("28", "9", "26", "30", "11", "7"),
        "blue": ("20", "32", "17", "5", "22", "34"),
        "gold": ("15", "3", "24", "36", "13", "1"),
        "red": ("27", "10", "25", "29", "12", "8"),
        "purple": ("19", "31", "18", "6", "21", "33"),
        "green": ("16", "4", "23", "35", "14", "2"),
    }
    sz = colour_sections("single_zero")
    assert sz["black"] == ("32", "15", "19", "4", "21", "2")
    assert sz["green"] == ("7", "28", "12", "35", "3", "26")
    for sections in (dz, sz):
        assert sorted(p for s in sections.values() for p in s) == sorted(NUMBERS)


@pytest.mark.parametrize("colour", COLOURS)
def test_six_numbers_colour_wager_default_5_to_1_nj_e_6_ii(colour: str) -> None:
    """NJ (e)6ii: the six-numbers colour wager wins on its section's six numbers."""
    for config, wheel in ((DZ_ALL, "double_zero"), (SZ_ALL, "single_zero")):
        bet = {"kind": "color_six", "color": colour}
        section = colour_sections(wheel)[colour]
        assert winners(config, bet) == set(section)
        assert paid(config, bet, 10, section[0]) == 60
        assert paid(config, bet, 10, "0") == 0


@pytest.mark.parametrize("colour", COLOURS)
def test_seven_numbers_colour_wager_adds_0_on_single_zero_nj_e_7(colour: str) -> None:
    """NJ (e)7: the section's six numbers and 0, single-zero wheel; default 4 to 1."""
    bet = {"kind": "color_seven", "color": colour}
    assert winners(SZ_ALL, bet) == {*colour_sections("single_zero")[colour], "0"}
    assert paid(SZ_ALL, bet, 10, "0") == 50


@pytest.mark.parametrize("colour", COLOURS)
def test_eight_numbers_colour_wager_adds_0_and_00_nj_e_8(colour: str) -> None:
    """NJ (e)8: the section's six numbers, 0 and 00, double-zero wheel; default 7 to 2."""
    bet = {"kind": "color_eight", "color": colour}
    assert winners(DZ_ALL, bet) == {*colour_sections("double_zero")[colour], "0", "00"}
    assert paid(DZ_ALL, bet, 10, "00") == 10 + 35
    assert paid(DZ_ALL, bet, 200, colour_sections("double_zero")[colour][3]) == 200 + 700


def test_odds_with_a_denominator_need_a_stake_they_divide() -> None:
    """7 to 2 pays whole cents only on even stakes: an odd stake is refused (reading)."""
    bet = {"kind": "color_eight", "color": "gold"}
    rule_error("invalid_bet", G.check_bet, DZ_ALL, bet, 11)
    assert G.check_bet(DZ_ALL, bet, 12) == bet


def test_colour_wager_with_an_unknown_colour_is_invalid() -> None:
    """NJ (e)6ii: the colours are black, blue, gold, red, purple and green."""
    rule_error("invalid_bet", G.check_bet, DZ_ALL, {"kind": "color_six", "color": "pink"}, 10)
    rule_error("bad_request", G.check_bet, DZ_ALL, {"kind": "color_six", "color": 1}, 10)
    rule_error("bad_request", G.check_bet, DZ_ALL, {"kind": "color_six"}, 10)


def test_seven_numbers_covers_10_to_15_and_33_nj_f() -> None:
    """NJ (f): "seven numbers" wins on 10, 11, 12, 13, 14, 15 or 33; default 4 to 1."""
    bet = {"kind": "seven_numbers"}
    seven = {"10", "11", "12", "13", "14", "15", "33"}
    assert winners(DZ_ALL, bet) == seven
    assert winners(SZ_ALL, bet) == seven
    assert paid(DZ_ALL, bet, 10, "33") == 50
    named = nums("seven_numbers", "33", "10", "11", "12", "13", "14", "15")
    assert G.check_bet(DZ_ALL, named, 10) == bet
    rule_error("invalid_bet", G.check_bet, DZ_ALL, nums("seven_numbers", "10", "11"), 10)


def test_options_are_inside_bets_limited_to_max_inside_4620_4_d() -> None:
    """Reading: NJ options cover at most eight numbers; they take the $2 inside limit."""
    for bet in option_bets("double_zero"):
        if bet["kind"] == "five_adjacent":
            continue
        assert G.check_bet(DZ_ALL, bet, MAX_INSIDE_BET_CENTS)
        rule_error("over_limit", G.check_bet, DZ_ALL, bet, MAX_INSIDE_BET_CENTS + 2)


# ------------------------------------------------------------------------------------------
# limits and bad bet specs
# ------------------------------------------------------------------------------------------


def test_inside_bets_max_2_dollars_4620_4_d() -> None:
    """4620.4(d): inside bets at most $2."""
    assert MAX_INSIDE_BET_CENTS == 200
    for bet in standard_bets("double_zero"):
        if bet["kind"] in OUTSIDE:
            continue
        assert G.check_bet(DZ, bet, 200)
        rule_error("over_limit", G.check_bet, DZ, bet, 201)


def test_outside_bets_max_5_dollars_4620_4_e() -> None:
    """4620.4(e): outside bets at most $5."""
    assert MAX_OUTSIDE_BET_CENTS == 500
    for bet in standard_bets("double_zero"):
        if bet["kind"] not in OUTSIDE:
            continue
        assert G.check_bet(DZ, bet, 500) == bet
        rule_error("over_limit", G.check_bet, DZ, bet, 501)


def test_table_limits_lower_than_the_regulation_apply() -> None:
    """A table may set lower maxima than 4620.4(d)-(e); they bind."""
    config = G.parse_config({"max_inside": 100, "max_outside": 300, "min_bet": 25})
    assert G.check_bet(config, nums("straight", "7"), 100)
    rule_error("over_limit", G.check_bet, config, nums("straight", "7"), 101)
    assert G.check_bet(config, {"kind": "red"}, 300)
    rule_error("over_limit", G.check_bet, config, {"kind": "red"}, 301)
    rule_error("bad_request", G.check_bet, config, {"kind": "red"}, 24)


@pytest.mark.parametrize("amount", [0, -10, True, 1.5, "10", None])
def test_amount_must_be_a_positive_integer_of_cents(amount: Any) -> None:
    """Integer cents only (design: Money)."""
    rule_error("bad_request", G.check_bet, DZ, nums("straight", "7"), amount)


@pytest.mark.parametrize(
    ("bet", "code"),
    [
        (None, "bad_request"),
        ("straight 17", "bad_request"),
        (["straight", "17"], "bad_request"),
        ({}, "bad_request"),
        ({"kind": 3}, "bad_request"),
        ({"kind": "trio", "numbers": ["1", "2", "3"]}, "invalid_bet"),
        ({"kind": "straight"}, "bad_request"),
        ({"kind": "straight", "numbers": [17]}, "bad_request"),
        ({"kind": "straight", "numbers": "17"}, "bad_request"),
        ({"kind": "straight", "numbers": ["37"]}, "bad_request"),
        ({"kind": "straight", "numbers": ["017"]}, "bad_request"),
        ({"kind": "straight", "numbers": ["17"], "chips": 3}, "bad_request"),
        ({"kind": "straight", "numbers": []}, "invalid_bet"),
        ({"kind": "straight", "numbers": ["17", "18"]}, "invalid_bet"),
        ({"kind": "split", "numbers": ["17", "17"]}, "invalid_bet"),
        ({"kind": "split", "numbers": ["17", 20]}, "bad_request"),
        ({"kind": "street", "numbers": ["1", "2", "3", "4"]}, "invalid_bet"),
        ({"kind": "corner", "numbers": ["1", "2", "4", "4"]}, "invalid_bet"),
        ({"kind": "line", "numbers": ["1", "2", "3", "4", "5"]}, "invalid_bet"),
        ({"kind": "five", "extra": 1}, "bad_request"),
        ({"kind": "column"}, "bad_request"),
        ({"kind": "column", "column": "1"}, "bad_request"),
        ({"kind": "column", "column": True}, "bad_request"),
        ({"kind": "column", "column": 1.0}, "bad_request"),
        ({"kind": "column", "column": 4}, "invalid_bet"),
        ({"kind": "column", "column": 0}, "invalid_bet"),
        ({"kind": "column", "dozen": 1}, "bad_request"),
        ({"kind": "dozen", "dozen": 4}, "invalid_bet"),
        ({"kind": "dozen", "dozen": -1}, "invalid_bet"),
        ({"kind": "red", "numbers": ["1"]}, "bad_request"),
        ({"kind": "odd", "color": "red"}, "bad_request"),
        ({"kind": "low", "numbers": []}, "bad_request"),
    ],
)
def test_bad_bet_specs_are_refused_with_their_code(bet: Any, code: str) -> None:
    """bad_request for a malformed spec, invalid_bet for a spec not on this layout."""
    rule_error(code, G.check_bet, DZ, bet, 10)


def test_00_on_a_single_zero_wheel_is_not_a_bet() -> None:
    """The single-zero wheel has no 00: a well-typed bet naming it is invalid_bet."""
    rule_error("invalid_bet", G.check_bet, SZ, nums("straight", "00"), 10)


@pytest.mark.parametrize(
    ("config", "bet"),
    [
        (DZ, {"kind": "five_adjacent", "center": "1"}),
        (DZ, {"kind": "color_six", "color": "blue"}),
        (DZ, {"kind": "color_eight", "color": "blue"}),
        (DZ_ALL, {"kind": "color_seven", "color": "blue"}),
        (SZ_ALL, {"kind": "color_eight", "color": "blue"}),
        (DZ, {"kind": "seven_numbers"}),
        (DZ_ALL, {"kind": "red"}),
        (DZ_ALL, {"kind": "black"}),
        (DZ_ALL, {"kind": "dozen", "dozen": 1}),
        (SZ, {"kind": "five"}),
        (G.parse_config({"exclude": ["low", "straight"]}), {"kind": "low"}),
        (G.parse_config({"exclude": ["low", "straight"]}), nums("straight", "1")),
    ],
)
def test_wager_not_offered_at_this_table(config: Mapping[str, Any], bet: Bet) -> None:
    """An option that is off, a wager NJ (g) excludes, or one the operator excludes."""
    rule_error("wager_not_offered", G.check_bet, config, bet, 10)


def test_canonical_bet_sorts_numbers_in_layout_order() -> None:
    """Order of numbers in a client's list does not matter; canonical is 0, 00, 1..36."""
    assert G.check_bet(DZ, nums("split", "20", "17"), 10) == nums("split", "17", "20")
    assert G.check_bet(DZ, nums("split", "00", "0"), 10) == nums("split", "0", "00")
    assert G.check_bet(DZ, nums("line", "9", "8", "7", "12", "11", "10"), 10) == nums(
        "line", "7", "8", "9", "10", "11", "12"
    )
    assert G.check_bet(DZ, {"kind": "dozen", "dozen": 2}, 10) == {"kind": "dozen", "dozen": 2}


def test_covered_gives_the_pockets_of_a_bet_and_validates_it() -> None:
    """covered() is the coverage the settlement uses; a bad bet raises as in check_bet."""
    assert covered(DZ, nums("split", "20", "17")) == frozenset({"17", "20"})
    assert covered(DZ, {"kind": "five"}) == frozenset({"0", "00", "1", "2", "3"})
    rule_error("invalid_bet", covered, DZ, nums("split", "1", "3"))


# ------------------------------------------------------------------------------------------
# configuration
# ------------------------------------------------------------------------------------------


def test_default_config_is_double_zero_with_regulatory_limits_4620_4() -> None:
    """Defaults: double-zero wheel (4620.4(a)(3)), $2 inside (d), $5 outside (e)."""
    expected = {
        "wheel": "double_zero",
        "options": [],
        "exclude": [],
        "require": [],
        "offered": sorted(STANDARD_ODDS),
        "max_inside": 200,
        "max_outside": 500,
        "min_bet": 1,
        "odds": {},
    }
    assert dict(DZ) == expected


def test_config_canonical_form_is_a_fixed_point() -> None:
    """parse_config(parse_config(raw)) == parse_config(raw): stored configs re-validate."""
    for config in (DZ, SZ, DZ_ALL, SZ_ALL):
        assert G.parse_config(config) == config
    assert DZ_ALL["options"] == sorted(DZ_OPTIONS)
    assert DZ_ALL["odds"] == {
        "basket": [11, 1],
        "color_eight": [7, 2],
        "color_six": [5, 1],
        "seven_numbers": [4, 1],
    }


@pytest.mark.parametrize(
    "raw",
    [
        {"max_inside": 201},
        {"max_outside": 501},
        {"max_inside": 0},
        {"max_outside": -5},
        {"max_inside": True},
        {"max_inside": 100.0},
        {"max_outside": "500"},
        {"min_bet": 0},
        {"min_bet": 201},
        {"min_bet": 150, "max_inside": 100},
        {"min_bet": "1"},
    ],
)
def test_limits_above_the_regulation_or_malformed_are_invalid_4620_4_d_e(
    raw: Mapping[str, Any],
) -> None:
    """4620.4(d)-(e): never above $2 inside / $5 outside; limits are positive cents."""
    rule_error("invalid_config", G.parse_config, raw)


@pytest.mark.parametrize(
    "raw",
    [
        {"wheel": "triple_zero"},
        {"wheel": ["double_zero"]},
        {"table": "roulette-1"},
        {"options": ["baskets"]},
        {"options": "basket"},
        {"options": ["basket", "basket"]},
        {"options": [1]},
        {"exclude": ["basket"]},
        {"exclude": ["trio"]},
        {"require": ["seven_numbers"]},
        {"offered": ["straight"]},
    ],
)
def test_unknown_or_malformed_settings_are_invalid(raw: Mapping[str, Any]) -> None:
    """Anything the rules do not know is refused, unknown keys included."""
    rule_error("invalid_config", G.parse_config, raw)


def test_colour_seven_only_on_single_zero_and_eight_only_on_double_zero_nj_e_7_8() -> None:
    """NJ (e)7 is a single-zero wager, NJ (e)8 a double-zero wager."""
    rule_error("invalid_config", G.parse_config, {"options": ["color_seven"]})
    rule_error(
        "invalid_config", G.parse_config, {"wheel": "single_zero", "options": ["color_eight"]}
    )
    assert G.parse_config({"wheel": "single_zero", "options": ["color_seven"]})
    assert G.parse_config({"options": ["color_eight"]})


def test_colour_wagers_drop_red_and_black_nj_g() -> None:
    """NJ (g): a table offering a colour wager shall not offer red and black."""
    for raw in (
        {"options": ["color_six"]},
        {"options": ["color_eight"]},
        {"wheel": "single_zero", "options": ["color_seven"]},
    ):
        offered = G.parse_config(raw)["offered"]
        assert "red" not in offered and "black" not in offered


def test_six_numbers_colour_keeps_dozen_seven_and_eight_drop_it_nj_g() -> None:
    """NJ (g): seven or eight numbers colour wagers exclude the dozen; six alone does not."""
    assert "dozen" in G.parse_config({"options": ["color_six"]})["offered"]
    assert "dozen" not in G.parse_config({"options": ["color_eight"]})["offered"]
    assert "dozen" not in G.parse_config({"options": ["color_six", "color_eight"]})["offered"]
    sz = G.parse_config({"wheel": "single_zero", "options": ["color_six", "color_seven"]})
    assert "dozen" not in sz["offered"]
    assert "column" in sz["offered"] and "odd" in sz["offered"]


@pytest.mark.parametrize(
    "raw",
    [
        {"options": ["color_six"], "require": ["red"]},
        {"options": ["color_six"], "require": ["black"]},
        {"options": ["color_eight"], "require": ["dozen"]},
        {"wheel": "single_zero", "options": ["color_seven"], "require": ["dozen"]},
        {"wheel": "single_zero", "require": ["five"]},
        {"exclude": ["split"], "require": ["split"]},
    ],
)
def test_required_wager_that_cannot_be_offered_is_invalid_nj_g(raw: Mapping[str, Any]) -> None:
    """NJ (g) (and 4620.4(d)(6) for five): a required wager the rules forbid is refused."""
    rule_error("invalid_config", G.parse_config, raw)


def test_required_dozen_with_six_numbers_colour_is_allowed_nj_g() -> None:
    """NJ (g): six numbers colour "may offer the dozen wager"."""
    config = G.parse_config({"options": ["color_six"], "require": ["dozen"]})
    assert config["require"] == ["dozen"] and "dozen" in config["offered"]


def test_exclude_drops_standard_wagers() -> None:
    """An operator may choose not to offer a standard wager."""
    config = G.parse_config({"exclude": ["five", "line"]})
    assert "five" not in config["offered"] and "line" not in config["offered"]
    assert config["exclude"] == ["five", "line"]


@pytest.mark.parametrize(
    "raw",
    [
        {"options": ["basket"], "odds": {"basket": [12, 1]}},
        {"options": ["color_six"], "odds": {"color_six": [6, 1]}},
        {"options": ["color_eight"], "odds": {"color_eight": [4, 1]}},
        {"wheel": "single_zero", "options": ["color_seven"], "odds": {"color_seven": [9, 2]}},
        {"options": ["seven_numbers"], "odds": {"seven_numbers": [5, 1]}},
        {"options": ["basket"], "odds": {"basket": [0, 1]}},
        {"options": ["basket"], "odds": {"basket": [11, 0]}},
        {"options": ["basket"], "odds": {"basket": [-11, 1]}},
        {"options": ["basket"], "odds": {"basket": [11]}},
        {"options": ["basket"], "odds": {"basket": [11, 1, 1]}},
        {"options": ["basket"], "odds": {"basket": "11:1"}},
        {"options": ["basket"], "odds": {"basket": [11.0, 1]}},
        {"options": ["basket"], "odds": {"basket": [True, 1]}},
        {"options": ["basket"], "odds": [11, 1]},
        {"odds": {"basket": [11, 1]}},
        {"odds": {"straight": [35, 1]}},
        {"options": ["five_adjacent"], "odds": {"five_adjacent": [35, 1]}},
    ],
)
def test_bad_odds_are_invalid(raw: Mapping[str, Any]) -> None:
    """Odds that give the player an edge, malformed odds, odds of wagers 4620.4 fixes."""
    rule_error("invalid_config", G.parse_config, raw)


def test_odds_are_kept_in_lowest_terms_and_fair_odds_are_allowed() -> None:
    """A table's odds are reduced ([14, 4] is 7 to 2); a zero edge is not a player edge."""
    config = G.parse_config({"options": ["color_eight"], "odds": {"color_eight": [14, 4]}})
    assert config["odds"] == {"color_eight": [7, 2]}
    fair = G.parse_config({"options": ["basket"], "odds": {"basket": [35, 3]}})
    assert house_edge(fair, nums("basket", "0", "1", "2"), 30) == 0
    lower = G.parse_config({"options": ["basket"], "odds": {"basket": [10, 1]}})
    assert payout_odds(lower, "basket") == (10, 1)
    assert paid(lower, nums("basket", "0", "1", "2"), 10, "1") == 110


def test_standard_payouts_are_fixed_by_4620_4() -> None:
    """4620.4(d)-(e): 35, 17, 11, 8, 6, 5, 2, 2 and 1 to 1; not table settings."""
    assert {k: payout_odds(DZ, k) for k in STANDARD_ODDS} == {
        "straight": (35, 1),
        "split": (17, 1),
        "street": (11, 1),
        "corner": (8, 1),
        "five": (6, 1),
        "line": (5, 1),
        "column": (2, 1),
        "dozen": (2, 1),
        "low": (1, 1),
        "high": (1, 1),
        "red": (1, 1),
        "black": (1, 1),
        "odd": (1, 1),
        "even": (1, 1),
    }
    assert payout_odds(DZ_ALL, "five_adjacent") == (35, 1)
    assert {k: payout_odds(DZ_ALL, k) for k in DZ_ALL["odds"]} == {
        k: DEFAULT_OPTION_ODDS[k] for k in DZ_ALL["odds"]
    }


# ------------------------------------------------------------------------------------------
# outcomes, 4620.4(c)
# ------------------------------------------------------------------------------------------


def test_first_spin_has_no_fixed_point_4620_4_c_3() -> None:
    """4620.4(c)(3): on the first spin spun_from may be absent, null or any pocket."""
    assert G.check_outcome(DZ, {"pocket": "00"}, None) == {"pocket": "00", "spun_from": None}
    assert G.check_outcome(DZ, {"pocket": "7", "spun_from": None}, None) == {
        "pocket": "7",
        "spun_from": None,
    }
    assert G.check_outcome(DZ, {"pocket": "7", "spun_from": "31"}, None) == {
        "pocket": "7",
        "spun_from": "31",
    }


def test_later_spins_start_from_the_previous_winning_pocket_4620_4_c_3() -> None:
    """4620.4(c)(3): thereafter the dealer spins from the previous winning pocket."""
    ok = G.check_outcome(DZ, {"pocket": "0", "spun_from": "17"}, "17")
    assert ok == {"pocket": "0", "spun_from": "17"}
    err = rule_error("invalid_outcome", G.check_outcome, DZ, {"pocket": "0"}, "17")
    assert "4620.4(c)(3)" in err.message and "17" in err.message
    rule_error("invalid_outcome", G.check_outcome, DZ, {"pocket": "0", "spun_from": None}, "17")
    err = rule_error(
        "invalid_outcome", G.check_outcome, DZ, {"pocket": "0", "spun_from": "18"}, "17"
    )
    assert "4620.4(c)(3)" in err.message


@pytest.mark.parametrize(
    ("config", "raw"),
    [
        (DZ, {"pocket": "37"}),
        (DZ, {"pocket": 17}),
        (DZ, {"pocket": ["17"]}),
        (DZ, {}),
        (DZ, "17"),
        (DZ, None),
        (DZ, {"pocket": "17", "spun_from": "99"}),
        (DZ, {"pocket": "17", "spun_from": 5}),
        (DZ, {"pocket": "17", "ball": "white"}),
        (SZ, {"pocket": "00"}),
        (SZ, {"pocket": "1", "spun_from": "00"}),
    ],
)
def test_outcome_must_be_a_pocket_of_this_wheel_4620_4_c_2(
    config: Mapping[str, Any], raw: Any
) -> None:
    """4620.4(c)(2): the ball comes to rest in a pocket of this wheel."""
    rule_error("invalid_outcome", G.check_outcome, config, raw, None)


def test_drawn_outcome_and_winning_key() -> None:
    """The RNG draws one index below draw_bounds (the pockets); the outcome records where it
    was spun from."""
    assert G.draw_bounds(DZ) == (38,) and G.draw_bounds(SZ) == (37,)
    for i, pocket in enumerate(AMERICAN_WHEEL_ORDER):
        outcome = G.drawn_outcome(DZ, (i,), "5")
        assert outcome == {"pocket": pocket, "spun_from": "5"}
        assert G.winning_key(outcome) == pocket
        assert G.check_outcome(DZ, outcome, "5") == outcome
    assert G.drawn_outcome(SZ, (0,), None) == {"pocket": "0", "spun_from": None}
    for bad in ((-1,), (38,), (True,), (), (1, 2)):
        rule_error("invalid_outcome", G.drawn_outcome, DZ, bad, None)
    rule_error("invalid_outcome", G.drawn_outcome, SZ, (37,), None)


def test_settle_refuses_a_pocket_not_on_the_wheel() -> None:
    """Settlement needs a pocket of this wheel."""
    rule_error("invalid_outcome", G.settle, SZ, [], {"pocket": "00"})
    assert G.settle(DZ, [], {"pocket": "00"}) == ()


def test_settle_refuses_a_bet_that_is_not_a_bet_on_the_layout() -> None:
    """A bet that did not pass check_bet cannot be settled silently."""
    bad = PlacedBet(bet_id="x", player="p", bet=nums("split", "1", "3"), amount=10)
    rule_error("invalid_bet", G.settle, DZ, [bad], {"pocket": "1"})
    off = PlacedBet(bet_id="y", player="p", bet=nums("basket", "0", "1", "2"), amount=10)
    rule_error("wager_not_offered", G.settle, DZ, [off], {"pocket": "1"})


def test_settle_accepts_unsorted_numbers_of_a_valid_bet() -> None:
    """Coverage does not depend on the order of numbers."""
    bet = PlacedBet(bet_id="x", player="p", bet=nums("split", "20", "17"), amount=10)
    assert G.settle(DZ, [bet], {"pocket": "20"})[0].paid == 180


# ------------------------------------------------------------------------------------------
# house edge by enumeration
# ------------------------------------------------------------------------------------------


def test_house_edge_is_1_in_19_for_every_standard_wager_on_double_zero_4620_4() -> None:
    """Every straight, split, street, corner, line, column, dozen and even-money bet of
    4620.4 keeps exactly 1/19 (2/38) for the house on the double-zero wheel."""
    bets = [b for b in standard_bets("double_zero") if b["kind"] != "five"]
    assert len(bets) == 38 + 62 + 12 + 22 + 11 + 3 + 3 + 6
    for bet in bets:
        assert house_edge(DZ, bet) == Fraction(1, 19), bet


def test_house_edge_of_the_five_number_bet_is_3_in_38_4620_4_d_6() -> None:
    """4620.4(d)(6): 6 to 1 on five of 38 pockets: the house keeps 3/38."""
    assert house_edge(DZ, {"kind": "five"}) == Fraction(3, 38)


def test_house_edge_is_1_in_37_for_every_standard_wager_on_single_zero() -> None:
    """Single-zero table option: the same payouts keep 1/37 on every standard wager."""
    for bet in standard_bets("single_zero"):
        assert house_edge(SZ, bet) == Fraction(1, 37), bet


DZ_OPTION_EDGES = {
    "basket": Fraction(1, 19),
    "five_adjacent": Fraction(1, 19),
    "color_six": Fraction(1, 19),
    "color_eight": Fraction(1, 19),
    "seven_numbers": Fraction(3, 38),
}
SZ_OPTION_EDGES = {
    "basket": Fraction(1, 37),
    "five_adjacent": Fraction(1, 37),
    "color_six": Fraction(1, 37),
    "color_seven": Fraction(2, 37),
    "seven_numbers": Fraction(2, 37),
}


@pytest.mark.parametrize(
    ("config", "wheel", "edges"),
    [(DZ_ALL, "double_zero", DZ_OPTION_EDGES), (SZ_ALL, "single_zero", SZ_OPTION_EDGES)],
)
def test_house_edge_of_each_table_option_at_default_odds(
    config: Mapping[str, Any], wheel: str, edges: dict[str, Fraction]
) -> None:
    """Default odds (docs/RULES.md): basket 11:1, colour six 5:1, seven 4:1, eight 7:2,
    seven numbers 4:1, five adjacent 35:1 per straight; edges exactly as tabulated."""
    for bet in option_bets(wheel):
        assert house_edge(config, bet) == edges[bet["kind"]], bet


def test_enumerated_edge_equals_the_edge_the_payout_table_implies() -> None:
    """Design: the edge by enumeration equals 1 - (num + den) / den * covered / pockets."""
    for config in (DZ_ALL, SZ_ALL):
        wheel = config["wheel"]
        for bet in standard_bets(wheel) + option_bets(wheel):
            kind = bet["kind"]
            if kind in ("red", "black", "dozen"):
                continue  # not offered at a colour table, NJ (g)
            implied = 1 - player_return(wheel, len(covered(config, bet)), payout_odds(config, kind))
            if kind == "five_adjacent":  # five straights, one of them hits
                implied = 1 - player_return(wheel, 1, (35, 1))
            assert house_edge(config, bet) == implied, bet


# ------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------


def _placeable(config: Mapping[str, Any]) -> list[Bet]:
    wheel = config["wheel"]
    return [b for b in standard_bets(wheel) + option_bets(wheel) if b["kind"] in config["offered"]]


DZ_BETS = _placeable(DZ_ALL)
SZ_BETS = _placeable(SZ_ALL)


@st.composite
def rounds(draw: st.DrawFn) -> tuple[Mapping[str, Any], list[PlacedBet], str]:
    config = draw(st.sampled_from([DZ_ALL, SZ_ALL, DZ, SZ]))
    choices = _placeable(config)
    specs = draw(st.lists(st.sampled_from(choices), max_size=30))
    amounts = draw(st.lists(st.integers(1, 20), min_size=len(specs), max_size=len(specs)))
    placed = [
        PlacedBet(
            bet_id=f"b{i}",
            player=f"p{i % 3}",
            bet=G.check_bet(config, spec, 10 * k),
            amount=10 * k,
        )
        for i, (spec, k) in enumerate(zip(specs, amounts, strict=True))
    ]
    pocket = draw(st.sampled_from(list(G.outcomes(config))))
    return config, placed, pocket


@FAST
@given(rounds())
def test_settlement_is_deterministic_and_bet_by_bet(
    r: tuple[Mapping[str, Any], list[PlacedBet], str],
) -> None:
    """Design: settle is a pure function; each bet settles on its own, in order."""
    config, placed, pocket = r
    outcome = {"pocket": pocket, "spun_from": None}
    first = G.settle(config, placed, outcome)
    assert first == G.settle(config, list(placed), dict(outcome))
    assert first == tuple(s for b in placed for s in G.settle(config, [b], outcome))
    assert [s.bet_id for s in first] == [b.bet_id for b in placed]


@FAST
@given(rounds())
def test_money_paid_is_stake_plus_odds_on_a_win_and_nothing_on_a_loss(
    r: tuple[Mapping[str, Any], list[PlacedBet], str],
) -> None:
    """Integer cents: won pays amount + amount * num // den, lost pays 0, never negative."""
    config, placed, pocket = r
    settlements = G.settle(config, placed, {"pocket": pocket})
    for s, b in zip(settlements, placed, strict=True):
        assert (s.bet_id, s.player, s.amount) == (b.bet_id, b.player, b.amount)
        assert isinstance(s.paid, int) and s.paid >= 0
        won = pocket in covered(config, b.bet)
        assert s.result == ("won" if won else "lost")
        if not won:
            assert s.paid == 0
        elif b.bet["kind"] == "five_adjacent":
            assert s.paid == b.amount // 5 * 36
        else:
            num, den = payout_odds(config, b.bet["kind"])
            assert s.paid == b.amount + b.amount * num // den
            assert s.paid * den == b.amount * (num + den)  # no fraction lost
    total = sum(s.paid for s in settlements)
    assert total >= 0
    assert total == sum(s.paid for s in settlements if s.result == "won")


@FAST
@given(st.sampled_from(DZ_BETS + SZ_BETS), st.randoms(use_true_random=False))
def test_numbers_order_does_not_change_the_bet(bet: Bet, rnd: Any) -> None:
    """Canonical form: the same bet whatever order its numbers come in."""
    config = DZ_ALL if bet in DZ_BETS else SZ_ALL
    shuffled = dict(bet)
    if "numbers" in bet:
        shuffled["numbers"] = list(bet["numbers"])
        rnd.shuffle(shuffled["numbers"])
        assert covered(config, bet) == frozenset(bet["numbers"])
    assert G.check_bet(config, shuffled, 10) == G.check_bet(config, bet, 10)


@FAST
@given(
    st.sampled_from(["double_zero", "single_zero"]),
    st.sets(st.sampled_from([*DZ_OPTIONS, "color_seven"])),
    st.sets(st.sampled_from(sorted(STANDARD_ODDS))),
)
def test_parse_config_is_idempotent_and_honours_nj_g(
    wheel: str, options: set[str], exclude: set[str]
) -> None:
    """Canonical configs re-parse to themselves; NJ (g) holds for every option set."""
    raw = {"wheel": wheel, "options": sorted(options), "exclude": sorted(exclude)}
    try:
        config = G.parse_config(raw)
    except RuleError as err:
        assert err.code == "invalid_config"
        assert ("color_seven" in options and wheel == "double_zero") or (
            "color_eight" in options and wheel == "single_zero"
        )
        return
    assert G.parse_config(config) == config
    offered = set(config["offered"])
    assert options <= offered and not (exclude & offered)
    if options & {"color_six", "color_seven", "color_eight"}:
        assert not {"red", "black"} & offered
    if options & {"color_seven", "color_eight"}:
        assert "dozen" not in offered
    assert ("five" in offered) == (wheel == "double_zero" and "five" not in exclude)
