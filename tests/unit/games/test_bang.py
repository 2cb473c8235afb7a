"""Bang (4620.15) through the real table rules and the table actor's adapter: every bet
over every roll (the dealer's and the shooter's), the round of 4620.15(c), big six and big
eight riding across games, the shooter and the dice passing, voids and the table's close,
and every refusal with its code."""

from __future__ import annotations

from typing import Any

import pytest

from events.dice import DicePassed, DiceRolled
from events.tables import BetsReopened, PartSettled, RoundEnded, TableClosed
from services.aggregates import RuleError
from services.games.bang import BANG, PassDice, SeatPlayer, UnseatPlayer
from services.games.dice_rounds import RollDice
from services.tables.rules import CancelBet, PlaceBet
from tests.unit.games.dice_support import DiceTable

FACES = range(1, 7)
ROLLS = [(a, b) for a in FACES for b in FACES]
INSIDE = ("field", "under_seven", "any_seven", "over_seven", "big_six", "big_eight")


def rule(kind: str, total: int, point: int | None) -> tuple[str, int] | None:
    """The bets as 4620.15(d) states them, per unit staked: (result, paid back), or None
    when the roll leaves the bet up. ``point`` None: the dealer's roll, which settles no
    Hi Dice bet (c)(4)."""
    wins: dict[str, set[int]] = {
        "field": {2, 3, 4, 9, 10, 11, 12},
        "under_seven": {2, 3, 4, 5, 6},
        "any_seven": {7},
        "over_seven": {8, 9, 10, 11, 12},
    }
    pays = {"any_seven": 5}
    if kind in wins:
        return ("won", pays.get(kind, 2)) if total in wins[kind] else ("lost", 0)
    if kind in ("big_six", "big_eight"):
        number = 6 if kind == "big_six" else 8
        return ("won", 2) if total == number else ("lost", 0) if total == 7 else None
    assert kind == "hi_dice"
    if point is None:
        return None
    return ("won", 2) if total > point else ("lost", 0)


def seated(mode: str = "dealer", **kw: Any) -> DiceTable:
    table = DiceTable("bang", mode, chips=10**9, **kw)
    for seat, p in ((1, "p-1"), (3, "p-3"), (7, "p-7")):
        table.do(SeatPlayer(seat=seat, player=p))
    return table


def parts(events: list[Any]) -> dict[str, tuple[str, int]]:
    out = {}
    for ev in events:
        if isinstance(ev, PartSettled):
            for s in ev.settlements:
                out[s.bet_id] = (s.result, s.paid)
    return out


def test_every_bet_at_the_dealers_roll_over_every_roll() -> None:
    table = seated()
    for faces in ROLLS:
        table.open()
        bets = {k: table.bet("p-1", k, 100) for k in (*INSIDE, "hi_dice")}
        table.close_bets()
        events = table.roll(faces)
        total = sum(faces)
        settled = parts(events)
        for kind, bet_id in bets.items():
            expected = rule(kind, total, None)
            if expected is None:
                assert bet_id not in settled, (kind, faces)
            else:
                assert settled[bet_id] == (expected[0], 100 * expected[1]), (kind, faces)
        assert isinstance(events[-1], BetsReopened)
        assert table.state.phase == "betting"
        assert table.view["point"] == total
        # finish the game, and take every bet off so the next game starts clean
        table.void()
        table.close()
        table = seated()


