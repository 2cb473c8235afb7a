"""A server-dealt Queen of Hearts board is dealt by the raffle actor's adapter
(services/raffles/actor.py) when a setup opens the raffle, from the Chance, and carried
sealed in ``RaffleOpened`` (version 2); a reveal opens it from the raffle's state
(docs/ARCHITECTURE.md "Chance", docs/RULES.md 4620.23 rule 18). Seeded Chance throughout."""

from __future__ import annotations

import base64
import random
from collections.abc import Sequence

import pytest

from events.base import Event, from_data, to_data
from events.raffles import CardRevealed, RaffleOpened
from services.aggregates import RuleError
from services.chance import ServerChance, seal_key
from services.raffles import queen_of_hearts as qoh
from services.raffles.actor import RaffleRules, board_context, deal_board, open_board
from services.raffles.state import (
    HoldDrawing,
    RaffleCommand,
    RaffleState,
    RecordDrawingMethod,
    RevealCard,
    SellTicket,
    SetupRaffle,
)
from tests.unit.raffles.support import NOW, qoh_config, standard_config

ORG = "parish-1"
RAFFLE = "qoh-1"
KEY = seal_key(b"test-secret")


def chance(seed: int, key: bytes = KEY) -> ServerChance:
    return ServerChance(key, random.Random(seed))


class Driven:
    """A raffle driven through the adapter as its actor drives it (decide, then fold)."""

    def __init__(self, rules: RaffleRules, raffle: str = RAFFLE) -> None:
        self.rules = rules
        self.state: RaffleState = rules.initial(f"raffle:{raffle}")
        self.log: list[Event] = []

    def run(self, command: RaffleCommand) -> list[Event]:
        events = self.rules.decide(self.state, command)
        for event in events:
            self.state = self.rules.evolve(self.state, event)
        self.log += events
        return events

    def fold(self, events: Sequence[Event]) -> None:
        for event in events:
            self.state = self.rules.evolve(self.state, event)
        self.log += events


def server_setup(**over: object) -> SetupRaffle:
    return SetupRaffle(kind="queen_of_hearts", config=qoh_config(board="server", **over))


def opened(seed: int = 1) -> tuple[Driven, RaffleOpened, ServerChance]:
    c = chance(seed)
    raffle = Driven(RaffleRules(c, ORG))
    (event,) = raffle.run(server_setup())
    assert isinstance(event, RaffleOpened)
    return raffle, event, c


def to_search(raffle: Driven) -> None:
    """A ticket sold and drawn by hand: its winner waits to pick a position."""
    raffle.run(RecordDrawingMethod(method="hand", description="stubs from the drum"))
    raffle.run(SellTicket(count=1, amount=100, now_ms=NOW))
    raffle.run(HoldDrawing(now_ms=NOW, serials=(1,)))


def test_the_adapter_deals_the_board_when_a_setup_opens_the_raffle() -> None:
    raffle, event, c = opened()
    assert event.sealed_board and raffle.state.sealed_board == event.sealed_board
    cards, salts = open_board(c, board_context(ORG, RAFFLE), event.sealed_board)
    assert sorted(cards) == sorted(qoh.DECK) and len(set(salts)) == qoh.POSITIONS
    assert all(len(s) == 32 and int(s, 16) >= 0 for s in salts)
    board = event.config["board"]
    assert board["mode"] == "server" and tuple(board["commitments"]) == qoh.commit(cards, salts)
    assert board["root"] == qoh.board_root(board["commitments"])
    # What the stream stores shows no card: the board is ciphertext.
    stored = to_data(event)
    blob = base64.b64decode(stored["sealed_board"])
    assert b'"cards"' not in blob and b'"QH"' not in blob and b'"salts"' not in blob
    assert "QH" not in str({k: v for k, v in stored.items() if k != "sealed_board"})


