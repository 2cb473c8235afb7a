"""Over and Under Seven (4620.13; "Under and Over Seven" in 4620.1(h)).

Each test names the rule it checks. Every space is settled over all 36 ordered rolls of two
dice through the pure ``settle`` and compared with the rule as written here; the exact
house edges come from that enumeration and are checked against docs/RULES.md (parsed).
One space per player per roll is checked through the table's own rules (``decide``).
"""

from __future__ import annotations

import itertools
import json
import random
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from events.tables import OutcomeRecorded, Settled
from services.aggregates import RuleError
from services.games.base import PlacedBet, Round
from services.games.over_under_seven import ALLOW_SEVERAL_SPACES, OVER_UNDER_SEVEN, SPACES
from services.games.registry import GAMES
from services.games.single_outcome import RecordOutcome, SingleOutcome
from services.night import parse_night
from services.tables.rules import (
    CallNoMoreBets,
    CancelBet,
    OpenRound,
    OpenTable,
    PlaceBet,
    TableState,
    decide,
    fold,
)
from tests.conftest import night_doc

G = OVER_UNDER_SEVEN
CONFIG = G.parse_config({})
ROLLS = list(itertools.product(range(1, 7), repeat=2))


def rule_error(code: str, fn: Any, *args: Any) -> RuleError:
    with pytest.raises(RuleError) as info:
        fn(*args)
    assert info.value.code == code, info.value
    return info.value


def rule(space: str, faces: tuple[int, ...], stake: int) -> int:
    """4620.13(b)(1): under 7 wins on 2-6 at 1 to 1, over 7 on 8-12 at 1 to 1, 7 at 4 to 1."""
    total = sum(faces)
    if space == "under_7":
        return 2 * stake if total in (2, 3, 4, 5, 6) else 0
    if space == "over_7":
        return 2 * stake if total in (8, 9, 10, 11, 12) else 0
    return 5 * stake if total == 7 else 0


def paid(space: str, faces: tuple[int, ...], stake: int = 100) -> int:
    bet = PlacedBet(bet_id="b", player="p", bet={"space": space}, amount=stake)
    outcome = {"dice": list(faces), "total": sum(faces), "thrown_by": "player"}
    [s] = G.settle(CONFIG, [bet], outcome)
    return s.paid


def test_one_game_under_both_names_4620_1_h_and_4620_13() -> None:
    registered = GAMES["under_and_over_seven"]
    assert isinstance(registered, SingleOutcome) and registered.game is G
    assert "over_and_under_seven" not in GAMES  # an alias, never a second game
    doc = night_doc("org-a")
    doc["license"] = {**doc["license"], "games": ["over_and_under_seven"]}
    doc["tables"] = [
        {"id": "ou-1", "game": "over_and_under_seven"},
        {"id": "ou-2", "game": "under_and_over_seven", "outcome_mode": "rng"},
    ]
    night = parse_night(doc)
    assert night.games == ("under_and_over_seven",)
    assert [t.game for t in night.tables] == ["under_and_over_seven"] * 2
    assert night.tables[0].config == {"min_bet": 1, "max_bet": 500, ALLOW_SEVERAL_SPACES: False}


def test_two_dice_thrown_by_the_player_the_dealer_or_the_cage_4620_13_b_1() -> None:
    assert G.draw_bounds(CONFIG) == (6, 6)
    assert len(set(G.outcomes(CONFIG))) == 36
    for who in ("player", "dealer", "cage"):
        outcome = G.check_outcome(CONFIG, {"dice": [3, 4], "thrown_by": who}, None)
        assert outcome == {"dice": [3, 4], "total": 7, "thrown_by": who}
        assert G.entered_source(outcome) == who
    assert G.check_outcome(CONFIG, {"dice": [1, 1]}, None)["thrown_by"] == "dealer"
    assert G.drawn_outcome(CONFIG, (5, 5), None) == {
        "dice": [6, 6],
        "total": 12,
        "thrown_by": "rng",
    }
    assert G.winning_key({"dice": [6, 6], "total": 12, "thrown_by": "rng"}) == "6-6"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ({"dice": [0, 3]}, "invalid_die_face"),
        ({"dice": [3, 7]}, "invalid_die_face"),
        ({"dice": [3]}, "wrong_number_of_dice"),
        ({"dice": [3, 4, 5]}, "wrong_number_of_dice"),
        ({"dice": [3, 4], "thrown_by": "rng"}, "invalid_thrower"),
        ({"dice": [3, 4], "thrown_by": "croupier"}, "invalid_thrower"),
        ({"total": 7}, "bad_request"),
        (7, "bad_request"),
    ],
)
def test_a_bad_roll_has_its_code(raw: Any, code: str) -> None:
    rule_error(code, G.check_outcome, CONFIG, raw, None)