def test_every_bet_at_the_shooters_roll_over_every_point_and_roll() -> None:
    """1,296 (point, shooter's roll) pairs: the Hi Dice bet against the point, the inside
    bets placed after the dealer's roll on the shooter's roll."""
    table = DiceTable("bang", chips=10**9)
    table.do(SeatPlayer(seat=1, player="p-1"))
    checked = 0
    for point_faces in ROLLS:
        for faces in ROLLS:
            table.open()
            hi = table.bet("p-1", "hi_dice", 100)
            table.close_bets()
            table.roll(point_faces)
            riding = {b["kind"]: b["bet_id"] for b in table.view["layout"]}
            inside = {
                k: table.bet("p-2", k, 100) for k in INSIDE if k not in riding
            }  # p-2's first bets of each kind
            table.close_bets()
            events = table.roll(faces, player="p-1")
            settled = parts(events)
            point, total = sum(point_faces), sum(faces)
            assert settled[hi] == (("won", 200) if total > point else ("lost", 0)), (
                point_faces,
                faces,
            )
            for kind, bet_id in inside.items():
                expected = rule(kind, total, point)
                if expected is None:
                    assert bet_id not in settled
                else:
                    assert settled[bet_id] == (expected[0], 100 * expected[1])
            assert isinstance(events[-1], RoundEnded)
            table.close()
            table = DiceTable("bang", chips=10**9)
            table.do(SeatPlayer(seat=1, player="p-1"))
            checked += 1
    assert checked == 1296


def test_a_big_six_rides_across_games_until_a_six_and_cannot_come_down() -> None:
    table = seated()
    table.open()
    six = table.bet("p-3", "big_six", 500)
    eight = table.bet("p-3", "big_eight", 500)
    table.close_bets()
    table.roll((2, 3))  # 5: no decision
    assert table.refused(CancelBet(bet_id=six)) == "bet_in_action"
    table.close_bets()
    table.roll((4, 5), player="p-3")  # 9
    # game 2: both ride; another big six by the same player is refused while it rides
    table.open()
    view = {b["bet_id"]: b for b in table.view["layout"]}
    assert view[six]["riding"] and view[six]["in_action"]
    assert table.refused(PlaceBet(player="p-3", bet={"kind": "big_six"}, amount=100)) == (
        "already_bet"
    )
    assert table.refused(CancelBet(bet_id=six)) == "bet_in_action"
    assert table.refused(CancelBet(bet_id=six, player="p-3")) == "bet_in_action"
    table.close_bets()
    events = table.roll((4, 4))  # 8: the big eight wins at game 2's dealer roll
    assert parts(events) == {eight: ("won", 1000)}
    table.close_bets()
    table.roll((5, 6), player="p-7")
    # game 3: the big six is decided by the shooter's 6, in a PartSettled of round 3
    table.open()
    table.close_bets()
    table.roll((1, 2))
    table.close_bets()
    events = table.roll((1, 5), player="p-1")
    [part] = [e for e in events if isinstance(e, PartSettled)]
    assert part.round == 3 and part.settlements[0].bet_id == six
    assert part.settlements[0].result == "won" and part.settlements[0].paid == 1000
    assert table.view["layout"] == []
    assert table.balance == {"p-3": 1000}


def test_a_seven_takes_both_big_bets() -> None:
    table = seated()
    table.open()
    six = table.bet("p-1", "big_six", 200)
    eight = table.bet("p-1", "big_eight", 300)
    table.close_bets()
    assert parts(table.roll((3, 4))) == {six: ("lost", 0), eight: ("lost", 0)}


def test_a_big_bet_placed_after_the_dealers_roll_may_come_down_until_the_shooter_rolls() -> None:
    table = seated()
    table.open()
    hi = table.bet("p-1", "hi_dice", 200)
    table.close_bets()
    table.roll((2, 2))
    late = table.bet("p-1", "big_eight", 200)
    assert table.view["stage"] == "inside_bets"
    table.cancel(late, player="p-1")
    # the Hi Dice bet cannot come down once the point is set
    assert table.refused(CancelBet(bet_id=hi)) == "bet_in_action"
    assert table.refused(PlaceBet(player="p-3", bet={"kind": "hi_dice"}, amount=100)) == (
        "hi_dice_closed"
    )
    assert table.balance == {"p-1": -200}