def test_the_shuffle_is_fisher_yates_driven_by_below() -> None:
    """From the last position down, each swap index drawn by ``below(i + 1)``: the same
    generator driven by hand gives the same board."""
    cards, _salts = deal_board(chance(7))
    reference = random.Random(7)
    expected = list(qoh.DECK)
    for i in range(len(expected) - 1, 0, -1):
        j = reference.randrange(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert cards == tuple(expected)
    assert deal_board(chance(8))[0] != cards


def test_the_sealed_board_opens_only_with_the_key_and_its_context() -> None:
    _raffle, event, c = opened()
    assert open_board(chance(99), board_context(ORG, RAFFLE), event.sealed_board)
    with pytest.raises(ValueError):
        open_board(
            chance(1, seal_key(b"another-secret")), board_context(ORG, RAFFLE), event.sealed_board
        )
    with pytest.raises(ValueError):
        open_board(c, board_context(ORG, "qoh-2"), event.sealed_board)
    with pytest.raises(ValueError):
        open_board(c, board_context("another-org", RAFFLE), event.sealed_board)
    flipped = bytearray(base64.b64decode(event.sealed_board))
    flipped[-1] ^= 1
    with pytest.raises(ValueError):
        open_board(c, board_context(ORG, RAFFLE), base64.b64encode(flipped).decode())


def test_a_setup_of_an_open_raffle_never_deals_again() -> None:
    raffle, _event, c = opened()
    before = c.rng.getstate()
    assert raffle.run(server_setup()) == []  # the same setup again: nothing, nothing drawn
    assert c.rng.getstate() == before
    with pytest.raises(RuleError) as e:
        raffle.run(server_setup(price=200))
    assert e.value.code == "raffle_exists"
    assert c.rng.getstate() == before


def test_a_server_board_asked_of_a_raffle_opened_without_one_is_raffle_exists() -> None:
    c = chance(3)
    raffle = Driven(RaffleRules(c, ORG))
    raffle.run(SetupRaffle(kind="queen_of_hearts", config=qoh_config()))
    before = c.rng.getstate()
    with pytest.raises(RuleError) as e:
        raffle.run(server_setup())
    assert e.value.code == "raffle_exists" and c.rng.getstate() == before


@pytest.mark.parametrize(
    "setup",
    [
        SetupRaffle(kind="queen_of_hearts", config=qoh_config()),
        SetupRaffle(kind="standard", config=standard_config()),
    ],
    ids=["physical board", "standard raffle"],
)
def test_no_other_setup_draws_or_seals_anything(setup: SetupRaffle) -> None:
    c = chance(4)
    before = c.rng.getstate()
    (event,) = Driven(RaffleRules(c, ORG)).run(setup)
    assert isinstance(event, RaffleOpened) and event.sealed_board == ""
    assert c.rng.getstate() == before


def test_a_sealed_board_given_with_a_physical_board_is_not_recorded() -> None:
    setup = SetupRaffle(kind="queen_of_hearts", config=qoh_config(), sealed_board="c2VhbGVk")
    (event,) = Driven(RaffleRules(chance(5), ORG)).run(setup)
    assert isinstance(event, RaffleOpened) and event.sealed_board == ""


def test_a_reveal_takes_card_and_salt_from_the_sealed_board() -> None:
    raffle, event, c = opened()
    cards, salts = open_board(c, board_context(ORG, RAFFLE), event.sealed_board)
    to_search(raffle)
    # a card named by the sender is ignored on a server board
    revealed = raffle.run(RevealCard(now_ms=NOW, position=9, card="QH"))[0]
    assert isinstance(revealed, CardRevealed)
    assert (revealed.card, revealed.salt) == (cards[8], salts[8])
    assert raffle.state.revealed == {9: cards[8]}


def test_a_new_adapter_folding_the_stream_reveals_the_same_cards() -> None:
    """A restart: another actor (another draw of its generator) folds the events and
    reveals each position as dealt."""
    raffle, event, c = opened(seed=11)
    cards, _salts = open_board(c, board_context(ORG, RAFFLE), event.sealed_board)
    to_search(raffle)
    stored = [from_data(e.NAME, e.VERSION, to_data(e)) for e in raffle.log]
    restarted = Driven(RaffleRules(chance(12), ORG))
    restarted.fold(stored)
    queen = cards.index(qoh.QUEEN_OF_HEARTS) + 1
    first = next(p for p in range(1, qoh.POSITIONS + 1) if p != queen)
    revealed = restarted.run(RevealCard(now_ms=NOW, position=first))[0]
    assert isinstance(revealed, CardRevealed) and revealed.card == cards[first - 1]


def test_a_board_sealed_under_another_secret_is_board_unreadable() -> None:
    raffle, _event, _c = opened()
    to_search(raffle)
    other = RaffleRules(chance(1, seal_key(b"another-secret")), ORG)
    with pytest.raises(RuleError) as e:
        other.decide(raffle.state, RevealCard(now_ms=NOW, position=1))
    assert e.value.code == "board_unreadable"
    moved = RaffleRules(chance(1), "another-org")  # the board is bound to its organization
    with pytest.raises(RuleError) as e:
        moved.decide(raffle.state, RevealCard(now_ms=NOW, position=1))
    assert e.value.code == "board_unreadable"


def test_a_position_off_the_board_is_refused_by_the_rules_unopened() -> None:
    raffle, _event, _c = opened()
    to_search(raffle)
    with pytest.raises(RuleError) as e:
        raffle.run(RevealCard(now_ms=NOW, position=55))
    assert e.value.code == "invalid_position"


def test_a_raffle_opened_at_version_1_has_no_sealed_board() -> None:
    """Version 1 of ``RaffleOpened`` upcasts to ``sealed_board == ""``: its board is the one
    kept in Redis (read by the gateway at a reveal), and the adapter opens nothing."""
    commitments = qoh.commit(qoh.DECK, tuple(f"{i:032x}" for i in range(qoh.POSITIONS)))
    _raffle, event, _c = opened()
    v1 = {k: v for k, v in to_data(event).items() if k != "sealed_board"}
    v1["config"]["board"] = {
        "mode": "server",
        "commitments": list(commitments),
        "root": qoh.board_root(commitments),
    }
    body = from_data("RaffleOpened", 1, v1)
    assert isinstance(body, RaffleOpened) and body.sealed_board == ""
    c = chance(6)
    raffle = Driven(RaffleRules(c, ORG))
    raffle.fold([body])
    assert raffle.state.opened and raffle.state.sealed_board == ""
    to_search(raffle)
    before = c.rng.getstate()
    card = RevealCard(now_ms=NOW, position=1, card=qoh.DECK[0], salt=f"{0:032x}")
    (revealed, *_rest) = raffle.run(card)
    assert isinstance(revealed, CardRevealed) and revealed.card == qoh.DECK[0]
    assert c.rng.getstate() == before
    # and the setup again at start compares with the commitments it has: no deal
    assert raffle.run(server_setup()) == [] and c.rng.getstate() == before
