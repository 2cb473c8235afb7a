"""Forged data that no rule expects (a number that is a string, a list that is None) never
stops the audit: every rule checker names what it cannot read and goes on. Seeded."""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
import pytest

from events.codec import encode
from events.envelope import Envelope, expected_hash
from events.money import MONEY_EVENTS, data_moves
from services.audit.balances import BalanceChecker
from services.audit.command import audit_events
from services.audit.engine import Audit, AuditReport
from services.audit.rules import RULE_CHECKERS
from tests.unit.audit.support import T0, deal_night, night, raffle_night, run, tampered

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


# The whole audit (engine, chains, balances, every rule checker), fed forged events.

MISSING = object()
"""A field taken out of the event's data."""
FUZZ: tuple[Any, ...] = (*GARBAGE, 1.5, True, MISSING)


def forged(
    envelopes: Sequence[Envelope], index: int, change: Callable[[dict[str, Any]], None]
) -> list[Envelope]:
    """The log with ``envelopes[index]``'s data changed and its stream re-hashed from there
    on (a forger who redoes the chain: only the rules and the balances can name it)."""
    log = logged(tampered(envelopes, index, change))
    stream = log[index].stream
    prev = log[index].prev_hash
    for n in range(index, len(log)):
        env = log[n]
        if env.stream != stream:
            continue
        env = dataclasses.replace(env, prev_hash=prev)
        env = dataclasses.replace(env, hash=expected_hash(env))
        log[n] = env
        prev = env.hash
    return log


def logged(envelopes: Sequence[Envelope]) -> list[Envelope]:
    """Copies of the envelopes with org-log ids, in order (the cached night left as it is)."""
    return [dataclasses.replace(e, log_id=f"{T0 + n}-0") for n, e in enumerate(envelopes)]


def entries(log: Sequence[Envelope]) -> list[tuple[bytes, list[bytes]]]:
    """The log as the store's XRANGE replies it."""
    return [((e.log_id or "0").encode(), [b"e", encode(e)]) for e in log]


def audited(log: Sequence[Envelope], raw: bool) -> AuditReport:
    """The whole audit of ``log`` as the command runs it with no store (``audit_events``:
    the engine's own chains, every rule checker and the balances), or the engine fed the
    stored entries (``raw``), as from a store."""
    return balanced(log, raw)[0]


def balanced(log: Sequence[Envelope], raw: bool) -> tuple[AuditReport, dict[str, int]]:
    """:func:`audited`, and the balances it folded."""
    if not raw:
        report = audit_events("org-audit", log, [], no_checkpoint=None)
        return report, {}
    balances = BalanceChecker()
    audit = Audit("org-audit", [*(make() for make in RULE_CHECKERS), balances])
    audit.feed_raw(entries(log))
    return audit.finish(), balances.balances