def test_a_one_roll_bet_settled_by_the_dealers_roll_cannot_be_cancelled_after() -> None:
    table = seated()
    table.open()
    field = table.bet("p-1", "field", 100)
    table.close_bets()
    table.roll((1, 1))  # a field win, paid
    assert table.refused(CancelBet(bet_id=field)) == "unknown_bet"
    # a new field bet for the shooter's roll is allowed (one-roll bets are placed anew, D-12)
    table.bet("p-1", "field", 100)


def test_the_first_shooter_is_the_first_bettor_on_the_dealers_left_then_the_dice_pass() -> None:
    table = seated()
    table.open()
    table.bet("p-7", "field", 100)
    table.bet("p-3", "hi_dice", 100)
    table.bet("unseated", "hi_dice", 100)
    table.close_bets()
    table.roll((3, 3))
    assert table.view["shooter"] == {"seat": 3, "player": "p-3"}
    table.close_bets()
    assert table.refused(RollDice(dice=[1, 1], player="p-7")) == "not_the_shooter"
    assert table.refused(RollDice(dice=[1, 1], player="unseated")) == "not_the_shooter"
    table.roll((1, 1), player="p-3")
    # game 2: the next seated player clockwise (seat 7), no bet needed (D-9)
    table.open()
    assert table.view["shooter"] == {"seat": 7, "player": "p-7"}
    [passed] = table.do(PassDice())  # p-7 declines: seat 1, wrapping round
    assert isinstance(passed, DicePassed) and (passed.from_seat, passed.seat) == (7, 1)
    table.close_bets()
    table.roll((2, 2))
    table.close_bets()
    assert table.refused(RollDice(dice=[1, 1], player="p-7")) == "not_the_shooter"
    table.roll((1, 1), player="p-1")
    # game 3: after seat 1 comes seat 3; p-3 left, so seat 7
    table.do(UnseatPlayer(seat=3))
    table.open()
    assert table.view["shooter"] == {"seat": 7, "player": "p-7"}


def test_no_seated_bettor_means_no_shooter_until_one_is_seated() -> None:
    table = DiceTable("bang")
    table.open()
    table.bet("p-1", "hi_dice", 100)
    table.close_bets()
    table.roll((3, 3))
    table.close_bets()
    assert table.refused(RollDice(dice=[1, 1], player="p-1")) == "no_shooter"
    assert table.refused(PassDice()) == "no_shooter"
    table.do(SeatPlayer(seat=4, player="p-1"))
    assert table.refused(PassDice()) == "no_other_player"
    table.roll((6, 5), player="p-1")
    assert table.balance == {"p-1": 100}


def test_seating_refusals() -> None:
    table = seated(seats=8)
    assert table.refused(SeatPlayer(seat=3, player="p-9")) == "seat_taken"
    assert table.refused(SeatPlayer(seat=4, player="p-1")) == "already_seated"
    assert table.refused(SeatPlayer(seat=9, player="p-9")) == "invalid_seat"
    assert table.refused(SeatPlayer(seat=0, player="p-9")) == "invalid_seat"
    assert table.refused(SeatPlayer(seat="2", player="p-9")) == "bad_request"
    assert table.refused(UnseatPlayer(seat=2)) == "seat_empty"
    assert table.refused(PassDice()) == "round_not_open"


def test_a_void_returns_this_games_bets_and_the_riding_ones_ride_on() -> None:
    table = seated()
    table.open()
    old = table.bet("p-1", "big_six", 100)
    table.close_bets()
    table.roll((2, 3))
    table.close_bets()
    table.roll((2, 3), player="p-1")
    table.open()
    new = table.bet("p-3", "big_eight", 200)
    hi = table.bet("p-3", "hi_dice", 300)
    table.close_bets()
    table.roll((1, 2))
    events = table.void()
    assert parts(events) == {new: ("returned", 200), hi: ("returned", 300)}
    assert [b["bet_id"] for b in table.view["layout"]] == [old]
    assert table.state.phase == "idle"