def test_the_three_spaces_4620_13_a_3() -> None:
    assert list(SPACES) == ["under_7", "seven", "over_7"]
    assert G.every_bet() == [{"space": s} for s in SPACES]
    for s in SPACES:
        assert G.check_bet(CONFIG, {"space": s}, 500) == {"space": s}


@pytest.mark.parametrize(
    ("bet", "amount", "code"),
    [
        ({"space": "7"}, 100, "invalid_bet"),
        ({"space": "field"}, 100, "invalid_bet"),
        ({"space": 7}, 100, "bad_request"),
        ({}, 100, "bad_request"),
        ({"space": "seven", "number": 7}, 100, "bad_request"),
        (["seven"], 100, "bad_request"),
        ({"space": "seven"}, 501, "over_limit"),
        ({"space": "seven"}, 0, "bad_request"),
    ],
)
def test_a_bad_bet_has_its_code(bet: Any, amount: int, code: str) -> None:
    rule_error(code, G.check_bet, CONFIG, bet, amount)


def test_limits_5_dollars_lower_only_4620_13_b_2() -> None:
    err = rule_error("over_limit", G.check_bet, CONFIG, {"space": "over_7"}, 501)
    assert "4620.13(b)(2)" in err.message
    low = G.parse_config({"max_bet": 100, "min_bet": 10, ALLOW_SEVERAL_SPACES: True})
    assert low == {"min_bet": 10, "max_bet": 100, ALLOW_SEVERAL_SPACES: True}
    rule_error("over_limit", G.check_bet, low, {"space": "over_7"}, 101)
    rule_error("under_minimum", G.check_bet, low, {"space": "over_7"}, 9)
    for raw in ({"max_bet": 600}, {ALLOW_SEVERAL_SPACES: "yes"}, {"spaces": 2}):
        rule_error("invalid_config", G.parse_config, raw)


def test_every_space_over_every_roll_4620_13_b_1() -> None:
    for space in SPACES:
        for faces in ROLLS:
            assert paid(space, faces) == rule(space, faces, 100), (space, faces)


def test_money_is_conserved_in_a_seeded_round() -> None:
    rng = random.Random(4620_13)
    adapter = SingleOutcome(G)
    for _ in range(30):
        bets = [
            PlacedBet(
                bet_id=f"b{i}",
                player=f"p-{i}",
                bet={"space": rng.choice(SPACES)},
                amount=rng.randint(1, 500),
            )
            for i in range(rng.randint(0, 30))
        ]
        faces = rng.choice(ROLLS)
        rnd = Round(
            table="ou", number=1, phase="no_more_bets", outcome_mode="dealer", bets=bets, next_seq=5
        )
        recorded, settled = adapter.decide(
            CONFIG,
            adapter.initial(CONFIG),
            rnd,
            RecordOutcome(outcome={"dice": list(faces), "thrown_by": "player"}),
        )
        assert isinstance(recorded, OutcomeRecorded) and recorded.source == "player"
        assert isinstance(settled, Settled)
        assert settled.wagered == sum(b.amount for b in bets)
        assert settled.paid == sum(s.paid for s in settled.settlements)
        assert [s.paid for s in settled.settlements] == [
            rule(b.bet["space"], faces, b.amount) for b in bets
        ]


# ------------------------------------------------------------------------------------------
# One space per player per roll (D-6), through the table's rules
# ------------------------------------------------------------------------------------------


def betting_table(**options: Any) -> TableState:
    state = TableState(table="ou-1")
    for command in (
        OpenTable(game="under_and_over_seven", config=options, outcome_mode="dealer"),
        OpenRound(),
    ):
        state = fold(state, decide(state, command))
    return state


def place(state: TableState, player: str, space: str, amount: int = 100) -> TableState:
    return fold(state, decide(state, PlaceBet(player=player, bet={"space": space}, amount=amount)))


def test_a_second_space_by_one_player_is_refused_d_6() -> None:
    # The table asks this game (and no game of one outcome without the rule) about a bettor.
    assert hasattr(GAMES["under_and_over_seven"], "check_player_bet")
    assert not hasattr(GAMES["roulette"], "check_player_bet")
    state = place(betting_table(), "p-1", "under_7")
    # A bet the dealer places for p-1 is p-1's bet: PlaceBet names the player either way.
    err = rule_error(
        "one_space_per_roll",
        decide,
        state,
        PlaceBet(player="p-1", bet={"space": "seven"}, amount=100),
    )
    assert "4620.13(b)(1)" in err.message and ALLOW_SEVERAL_SPACES in err.message
    # More on the same space, and other players' spaces, are fine.
    state = place(state, "p-1", "under_7", 50)
    state = place(state, "p-2", "over_7")
    state = place(state, "p-3", "seven")
    assert [b.bet["space"] for b in state.bets.values()] == [
        "under_7",
        "under_7",
        "over_7",
        "seven",
    ]


