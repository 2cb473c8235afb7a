"""Black Jack, 4620.5 (docs/RULES.md "Black Jack (4620.5)"): one test per rule, with its cite.

Scripted hands run in dealer mode, where the dealer enters every card (``EnterCards``), so
each test chooses its cards; the RNG shoe has its own tests below and in
``test_black_jack_properties.py``."""

from __future__ import annotations

import pytest

from events.black_jack import (
    CardBurnt,
    CardDealt,
    CardsDiscarded,
    DealerPeeked,
    HoleCardRevealed,
    ShoeShuffled,
)
from events.tables import NoMoreBets, PartSettled, RoundEnded, WagerAdded
from services.aggregates import RuleError
from services.games.black_jack import (
    BLACK_JACK,
    Act,
    BurnCard,
    Deal,
    EnterCards,
    Insure,
    Peek,
    Shuffle,
)
from services.games.cards import DECK
from tests.unit.games.bj_support import Table, settlements


def dealt(
    bets: dict[int, int],
    first: list[str],
    up: str,
    second: list[str],
    *,
    tie_option: int = 1,
    decks: int = 1,
    players: dict[int, str] | None = None,
) -> tuple[Table, dict[int, str]]:
    """A dealer-mode table with one bet per space (player ``p<space>`` unless named), dealt
    ``first`` card of each hand, the dealer's ``up``, then ``second`` of each hand."""
    t = Table("dealer", tie_option=tie_option, decks=decks)
    t.open_round()
    ids = {s: t.bet((players or {}).get(s, f"p{s}"), s, a) for s, a in sorted(bets.items())}
    t.step(Deal())
    t.step(EnterCards(cards=(*first, up, *second)))
    return t, ids


def code(t: Table, step: object) -> str:
    return t.refused(step).code


# --- configuration and bets -----------------------------------------------------------------


def test_the_tie_option_is_required_and_one_of_three_4620_5_h() -> None:
    for raw in (
        {},
        {"tie_option": 0},
        {"tie_option": 4},
        {"tie_option": "1"},
        {"tie_option": True},
    ):
        with pytest.raises(RuleError) as e:
            BLACK_JACK.parse_config(raw)
        assert e.value.code == "invalid_config"


def test_the_defaults_and_limits_of_a_table_4620_5_a_f() -> None:
    assert BLACK_JACK.parse_config({"tie_option": 2}) == {
        "tie_option": 2, "decks": 2, "spaces": 7, "max_bet": 500, "min_bet": 2,
    }  # fmt: skip
    for bad in (
        {"decks": 0}, {"decks": 5}, {"spaces": 8}, {"spaces": 0}, {"max_bet": 501},
        {"min_bet": 600}, {"natural_pays": [3, 2]}, {"decks": 2.0},
    ):  # fmt: skip
        with pytest.raises(RuleError) as e:
            BLACK_JACK.parse_config({"tie_option": 1, **bad})
        assert e.value.code == "invalid_config", bad
    config = BLACK_JACK.parse_config({"tie_option": 3, "decks": 4, "spaces": 5, "max_bet": 300})
    assert BLACK_JACK.parse_config(config) == config


def test_the_natural_pays_by_the_option_never_by_a_setting_4620_5_h_2() -> None:
    for option, pays in ((1, [3, 2]), (2, [2, 1]), (3, [2, 1])):
        t = Table("rng", tie_option=option)
        assert t.view()["natural_pays"] == pays


def test_bets_are_on_a_space_of_the_layout_within_the_limits_and_even() -> None:
    t = Table("dealer", spaces=5, min_bet=10, max_bet=400)
    t.open_round()

    def refused(bet: object, amount: int) -> str:
        with pytest.raises(RuleError) as e:
            BLACK_JACK.check_bet(t.config, t.play, bet, amount)
        return e.value.code

    assert refused({"space": 0}, 100) == "invalid_bet"
    assert refused({"space": 6}, 100) == "invalid_bet"  # 4620.5(a)(1): this layout has 5
    assert refused({"space": "1"}, 100) == "bad_request"
    assert refused({"space": 1, "side": "x"}, 100) == "bad_request"
    assert refused([1], 100) == "bad_request"
    assert refused({"space": 1}, 402) == "over_limit"  # 4620.5(f)(2), BJ-12
    assert refused({"space": 1}, 8) == "under_minimum"
    assert refused({"space": 1}, 0) == "bad_request"
    with pytest.raises(RuleError) as e:
        BLACK_JACK.check_bet(t.config, t.play, {"space": 1}, 101)
    assert e.value.code == "invalid_bet" and "odd" in e.value.message
    assert BLACK_JACK.check_bet(t.config, t.play, {"space": 1}, 400) == {"space": 1}