def test_closing_the_table_returns_every_riding_bet() -> None:
    table = seated()
    table.open()
    six = table.bet("p-1", "big_six", 100)
    eight = table.bet("p-3", "big_eight", 200)
    table.close_bets()
    table.roll((2, 3))
    table.close_bets()
    table.roll((5, 5), player="p-1")
    events = table.close()
    assert parts(events) == {six: ("returned", 100), eight: ("returned", 200)}
    assert isinstance(events[-1], TableClosed)
    assert table.balance == {"p-1": 0, "p-3": 0}


def refusal_table() -> DiceTable:
    table = seated(max_bet=300)
    table.open()
    table.bet("p-1", "field", 100)
    return table


@pytest.mark.parametrize(
    ("stage", "command", "code"),
    [
        ("betting", RollDice(dice=[1, 2]), "bets_open"),
        ("betting", PlaceBet(player="p-2", bet={"kind": "field"}, amount=301), "over_limit"),
        ("betting", PlaceBet(player="p-1", bet={"kind": "field"}, amount=100), "already_bet"),
        ("betting", PlaceBet(player="p-2", bet={"kind": "craps"}, amount=100), "invalid_bet"),
        ("betting", PlaceBet(player="p-2", bet={"kind": "field", "n": 1}, amount=1), "bad_request"),
        ("closed", RollDice(dice=[1, 2], player="p-1"), "dealer_rolls_first"),
        ("closed", RollDice(dice=[7, 2]), "invalid_die_face"),
        ("closed", RollDice(dice=[2]), "wrong_number_of_dice"),
        ("closed", RollDice(dice=[2, 2], thrown_by="nobody"), "invalid_thrower"),
        ("closed", RollDice(), "wrong_mode"),
        ("inside", PlaceBet(player="p-2", bet={"kind": "hi_dice"}, amount=100), "hi_dice_closed"),
        ("inside", RollDice(dice=[1, 2], player="p-1"), "bets_open"),
        ("shooter", RollDice(dice=[1, 2]), "already_rolled"),
        ("shooter", RollDice(dice=[1, 2], player="p-3"), "not_the_shooter"),
        ("shooter", RollDice(dice=[1, 9], player="p-1"), "invalid_die_face"),
        ("shooter", RollDice(dice=[1, 2], player="p-1", thrown_by="dealer"), "invalid_thrower"),
    ],
)
def test_bad_input_is_refused_with_its_code_and_changes_nothing(
    stage: str, command: object, code: str
) -> None:
    table = refusal_table()
    if stage != "betting":
        table.close_bets()
    if stage in ("inside", "shooter"):
        table.roll((2, 2))
    if stage == "shooter":
        table.close_bets()
    before = (table.state, list(table.events))
    assert table.refused(command) == code
    assert (table.state, table.events) == before


def test_rng_rolls_record_rng_and_refuse_entered_dice() -> None:
    table = seated("rng", seed=11)
    table.open()
    table.bet("p-1", "hi_dice", 100)
    table.close_bets()
    assert table.refused(RollDice(dice=[1, 2])) == "wrong_mode"
    [roll, *_] = table.roll()
    assert isinstance(roll, DiceRolled) and roll.thrown_by == "rng" and roll.turn == "dealer"
    table.close_bets()
    [roll, *_] = table.roll(player="p-1")
    assert isinstance(roll, DiceRolled) and roll.thrown_by == "rng" and roll.player == "p-1"


@pytest.mark.parametrize("options", [{"max_bet": 501}, {"seats": 0}, {"seats": 21}, {"x": 1}])
def test_options_out_of_bounds_are_invalid(options: dict[str, int]) -> None:
    with pytest.raises(RuleError) as e:
        BANG.parse_config(options)
    assert e.value.code == "invalid_config"


def test_other_games_steps_are_wrong_game() -> None:
    table = DiceTable("beat_the_dealer")
    assert table.refused(SeatPlayer(seat=1, player="p-1")) == "wrong_game"
    assert table.refused(PassDice()) == "wrong_game"