def put(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        if value is MISSING:
            data.pop(key, None)
        else:
            data[key] = value

    return change


def put_line(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Change ``key`` of a settlement's first line."""

    def change(data: dict[str, Any]) -> None:
        put(key, value)(data["settlements"][0])

    return change


@pytest.mark.parametrize("raw", [True, False], ids=["stored", "envelopes"])
def test_no_forged_field_stops_the_whole_audit(raw: bool) -> None:
    logs = [list(night()), raffle_night().envelopes, deal_night().envelopes]
    money = [
        (k, i) for k, log in enumerate(logs) for i, e in enumerate(log) if e.type in MONEY_EVENTS
    ]
    rnd = random.Random(2027)
    named_by_rules = 0
    for trial in range(30):
        if trial % 2:  # half the forgeries on a money event: the balances' own path
            k, i = rnd.choice(money)
            envelopes = logs[k]
        else:
            envelopes = rnd.choice(logs)
            i = rnd.randrange(len(envelopes))
        env = envelopes[i]
        value = rnd.choice(FUZZ)
        if env.data.get("settlements") and rnd.random() < 0.5:
            change = put_line(rnd.choice(["player", "paid", "result"]), value)
        else:
            change = put(rnd.choice(sorted(env.data)), value)
        log = forged(envelopes, i, change)
        report = audited(log, raw)  # must not raise
        json.dumps(report.to_json())  # the report holds only JSON
        streams = {e.stream for e in log}
        assert all(d.stream in streams or d.seq is None for d in report.discrepancies)
        named_by_rules += any(
            (d.stream, d.seq) == (env.stream, env.seq) and d.check != "chains"
            for d in report.discrepancies
        )
    assert named_by_rules >= 10  # forged fields that matter were named at their event


@pytest.mark.parametrize("raw", [True, False], ids=["stored", "envelopes"])
@pytest.mark.parametrize(
    ("type_", "change"),
    [
        ("BetPlaced", put("amount", "x")),
        ("BetPlaced", put("amount", MISSING)),
        ("BetPlaced", put("amount", 100.0)),
        ("BetPlaced", put("amount", True)),
        ("WagerAdded", put("player", 7)),
        ("WagerAdded", put("player", MISSING)),
        ("Settled", put_line("paid", MISSING)),
        ("Settled", put_line("paid", 200.5)),
        ("Settled", put_line("player", None)),
        ("Settled", put("settlements", None)),
    ],
    ids=[
        "amount-text",
        "amount-missing",
        "amount-float",
        "amount-bool",
        "player-int",
        "player-missing",
        "line-without-paid",
        "paid-float",
        "line-player-null",
        "settlements-null",
    ],
)
def test_a_forged_money_event_is_named_by_the_balances_and_moves_nothing(
    raw: bool, type_: str, change: Callable[[dict[str, Any]], None]
) -> None:
    envelopes = list(night())
    i = next(k for k, e in enumerate(envelopes) if e.type == type_ and e.data.get("amount", 1))
    if type_ == "Settled":
        i = next(k for k, e in enumerate(envelopes) if e.type == type_ and e.data["settlements"])
    log = forged(envelopes, i, change)
    report, folded = balanced(log, raw)
    [balances] = [d for d in report.discrepancies if d.check == "balances" and d.seq is not None]
    assert (balances.stream, balances.seq, balances.log_id) == (
        log[i].stream,
        log[i].seq,
        log[i].log_id,
    )
    assert "moves no balance" in balances.what
    if raw:  # it moved nothing: the balances are the clean night's less its own moves
        _, clean = balanced(logged(envelopes), raw)
        for player, cents, _kind in data_moves(envelopes[i].type, envelopes[i].data):
            clean[player] -= cents
        assert folded == clean


def test_an_event_whose_data_is_no_map_is_named_and_the_audit_goes_on() -> None:
    log = logged(night())
    i = next(k for k, e in enumerate(log) if e.type == "BetPlaced")
    stored = entries(log)
    packed = bytearray(stored[i][1][1])
    data = encode(log[i])[-len(msgpack.packb(log[i].data)) :]
    assert packed.endswith(data)
    stored[i] = (stored[i][0], [b"e", bytes(packed[: -len(data)]) + msgpack.packb([1, 2])])
    audit = Audit("org-audit", [*(m() for m in RULE_CHECKERS), BalanceChecker()])
    audit.feed_raw(stored)
    report = audit.finish()
    assert any(
        d.check == "chains" and (d.stream, d.seq) == (log[i].stream, log[i].seq)
        and "not a map of fields" in d.what
        for d in report.discrepancies
    )  # fmt: skip
    assert report.events == len(log)


def test_a_forged_member_of_a_combination_leaves_its_bank_out_and_stops_nothing() -> None:
    envelopes = deal_night().envelopes
    i = next(k for k, e in enumerate(envelopes) if e.type == "DealPutInPlay" and
             len(e.data["deals"]) > 1)  # fmt: skip
    log = forged(envelopes, i, lambda data: data["deals"].__setitem__(1, {"a": 1}))
    report = audited(log, raw=True)  # must not raise
    banks = report.to_json()["banks"]
    assert isinstance(banks, list)
    lead = log[i].stream.removeprefix("deal:")
    assert lead not in [row["deal"] for row in banks if isinstance(row, dict)]
    [named] = [d for d in report.discrepancies if (d.stream, d.seq) == (log[i].stream, log[i].seq)]
    assert named.check == "deals" and "joined" in named.what