def test_the_regulatory_maximum_is_five_dollars_4620_5_f_2() -> None:
    t = Table("dealer")
    t.open_round()
    with pytest.raises(RuleError) as e:
        BLACK_JACK.check_bet(t.config, t.play, {"space": 1}, 502)
    assert e.value.code == "over_limit"
    assert BLACK_JACK.check_bet(t.config, t.play, {"space": 1}, 500) == {"space": 1}


def test_one_bet_per_space_and_a_player_may_hold_several_4620_5_c_f_1() -> None:
    t = Table("dealer")
    t.open_round()
    b = t.bet("ann", 2, 100)
    t.bet("ann", 3, 100)
    with pytest.raises(RuleError) as e:
        BLACK_JACK.check_bet(t.config, t.play, {"space": 2}, 100)
    assert e.value.code == "space_taken"
    t.cancel(b)
    assert BLACK_JACK.check_bet(t.config, t.play, {"space": 2}, 100) == {"space": 2}
    t.open_round()
    assert BLACK_JACK.check_bet(t.config, t.play, {"space": 3}, 100) == {"space": 3}


# --- the deal -------------------------------------------------------------------------------


def test_a_deal_needs_a_bet_and_begins_with_no_more_bets_and_a_burn_4620_5_g() -> None:
    t = Table("dealer")
    t.open_round()
    assert code(t, Deal()) == "no_bets"
    t.bet("ann", 1, 100)
    events = t.step(Deal())
    assert isinstance(events[0], NoMoreBets)
    assert isinstance(events[1], ShoeShuffled) and events[1].cards == 104
    assert events[2] == CardBurnt(round=1, shuffle=1, position=None, card=None, reason="first_card")
    assert t.step(Deal()) == []  # the bets are closed already: nothing more to record
    t.step(EnterCards(cards=("5C",)))
    assert code(t, Deal()) == "already_dealt"


def test_a_deal_after_the_dealers_own_no_more_bets_goes_on_4620_5_g() -> None:
    t = Table("dealer")
    t.open_round()
    t.bet("ann", 1, 100)
    t.no_more_bets()
    events = t.step(Deal())
    assert [type(e) for e in events] == [ShoeShuffled, CardBurnt]
    t.step(EnterCards(cards=("5C",)))
    assert t.view()["hands"][0]["cards"] == ["5C"]


@pytest.mark.parametrize("mode", ["dealer", "rng"])
def test_a_round_whose_bets_closed_empty_ends_at_the_deal(mode: str) -> None:
    """No bet on the layout when the bets close: the deal ends the round, and the table
    opens the next one (nothing is left waiting for cards)."""
    t = Table(mode)
    t.open_round()
    t.no_more_bets()
    assert [type(e) for e in t.step(Deal())] == [RoundEnded]
    assert t.phase == "idle"
    t.open_round()
    t.bet("ann", 1, 100)
    assert t.step(Deal())


def test_the_deal_goes_from_the_dealers_left_and_the_hole_card_is_face_down_4620_5_g() -> None:
    t = Table("dealer", decks=1)
    t.open_round()
    t.bet("ann", 5, 100)
    t.bet("bob", 2, 100)
    t.step(Deal())
    assert t.view()["awaiting"] == "2.0"
    events = t.step(EnterCards(cards=("2C", "3C", "4C", "5C", "6C")))
    to = [(e.to, e.card, e.face_up) for e in events if isinstance(e, CardDealt)]
    assert to == [
        ("2.0", "2C", True), ("5.0", "3C", True), ("dealer", "4C", True),
        ("2.0", "5C", True), ("5.0", "6C", True), ("dealer", None, False),
    ]  # fmt: skip
    view = t.view()
    assert view["dealer"]["hole"] == "face down" and view["dealer"]["cards"] == ["4C"]
    assert view["turn"] == "2.0"


