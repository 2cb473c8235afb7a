"""Chuck-A-Luck (4620.11) and Hazard (4620.12): the three-dice games of one roll.

Each test names the rule it checks. Every bet is settled over all 216 ordered rolls through
the pure ``settle`` and compared with a statement of the rule written here independently
of the game's code; the exact house edges come from the same enumeration and are checked
against the tables in docs/RULES.md (parsed, so a table that drifts fails).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from events.tables import OutcomeRecorded, Settled
from services.aggregates import RuleError
from services.games.base import PlacedBet, Round
from services.games.one_roll import OneRollDice
from services.games.registry import GAMES
from services.games.single_outcome import DrawOutcome, RecordOutcome, SingleOutcome
from services.games.three_dice import (
    CHUCK_A_LUCK,
    HAZARD,
    NUMBERS_FOR_ONE,
    SPECIFIC_TRIPLE_MAX_BET_CENTS,
)

ROLLS = list(itertools.product(range(1, 7), repeat=3))
CHUCK = CHUCK_A_LUCK.parse_config({})
HAZ = HAZARD.parse_config({})

# The payouts as the text states them, written out again here (not imported).
FOR_ONE_SCHEDULE = {4: 60, 5: 30, 6: 18, 7: 12, 8: 8, 9: 6, 10: 6}  # 4620.12(c)(6), 4..10
FOR_ONE_SCHEDULE |= {21 - t: n for t, n in FOR_ONE_SCHEDULE.items()}  # 17..11, symmetric


def rule_error(code: str, fn: Any, *args: Any) -> RuleError:
    with pytest.raises(RuleError) as info:
        fn(*args)
    assert info.value.code == code, info.value
    return info.value


def roll(*faces: int, thrown_by: str = "cage") -> dict[str, Any]:
    return {"dice": list(faces), "total": sum(faces), "thrown_by": thrown_by}


def paid(
    game: OneRollDice,
    config: Mapping[str, Any],
    bet: Any,
    faces: tuple[int, ...],
    amount: int = 100,
) -> int:
    placed = PlacedBet(bet_id="b", player="p", bet=bet, amount=amount)
    [s] = game.settle(config, [placed], roll(*faces))
    assert s.result == ("won" if s.paid else "lost")
    return s.paid


def chuck_rule(number: int, faces: tuple[int, ...], stake: int) -> int:
    """4620.11(b)(1): a number on one die 1 to 1, on two 2 to 1, on three 3 to 1."""
    shown = sum(1 for f in faces if f == number)
    return {0: 0, 1: 2 * stake, 2: 3 * stake, 3: 4 * stake}[shown]


def hazard_rule(bet: Mapping[str, Any], faces: tuple[int, ...], stake: int) -> int:
    """4620.12(c)(1)-(7) as the project reads them (D-2, D-3): what the bet pays back."""
    a, b, c = faces
    triple = a == b == c
    total = a + b + c
    kind = bet["kind"]
    if kind == "specific_triple":
        return 181 * stake if triple and a == bet["face"] else 0
    if kind == "any_triple":
        return 31 * stake if triple else 0
    if kind in ("low", "high", "odd", "even"):
        if triple:
            return 0
        wins = {
            "low": total <= 10,
            "high": total >= 11,
            "odd": total % 2 == 1,
            "even": total % 2 == 0,
        }[kind]
        return 2 * stake if wins else 0
    if kind == "number":  # "N for 1": N times the stake back, stake included
        return FOR_ONE_SCHEDULE[total] * stake if total == bet["total"] else 0
    assert kind == "chuck"
    return chuck_rule(bet["number"], faces, stake)


# ------------------------------------------------------------------------------------------
# Registration, equipment and the roll
# ------------------------------------------------------------------------------------------


def test_both_games_are_registered_under_their_4620_1_names() -> None:
    for name, game in (("chuck_a_luck", CHUCK_A_LUCK), ("hazard", HAZARD)):
        registered = GAMES[name]
        assert isinstance(registered, SingleOutcome) and registered.game is game
        assert game.name == name


def test_three_dice_4620_11_a_2_and_4620_12_a_2() -> None:
    for game in (CHUCK_A_LUCK, HAZARD):
        assert game.draw_bounds(CHUCK) == (6, 6, 6)
        keys = list(game.outcomes(CHUCK))
        assert len(keys) == len(set(keys)) == 216 and keys[0] == "1-1-1" and keys[-1] == "6-6-6"


def test_an_entered_roll_is_three_faces_and_who_threw() -> None:
    for game in (CHUCK_A_LUCK, HAZARD):
        assert game.check_outcome(CHUCK, {"dice": [6, 1, 3]}, None) == roll(6, 1, 3)
        entered = game.check_outcome(CHUCK, {"dice": [2, 2, 5], "thrown_by": "dealer"}, "1-1-1")
        assert entered == roll(2, 2, 5, thrown_by="dealer")
        assert game.entered_source(entered) == "dealer"
        assert game.winning_key(entered) == "2-2-5"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ({"dice": [0, 1, 2]}, "invalid_die_face"),
        ({"dice": [1, 7, 2]}, "invalid_die_face"),
        ({"dice": [1, 2, 2.5]}, "invalid_die_face"),
        ({"dice": [1, True, 2]}, "invalid_die_face"),
        ({"dice": [1, "2", 3]}, "invalid_die_face"),
        ({"dice": [1, 2]}, "wrong_number_of_dice"),
        ({"dice": [1, 2, 3, 4]}, "wrong_number_of_dice"),
        ({"dice": []}, "wrong_number_of_dice"),
        ({"dice": [1, 2, 3], "thrown_by": "player"}, "invalid_thrower"),
        ({"dice": [1, 2, 3], "thrown_by": "rng"}, "invalid_thrower"),
        ({"dice": [1, 2, 3], "thrown_by": "bob"}, "invalid_thrower"),
        ({"dice": [1, 2, 3], "thrown_by": None}, "invalid_thrower"),
        ([1, 2, 3], "bad_request"),
        ({"dice": "1 2 3"}, "bad_request"),
        ({"faces": [1, 2, 3]}, "bad_request"),
        ({"dice": [1, 2, 3], "seen": True}, "bad_request"),
    ],
)
def test_a_bad_roll_has_its_code(raw: Any, code: str) -> None:
    for game in (CHUCK_A_LUCK, HAZARD):
        rule_error(code, game.check_outcome, CHUCK, raw, None)


def test_a_player_never_throws_the_three_dice_4620_11_b_1_4620_12_b() -> None:
    err = rule_error(
        "invalid_thrower",
        HAZARD.check_outcome,
        HAZ,
        {"dice": [1, 2, 3], "thrown_by": "player"},
        None,
    )
    assert "cage or dealer" in err.message and "4620.12" in err.message
    err = rule_error(
        "invalid_thrower",
        CHUCK_A_LUCK.check_outcome,
        CHUCK,
        {"dice": [1, 2, 3], "thrown_by": "rng"},
        None,
    )
    assert "cage or dealer" in err.message and "'rng'" in err.message


def test_a_server_draw_is_a_face_per_die_thrown_by_rng() -> None:
    assert HAZARD.drawn_outcome(HAZ, (0, 5, 2), None) == roll(1, 6, 3, thrown_by="rng")
    rule_error("invalid_outcome", HAZARD.drawn_outcome, HAZ, (0, 6, 2), None)
    rule_error("invalid_outcome", HAZARD.drawn_outcome, HAZ, (0, 1), None)


def table_round(
    phase: str = "no_more_bets", mode: str = "dealer", bets: tuple[PlacedBet, ...] = ()
) -> Round:
    return Round(table="hz-1", number=1, phase=phase, outcome_mode=mode, bets=bets, next_seq=9)  # type: ignore[arg-type]


def test_the_round_records_who_threw_as_the_outcome_source_d_7() -> None:
    game = SingleOutcome(HAZARD)
    bet = PlacedBet(bet_id="b1", player="p", bet={"kind": "any_triple"}, amount=10)
    play = game.initial(HAZ)
    for thrower in ("cage", "dealer"):
        recorded, settled = game.decide(
            HAZ,
            play,
            table_round(bets=(bet,)),
            RecordOutcome(outcome={"dice": [4, 4, 4], "thrown_by": thrower}),
        )
        assert isinstance(recorded, OutcomeRecorded) and recorded.source == thrower
        assert isinstance(settled, Settled) and settled.paid == 310
    drawn = game.prepare(HAZ, play, table_round(mode="rng"), DrawOutcome(), _Fixed([3, 3, 3]))
    recorded, settled = game.decide(HAZ, play, table_round(mode="rng", bets=(bet,)), drawn)
    assert isinstance(recorded, OutcomeRecorded) and recorded.source == "rng"
    assert recorded.outcome == roll(4, 4, 4, thrown_by="rng")


class _Fixed:
    """A Chance whose draws are given (the adapter's only randomness)."""

    def __init__(self, values: list[int]) -> None:
        self.values = values

    def below(self, bound: int) -> int:
        value = self.values.pop(0)
        assert 0 <= value < bound
        return value

    def salt(self) -> str:
        raise AssertionError

    def seal(self, context: str, plain: bytes) -> str:
        raise AssertionError

    def unseal(self, context: str, sealed: str) -> bytes:
        raise AssertionError


# ------------------------------------------------------------------------------------------
# Bets and limits
# ------------------------------------------------------------------------------------------


def test_chuck_a_luck_bets_on_one_or_more_of_the_numbers_1_to_6_4620_11() -> None:
    for n in range(1, 7):
        assert CHUCK_A_LUCK.check_bet(CHUCK, {"number": n}, 500) == {"number": n}
    assert CHUCK_A_LUCK.every_bet() == [{"number": n} for n in range(1, 7)]


@pytest.mark.parametrize(
    ("bet", "code"),
    [
        ({"number": 0}, "invalid_bet"),
        ({"number": 7}, "invalid_bet"),
        ({"number": "3"}, "bad_request"),
        ({"number": True}, "bad_request"),
        ({"number": 3.0}, "bad_request"),
        ({}, "bad_request"),
        ({"number": 3, "kind": "chuck"}, "bad_request"),
        ([3], "bad_request"),
    ],
)
def test_a_bad_chuck_a_luck_bet_has_its_code(bet: Any, code: str) -> None:
    rule_error(code, CHUCK_A_LUCK.check_bet, CHUCK, bet, 100)


HAZARD_BETS = [
    *({"kind": "specific_triple", "face": f} for f in range(1, 7)),
    {"kind": "any_triple"},
    {"kind": "low"},
    {"kind": "high"},
    {"kind": "odd"},
    {"kind": "even"},
    *({"kind": "number", "total": t} for t in range(4, 18)),
    *({"kind": "chuck", "number": n} for n in range(1, 7)),
]


def test_hazard_offers_every_bet_of_4620_12_c_1_to_7() -> None:
    assert HAZARD.every_bet() == HAZARD_BETS
    for bet in HAZARD_BETS:
        assert HAZARD.check_bet(HAZ, bet, 150) == bet
    assert HAZARD.check_bet(HAZ, {"face": 2, "kind": "specific_triple"}, 1) == {
        "kind": "specific_triple",
        "face": 2,
    }


@pytest.mark.parametrize(
    ("bet", "code"),
    [
        ({"kind": "raffle"}, "invalid_bet"),
        ({"kind": "field"}, "invalid_bet"),
        ({"kind": "specific_triple", "face": 7}, "invalid_bet"),
        ({"kind": "specific_triple", "face": 0}, "invalid_bet"),
        ({"kind": "number", "total": 3}, "invalid_bet"),
        ({"kind": "number", "total": 18}, "invalid_bet"),
        ({"kind": "chuck", "number": 7}, "invalid_bet"),
        ({"kind": "specific_triple"}, "bad_request"),
        ({"kind": "specific_triple", "face": "6"}, "bad_request"),
        ({"kind": "number", "total": 10.5}, "bad_request"),
        ({"kind": "low", "total": 10}, "bad_request"),
        ({"kind": "chuck", "face": 2}, "bad_request"),
        ({"kind": 3}, "bad_request"),
        ({}, "bad_request"),
        ("low", "bad_request"),
    ],
)
def test_a_bad_hazard_bet_has_its_code(bet: Any, code: str) -> None:
    rule_error(code, HAZARD.check_bet, HAZ, bet, 100)


def test_five_dollars_a_wager_4620_11_b_2_4620_12_c_7_ii() -> None:
    assert CHUCK_A_LUCK.check_bet(CHUCK, {"number": 1}, 500) == {"number": 1}
    err = rule_error("over_limit", CHUCK_A_LUCK.check_bet, CHUCK, {"number": 1}, 501)
    assert "4620.11(b)(2)" in err.message
    for bet in HAZARD_BETS[6:]:
        assert HAZARD.check_bet(HAZ, bet, 500) == bet
        err = rule_error("over_limit", HAZARD.check_bet, HAZ, bet, 501)
        assert "4620.12(c)(7)(ii)" in err.message


def test_a_specific_triple_is_at_most_150_cents_4620_12_c_1_and_c_7_ii() -> None:
    assert SPECIFIC_TRIPLE_MAX_BET_CENTS == 150
    bet = {"kind": "specific_triple", "face": 6}
    assert HAZARD.check_bet(HAZ, bet, 150) == bet
    for amount in (151, 500, 501):
        err = rule_error("over_limit", HAZARD.check_bet, HAZ, bet, amount)
        assert "4620.12(c)(1), (c)(7)(ii)" in err.message
    # Any triple is not a specific triple: its limit is $5.
    assert HAZARD.check_bet(HAZ, {"kind": "any_triple"}, 500) == {"kind": "any_triple"}
    # A lower table maximum applies to the specific triple too.
    low = HAZARD.parse_config({"max_bet": 100})
    rule_error("over_limit", HAZARD.check_bet, low, bet, 101)


def test_table_limits_may_be_lower_never_higher() -> None:
    for game in (CHUCK_A_LUCK, HAZARD):
        config = game.parse_config({"max_bet": 200, "min_bet": 25})
        assert config == {"min_bet": 25, "max_bet": 200}
        assert game.parse_config({}) == {"min_bet": 1, "max_bet": 500}
        bet = game.every_bet()[-1]
        rule_error("over_limit", game.check_bet, config, bet, 201)
        rule_error("under_minimum", game.check_bet, config, bet, 24)
        for amount in (0, -5, 2.5, "100", True):
            rule_error("bad_request", game.check_bet, config, bet, amount)
        for raw in ({"max_bet": 501}, {"max_bet": 0}, {"min_bet": 300, "max_bet": 200}):
            rule_error("invalid_config", game.parse_config, raw)
        err = rule_error("invalid_config", game.parse_config, {"odds": {"low": 2}})
        assert "odds" in err.message
        rule_error("invalid_config", game.parse_config, {"allow_several_spaces": True})


def test_any_whole_cent_stake_pays_whole_cents() -> None:
    """Every odds is a whole number to 1, so an odd stake needs no rounding."""
    assert paid(HAZARD, HAZ, {"kind": "number", "total": 4}, (1, 1, 2), amount=7) == 7 * 60
    assert paid(CHUCK_A_LUCK, CHUCK, {"number": 5}, (5, 5, 1), amount=3) == 9


# ------------------------------------------------------------------------------------------
# Settlement over every roll
# ------------------------------------------------------------------------------------------


def test_every_chuck_a_luck_bet_over_every_roll_4620_11_b_1() -> None:
    for bet in CHUCK_A_LUCK.every_bet():
        for faces in ROLLS:
            assert paid(CHUCK_A_LUCK, CHUCK, bet, faces, 100) == chuck_rule(
                bet["number"], faces, 100
            )


def test_every_hazard_bet_over_every_roll_4620_12_c() -> None:
    for bet in HAZARD_BETS:
        for faces in ROLLS:
            assert paid(HAZARD, HAZ, bet, faces, 100) == hazard_rule(bet, faces, 100), (bet, faces)


def test_low_high_odd_and_even_lose_on_any_triple_4620_12_c_3_to_5() -> None:
    for face in range(1, 7):
        for kind in ("low", "high", "odd", "even"):
            assert paid(HAZARD, HAZ, {"kind": kind}, (face,) * 3) == 0
    assert paid(HAZARD, HAZ, {"kind": "low"}, (1, 1, 2)) == 200
    assert paid(HAZARD, HAZ, {"kind": "high"}, (6, 6, 5)) == 200


def test_a_triple_counts_for_the_numbers_bet_d_3() -> None:
    assert paid(HAZARD, HAZ, {"kind": "number", "total": 6}, (2, 2, 2)) == 18 * 100
    assert paid(HAZARD, HAZ, {"kind": "number", "total": 9}, (3, 3, 3)) == 6 * 100


def test_n_for_1_gives_back_n_stakes_in_all_d_2() -> None:
    assert NUMBERS_FOR_ONE == FOR_ONE_SCHEDULE
    for total, n in FOR_ONE_SCHEDULE.items():
        faces = next(f for f in ROLLS if sum(f) == total)
        assert paid(HAZARD, HAZ, {"kind": "number", "total": total}, faces, 100) == n * 100


def test_a_specific_triple_180_to_1_any_triple_30_to_1() -> None:
    assert paid(HAZARD, HAZ, {"kind": "specific_triple", "face": 5}, (5, 5, 5), 150) == 181 * 150
    assert paid(HAZARD, HAZ, {"kind": "specific_triple", "face": 5}, (4, 4, 4), 150) == 0
    assert paid(HAZARD, HAZ, {"kind": "any_triple"}, (4, 4, 4), 10) == 310


def test_settle_refuses_a_bet_or_roll_of_another_game() -> None:
    bet = PlacedBet(bet_id="b", player="p", bet={"space": "seven"}, amount=1)
    rule_error("invalid_bet", HAZARD.settle, HAZ, [bet], roll(1, 2, 3))
    rule_error("invalid_bet", CHUCK_A_LUCK.settle, CHUCK, [bet], roll(1, 2, 3))
    rule_error("invalid_outcome", HAZARD.settle, HAZ, [], roll(1, 2))
    rule_error("invalid_outcome", HAZARD.settle, HAZ, [], {"pocket": "17"})


def test_money_is_conserved_in_a_seeded_round() -> None:
    """Each bet comes back exactly once, in order; the round's totals are their sums."""
    rng = random.Random(20261201)
    for game, config, rule in (
        (HAZARD, HAZ, lambda b, f, a: hazard_rule(b, f, a)),
        (CHUCK_A_LUCK, CHUCK, lambda b, f, a: chuck_rule(b["number"], f, a)),
    ):
        adapter = SingleOutcome(game)
        for _ in range(30):
            bets = []
            for i in range(rng.randint(0, 40)):
                bet = rng.choice(game.every_bet())
                limit = 150 if bet.get("kind") == "specific_triple" else 500
                amount = rng.randint(1, limit)
                bets.append(
                    PlacedBet(
                        bet_id=f"b{i}",
                        player=f"p-{i % 5}",
                        bet=game.check_bet(config, bet, amount),
                        amount=amount,
                    )
                )
            faces = rng.choice(ROLLS)
            _, settled = adapter.decide(
                config,
                adapter.initial(config),
                table_round(bets=tuple(bets)),
                RecordOutcome(outcome={"dice": list(faces)}),
            )
            assert isinstance(settled, Settled)
            assert [s.bet_id for s in settled.settlements] == [b.bet_id for b in bets]
            assert [s.amount for s in settled.settlements] == [b.amount for b in bets]
            assert settled.wagered == sum(b.amount for b in bets)
            assert settled.paid == sum(s.paid for s in settled.settlements)
            assert [s.paid for s in settled.settlements] == [
                rule(b.bet, faces, b.amount) for b in bets
            ]


# ------------------------------------------------------------------------------------------
# House edges
# ------------------------------------------------------------------------------------------


def enumerated_edge(
    game: OneRollDice, config: Mapping[str, Any], bet: Mapping[str, Any]
) -> tuple[Fraction, int]:
    """The house edge of ``bet`` over the 216 rolls, each settled by the pure ``settle``,
    and on how many rolls it wins."""
    back = 0
    wins = 0
    for faces in ROLLS:
        got = paid(game, config, bet, faces, 1)
        back += got
        wins += got > 0
    return 1 - Fraction(back, len(ROLLS)), wins


ROW = re.compile(
    r"^\| `(?P<bet>\{[^`]+\})` \| (?P<pays>[^|]+) \| (?P<wins>\d+) \| (?P<edge>-?\d+/\d+) \| "
    r"(?P<pct>-?[\d.]+) % \|$"
)


def rules_rows(project_root: Path, heading: str) -> list[dict[str, str]]:
    text = (project_root / "docs" / "RULES.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [m.groupdict() for line in section.splitlines() if (m := ROW.match(line))]


@pytest.mark.parametrize(
    ("heading", "game", "config"),
    [("Chuck-A-Luck (4620.11)", CHUCK_A_LUCK, CHUCK), ("Hazard (4620.12)", HAZARD, HAZ)],
)
def test_the_house_edges_in_rules_md_are_the_enumerated_ones(
    project_root: Path, heading: str, game: OneRollDice, config: Mapping[str, Any]
) -> None:
    rows = rules_rows(project_root, heading)
    assert [json.loads(r["bet"]) for r in rows] == game.every_bet()
    for row in rows:
        bet = json.loads(row["bet"])
        edge, wins = enumerated_edge(game, config, bet)
        assert game.house_edge(config, bet) == edge
        assert int(row["wins"]) == wins, bet
        assert Fraction(row["edge"]) == edge, bet
        assert row["pct"] == f"{float(edge * 100):.2f}", bet
        assert edge > 0  # every bet favours the house


def test_the_edges_agree_with_closed_forms() -> None:
    assert enumerated_edge(CHUCK_A_LUCK, CHUCK, {"number": 3})[0] == Fraction(17, 216)
    assert enumerated_edge(HAZARD, HAZ, {"kind": "low"})[0] == Fraction(1, 36)
    assert enumerated_edge(HAZARD, HAZ, {"kind": "specific_triple", "face": 1})[0] == 1 - Fraction(
        181, 216
    )
    # D-2: read literally, the outer totals 4-7 and 14-17 share one edge.
    outer = {
        enumerated_edge(HAZARD, HAZ, {"kind": "number", "total": t})[0]
        for t in (4, 5, 6, 7, 14, 15, 16, 17)
    }
    assert outer == {Fraction(1, 6)}
