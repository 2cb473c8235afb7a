"""Search for the Queen of Hearts (services/raffles/queen_of_hearts.py), 4620.23."""

from __future__ import annotations

import hashlib

import pytest

from events.raffles import CardRevealed, DrawingHeld, PrizeAwarded, ProfitKept, RaffleEnded
from services.aggregates import RuleError
from services.raffles import queen_of_hearts as qoh
from services.raffles import tickets
from services.raffles.state import HoldDrawing, RevealCard, SellTicket
from tests.unit.raffles.support import (
    DAY,
    NOW,
    SALTS,
    Raffle,
    of_type,
    qoh_config,
    refused,
    server_board,
)


def week(r: Raffle, tickets_sold: int, *draws: int, now: int = NOW) -> list[int]:
    """Sell a week's tickets one by one and hold its drawing; the winners' serials."""
    for _ in range(tickets_sold):
        r.sell(1, now=now)
    held = of_type(r.draw(*(draws or (0,)), now=now), DrawingHeld)[0]
    return [w.serial for w in held.winners]


def test_the_deck_is_52_cards_and_two_jokers() -> None:
    """4620.23(a)."""
    assert len(qoh.DECK) == len(set(qoh.DECK)) == qoh.POSITIONS == 54
    assert sum(c in qoh.JOKERS for c in qoh.DECK) == 2
    assert qoh.QUEEN_OF_HEARTS in qoh.DECK


@pytest.mark.parametrize(
    ("card", "odds"),
    [
        ("2C", 4),
        ("5H", 4),
        ("6D", 6),
        ("9S", 6),
        ("10H", 8),
        ("JC", 8),
        ("KD", 8),
        ("AS", 10),
        ("JK2", 15),
        ("QS", 20),
        ("QD", 20),
    ],
)
def test_consolation_is_at_least_the_odds_of_b_8_on_the_ticket_price(card: str, odds: int) -> None:
    """4620.23(b)(8): 2-5 4:1, 6-9 6:1, 10/J/K 8:1, ace 10:1, joker 15:1, other queens 20:1,
    read as odds on the price of one ticket (docs/RULES.md)."""
    r = Raffle("queen_of_hearts", qoh_config())
    r.method()
    week(r, 3)
    events = r.run(RevealCard(now_ms=NOW, position=7, card=card))
    (prize,) = of_type(events, PrizeAwarded)
    assert prize.prize == "consolation" and prize.amount == odds * 100
    # The licensee pays it from its share: the pool is untouched (docs/RULES.md).
    assert of_type(events, ProfitKept)[0].amount == -odds * 100
    assert r.state.pool == 300


def test_a_consolation_below_the_odds_is_invalid_config() -> None:
    with pytest.raises(RuleError) as e:
        Raffle("queen_of_hearts", qoh_config(consolations={"ace": 999}))
    assert e.value.code == "invalid_config"
    r = Raffle("queen_of_hearts", qoh_config(consolations={"ace": 2000}))
    assert r.state.config["consolations"]["ace"] == 2000


def test_all_ticket_money_is_the_pool_and_nothing_carries_over() -> None:
    """4620.23(b)(1): all ticket money is the grand prize pool; (b)(5): the week's other
    tickets are discarded, so week 2 draws only among week 2's tickets."""
    r = Raffle("queen_of_hearts", qoh_config())
    r.method()
    assert week(r, 5, 4) == [5]
    r.run(RevealCard(now_ms=NOW, position=1, card="2C"))
    assert r.state.round == 2 and r.state.pool == 500
    assert week(r, 2, 0) == [6]  # the first ticket of week 2, not of week 1
    assert r.state.pool == 700


def test_the_queen_wins_60_percent_and_40_percent_is_kept() -> None:
    """4620.23(b)(7), (b)(10), (b)(11); the odd cent stays with the licensee."""
    r = Raffle("queen_of_hearts", qoh_config(price=101))
    r.method()
    week(r, 3)
    events = r.run(RevealCard(now_ms=NOW, position=54, card="QH"))
    (revealed,) = of_type(events, CardRevealed)
    assert revealed.queen_of_hearts and revealed.serial == 1
    (grand,) = of_type(events, PrizeAwarded)
    (kept,) = of_type(events, ProfitKept)
    assert grand.prize == "grand" and grand.amount == 303 * 60 // 100 == 181
    assert kept.amount == 122
    assert of_type(events, RaffleEnded) and r.state.ended
    assert refused(r, SellTicket(count=1, amount=101, now_ms=NOW)) == "raffle_ended"


def test_three_drawings_in_weeks_1_and_26_search_in_draw_order() -> None:
    """4620.23(b)(3)."""
    r = Raffle("queen_of_hearts", qoh_config(triple_draws=True))
    r.method()
    assert week(r, 5, 4, 0, 1) == [5, 1, 3]
    order = []
    for position in (1, 2, 3):
        (c,) = of_type(
            r.run(RevealCard(now_ms=NOW, position=position, card=f"{position + 1}C")), CardRevealed
        )
        order.append(c.serial)
    assert order == [5, 1, 3]
    others = [c for c in qoh.DECK if c not in ("QH", "2C", "3C", "4C")]
    for n in range(2, 26):
        assert len(week(r, 1)) == 1
        r.run(RevealCard(now_ms=NOW, position=n + 2, card=others[n]))
    assert r.state.round == 26
    assert len(week(r, 3, 0, 0, 0)) == 3


