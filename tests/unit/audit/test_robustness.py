"""Forged data that no rule expects (a number that is a string, a list that is None) never
stops the audit: every rule checker names what it cannot read and goes on. Seeded."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from services.audit.rules import RULE_CHECKERS
from tests.unit.audit.support import deal_night, night, raffle_night, run, tampered

GARBAGE: tuple[Any, ...] = ("x", None, -1, [], {"a": 1}, 2**63 - 1)


def test_no_forged_field_stops_a_checker() -> None:
    logs = [list(night()), raffle_night().envelopes, deal_night().envelopes]
    rnd = random.Random(2026)
    named = 0
    for _ in range(40):
        envelopes = rnd.choice(logs)
        i = rnd.randrange(len(envelopes))
        key = rnd.choice(sorted(envelopes[i].data))
        value = rnd.choice(GARBAGE)
        log = tampered(envelopes, i, lambda data, k=key, v=value: data.__setitem__(k, v))
        for make in RULE_CHECKERS:
            checker = run(make(), log)  # must not raise
            streams = {e.stream for e in log}
            assert all(d.stream in streams for d in checker.discrepancies)
            json.dumps([dataclasses.asdict(d) for d in checker.discrepancies])  # the report's
            named += len(checker.discrepancies)
    assert named > 0  # forged fields that matter were named


def test_a_forged_roll_is_named_as_unreadable_and_its_table_left() -> None:
    envelopes = list(night())
    i = next(k for k, e in enumerate(envelopes) if e.type == "DiceRolled")
    log = tampered(envelopes, i, lambda data: data.__setitem__("dice", "x"))
    [settlements] = [m for m in RULE_CHECKERS if m.__name__ == "SettlementChecker"]
    checker = run(settlements(), log)
    [unread] = checker.discrepancies
    assert (unread.stream, unread.seq) == (log[i].stream, log[i].seq)
    assert "cannot read" in unread.what
