"""Card notation (services/games/cards.py): rank then suit, jokers only where allowed."""

from __future__ import annotations

import pytest

from services.aggregates import RuleError
from services.games.cards import DECK, JOKER, colour, decks, parse_card, rank, suit


@pytest.mark.parametrize(("raw", "card"), [("as", "AS"), (" 10h ", "10H"), ("qD", "QD")])
def test_a_card_reads_without_regard_to_case_or_spaces(raw: str, card: str) -> None:
    assert parse_card(raw) == card


@pytest.mark.parametrize("raw", ["1S", "10", "AX", "", "JOKER", 10, None, ["AS"]])
def test_what_is_not_a_card_is_invalid_card(raw: object) -> None:
    with pytest.raises(RuleError) as e:
        parse_card(raw)
    assert e.value.code == "invalid_card"


def test_a_long_input_is_not_echoed_in_the_refusal() -> None:
    with pytest.raises(RuleError) as e:
        parse_card("X" * 100_000)
    assert len(e.value.message) < 80


def test_jokers_decks_ranks_and_colours() -> None:
    assert parse_card("joker", jokers=True) == JOKER
    assert len(DECK) == 52 and len(set(DECK)) == 52
    assert sum(decks(4).values()) == 208
    assert rank("10H") == "10" and suit("10H") == "H" and suit(JOKER) is None
    assert colour("AH") == "red" and colour("AS") == "black" and colour(JOKER) is None
