"""Beat the Dealer (4620.14) through the real table rules and the table actor's adapter:
every dealer roll against every player roll, the order of the round, RNG rolls, a void,
and every refusal with its code."""

from __future__ import annotations

import itertools

import pytest

from events.dice import DiceRolled
from events.tables import PartSettled, RoundEnded
from services.aggregates import RuleError
from services.games.beat_the_dealer import BEAT_THE_DEALER
from services.games.dice_rounds import RollDice
from services.tables.rules import PlaceBet
from tests.unit.games.dice_support import DiceTable

FACES = range(1, 7)
ROLLS = [(a, b) for a in FACES for b in FACES]
"""The 36 equally likely rolls of two dice."""


def beats(dealer: tuple[int, int], player: tuple[int, int]) -> bool:
    """The rule as the text states it: a higher total than the dealer's wins; every tie is
    the dealer's (4620.14(b)(2))."""
    return player[0] + player[1] > dealer[0] + dealer[1]


def test_every_dealer_roll_against_every_player_roll_settles_by_the_rule() -> None:
    table = DiceTable("beat_the_dealer", chips=10**9)
    players = [f"p-{i}" for i in range(len(ROLLS))]
    checked = 0
    for dealer in ROLLS:
        table.open()
        bets = {p: table.bet(p, "beat_the_dealer", 100 + i) for i, p in enumerate(players)}
        table.close_bets()
        [rolled] = table.roll(dealer)
        assert isinstance(rolled, DiceRolled) and rolled.turn == "dealer"
        assert rolled.total == sum(dealer) and rolled.thrown_by == "dealer"
        for i, (p, faces) in enumerate(zip(players, ROLLS, strict=True)):
            events = table.roll(faces, player=p)
            roll, part = events[0], events[1]
            assert isinstance(roll, DiceRolled) and roll.player == p and roll.turn == "player"
            assert roll.thrown_by == "player"
            assert isinstance(part, PartSettled) and part.part == f"player:{p}"
            [s] = part.settlements
            amount = 100 + i
            assert (s.bet_id, s.player, s.amount) == (bets[p], p, amount)
            win = beats(dealer, faces)
            assert (s.result, s.paid) == (("won", 2 * amount) if win else ("lost", 0))
            assert isinstance(events[-1], RoundEnded) == (i == len(players) - 1)
            checked += 1
        assert table.state.phase == "idle"
    assert checked == 1296


def test_a_round_without_bets_ends_at_the_dealers_roll() -> None:
    table = DiceTable("beat_the_dealer")
    table.open()
    table.close_bets()
    events = table.roll((3, 3))
    assert isinstance(events[-1], RoundEnded)
    assert table.state.phase == "idle"


def test_rng_rolls_are_the_servers_and_record_rng() -> None:
    table = DiceTable("beat_the_dealer", "rng", seed=7)
    totals = []
    for _ in range(30):
        table.open()
        table.bet("p-1", "beat_the_dealer", 200)
        table.close_bets()
        [dealer] = table.roll()
        player, part, _end = table.roll(player="p-1")
        for r in (dealer, player):
            assert isinstance(r, DiceRolled) and r.thrown_by == "rng"
            assert len(r.dice) == 2 and all(1 <= d <= 6 for d in r.dice)
            assert r.total == sum(r.dice)
        assert isinstance(dealer, DiceRolled) and isinstance(player, DiceRolled)
        assert isinstance(part, PartSettled)
        assert part.settlements[0].result == ("won" if player.total > dealer.total else "lost")
        totals.append(dealer.total)
    assert len(set(totals)) > 3  # the server rolls: not one fixed total


def test_the_thrower_is_recorded_as_entered() -> None:
    table = DiceTable("beat_the_dealer")
    table.open()
    table.bet("p-1", "beat_the_dealer", 100)
    table.close_bets()
    [dealer] = table.roll((1, 1), thrown_by="cage")
    assert table.refused(RollDice(dice=[2, 2], player="p-1", thrown_by="dealer")) == (
        "invalid_thrower"
    )  # each throws their own roll, 4620.14(b)(2)
    roll = table.roll((2, 2), player="p-1", thrown_by="cage")[0]
    assert isinstance(dealer, DiceRolled) and dealer.thrown_by == "cage"
    assert isinstance(roll, DiceRolled) and roll.thrown_by == "cage"


def test_a_void_returns_the_bets_not_yet_rolled_for_and_the_settled_stand() -> None:
    table = DiceTable("beat_the_dealer")
    table.open()
    a = table.bet("p-1", "beat_the_dealer", 300)
    b = table.bet("p-2", "beat_the_dealer", 400)
    table.close_bets()
    table.roll((2, 2))
    table.roll((6, 6), player="p-1")
    _voided, part, end = table.void()
    assert isinstance(part, PartSettled) and part.part == "void"
    assert [(s.bet_id, s.result, s.paid) for s in part.settlements] == [(b, "returned", 400)]
    assert isinstance(end, RoundEnded)
    assert table.balance == {"p-1": 300, "p-2": 0}
    assert a != b


