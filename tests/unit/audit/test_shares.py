"""The audit's pass shared among processes (services/audit/shares.py): whatever the log
holds, clean or tampered, and however many shares, the merged report is the report of one
pass, discrepancy for discrepancy and count for count. Here the shares run one after the
other in this process, on the same stored entries (tests/contract/test_audit_store.py runs
them in processes of their own against a real Redis). Seeded."""

from __future__ import annotations

import dataclasses
import os
import random
import signal
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from events.envelope import Envelope, expected_hash
from events.license import OccasionStarted
from services.audit.balances import BalanceChecker
from services.audit.base import Discrepancy
from services.audit.dealing import FIRST_SHARE_WEIGHT, Owners
from services.audit.engine import Audit, AuditReport, Scope
from services.audit.rules import RULE_CHECKERS
from services.audit.shares import (
    Share,
    ShareError,
    ShareJob,
    combine,
    decode_page,
    encode_page,
    share_result,
    shares,
)
from tests.unit.audit.support import T0, Log, canonical, entries, guarded_of, whole_night

WHOLE = Scope()
PAGE = 97
"""Entries the first share is fed at a time (pages end in the middle of rounds)."""


def one_pass(
    log: Sequence[Envelope],
    guarded: dict[str, int],
    scope: Scope,
    *,
    also: Sequence[Discrepancy] = (),
    no_checkpoint: str | None = None,
) -> AuditReport:
    checkers = [*(make() for make in RULE_CHECKERS), BalanceChecker(guarded)]
    engine = Audit("org-audit", checkers, no_checkpoint=no_checkpoint, scope=scope)
    engine.feed_raw(entries(log))
    return engine.finish(also=also)


def shared_pass(
    log: Sequence[Envelope],
    guarded: dict[str, int],
    scope: Scope,
    count: int,
    *,
    also: Sequence[Discrepancy] = (),
    no_checkpoint: str | None = None,
) -> AuditReport:
    """The pass as the command shares it, in this process: the first share fed the stored
    entries a page at a time, each other share fed what it dealt that share, through the
    pipe's encoding."""
    others = []
    for k in range(1, count):
        tally = BalanceChecker(None, tally_only=True)
        engine = Audit(
            "org-audit",
            [*(make() for make in RULE_CHECKERS), tally],
            scope=scope,
            share=Share(k, count),
        )
        others.append((engine, tally))
    balances = BalanceChecker(guarded)
    first = Audit(
        "org-audit",
        [*(make() for make in RULE_CHECKERS), balances],
        no_checkpoint=no_checkpoint,
        scope=scope,
        share=Share(0, count),
    )
    stored = entries(log)
    for at in range(0, len(stored), PAGE):
        first.feed_raw(stored[at : at + PAGE])
        for (engine, _tally), box in zip(others, first.outbox[1:], strict=True):
            engine.feed_raw(decode_page(encode_page(box)))
            box.clear()
    results = [share_result(engine, tally) for engine, tally in others]
    return combine(first, balances, results, also=also)


def rehashed(log: list[Envelope], at: int, **data: Any) -> list[Envelope]:
    """``log`` with event ``at``'s data changed and its stream's chain redone after it."""
    out = list(log)
    stream = out[at].stream
    prev = out[at].prev_hash
    out[at] = dataclasses.replace(out[at], data={**out[at].data, **data})
    for n in range(at, len(out)):
        if out[n].stream != stream:
            continue
        env = dataclasses.replace(out[n], prev_hash=prev)
        out[n] = dataclasses.replace(env, hash=expected_hash(env))
        prev = out[n].hash
    return out


def tamperings(log: list[Envelope], rnd: random.Random) -> list[tuple[str, list[Envelope]]]:
    """One copy of the log per kind of tampering, each at a random event of its kind."""
    settled = [n for n, e in enumerate(log) if e.type == "Settled"]
    bets = [n for n, e in enumerate(log) if e.type == "BetPlaced"]
    at = rnd.choice(settled)
    paid = log[at].data["paid"] + 500
    pairs = [n for n in range(1, len(log)) if log[n - 1].stream == log[n].stream]
    swap = rnd.choice(pairs)
    swapped = list(log)
    swapped[swap - 1], swapped[swap] = swapped[swap], swapped[swap - 1]
    edited = list(log)
    k = rnd.choice(bets)
    edited[k] = dataclasses.replace(edited[k], data={**edited[k].data, "amount": 1})
    gone = rnd.choice(range(len(log)))
    return [
        ("clean", log),
        ("a payout edited and re-hashed", rehashed(log, at, paid=paid)),
        ("a bet's amount edited, not re-hashed", edited),
        ("an event deleted", log[:gone] + log[gone + 1 :]),
        ("two events of a stream swapped", swapped),
        ("an event appended twice", [*log[: gone + 1], log[gone], *log[gone + 1 :]]),
    ]


@pytest.mark.parametrize("shares", [2, 3, 5])
def test_a_shared_pass_gives_the_report_of_one_pass(shares: int) -> None:
    rnd = random.Random(shares)
    log = whole_night()
    guarded = guarded_of(log)
    tables = len({e.stream for e in log if e.stream.startswith("table:")})
    assert tables > shares  # every share has tables to check
    for kind, tampered in tamperings(log, rnd):
        single = one_pass(tampered, guarded, WHOLE)
        merged = shared_pass(tampered, guarded, WHOLE, shares)
        assert canonical(merged) == canonical(single), kind
        assert (kind == "clean") == single.ok, (kind, single.discrepancies[:3])