def test_a_player_natural_is_paid_at_once_3_to_2_under_option_1_4620_5_h_2() -> None:
    t, ids = dealt({1: 100, 2: 100}, ["AS", "9C"], "5D", ["KS", "9D"])
    assert settlements(t.events)[ids[1]] == ("won", 250)
    assert any(isinstance(e, CardsDiscarded) and e.holders == ("1.0",) for e in t.events)
    assert t.view()["turn"] == "2.0"


@pytest.mark.parametrize("option", [2, 3])
def test_a_player_natural_pays_2_to_1_under_options_2_and_3_4620_5_h_2(option: int) -> None:
    t, ids = dealt({1: 100}, ["AS"], "5D", ["QH"], tie_option=option)
    assert settlements(t.events)[ids[1]] == ("won", 300)


@pytest.mark.parametrize(("option", "natural_result"), [(1, "push"), (2, "push"), (3, "lost")])
def test_a_dealer_natural_settles_every_hand_at_once_4620_5_h_1(
    option: int, natural_result: str
) -> None:
    t, ids = dealt({1: 100, 4: 200}, ["AS", "9C"], "KD", ["QH", "9D"], tie_option=option)
    assert t.view()["stage"] == "peek"
    events = t.step(Peek(natural=True, hole="AH"))
    assert isinstance(events[0], DealerPeeked) and events[0].natural
    assert events[1] == HoleCardRevealed(round=1, card="AH", salt=None)
    paid = {1: {"push": 100, "lost": 0}[natural_result], 4: 0}
    assert settlements(events) == {
        ids[1]: (natural_result, paid[1]),
        ids[4]: ("lost", 0),
    }
    assert isinstance(events[-1], RoundEnded)
    # payoff order: from the dealer's right, space 4 before space 1 (4620.5(j))
    parts = [e.part for e in events if isinstance(e, PartSettled)]
    assert parts == ["hand:4.0", "hand:1.0"]


def test_the_dealer_states_the_natural_truthfully_4620_5_h_1() -> None:
    t, _ = dealt({1: 100}, ["9C"], "KD", ["9D"])
    assert code(t, Peek(natural=True, hole="9H")) == "invalid_card"
    assert code(t, Peek(natural=True)) == "bad_request"
    assert code(t, Peek(natural=False, hole="9H")) == "bad_request"
    assert code(t, Act(hand="1.0", action="stand")) == "not_your_turn"  # the peek comes first
    t.step(Peek(natural=False))
    t.step(Act(hand="1.0", action="stand"))
    # turned up, the hole card must not make the natural the dealer denied
    assert code(t, EnterCards(cards=("AH",))) == "invalid_card"
    events = t.step(EnterCards(cards=("7H",)))
    assert settlements(events) == {"b1.1": ("won", 200)}


def test_no_peek_with_a_low_up_card_4620_5_h_1() -> None:
    t, _ = dealt({1: 100}, ["9C"], "6D", ["9D"])
    assert t.view()["stage"] == "players"
    assert code(t, Peek(natural=False)) == "peek_not_due"


# --- insurance (4620.5(m)) ------------------------------------------------------------------


def test_insurance_won_pays_2_to_1_on_a_dealer_natural_4620_5_m() -> None:
    t, ids = dealt({1: 100}, ["9C"], "AD", ["9D"])
    assert t.view()["insurance_offered"]
    events = t.step(Insure(hand="1.0", amount=50, player="p1"))
    assert events == [
        WagerAdded(
            round=1, bet_id=ids[1], wager_id=f"{ids[1]}:insurance", player="p1", amount=50,
            kind="insurance",
        )
    ]  # fmt: skip
    events = t.step(Peek(natural=True, hole="KH"))
    assert settlements(events) == {f"{ids[1]}:insurance": ("won", 150), ids[1]: ("lost", 0)}


def test_insurance_lost_without_a_dealer_natural_4620_5_m() -> None:
    t, ids = dealt({1: 100}, ["9C"], "AD", ["9D"])
    t.step(Insure(hand="1.0", amount=50))
    events = t.step(Peek(natural=False))
    assert settlements(events) == {f"{ids[1]}:insurance": ("lost", 0)}
    assert code(t, Insure(hand="1.0", amount=50)) == "insurance_not_offered"  # after the peek