def test_a_cancelled_bet_lets_the_player_bet_again() -> None:
    table = DiceTable("beat_the_dealer")
    table.open()
    first = table.bet("p-1", "beat_the_dealer", 100)
    table.cancel(first)
    table.bet("p-1", "beat_the_dealer", 500)
    assert table.balance == {"p-1": -500}


def refusals_table() -> DiceTable:
    table = DiceTable("beat_the_dealer", max_bet=400)
    table.open()
    table.bet("p-1", "beat_the_dealer", 100)
    return table


@pytest.mark.parametrize(
    ("setup", "command", "code"),
    [
        ("betting", RollDice(dice=[1, 2]), "bets_open"),
        (
            "betting",
            PlaceBet(player="p-1", bet={"kind": "beat_the_dealer"}, amount=50),
            "already_bet",
        ),
        (
            "betting",
            PlaceBet(player="p-2", bet={"kind": "beat_the_dealer"}, amount=401),
            "over_limit",
        ),
        ("betting", PlaceBet(player="p-2", bet={"kind": "hi_dice"}, amount=100), "invalid_bet"),
        (
            "betting",
            PlaceBet(player="p-2", bet={"kind": "beat_the_dealer", "x": 1}, amount=100),
            "bad_request",
        ),
        ("betting", PlaceBet(player="p-2", bet=[1], amount=100), "bad_request"),
        ("closed", RollDice(dice=[1, 7]), "invalid_die_face"),
        ("closed", RollDice(dice=[0, 3]), "invalid_die_face"),
        ("closed", RollDice(dice=[1, 2, 3]), "wrong_number_of_dice"),
        ("closed", RollDice(dice=[4]), "wrong_number_of_dice"),
        ("closed", RollDice(dice=[1, 2], thrown_by="rng"), "invalid_thrower"),
        ("closed", RollDice(dice=[1, 2], thrown_by="player"), "invalid_thrower"),
        ("closed", RollDice(), "wrong_mode"),
        ("closed", RollDice(dice=[1, 2], player="p-1"), "dealer_rolls_first"),
        (
            "closed",
            PlaceBet(player="p-2", bet={"kind": "beat_the_dealer"}, amount=100),
            "bets_closed",
        ),
        ("rolled", RollDice(dice=[1, 2]), "already_rolled"),
        ("rolled", RollDice(dice=[1, 2], player="p-9"), "no_bet"),
        ("player_rolled", RollDice(dice=[1, 2], player="p-1"), "already_rolled"),
    ],
)
def test_bad_input_is_refused_with_its_code_and_changes_nothing(
    setup: str, command: object, code: str
) -> None:
    table = refusals_table()
    table.bet("p-3", "beat_the_dealer", 100)
    if setup != "betting":
        table.close_bets()
    if setup in ("rolled", "player_rolled"):
        table.roll((3, 4))
    if setup == "player_rolled":
        table.roll((3, 4), player="p-1")
    before = (table.state, list(table.events))
    assert table.refused(command) == code
    assert (table.state, table.events) == before


def test_rng_mode_refuses_entered_dice() -> None:
    table = DiceTable("beat_the_dealer", "rng")
    table.open()
    table.close_bets()
    assert table.refused(RollDice(dice=[1, 2])) == "wrong_mode"
    assert table.refused(RollDice(thrown_by="dealer")) == "wrong_mode"


def test_a_roll_when_idle_is_refused() -> None:
    table = DiceTable("beat_the_dealer")
    assert table.refused(RollDice(dice=[1, 2])) == "round_not_open"


@pytest.mark.parametrize(
    "options", [{"max_bet": 501}, {"min_bet": 0}, {"min_bet": 300, "max_bet": 200}, {"seats": 3}]
)
def test_options_over_the_limit_are_invalid(options: dict[str, int]) -> None:
    with pytest.raises(RuleError) as e:
        BEAT_THE_DEALER.parse_config(options)
    assert e.value.code == "invalid_config"


def test_the_default_limit_is_five_dollars() -> None:
    assert BEAT_THE_DEALER.parse_config({}) == {"max_bet": 500, "min_bet": 1}


def test_a_restart_refolds_the_same_state() -> None:
    table = DiceTable("beat_the_dealer", "rng", seed=3)
    for players in itertools.islice(itertools.cycle([("p-1", "p-2"), ("p-2",), ()]), 9):
        table.open()
        for p in players:
            table.bet(p, "beat_the_dealer", 250)
        table.close_bets()
        table.roll()
        for p in players[:1]:
            table.roll(player=p)
        assert table.refold() == table.state
        if table.state.phase != "idle":
            for p in players[1:]:
                table.roll(player=p)
    assert table.refold() == table.state
