"""The merchandise check: a merchandise wheel played to its aggregate prize limit by the
real rules passes; a changed item, value or aggregate, an award no winner is owed and a
missing closing are named with their stream and seq (4620.10(d)-(e))."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.audit.awards import AwardChecker
from tests.unit.audit.support import index_of, named, night, run, tampered


def test_every_award_of_the_night_is_what_the_shelf_gives() -> None:
    envelopes = night()
    checker = run(AwardChecker(), envelopes)
    assert checker.discrepancies == []
    assert checker.checked["awards"] == sum(1 for e in envelopes if e.type == "MerchandiseAwarded")
    assert checker.checked["awards"] > 0 and checker.checked["limits reached"] == 1


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (_set("item", "bear-2"), "item"),
        (_set("value", 1), "value"),
        (_set("aggregate", 99_999), "aggregate"),
        (_set("bet_id", "prize-wheel.1.99"), "bet_id"),
    ],
)
def test_a_changed_award_is_named(change: Callable[[dict[str, Any]], None], field: str) -> None:
    envelopes = night()
    i = index_of(envelopes, "MerchandiseAwarded", 1)
    log = tampered(envelopes, i, change)
    checker = run(AwardChecker(), log)
    hits = named(checker.discrepancies, log[i])
    assert hits and checker.discrepancies[0] == hits[0]
    assert field in str(hits[0].expected) or field in hits[0].what
    assert hits[0].expected != hits[0].found


def test_an_award_no_winner_is_owed_and_a_missing_closing_are_named() -> None:
    envelopes = night()
    i = index_of(envelopes, "MerchandiseAwarded", 0)
    extra = list(envelopes)
    extra.insert(i + 1, envelopes[i])  # handed twice
    checker = run(AwardChecker(), extra)
    assert any("no winner is owed it" in d.what for d in checker.discrepancies)
    limit = index_of(envelopes, "PrizeLimitReached", 0)
    gone = [e for k, e in enumerate(envelopes) if k != limit]
    checker = run(AwardChecker(), gone)
    [missing] = checker.discrepancies
    assert missing.expected is not None and missing.found is None
    assert "PrizeLimitReached" in missing.what
