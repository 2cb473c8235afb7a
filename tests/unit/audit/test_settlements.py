"""The settlement check: a night of every game, played by the real pure rules, passes;
each kind of tampering with a settlement, an outcome or a roll is named with its stream
and seq (docs/AUDIT.md, "What the audit recomputes")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.audit.settlements import SettlementChecker
from tests.unit.audit.support import index_of, named, night, run, tampered


def test_a_night_of_every_game_settles_as_the_rules_give() -> None:
    envelopes = night()
    checker = run(SettlementChecker(), envelopes)
    assert checker.discrepancies == []
    settling = [e for e in envelopes if e.type in ("Settled", "PartSettled")]
    # every bet of every settlement was recomputed, and every round's end
    assert checker.checked["bets"] == sum(len(e.data["settlements"]) for e in settling)
    assert checker.checked["settlements"] == len(settling)
    assert checker.checked["rounds ended"] == sum(1 for e in envelopes if e.type == "RoundEnded")
    games = {e.data["game"] for e in envelopes if e.type == "TableOpened"}
    assert {"roulette", "black_jack", "bang", "beat_the_dealer", "joker_seven"} <= games
    parts = {e.data["part"].split(":")[0] for e in envelopes if e.type == "PartSettled"}
    assert {"hand", "insurance", "player", "dealer_roll", "shooter_roll", "void", "closing"} <= (
        parts
    )


def _first_bet(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["settlements"][0][field] = value

    return change


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data[key] = value

    return change


def _won(data: dict[str, Any]) -> None:
    bet = data["settlements"][0]
    bet["result"] = "lost" if bet["result"] == "won" else "won"


CASES = [
    # (what, event type, which of them, what it must match, the change, what is named)
    ("a roulette bet's paid", "Settled", 0, {}, _first_bet("paid", 99_999), "paid"),
    ("a roulette round's paid total", "Settled", 1, {}, _set("paid", 1), "paid"),
    ("a roulette round's wagered total", "Settled", 0, {}, _set("wagered", 5), "wagered"),
    ("a wheel bet's result", "Settled", 5, {}, _won, "result"),
    ("a Settled outcome", "Settled", 2, {}, _set("outcome", {"pocket": "00"}), "outcome"),
    ("a voided round's return", "Settled", 0, {"outcome": {}}, _first_bet("paid", 0), "paid"),
    ("a Black Jack hand's paid", "PartSettled", 0, {}, _first_bet("paid", 7), "paid"),
    (
        "a Black Jack insurance's result",
        "PartSettled",
        0,
        {"part": "insurance"},
        _won,
        "result",
    ),
    (
        "a dice player's paid",
        "PartSettled",
        0,
        {"part": "player:p-1"},
        _first_bet("paid", 1),
        "paid",
    ),
    (
        "a Bang roll's bet",
        "PartSettled",
        0,
        {"part": "dealer_roll"},
        _first_bet("bet_id", "x"),
        "bet x",
    ),
    (
        "a closing's return",
        "PartSettled",
        0,
        {"part": "closing"},
        _first_bet("amount", 1),
        "amount",
    ),
    ("a part's name", "PartSettled", 0, {"part": "insurance"}, _set("part", "hand:1.0"), ""),
]


@pytest.mark.parametrize(
    ("what", "type_", "nth", "match", "change", "named_field"),
    CASES,
    ids=[c[0] for c in CASES],
)
def test_a_tampered_settlement_is_named_with_its_stream_and_seq(
    what: str,
    type_: str,
    nth: int,
    match: dict[str, Any],
    change: Callable[[dict[str, Any]], None],
    named_field: str,
) -> None:
    envelopes = night()
    i = index_of(envelopes, type_, nth, **match)
    log = tampered(envelopes, i, change)
    checker = run(SettlementChecker(), log)
    assert checker.discrepancies, what
    hits = named(checker.discrepancies, log[i])
    assert hits, checker.discrepancies
    assert all(d.check == "settlements" for d in checker.discrepancies)
    assert any(named_field in d.what for d in hits), hits
    assert all(d.expected != d.found for d in hits)
    # the tampered event is the first named, and no other table is: a change that the
    # fold carries on (a bet left riding, a hand marked settled) may be named again later
    first = checker.discrepancies[0]
    assert (first.stream, first.seq) == (log[i].stream, log[i].seq)
    assert {d.stream for d in checker.discrepancies} == {log[i].stream}


def test_a_changed_roll_names_the_settlement_it_decides() -> None:
    envelopes = night()
    # the Beat the Dealer player's roll (RNG mode): the other die face, the same player
    i = index_of(envelopes, "DiceRolled", 0, turn="player")
    settled = i + 1
    assert envelopes[settled].type == "PartSettled"
    before = envelopes[settled].data["settlements"][0]["result"]

    def swing(data: dict[str, Any]) -> None:
        # a roll the player must win (12 beats any dealer's roll but 12) or lose (2)
        data["dice"], data["total"] = ([1, 1], 2) if before == "won" else ([6, 6], 12)

    log = tampered(envelopes, i, swing)
    checker = run(SettlementChecker(), log)
    hits = named(checker.discrepancies, log[settled])
    assert any("result" in d.what for d in hits), checker.discrepancies


def test_a_deleted_settlement_is_named_as_missing() -> None:
    envelopes = night()
    i = index_of(envelopes, "PartSettled", 0, part="shooter_roll")
    log = [e for k, e in enumerate(envelopes) if k != i]
    checker = run(SettlementChecker(), log)
    missing = [d for d in checker.discrepancies if "does not record it" in d.what]
    assert missing and missing[0].stream == envelopes[i].stream
    assert missing[0].found is None and missing[0].expected is not None


def test_a_settlement_no_step_gives_is_named() -> None:
    envelopes = night()
    i = index_of(envelopes, "Settled", 0)
    log = list(envelopes)
    log.insert(i + 1, log[i])  # the same Settled recorded twice
    checker = run(SettlementChecker(), log)
    assert any("settle nothing here" in d.what for d in checker.discrepancies)


def test_a_settlement_whose_data_does_not_fit_its_type_is_named() -> None:
    envelopes = night()
    i = index_of(envelopes, "Settled", 0)
    log = tampered(envelopes, i, lambda data: data.pop("settlements"))
    checker = run(SettlementChecker(), log)
    assert [d.seq for d in named(checker.discrepancies, log[i])] == [log[i].seq]
    assert "cannot be read" in checker.discrepancies[0].what


def test_a_table_not_read_from_its_opening_is_counted_not_checked() -> None:
    envelopes = night()
    opened = index_of(envelopes, "TableOpened", 0)
    stream = envelopes[opened].stream
    log = [e for e in envelopes if not (e.stream == stream and e.seq < 3)]
    checker = run(SettlementChecker(), log)
    assert checker.discrepancies == []
    assert checker.checked["tables not read from their start"] == 1


def test_a_bet_whose_data_does_not_fit_its_type_is_named() -> None:
    envelopes = night()
    i = index_of(envelopes, "BetPlaced", 0)  # roulette: folded from its data alone
    log = tampered(envelopes, i, lambda data: data.pop("player"))
    checker = run(SettlementChecker(), log)
    [unread] = checker.discrepancies
    assert (unread.stream, unread.seq) == (log[i].stream, log[i].seq)
    assert "cannot be read" in unread.what


def test_a_dealer_mode_black_jack_hand_is_recomputed_from_the_cards_entered() -> None:
    envelopes = night()
    parts = [
        i
        for i, e in enumerate(envelopes)
        if e.stream == "table:bj-2"
        and e.type == "PartSettled"
        and e.data["part"].startswith("hand")
    ]
    assert len(parts) > 10
    i = parts[3]
    log = tampered(envelopes, i, _won)
    checker = run(SettlementChecker(), log)
    first = checker.discrepancies[0]
    assert (first.stream, first.seq) == ("table:bj-2", log[i].seq)
    assert "result" in first.what and first.expected != first.found


def _outcome(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["outcome"][key] = value

    return change


@pytest.mark.parametrize(
    ("what", "match", "change", "code"),
    [
        ("a pocket off the wheel", {"source": "rng"}, _outcome("pocket", "39"), "invalid_outcome"),
        (
            "a spin not from the previous pocket, 4620.4(c)(3)",
            {"source": "dealer"},
            _outcome("spun_from", "22"),
            "refuse",
        ),
        ("a die face of 7", {"source": "rng"}, _outcome("dice", [7, 1, 1]), "refuse"),
    ],
)
def test_an_outcome_the_device_cannot_give_is_named(
    what: str, match: dict[str, Any], change: Callable[[dict[str, Any]], None], code: str
) -> None:
    envelopes = night()
    i = index_of(envelopes, "OutcomeRecorded", 1 if "previous" in what else 0, **match)
    if "die" in what:
        i = next(
            k
            for k, e in enumerate(envelopes)
            if e.type == "OutcomeRecorded" and "dice" in e.data["outcome"]
        )
    log = tampered(envelopes, i, change)
    checker = run(SettlementChecker(), log)
    first = checker.discrepancies[0]
    assert (first.stream, first.seq) == (log[i].stream, log[i].seq), what
    assert code in first.what


def test_an_outcome_changed_in_both_its_events_is_named_at_the_settlement() -> None:
    envelopes = night()
    i = index_of(envelopes, "OutcomeRecorded", 0, source="rng")
    pocket = envelopes[i].data["outcome"]["pocket"]
    other = "0" if pocket != "0" else "1"
    log = tampered(envelopes, i, _outcome("pocket", other))
    log = tampered(log, i + 1, _outcome("pocket", other))
    checker = run(SettlementChecker(), log)
    assert checker.discrepancies and checker.discrepancies[0].seq == log[i + 1].seq
    assert all(d.stream == log[i].stream for d in checker.discrepancies)


def test_an_outcome_before_no_more_bets_is_named() -> None:
    envelopes = night()
    i = index_of(envelopes, "OutcomeRecorded", 0)
    assert envelopes[i - 1].type == "NoMoreBets"
    log = [e for k, e in enumerate(envelopes) if k != i - 1]  # the call never made
    checker = run(SettlementChecker(), log)
    first = checker.discrepancies[0]
    assert (first.stream, first.seq) == (envelopes[i].stream, envelopes[i].seq)
    assert "bets_open" in first.what