def test_insurance_only_with_an_ace_up_and_exactly_half_4620_5_m_bj_9() -> None:
    t, _ = dealt({1: 100}, ["9C"], "KD", ["9D"])
    assert code(t, Insure(hand="1.0", amount=50)) == "insurance_not_offered"
    t, _ = dealt({1: 100, 2: 100}, ["9C", "8C"], "AD", ["9D", "8D"])
    assert code(t, Insure(hand="1.0", amount=40)) == "invalid_insurance"
    assert code(t, Insure(hand="1.0", amount=100)) == "invalid_insurance"
    assert code(t, Insure(hand="1.0", amount=50, player="p2")) == "not_your_turn"
    assert code(t, Insure(hand="9.0", amount=50)) == "unknown_hand"
    t.step(Insure(hand="1.0", amount=50))
    assert code(t, Insure(hand="1.0", amount=50)) == "already_insured"


def test_a_natural_may_be_insured_and_under_option_3_wins_only_the_insurance_bj_10() -> None:
    t, ids = dealt({1: 100}, ["AC"], "AD", ["KC"], tie_option=3)
    t.step(Insure(hand="1.0", amount=50))
    events = t.step(Peek(natural=True, hole="QH"))
    assert settlements(events) == {f"{ids[1]}:insurance": ("won", 150), ids[1]: ("lost", 0)}


# --- hit, stand, bust, turns ----------------------------------------------------------------


def test_a_bust_is_lost_at_once_and_its_cards_burnt_4620_5_e_h_3() -> None:
    t, ids = dealt({1: 100, 2: 100}, ["10C", "9C"], "6D", ["6C", "9D"])
    t.step(Act(hand="1.0", action="hit"))
    events = t.step(EnterCards(cards=("KH",)))
    assert settlements(events) == {ids[1]: ("lost", 0)}
    assert events[-1] == CardsDiscarded(round=1, holders=("1.0",), cards=3)
    assert t.view()["turn"] == "2.0"


def test_when_every_hand_busted_the_dealer_discards_unseen_4620_5_i() -> None:
    t, _ids = dealt({1: 100}, ["10C"], "6D", ["6C"])
    t.step(Act(hand="1.0", action="hit"))
    events = t.step(EnterCards(cards=("KH",)))
    assert not any(isinstance(e, HoleCardRevealed) for e in events)
    assert isinstance(events[-1], RoundEnded)
    assert any(isinstance(e, CardsDiscarded) and "dealer" in e.holders for e in events)


def test_turns_go_from_the_dealers_left_and_only_the_owner_acts_4620_5_f_1_h_3() -> None:
    t, _ = dealt({1: 100, 2: 100, 5: 100}, ["10C", "9C", "8C"], "6D", ["7C", "9D", "8D"],
                 players={1: "ann", 2: "ann", 5: "bob"})  # fmt: skip
    assert code(t, Act(hand="2.0", action="stand", player="ann")) == "not_your_turn"
    assert code(t, Act(hand="1.0", action="stand", player="bob")) == "not_your_turn"
    assert code(t, Act(hand="1.0", action="fold")) == "bad_request"
    t.step(Act(hand="1.0", action="stand", player="ann"))
    assert t.view()["turn"] == "2.0"
    t.step(Act(hand="2.0", action="stand"))  # the dealer acts for the hand's owner
    assert t.view()["turn"] == "5.0"


def test_the_dealer_draws_to_17_and_stands_on_soft_17_4620_5_i() -> None:
    t, ids = dealt({1: 100}, ["10C"], "6D", ["8C"])
    t.step(Act(hand="1.0", action="stand"))
    assert t.view()["awaiting"] == "hole"
    t.step(EnterCards(cards=("QD",)))  # 16: must draw
    assert t.view()["awaiting"] == "dealer"
    events = t.step(EnterCards(cards=("AH",)))  # 17 with an ace counted 1: hard 17
    assert settlements(events) == {ids[1]: ("won", 200)}
    t, ids = dealt({1: 100}, ["10C"], "6D", ["8C"])
    t.step(Act(hand="1.0", action="stand"))
    events = t.step(EnterCards(cards=("AD",)))  # soft 17: stays
    assert settlements(events) == {ids[1]: ("won", 200)}
    assert code(t, EnterCards(cards=("2H",))) == "no_card_due"


