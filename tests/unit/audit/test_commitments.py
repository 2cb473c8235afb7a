"""The commitment check: every Black Jack card the server dealt in RNG mode and every Queen
of Hearts position of a server board open their commitments; a forged card, salt, seed or
reveal is named with its stream and seq (docs/RULES.md, "The shoe's commitments";
4620.23(b)(7))."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.audit.commitments import CommitmentChecker
from tests.unit.audit.support import index_of, night, raffle_night, run, tampered


def test_every_card_of_the_night_opens_its_commitment() -> None:
    envelopes = night()
    checker = run(CommitmentChecker(), envelopes)
    assert checker.discrepancies == []
    face_up = sum(
        1
        for e in envelopes
        if (e.type == "CardDealt" and e.data["face_up"] and e.data["position"] is not None)
        or (e.type == "HoleCardRevealed" and e.data["salt"] is not None)
    )
    assert checker.checked["cards"] == face_up > 0
    assert checker.checked["shuffles revealed"] == sum(
        1 for e in envelopes if e.type == "ShoeRevealed"
    )


def _other_card(data: dict[str, Any]) -> None:
    data["card"] = "AS" if data["card"] != "AS" else "KD"


def _other_seed(data: dict[str, Any]) -> None:
    data["seed"] = "00" * 32


def _swapped(data: dict[str, Any]) -> None:
    cards = data["cards"]
    j = next(k for k in range(1, len(cards)) if cards[k] != cards[0])
    cards[0], cards[j] = cards[j], cards[0]


@pytest.mark.parametrize(
    ("type_", "match", "change"),
    [
        ("CardDealt", {"face_up": True}, _other_card),
        ("CardDealt", {"face_up": True}, lambda d: d.__setitem__("salt", "0" * 32)),
        ("CardDealt", {"face_up": True}, lambda d: d.update(position=None, salt=None)),
        ("HoleCardRevealed", {}, lambda d: d.__setitem__("salt", None)),
        ("HoleCardRevealed", {}, _other_card),
        ("ShoeRevealed", {}, _other_seed),
        ("ShoeRevealed", {}, _swapped),
    ],
)
def test_a_forged_card_or_shoe_is_named(
    type_: str, match: dict[str, Any], change: Callable[[dict[str, Any]], None]
) -> None:
    envelopes = night()
    i = index_of(envelopes, type_, 0, **match)
    log = tampered(envelopes, i, change)
    checker = run(CommitmentChecker(), log)
    first = checker.discrepancies[0]
    assert (first.stream, first.seq) == (log[i].stream, log[i].seq)
    assert first.expected != first.found
    # a forged card is named again where its shuffle's seed reveals the box, and nowhere else
    later = {d.seq for d in checker.discrepancies[1:]}
    assert all(
        log[k].type == "ShoeRevealed"
        for k, e in enumerate(log)
        if e.seq in later and e.stream == first.stream
    )


def test_every_queen_of_hearts_reveal_opens_the_board_and_a_forged_one_is_named() -> None:
    envelopes = tuple(raffle_night().envelopes)
    checker = run(CommitmentChecker(), envelopes)
    assert checker.discrepancies == []
    assert checker.checked["boards committed"] == 1
    assert checker.checked["positions revealed"] == 2
    i = index_of(envelopes, "CardRevealed", 0)
    log = tampered(envelopes, i, lambda data: data.__setitem__("card", "QH"))
    [forged] = run(CommitmentChecker(), log).discrepancies
    assert (forged.stream, forged.seq, forged.found) == (log[i].stream, log[i].seq, "QH")
    opened = index_of(envelopes, "RaffleOpened", 0, kind="queen_of_hearts")

    def other_root(data: dict[str, Any]) -> None:
        data["config"]["board"]["root"] = "0" * 64

    [root] = run(CommitmentChecker(), tampered(envelopes, opened, other_root)).discrepancies
    assert (root.seq, root.found) == (envelopes[opened].seq, "0" * 64)