def test_the_queen_found_by_the_first_of_three_ends_the_search() -> None:
    r = Raffle("queen_of_hearts", qoh_config(triple_draws=True))
    r.method()
    week(r, 3, 0, 0, 0)
    r.run(RevealCard(now_ms=NOW, position=9, card="QH"))
    assert r.state.ended and r.state.searchers == ()


def test_a_revealed_position_cannot_be_picked_again() -> None:
    r = Raffle("queen_of_hearts", qoh_config())
    r.method()
    week(r, 1)
    r.run(RevealCard(now_ms=NOW, position=12, card="7D"))
    week(r, 1)
    assert refused(r, RevealCard(now_ms=NOW, position=12, card="8D")) == "position_revealed"
    assert refused(r, RevealCard(now_ms=NOW, position=13, card="7D")) == "card_revealed"
    assert refused(r, RevealCard(now_ms=NOW, position=55, card="8D")) == "invalid_position"
    assert refused(r, RevealCard(now_ms=NOW, position=13, card="1D")) == "invalid_card"


def test_searches_come_after_a_drawing_and_before_the_next() -> None:
    r = Raffle("queen_of_hearts", qoh_config())
    r.method()
    assert refused(r, RevealCard(now_ms=NOW, position=1, card="2C")) == "no_search_pending"
    week(r, 1)
    r.sell(1)
    assert refused(r, HoldDrawing(now_ms=NOW, draws=(0,))) == "search_pending"


def test_a_server_board_is_committed_and_every_reveal_checks() -> None:
    """docs/RULES.md: commitments sha256(salt:position:card) published at opening."""
    cards, commitments = server_board()
    r = Raffle("queen_of_hearts", qoh_config(board="server"), commitments)
    board = r.state.config["board"]
    assert board["commitments"] == list(commitments)
    assert board["root"] == hashlib.sha256("".join(commitments).encode()).hexdigest()
    r.method()
    week(r, 2)
    wrong = RevealCard(now_ms=NOW, position=3, card=cards[4], salt=SALTS[2])
    assert refused(r, wrong) == "board_mismatch"
    (c,) = of_type(
        r.run(RevealCard(now_ms=NOW, position=3, card=cards[2], salt=SALTS[2])), CardRevealed
    )
    # Anyone can check a reveal against the opening event.
    assert hashlib.sha256(f"{c.salt}:{c.position}:{c.card}".encode()).hexdigest() == commitments[2]


def test_a_server_board_needs_its_54_commitments() -> None:
    with pytest.raises(RuleError) as e:
        Raffle("queen_of_hearts", qoh_config(board="server"), ("ab" * 32,) * 3)
    assert e.value.code == "invalid_config"
    with pytest.raises(RuleError):
        qoh.commit((*qoh.DECK[:-1], "QH"), SALTS)


def test_the_54th_pick_is_the_queen_on_a_physical_board() -> None:
    """Every card is revealed at most once, so after 53 other cards the queen is left."""
    r = Raffle("queen_of_hearts", qoh_config())
    r.method()
    others = [c for c in qoh.DECK if c != "QH"]
    for position, card in enumerate(others, start=1):
        week(r, 1)
        r.run(RevealCard(now_ms=NOW, position=position, card=card))
    week(r, 1)
    for card in others[:3]:
        assert refused(r, RevealCard(now_ms=NOW, position=54, card=card)) == "card_revealed"
    r.run(RevealCard(now_ms=NOW, position=54, card="QH"))
    assert r.state.ended and len(r.state.revealed) == 54


def test_weekly_sales_are_for_the_week_after_the_last_drawing() -> None:
    """4620.22(b)(9) with 4620.23(b)(3): the week's drawing is due a week after the last."""
    r = Raffle("queen_of_hearts", qoh_config(first_drawing_at=NOW + 200 * DAY))
    assert refused(r, SellTicket(count=1, amount=100, now_ms=NOW)) == "too_early"
    r.sell(1, now=NOW + 20 * DAY)
    r.method()
    r.draw(0, now=NOW + 200 * DAY)
    assert qoh.scheduled_ms(r.state) == NOW + 207 * DAY


def test_a_sale_that_would_push_the_grand_prize_over_its_limit_is_refused() -> None:
    r = Raffle("queen_of_hearts", qoh_config(price=1000, max_single_prize=1200))
    r.sell(2)  # 60 % of 2000 = 1200
    assert refused(r, SellTicket(count=1, amount=1000, now_ms=NOW)) == "prize_over_limit"
    assert tickets.DEFAULT_MAX_SINGLE_PRIZE > 1200
