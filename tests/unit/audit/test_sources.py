"""The outcome-source check: every outcome and roll of a night of every game names a
source its table's mode and game allow; a wrong source is named with its stream and seq."""

from __future__ import annotations

from typing import Any

import pytest

from services.audit.sources import SourceChecker, allowed_sources, allowed_throwers
from tests.unit.audit.support import index_of, named, night, run, tampered


def test_every_outcome_of_the_night_records_an_allowed_source() -> None:
    envelopes = night()
    checker = run(SourceChecker(), envelopes)
    assert checker.discrepancies == []
    assert checker.checked["outcomes"] == sum(1 for e in envelopes if e.type == "OutcomeRecorded")
    assert checker.checked["rolls"] == sum(1 for e in envelopes if e.type == "DiceRolled")


def test_the_sources_each_mode_and_game_allow() -> None:
    assert allowed_sources("roulette", "rng", {"pocket": "1"}) == ("rng",)
    assert allowed_sources("roulette", "dealer", {"pocket": "1"}) == ("dealer",)
    roll = {"dice": [1, 2, 3], "thrown_by": "cage"}
    assert allowed_sources("chuck_a_luck", "dealer", roll) == ("cage",)
    assert allowed_sources("chuck_a_luck", "dealer", {**roll, "thrown_by": "rng"}) == ()
    assert allowed_throwers("dealer", "dealer") == ("dealer", "cage")
    assert allowed_throwers("player", "dealer") == ("player", "cage")
    assert allowed_throwers("player", "rng") == ("rng",)


@pytest.mark.parametrize(
    ("type_", "match", "key", "forged"),
    [
        ("OutcomeRecorded", {"source": "rng"}, "source", "dealer"),
        ("OutcomeRecorded", {"source": "dealer"}, "source", "rng"),
        ("OutcomeRecorded", {"source": "cage"}, "source", "player"),
        ("DiceRolled", {"thrown_by": "rng"}, "thrown_by", "cage"),
        ("DiceRolled", {"thrown_by": "player"}, "thrown_by", "dealer"),
    ],
)
def test_a_wrong_source_is_named(type_: str, match: dict[str, Any], key: str, forged: str) -> None:
    envelopes = night()
    i = index_of(envelopes, type_, 0, **match)
    log = tampered(envelopes, i, lambda data: data.__setitem__(key, forged))
    checker = run(SourceChecker(), log)
    [found] = checker.discrepancies
    assert named(checker.discrepancies, log[i]) == [found]
    assert found.found == forged and forged not in found.expected  # type: ignore[operator]