def test_a_shared_pass_reports_the_same_scope() -> None:
    log = whole_night()
    guarded = {**guarded_of(log), "p-1": 1}  # one balance the log does not give
    middle = log[len(log) // 2].ts
    settled = [n for n, e in enumerate(log) if e.type == "Settled"]
    at = settled[len(settled) // 2]
    tampered = rehashed(log, at, paid=10**6)
    for scope in (Scope(since_ms=middle), Scope(until_ms=middle)):
        single = one_pass(tampered, guarded, scope)
        merged = shared_pass(tampered, guarded, scope, 3)
        assert canonical(merged) == canonical(single)
        assert 0 < single.events_in_scope < single.events


def test_the_tables_are_dealt_by_weight_and_everything_else_stays_with_the_first_share() -> None:
    owners = Owners(3)
    streams = ["cage", *(f"table:t{n}" for n in range(11)), "raffle:r", "deal:d"]
    dealt = {s: owners.assign(s) for s in streams}
    assert dealt["cage"] == dealt["raffle:r"] == dealt["deal:d"] == 0
    tables = Counter(dealt[s] for s in streams if s.startswith("table:"))
    # The first share's weight is FIRST_SHARE_WEIGHT of the others': 11 tables as 3, 4, 4.
    assert FIRST_SHARE_WEIGHT == 0.75 and tables == {0: 3, 1: 4, 2: 4}
    assert [dealt[f"table:t{n}"] for n in range(3)] == [1, 2, 0]


def test_no_share_beyond_its_count() -> None:
    with pytest.raises(ValueError, match="no share"):
        Share(3, 3)


async def test_a_share_whose_process_dies_stops_the_audit_naming_it() -> None:
    """A share's process killed (kill -9) mid-pass: the first share's next send or its wait
    for the result raises ShareError naming the share, never a report without its part."""
    jobs = [ShareJob(share=Share(1, 2), organization="org-audit", checkpoints=(), scope=WHOLE)]
    with shares(jobs) as others:
        [process] = others.processes
        assert process.pid is not None
        os.kill(process.pid, signal.SIGKILL)
        process.join(timeout=30)
        with pytest.raises(ShareError, match="share 1 of the audit"):
            await others.results()


def test_every_share_follows_the_occasions_to_report_the_same_one() -> None:
    """An ``OccasionStarted`` is on the license's stream (the first share's): the others
    read it, marked, so an ``--occasion`` covers the same events in every share."""
    played = whole_night()
    licence = Log()
    for occasion in ("night-1", "night-2"):
        licence.append("license", [OccasionStarted(occasion=occasion, name=occasion)], "system")
    settled = [n for n, e in enumerate(played) if e.type == "Settled"]
    middle = settled[len(settled) // 2]  # night-2 starts before this payout
    log = [licence.envelopes[0], *played[:middle], licence.envelopes[1], *played[middle:]]
    log = [dataclasses.replace(e, log_id=f"{T0 + n}-0") for n, e in enumerate(log)]
    at = next(n for n in range(middle + 1, len(log)) if log[n].type == "Settled")
    tampered = rehashed(log, at, paid=10**6)  # a payout of night-2 changed
    for occasion in ("night-1", "night-2"):
        scope = Scope(occasion=occasion)
        single = one_pass(tampered, guarded_of(log), scope)
        assert canonical(shared_pass(tampered, guarded_of(log), scope, 3)) == canonical(single)
        assert 0 < single.events_in_scope < single.events
        assert (occasion == "night-2") == any(
            d.check == "settlements" for d in single.discrepancies
        )


def test_what_the_streams_own_heads_show_is_held_to_the_same_scope_whoever_checked_them() -> None:
    """A stream's own record found to differ from the log (``also``, after the pass) is
    reported when its seq is in scope, whichever share checked that stream."""
    log = whole_night()
    since = log[len(log) // 5].ts
    scope = Scope(since_ms=since)
    last = {e.stream: e for e in log}
    tables = [e for name, e in last.items() if name.startswith("table:") and e.ts >= since]
    owners = Owners(3)  # as the first share deals them
    for e in log:
        if e.stream not in owners.owned:
            owners.assign(e.stream)
    assert {owners.owned[e.stream] for e in tables} == {0, 1, 2}  # heads of every share's
    heads = [
        Discrepancy(
            check="chains",
            stream=e.stream,
            seq=e.seq,
            what=f"the stream's event at seq {e.seq} is not the log's copy",
            expected=e.hash,
            found="0" * 64,
        )
        for e in tables
    ]
    single = one_pass(log, guarded_of(log), scope, also=heads)
    assert set(heads) <= set(single.discrepancies)
    merged = shared_pass(log, guarded_of(log), scope, 3, also=heads)
    assert canonical(merged) == canonical(single)


def test_a_log_with_no_checkpoint_is_named_even_when_the_first_share_checks_none_of_it() -> None:
    """One table only, dealt to the second share: the first still knows the log held events
    that no checkpoint vouches for."""
    log = [e for e in whole_night() if e.stream == "table:roulette-1"]
    assert log
    why = "no signed checkpoint"
    single = one_pass(log, {}, WHOLE, no_checkpoint=why)
    merged = shared_pass(log, {}, WHOLE, 2, no_checkpoint=why)
    assert why in [d.what for d in single.discrepancies]
    assert canonical(merged) == canonical(single)


async def test_a_share_that_fails_says_why() -> None:
    """A page the share cannot read: its own error reaches the first share's ShareError,
    even though its pipe is closed by the time the first share next writes to it."""
    jobs = [ShareJob(share=Share(1, 2), organization="org-audit", checkpoints=(), scope=WHOLE)]
    with shares(jobs) as others:
        others._send(1, b"\xc1")  # a page that is no msgpack at all
        others.processes[0].join(timeout=30)  # gone, its pipe closed: the next write fails
        with pytest.raises(ShareError, match=r"share 1 of the audit stopped: it failed: "):
            await others.results()