def test_a_dealer_bust_pays_every_surviving_hand_even_money_4620_5_j() -> None:
    t, ids = dealt({1: 100, 2: 200}, ["10C", "2C"], "6D", ["8C", "3C"])
    t.step(Act(hand="1.0", action="stand"))
    t.step(Act(hand="2.0", action="stand"))
    events = t.step(EnterCards(cards=("10D", "9H")))
    assert settlements(events) == {ids[1]: ("won", 200), ids[2]: ("won", 400)}
    assert [e.part for e in events if isinstance(e, PartSettled)] == ["hand:2.0", "hand:1.0"]


@pytest.mark.parametrize(("option", "result", "paid"), [(1, "push", 100), (2, "lost", 0),
                                                         (3, "lost", 0)])  # fmt: skip
def test_ties_follow_the_option_4620_5_h_j_bj_4(option: int, result: str, paid: int) -> None:
    t, ids = dealt({1: 100}, ["10C"], "9D", ["QC"], tie_option=option)
    t.step(Act(hand="1.0", action="stand"))
    events = t.step(EnterCards(cards=("AH",)))  # dealer 20
    assert settlements(events) == {ids[1]: (result, paid)}


def test_extra_cards_and_cards_before_the_deal_are_refused() -> None:
    t = Table("dealer", decks=1)
    t.open_round()
    t.bet("ann", 1, 100)
    assert code(t, EnterCards(cards=("2C",))) == "no_card_due"
    t.step(Deal())
    assert code(t, EnterCards(cards=("2C", "3C", "4C", "5C"))) == "no_card_due"
    assert code(t, EnterCards(cards=("ZZ",))) == "invalid_card"
    assert code(t, EnterCards(cards=())) == "bad_request"


# --- double down (4620.5(l)) ----------------------------------------------------------------


def test_a_double_adds_the_original_wager_and_takes_one_card_4620_5_l_bj_8() -> None:
    t, ids = dealt({1: 100}, ["6C"], "7D", ["5C"])
    events = t.step(Act(hand="1.0", action="double"))
    assert events[-1] == WagerAdded(
        round=1, bet_id=ids[1], wager_id=f"{ids[1]}:double:1.0", player="p1", amount=100,
        kind="double",
    )  # fmt: skip
    assert BLACK_JACK.debtors(t.play, t.round(), Act(hand="1.0", action="double")) == ["p1"]
    t.step(EnterCards(cards=("2H",)))  # 13 and done: one card only
    assert t.view()["awaiting"] == "hole"
    events = t.step(EnterCards(cards=("10H",)))  # dealer 17
    assert settlements(events) == {ids[1]: ("lost", 0), f"{ids[1]}:double:1.0": ("lost", 0)}


def test_a_double_won_pays_both_wagers() -> None:
    t, ids = dealt({1: 100}, ["6C"], "7D", ["4C"])
    t.step(Act(hand="1.0", action="double"))
    events = t.step(EnterCards(cards=("QH", "10H")))
    assert settlements(events) == {ids[1]: ("won", 200), f"{ids[1]}:double:1.0": ("won", 200)}


def test_a_double_needs_10_or_11_with_aces_as_1_4620_5_l_1_bj_7() -> None:
    t, _ = dealt({1: 100}, ["6C"], "7D", ["3C"])
    assert code(t, Act(hand="1.0", action="double")) == "action_not_allowed"
    t, _ = dealt({1: 100}, ["AC"], "7D", ["9C"])  # 10 with the ace as 1
    t.step(Act(hand="1.0", action="double"))
    t, _ = dealt({1: 100}, ["4C"], "7D", ["5C"])
    t.step(Act(hand="1.0", action="hit"))
    t.step(EnterCards(cards=("2H",)))  # three cards, 11
    assert code(t, Act(hand="1.0", action="double")) == "action_not_allowed"


def test_no_double_after_a_split_4620_5_k_6() -> None:
    t, _ = dealt({1: 100}, ["5C"], "7D", ["5D"])
    t.step(Act(hand="1.0", action="split"))
    t.step(EnterCards(cards=("6H",)))  # 11 on a split hand
    assert code(t, Act(hand="1.0", action="double")) == "action_not_allowed"


# --- splitting pairs (4620.5(k)) ------------------------------------------------------------


