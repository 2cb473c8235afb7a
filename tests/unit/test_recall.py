"""Game recall's pure builder (services/recall.py): a round as it happened, from its events."""

from __future__ import annotations

from events.base import Event
from events.envelope import GENESIS_HASH, Envelope, seal
from events.tables import (
    BetCancelled,
    BetPlaced,
    BetSettlement,
    NoMoreBets,
    OutcomeRecorded,
    PartSettled,
    RoundEnded,
    RoundOpened,
    RoundVoided,
    Settled,
    TableClosed,
    TableOpened,
    WagerAdded,
)
from services.recall import parse_round_number, recall_round
from services.recall_command import render

STREAM = "table:roulette-1"
TS = 1_764_412_345_000


def sealed(bodies: list[tuple[Event, str]]) -> list[Envelope]:
    """The bodies sealed in a chain, each by its actor, a second apart."""
    out: list[Envelope] = []
    prev = GENESIS_HASH
    for seq, (body, actor) in enumerate(bodies, start=1):
        env = seal(
            body,
            id=f"e{seq}",
            stream=STREAM,
            seq=seq,
            ts=TS + 1000 * seq,
            actor=actor,
            causation=f"c{seq}",
            correlation=None,
            prev_hash=prev,
        )
        out.append(env)
        prev = env.hash
    return out


OPENED = (
    TableOpened(table="roulette-1", game="roulette", config={}, outcome_mode="dealer"),
    "ops:o",
)
DEALER = "dealer:d-1"


def test_a_settled_round_names_its_bets_outcome_settlement_and_who_did_what() -> None:
    events = sealed(
        [
            OPENED,
            (RoundOpened(round=1), DEALER),
            (
                BetPlaced(round=1, bet_id="b1", player="p-1", bet={"kind": "red"}, amount=500),
                "player:p-1",
            ),
            (
                BetPlaced(round=1, bet_id="b2", player="p-2", bet={"kind": "black"}, amount=300),
                "player:p-2",
            ),
            (BetCancelled(round=1, bet_id="b2", player="p-2", amount=300), "player:p-2"),
            (NoMoreBets(round=1), DEALER),
            (OutcomeRecorded(round=1, outcome={"pocket": "3"}, source="dealer"), DEALER),
            (
                Settled(
                    round=1,
                    outcome={"pocket": "3"},
                    settlements=(BetSettlement("b1", "p-1", 500, "won", 1000),),
                    wagered=500,
                    paid=1000,
                ),
                DEALER,
            ),
            (TableClosed(reason="night over"), "ops:o"),
        ]
    )
    got = recall_round("roulette-1", 1, events[1:], events[0])
    assert got["status"] == "settled" and got["game"] == "roulette"
    assert got["opened"] == {"seq": 2, "actor": DEALER, "ts": TS + 2000, "command": "c2"}
    red, black = got["bets"]
    assert red["placed"]["actor"] == "player:p-1" and red["cancelled"] is None
    assert red["settlement"] == [
        {"bet_id": "b1", "player": "p-1", "amount": 500, "result": "won", "paid": 1000}
    ]
    assert black["cancelled"] == {"seq": 5, "actor": "player:p-2", "ts": TS + 5000, "command": "c5"}
    assert black["settlement"] == []
    [outcome] = got["outcomes"]
    assert outcome["outcome"] == {"pocket": "3"} and outcome["source"] == "dealer"
    assert (got["settlement"]["wagered"], got["settlement"]["paid"]) == (500, 1000)
    assert [s["type"] for s in got["steps"]][-2:] == ["Settled", "TableClosed"]
    assert [s["after_end"] for s in got["steps"]][-2:] == [False, True]
    assert (got["first_seq"], got["last_seq"]) == (2, 9)
    text = render(got)
    assert "roulette-1 round 1 (roulette, dealer mode): settled" in text
    assert "wagered $5.00, paid $10.00, house -$5.00" in text
    assert "cancelled by player:p-2" in text


def test_a_voided_round_of_parts_shows_the_void_and_what_was_returned() -> None:
    events = sealed(
        [
            OPENED,
            (RoundOpened(round=4), DEALER),
            (
                BetPlaced(round=4, bet_id="b1", player="p-1", bet={"kind": "bet"}, amount=200),
                "player:p-1",
            ),
            (
                WagerAdded(
                    round=4, bet_id="b1", wager_id="b1.d", player="p-1", amount=200, kind="double"
                ),
                "player:p-1",
            ),
            (
                PartSettled(
                    round=4,
                    part="insurance",
                    settlements=(),
                    wagered=0,
                    paid=0,
                ),
                DEALER,
            ),
            (RoundVoided(round=4, reason="misdeal"), "member_in_charge:m"),
            (
                PartSettled(
                    round=4,
                    part="void",
                    settlements=(
                        BetSettlement("b1", "p-1", 200, "returned", 200),
                        BetSettlement("b1.d", "p-1", 200, "returned", 200),
                    ),
                    wagered=400,
                    paid=400,
                ),
                DEALER,
            ),
            (RoundEnded(round=4), DEALER),
        ]
    )
    got = recall_round("roulette-1", 4, events[1:], events[0])
    assert got["status"] == "voided"
    assert got["voided"]["actor"] == "member_in_charge:m" and got["voided"]["reason"] == "misdeal"
    [bet] = got["bets"]
    assert [w["wager_id"] for w in bet["wagers"]] == ["b1.d"]
    assert [s["result"] for s in bet["settlement"]] == ["returned", "returned"]
    assert [p["part"] for p in got["settlement"]["parts"]] == ["insurance", "void"]
    assert got["ended"]["seq"] == 8


def test_a_round_in_play_has_no_end() -> None:
    events = sealed([OPENED, (RoundOpened(round=1), DEALER)])
    got = recall_round("roulette-1", 1, events[1:], events[0])
    assert got["status"] == "in_play" and got["ended"] is None and got["bets"] == []


def test_round_numbers_are_whole_numbers_from_one() -> None:
    assert parse_round_number("212") == 212
    for bad in ("0", "-1", "1.5", "abc", "", "１", "9" * 17, "9007199254740992"):
        assert parse_round_number(bad) is None, bad
