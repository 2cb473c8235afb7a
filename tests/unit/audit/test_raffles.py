"""The raffle check: raffles of every kind drawn by the real pure rules pass; a changed
pool, prize, share kept, winner or chest is named with its stream and seq (4620.22-4620.24,
docs/RULES.md "Raffles")."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from events.envelope import Envelope
from services.audit.raffles import DrawingChecker, indices
from tests.unit.audit.support import index_of, named, raffle_night, run, tampered


@functools.cache
def night() -> tuple[Envelope, ...]:
    return tuple(raffle_night().envelopes)


def test_every_drawing_reveal_and_key_is_what_the_rules_give() -> None:
    envelopes = night()
    checker = run(DrawingChecker(), envelopes)
    assert checker.discrepancies == []
    assert checker.checked["drawings"] == sum(1 for e in envelopes if e.type == "DrawingHeld")
    assert checker.checked["reveals"] == sum(
        1 for e in envelopes if e.type in ("CardRevealed", "KeyTried")
    )
    kinds = {e.data["kind"] for e in envelopes if e.type == "RaffleOpened"}
    assert kinds == {"standard", "fifty_fifty", "queen_of_hearts", "treasure_chest"}


def test_the_csprng_indices_are_rebuilt_from_the_winners() -> None:
    assert indices([3, 5, 8, 9], [8, 3]) == (2, 0)
    assert indices([3, 5, 8, 9], [8, 8]) is None
    assert indices([3, 5], [4]) is None


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.__setitem__(key, value)


def _winner(serial: int) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["winners"][0]["serial"] = serial

    return change


CASES = [
    ("a treasure chest's pool", "ProceedsAllocated", {}, _set("pool", 1), "pool"),
    ("a treasure chest's profit split", "ProceedsAllocated", {}, _set("profit", 0), "profit"),
    ("a 50/50 prize", "PrizeAwarded", {"prize": "fifty_fifty"}, _set("amount", 1), "amount"),
    ("a standard prize", "PrizeAwarded", {"prize": "prize"}, _set("amount", 10), "amount"),
    ("a queen's grand prize", "PrizeAwarded", {"prize": "grand"}, _set("amount", 5), "amount"),
    ("a consolation", "PrizeAwarded", {"prize": "consolation"}, _set("serial", 999), "serial"),
    ("the share kept", "ProfitKept", {}, _set("amount", 0), "amount"),
    ("a chest carried over", "ChestCarriedOver", {}, _set("chest", 0), "chest"),
    ("a winner not in the drum", "DrawingHeld", {}, _winner(9_999), "no such winner"),
    ("a drawing's eligible count", "DrawingHeld", {}, _set("eligible", 1), "eligible"),
]


@pytest.mark.parametrize(
    ("what", "type_", "match", "change", "field"), CASES, ids=[c[0] for c in CASES]
)
def test_a_tampered_drawing_is_named_with_its_stream_and_seq(
    what: str,
    type_: str,
    match: dict[str, Any],
    change: Callable[[dict[str, Any]], None],
    field: str,
) -> None:
    envelopes = night()
    i = index_of(envelopes, type_, 0, **match)
    log = tampered(envelopes, i, change)
    checker = run(DrawingChecker(), log)
    hits = named(checker.discrepancies, log[i])
    assert hits, (what, checker.discrepancies)
    assert checker.discrepancies[0] == hits[0]
    assert any(field in d.what for d in hits), hits
    assert {d.stream for d in checker.discrepancies} == {log[i].stream}


def test_a_prize_the_rules_do_not_give_is_named() -> None:
    envelopes = night()
    i = index_of(envelopes, "PrizeAwarded", 0, prize="prize")
    log = list(envelopes)
    log.insert(i + 1, envelopes[i])  # the same prize paid twice in the drawing's command
    checker = run(DrawingChecker(), log)
    assert any("no such event" in d.what for d in checker.discrepancies)
    dropped = [e for k, e in enumerate(envelopes) if k != i]
    checker = run(DrawingChecker(), dropped)
    assert any("does not record it" in d.what for d in checker.discrepancies)


def test_every_sale_is_recomputed_and_a_sale_off_the_price_is_named() -> None:
    envelopes = night()
    checker = run(DrawingChecker(), envelopes)
    assert checker.checked["sales"] == sum(1 for e in envelopes if e.type == "TicketSold")
    i = index_of(envelopes, "TicketSold", 0)
    off_price = tampered(envelopes, i, lambda data: data.__setitem__("amount", 1))
    first = run(DrawingChecker(), off_price).discrepancies[0]
    assert (first.stream, first.seq) == (envelopes[i].stream, envelopes[i].seq)
    assert "wrong_price" in first.what
    j = index_of(envelopes, "TicketSold", 1)
    resold = tampered(envelopes, j, lambda data: data.__setitem__("serials", [1]))
    # a serial sold twice: the raffle's own fold refuses it, and it is named there
    first = run(DrawingChecker(), resold).discrepancies[0]
    assert (first.stream, first.seq) == (envelopes[j].stream, envelopes[j].seq)