def test_a_split_is_of_a_pair_or_two_10_counts_4620_5_k_1() -> None:
    t, _ = dealt({1: 100}, ["9C"], "7D", ["8D"])
    assert code(t, Act(hand="1.0", action="split")) == "action_not_allowed"
    t, ids = dealt({1: 100}, ["10C"], "7D", ["JD"])
    events = t.step(Act(hand="1.0", action="split"))
    assert events[-1] == WagerAdded(
        round=1, bet_id=ids[1], wager_id=f"{ids[1]}:split:1.1", player="p1", amount=100,
        kind="split",
    )  # fmt: skip


def test_split_hands_play_right_first_and_resplit_4620_5_k_2_3() -> None:
    t, ids = dealt({1: 100, 2: 100}, ["8C", "9C"], "7D", ["8D", "9H"])
    t.step(Act(hand="1.0", action="split"))
    assert t.view()["awaiting"] == "1.0"  # the right hand gets its card first
    t.step(EnterCards(cards=("8H",)))
    t.step(Act(hand="1.0", action="split"))  # a new pair: split again
    assert [h["hand"] for h in t.view()["hands"]] == ["1.0", "1.2", "1.1", "2.0"]
    t.step(EnterCards(cards=("10H",)))
    t.step(Act(hand="1.0", action="stand"))
    t.step(EnterCards(cards=("KH",)))  # 1.2: 8H + KH
    t.step(Act(hand="1.2", action="stand"))
    t.step(EnterCards(cards=("2S",)))  # 1.1: 8D + 2S
    t.step(Act(hand="1.1", action="hit"))
    t.step(EnterCards(cards=("QS",)))  # 20
    t.step(Act(hand="1.1", action="stand"))
    t.step(Act(hand="2.0", action="stand"))
    events = t.step(EnterCards(cards=("JS",)))  # dealer 17
    assert settlements(events) == {
        ids[1]: ("won", 200), f"{ids[1]}:split:1.2": ("won", 200),
        f"{ids[1]}:split:1.1": ("won", 200), ids[2]: ("won", 200),
    }  # fmt: skip
    parts = [e.part for e in events if isinstance(e, PartSettled)]
    assert parts == ["hand:2.0", "hand:1.1", "hand:1.2", "hand:1.0"]


def test_split_aces_get_one_card_each_and_are_not_split_again_4620_5_k_4_bj_5() -> None:
    t, ids = dealt({1: 100}, ["AC"], "7D", ["AD"])
    t.step(Act(hand="1.0", action="split"))
    t.step(EnterCards(cards=("AH",)))  # a pair again, but aces are not resplit
    assert code(t, Act(hand="1.0", action="split")) == "action_not_allowed"
    assert code(t, Act(hand="1.0", action="hit")) == "action_not_allowed"
    assert t.view()["awaiting"] == "1.1"
    t.step(EnterCards(cards=("KH",)))  # 21 on a split hand: not a natural (k)(5)
    assert code(t, Act(hand="1.1", action="hit")) == "action_not_allowed"
    assert t.view()["awaiting"] == "hole"
    events = t.step(EnterCards(cards=("QD",)))  # dealer 17
    assert settlements(events) == {ids[1]: ("lost", 0), f"{ids[1]}:split:1.1": ("won", 200)}


# --- the shoe in dealer mode ----------------------------------------------------------------


def test_a_card_the_shoe_can_no_longer_hold_is_refused_4620_5_a_2() -> None:
    t, _ = dealt({1: 100, 2: 100}, ["AC", "AD"], "AH", ["9C", "9D"])
    t.step(Peek(natural=False))
    t.step(Act(hand="1.0", action="stand"))
    t.step(Act(hand="2.0", action="stand"))
    assert code(t, EnterCards(cards=("AS", "AS"))) == "invalid_card"  # one deck: one AS
    t.step(EnterCards(cards=("AS", "7S")))
    assert t.phase == "idle"
    t.open_round()
    t.bet("ann", 1, 100)
    t.step(Deal())
    # the discards are not used again until the box is emptied (4620.5(g))
    assert code(t, EnterCards(cards=("AC",))) == "invalid_card"