def test_a_cancelled_bet_frees_the_players_space() -> None:
    state = place(betting_table(), "p-1", "under_7")
    [first] = state.bets
    state = fold(state, decide(state, CancelBet(bet_id=first)))
    state = place(state, "p-1", "over_7")
    assert [b.bet["space"] for b in state.bets.values()] == ["over_7"]


def test_a_players_space_is_told_by_their_newest_bet_still_up() -> None:
    """The rule reads the player's newest bet on the layout and no further: their bets
    buried under others' are on that space too, and one taken back does not count."""
    state = place(betting_table(), "p-1", "under_7")
    for _ in range(5):
        state = place(state, "p-2", "over_7")
    rule_error(
        "one_space_per_roll",
        decide,
        state,
        PlaceBet(player="p-1", bet={"space": "seven"}, amount=100),
    )
    newest = list(state.bets)[-1]
    state = fold(state, decide(state, CancelBet(bet_id=newest)))
    # p-2's newest bet still up is again an over_7 one: seven is refused, over_7 taken.
    rule_error(
        "one_space_per_roll",
        decide,
        state,
        PlaceBet(player="p-2", bet={"space": "seven"}, amount=100),
    )
    assert decide(state, PlaceBet(player="p-2", bet={"space": "over_7"}, amount=100))


def test_the_rule_stops_at_the_players_newest_bet() -> None:
    """Of the bets on the layout (newest first), the rule takes only as many as it needs
    to reach the player's newest: a player with thousands of bets this roll does not make
    each further bet walk them all."""
    taken: list[PlacedBet] = []

    def layout(bets: int) -> Any:
        for i in range(bets):
            bet = PlacedBet(bet_id=f"b{i}", player=f"p-{i % 3}", bet={"space": "seven"}, amount=1)
            taken.append(bet)
            yield bet

    G.check_player_bet(CONFIG, {"space": "seven"}, "p-2", layout(10_000))
    assert len(taken) == 3  # p-0's, p-1's, then p-2's newest
    taken.clear()
    rule_error(
        "one_space_per_roll", G.check_player_bet, CONFIG, {"space": "over_7"}, "p-0", layout(10_000)
    )
    assert len(taken) == 1


def test_the_next_roll_starts_afresh() -> None:
    state = place(betting_table(), "p-1", "under_7")
    state = fold(state, decide(state, CallNoMoreBets()))
    state = fold(state, decide(state, RecordOutcome(outcome={"dice": [1, 2]})))
    state = fold(state, decide(state, OpenRound()))
    state = place(state, "p-1", "seven")
    assert [b.bet["space"] for b in state.bets.values()] == ["seven"]


def test_a_table_may_allow_several_spaces() -> None:
    state = betting_table(allow_several_spaces=True)
    for space in SPACES:
        state = place(state, "p-1", space)
    assert len(state.bets) == 3


# ------------------------------------------------------------------------------------------
# House edges
# ------------------------------------------------------------------------------------------


ROW = re.compile(
    r"^\| `(?P<bet>\{[^`]+\})` \| (?P<pays>[^|]+) \| (?P<wins>\d+) \| (?P<edge>-?\d+/\d+) \| "
    r"(?P<pct>-?[\d.]+) % \|$"
)


def test_the_house_edges_in_rules_md_are_the_enumerated_ones(project_root: Path) -> None:
    text = (project_root / "docs" / "RULES.md").read_text()
    section = text.split("\n## Over and Under Seven (4620.13)\n", 1)[1].split("\n## ", 1)[0]
    rows = [m.groupdict() for line in section.splitlines() if (m := ROW.match(line))]
    assert [json.loads(r["bet"]) for r in rows] == G.every_bet()
    for row in rows:
        space = json.loads(row["bet"])["space"]
        back = sum(paid(space, faces, 1) for faces in ROLLS)
        wins = sum(1 for faces in ROLLS if paid(space, faces, 1))
        edge = 1 - Fraction(back, 36)
        assert G.house_edge(CONFIG, {"space": space}) == edge
        assert int(row["wins"]) == wins
        assert Fraction(row["edge"]) == edge
        assert row["pct"] == f"{float(edge * 100):.2f}"
    assert G.house_edge(CONFIG, {"space": "seven"}) == Fraction(1, 6)