def test_the_dealer_shuffles_the_discards_when_the_box_is_empty_4620_5_g_bj_2() -> None:
    t, _ = dealt({1: 100}, ["2C"], "9D", ["3C"])
    assert code(t, Shuffle()) == "box_not_empty"  # 47 cards left: no early reshuffle
    # empty the box with dead cards (two unseen cards stand for the burn and the hole)
    left = [c for c in DECK if c not in ("2C", "3C", "9D", "KS", "QS")]
    for card in left:
        t.step(BurnCard(card=card))
    assert t.view()["box"] == 0
    t.step(Act(hand="1.0", action="hit"))
    assert t.view()["awaiting"] == "shuffle"  # the hit's card must come from a new box
    assert code(t, EnterCards(cards=("4H",))) == "invalid_card"  # the box is empty
    assert code(t, EnterCards(cards=("2C",))) == "invalid_card"
    events = t.step(Shuffle())
    assert events[0] == ShoeShuffled(
        shuffle=2, cards=48, commitments=(), sealed=None, reason="box_empty"
    )  # 52 less the three cards face up in play and the hole card
    assert isinstance(events[1], CardBurnt) and events[1].card is None
    assert code(t, EnterCards(cards=("3C",))) == "invalid_card"  # in play: not in the box
    t.step(EnterCards(cards=("2H",)))
    assert t.view()["box"] == 48 - 2  # the burn and the hit


def test_a_dead_card_is_burnt_4620_5_i_4_bj_11() -> None:
    t, _ = dealt({1: 100}, ["2C"], "9D", ["3C"])
    events = t.step(BurnCard(card="7S"))
    assert events == [CardBurnt(round=1, shuffle=1, position=None, card="7S", reason="dead_card")]
    assert code(t, BurnCard(card="7S")) == "invalid_card"  # that copy is gone


def test_dealer_mode_steps_are_refused_at_an_rng_table() -> None:
    t = Table("rng")
    t.open_round()
    t.bet("ann", 1, 100)
    for step in (EnterCards(cards=("2C",)), Shuffle(), BurnCard(card="2C")):
        assert code(t, step) == "wrong_mode"
    assert code(t, "hit") == "wrong_game"


def test_dealer_mode_waits_for_a_shuffle_before_the_hole_card_of_an_empty_box_4620_5_g() -> None:
    """The hole card is dealt from the box like any other: when the box is empty the
    dealer shuffles the discards first (BJ-2), and the log says so in that order."""
    t = Table("dealer", decks=1)
    t.open_round()
    t.bet("ann", 1, 100)
    t.step(Deal())
    for card in DECK:  # dead cards drain the box to the three the deal still needs
        if t.view()["box"] == 3:
            break
        if card not in ("2C", "3C", "4C"):
            t.step(BurnCard(card=card))
    events = t.step(EnterCards(cards=("2C", "3C", "4C")))
    assert [e.face_up for e in events if isinstance(e, CardDealt)] == [True, True, True]
    assert t.view()["box"] == 0 and t.view()["awaiting"] == "shuffle"
    shuffled = t.step(Shuffle())
    assert isinstance(shuffled[0], ShoeShuffled) and isinstance(shuffled[1], CardBurnt)
    hole = [e for e in shuffled if isinstance(e, CardDealt)]
    assert len(hole) == 1 and not hole[0].face_up and hole[0].shuffle == 2


def test_a_round_stuck_on_a_dealers_wrong_entry_is_voided_and_every_open_wager_returned() -> None:
    """docs/RULES.md "Voiding a round": a peek declared wrong leaves a hole card that cannot
    be entered; voiding returns each wager not yet settled (the double too) and ends the
    round, and the next round deals on from the same box."""
    t, ids = dealt({1: 100, 2: 100}, ["5C", "6C"], "KD", ["5D", "5H"])
    t.step(Peek(natural=False))
    t.step(Act(hand="1.0", action="double"))
    t.step(EnterCards(cards=("9S",)))
    t.step(Act(hand="2.0", action="stand"))
    assert code(t, EnterCards(cards=("AS",))) == "invalid_card"  # a natural, declared none
    box = t.view()["box"]
    events = BLACK_JACK.void(t.config, t.play, t.round())
    for ev in events:
        t.fold(ev)
    assert settlements(events) == {
        ids[1]: ("returned", 100),
        f"{ids[1]}:double:1.0": ("returned", 100),
        ids[2]: ("returned", 100),
    }
    assert isinstance(events[-1], RoundEnded) and t.phase == "idle"
    assert any(isinstance(e, CardsDiscarded) for e in events)
    t.open_round()
    t.bet("p1", 1, 100)
    shuffled = [e for e in t.step(Deal()) if isinstance(e, ShoeShuffled)]
    assert shuffled == [] and t.view()["box"] == box  # no early reshuffle (4620.5(g))
