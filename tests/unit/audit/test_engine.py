"""The audit's engine over envelopes made here (services/audit/engine.py, chains.py,
balances.py): the chains and checkpoints it checks, the balances it folds, the scope it
reports, the report it writes. Pure: no store."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from events.base import Event
from events.cage import ChipsIssued, ChipsRedeemed
from events.codec import encode
from events.envelope import GENESIS_HASH, Envelope, event_id, expected_hash, seal
from events.license import OccasionStarted
from events.tables import BetPlaced, BetSettlement, RoundOpened, Settled
from services.audit import report as audit_report
from services.audit.balances import BalanceChecker
from services.audit.chains import SignedCheckpoint, weigh_checkpoint
from services.audit.command import audit_events, parse_moment
from services.audit.engine import WHOLE_LOG, Audit, AuditReport, Scope
from services.cli import CliError
from services.store import anchor

ORG = "org-audit"
T0 = 1_800_000_000_000
TABLE = "table:roulette-1"


class Night:
    """Seals events into their streams' chains, in log order, with log ids."""

    def __init__(self) -> None:
        self.heads: dict[str, tuple[int, str]] = {}
        self.log: list[Envelope] = []

    def add(self, stream: str, event: Event, ts: int | None = None) -> Envelope:
        seq, prev = self.heads.get(stream, (0, GENESIS_HASH))
        n = len(self.log) + 1
        env = seal(
            event,
            id=event_id(stream=stream, actor="system", causation=f"c-{n}", index=0),
            stream=stream,
            seq=seq + 1,
            ts=T0 + 1000 * n if ts is None else ts,
            actor="system",
            causation=f"c-{n}",
            correlation=None,
            prev_hash=prev,
        ).with_log_id(f"{T0 + n}-0")
        self.heads[stream] = (seq + 1, env.hash)
        self.log.append(env)
        return env

    def entries(self, log: Iterable[Envelope] | None = None) -> list[tuple[bytes, list[bytes]]]:
        """The log as XRANGE replies it."""
        return [
            ((e.log_id or "0").encode(), [b"e", encode(e)])
            for e in (self.log if log is None else log)
        ]


def played() -> Night:
    """Chips to p-1 and p-2, a round at roulette-1 that p-1 wins, a cash-out."""
    night = Night()
    night.add("license", OccasionStarted(occasion="night-1", name="Night 1"))
    night.add("cage", ChipsIssued(player="p-1", amount=1000))
    night.add("cage", ChipsIssued(player="p-2", amount=500))
    night.add(TABLE, RoundOpened(round=1))
    bet = BetPlaced(round=1, bet_id="b-1", player="p-1", bet={"kind": "red"}, amount=100)
    night.add(TABLE, bet)
    won = BetSettlement(bet_id="b-1", player="p-1", amount=100, result="won", paid=200)
    night.add(
        TABLE, Settled(round=1, outcome={"pocket": "1"}, settlements=(won,), wagered=100, paid=200)
    )
    night.add("cage", ChipsRedeemed(player="p-1", amount=300))
    return night


BALANCES = {"p-1": 1000 - 100 + 200 - 300, "p-2": 500}


def signed(night: Night, key: Ed25519PrivateKey, upto: int | None = None) -> str:
    """A checkpoint of the night's heads (after its first ``upto`` events), signed."""
    heads: dict[str, tuple[int, str]] = {}
    log = night.log if upto is None else night.log[:upto]
    for env in log:
        heads[env.stream] = (env.seq, env.hash)
    cp = anchor.Checkpoint(
        organization=ORG,
        counter=len(log),
        time_ms=T0,
        reason="interval",
        log_id=log[-1].log_id or "0",
        streams=heads,
        key=anchor.fingerprint(key.public_key()),
    )
    return anchor.sign(key, cp)


def run(
    night: Night,
    log: Sequence[Envelope] | None = None,
    *,
    checkpoints: Sequence[SignedCheckpoint] = (),
    guarded: dict[str, int] | None = None,
    scope: Scope = WHOLE_LOG,
    raw: bool = True,
) -> AuditReport:
    balances = BalanceChecker(BALANCES if guarded is None else guarded)
    audit = Audit(ORG, [balances], checkpoints=checkpoints, scope=scope, no_checkpoint=None)
    if raw:
        audit.feed_raw(night.entries(log))
    else:
        audit.feed(night.log if log is None else log)
    return audit.finish()


def where(report: AuditReport) -> set[tuple[str, str, int | None]]:
    return {(d.check, d.stream, d.seq) for d in report.discrepancies}


@pytest.mark.parametrize("raw", [True, False], ids=["stored", "envelopes"])
def test_a_clean_night_is_clean_and_counted(raw: bool) -> None:
    night = played()
    key = Ed25519PrivateKey.generate()
    cp = weigh_checkpoint("latest.json", signed(night, key), key.public_key(), ORG)
    report = run(night, checkpoints=[cp], raw=raw)
    assert report.ok, report.discrepancies
    chains, balances = report.checks
    assert chains.checked == {"events": 7, "streams": 3, "checkpoints": 1, "signed heads": 3}
    assert balances.checked == {"money events": 5, "players": 2}
    assert report.events == report.events_in_scope == 7 and report.log_head == night.log[-1].log_id


@pytest.mark.parametrize("raw", [True, False], ids=["stored", "envelopes"])
def test_an_edited_payout_not_rehashed_is_named_with_both_hashes(raw: bool) -> None:
    night = played()
    log = list(night.log)
    settled = log[5]
    data = dict(settled.data, paid=900)
    log[5] = dataclasses.replace(settled, data=data, log_id=settled.log_id)
    report = run(night, log, raw=raw)
    [d] = [d for d in report.discrepancies if d.check == "chains"]
    assert (d.stream, d.seq, d.found) == (TABLE, 3, settled.hash)
    assert d.expected == expected_hash(log[5]) != settled.hash
    assert "altered" in d.what


def test_an_edited_payout_rehashed_is_named_at_its_own_seq() -> None:
    night = played()
    log = list(night.log)
    bet = log[4]  # table seq 2: the next event chains to its old hash
    edited = dataclasses.replace(bet, data=dict(bet.data, amount=1))
    log[4] = dataclasses.replace(edited, hash=expected_hash(edited), log_id=bet.log_id)
    report = run(night, log)
    assert ("chains", TABLE, 2) in where(report)
    [d] = [d for d in report.discrepancies if d.check == "chains"]
    assert (d.expected, d.found) == (bet.hash, log[4].hash)
    # The balance the log now gives is not the one the store guards.
    assert ("balances", "player:p-1", None) in where(report)


def test_a_deleted_event_is_named_and_the_rest_still_checks() -> None:
    night = played()
    report = run(night, night.log[:4] + night.log[5:], guarded={"p-1": 900, "p-2": 500})
    [d] = report.discrepancies
    assert (d.check, d.stream, d.seq, d.expected, d.found) == ("chains", TABLE, 2, 2, 3)


def test_reordered_events_are_named_once_each() -> None:
    night = played()
    log = list(night.log)
    log[4], log[5] = log[5], log[4]
    report = run(night, log)
    [d] = report.discrepancies
    assert (d.stream, d.seq) == (TABLE, 2) and "out of order" in d.what


def test_an_event_logged_twice_is_named() -> None:
    night = played()
    # p-1's chips issued twice, as every fold of the log would count them.
    report = run(night, [*night.log, night.log[1]], guarded={"p-1": 1800, "p-2": 500})
    assert where(report) == {("chains", "cage", 1)}
    assert "appears again" in report.discrepancies[0].what


def test_a_checkpoint_signed_beyond_the_log_names_the_deleted_head() -> None:
    night = played()
    key = Ed25519PrivateKey.generate()
    cp = weigh_checkpoint("latest.json", signed(night, key), key.public_key(), ORG)
    report = run(night, night.log[:-1], checkpoints=[cp], guarded={"p-1": 1100, "p-2": 500})
    assert where(report) == {("checkpoints", "cage", 3), ("checkpoints", "log", None)}


def test_a_forged_checkpoint_is_named_and_what_it_claims_compared() -> None:
    night = played()
    key = Ed25519PrivateKey.generate()
    doc = json.loads(signed(night, key))
    doc["body"]["streams"]["cage"]["seq"] = 2
    forged = weigh_checkpoint("forged.json", json.dumps(doc), key.public_key(), ORG)
    assert not forged.verified and forged.problem is not None and "forged" in forged.problem
    report = run(night, checkpoints=[forged])
    assert where(report) == {("checkpoints", "checkpoints", None), ("checkpoints", "cage", 2)}
    [claim] = [d for d in report.discrepancies if d.stream == "cage"]
    assert "forged.json" in claim.what and "claims (its signature does not verify)" in claim.what
    chains = report.checks[0]
    assert "checkpoint" not in chains.checked  # a forged one vouches for nothing


def test_a_checkpoint_of_another_key_or_unreadable_is_named() -> None:
    night = played()
    ours, theirs = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    other = weigh_checkpoint("a.json", signed(night, theirs), ours.public_key(), ORG)
    garbage = weigh_checkpoint("b.json", "not json", ours.public_key(), ORG)
    assert other.problem is not None and "names key" in other.problem
    assert garbage.checkpoint is None
    report = run(night, checkpoints=[other, garbage])
    assert [d.stream for d in report.discrepancies] == ["checkpoints", "checkpoints"]


def test_an_earlier_checkpoint_pins_an_earlier_head() -> None:
    night = played()
    key = Ed25519PrivateKey.generate()
    early = weigh_checkpoint("history.jsonl line 1", signed(night, key, 3), key.public_key(), ORG)
    log = list(night.log)
    # The whole cage rewritten consistently from seq 1: only the checkpoints can tell.
    rewritten, prev = [], GENESIS_HASH
    for env in log:
        if env.stream != "cage":
            rewritten.append(env)
            continue
        data = dict(env.data, amount=env.data["amount"] + 1) if env.seq == 1 else env.data
        new = dataclasses.replace(env, data=data, prev_hash=prev, hash="", log_id=env.log_id)
        new = dataclasses.replace(new, hash=expected_hash(new), log_id=env.log_id)
        prev = new.hash
        rewritten.append(new)
    report = run(night, rewritten, checkpoints=[early], guarded={"p-1": 801, "p-2": 500})
    assert where(report) == {("checkpoints", "cage", 2)}


def test_balances_against_the_guarded_ones_and_zero() -> None:
    night = played()
    report = run(night, guarded={"p-1": 800, "p-2": 400, "p-3": 5})
    found = {d.stream: (d.expected, d.found) for d in report.discrepancies}
    assert found == {"player:p-2": (500, 400), "player:p-3": (0, 5)}
    # Without a store, a balance below zero is all the log alone can show.
    below = Night()
    below.add("cage", ChipsRedeemed(player="p-9", amount=5))
    audit = Audit(ORG, [BalanceChecker(None)])
    audit.feed_raw(below.entries())
    [d] = audit.finish().discrepancies
    assert (d.stream, d.expected, d.found) == ("player:p-9", 0, -5)


def test_scope_narrows_what_is_reported_not_what_is_checked() -> None:
    night = Night()
    night.add("license", OccasionStarted(occasion="night-1", name="One"))
    night.add("cage", ChipsIssued(player="p-1", amount=100))
    night.add("license", OccasionStarted(occasion="night-2", name="Two"))
    night.add("cage", ChipsIssued(player="p-1", amount=200))
    night.add("cage", ChipsIssued(player="p-1", amount=300))
    log = list(night.log)
    for at in (1, 4):  # cage seq 1 (night-1) and cage seq 3 (night-2) altered
        log[at] = dataclasses.replace(log[at], data={"player": "p-1", "amount": 1})
    guarded = {"p-1": 600}
    one = run(night, log, guarded=guarded, scope=Scope(occasion="night-1"))
    assert where(one) == {("chains", "cage", 1), ("balances", "player:p-1", None)}
    assert one.events == 5 and one.events_in_scope == 2  # its OccasionStarted, its sale
    two = run(night, log, guarded=guarded, scope=Scope(occasion="night-2"))
    assert ("chains", "cage", 3) in where(two) and ("chains", "cage", 1) not in where(two)
    window = run(night, log, guarded=guarded, scope=Scope(since_ms=T0 + 4000, until_ms=T0 + 5001))
    assert window.events_in_scope == 2 and ("chains", "cage", 3) in where(window)
    nothing = run(night, log, guarded=guarded, scope=Scope(occasion="night-9"))
    assert where(nothing) == {("balances", "player:p-1", None)} and nothing.events_in_scope == 0


def test_an_unreadable_log_entry_is_named() -> None:
    audit = Audit(ORG, [])
    audit.feed_raw([(b"5-0", [b"e", b"\x93not an envelope"])])
    [d] = audit.finish().discrepancies
    assert (d.stream, d.log_id) == ("log", "5-0")


def test_the_report_as_json_and_markdown(tmp_path: Path) -> None:
    night = played()
    log = list(night.log)
    log[5] = dataclasses.replace(log[5], data=dict(log[5].data, paid=900), log_id=log[5].log_id)
    report = run(night, log, scope=Scope(occasion="night-1"))
    as_json, as_markdown = audit_report.write(report, tmp_path / "out")
    doc: dict[str, Any] = json.loads(as_json.read_text())
    assert doc["format"] == "casino-night audit 1" and doc["ok"] is False
    assert doc["scope"] == {"occasion": "night-1", "since_ms": None, "until_ms": None}
    assert [(d["stream"], d["seq"], d["found"]) for d in doc["discrepancies"]] == [
        (TABLE, 3, night.log[5].hash)
    ]
    text = as_markdown.read_text()
    assert text == audit_report.markdown(report)
    assert "**1 discrepancy**" in text and "occasion night-1" in text
    assert f"| chains | {TABLE} | 3 |" in text


def test_since_and_until_take_unix_ms_and_iso_8601_in_the_zone() -> None:
    assert parse_moment("1800000000000", "America/New_York") == 1_800_000_000_000
    assert parse_moment("2026-12-01", "America/New_York") == 1_796_101_200_000
    assert parse_moment("2026-12-01T05:00:00+00:00", "Europe/Paris") == 1_796_101_200_000
    with pytest.raises(CliError, match="neither an ISO 8601"):
        parse_moment("yesterday", "America/New_York")


def test_a_deleted_signed_head_leaves_the_later_heads_checked() -> None:
    night = Night()
    for n in range(4):
        night.add("cage", ChipsIssued(player="p-1", amount=100 + n))
    night.add("license", OccasionStarted(occasion="night-1", name="One"))
    key = Ed25519PrivateKey.generate()
    early = weigh_checkpoint("h line 1", signed(night, key, 2), key.public_key(), ORG)
    late = weigh_checkpoint("h line 2", signed(night, key), key.public_key(), ORG)
    log = night.log[:1] + night.log[2:]  # cage seq 2, which the early one signed, deleted
    last = log[2]
    edited = dataclasses.replace(last, data=dict(last.data, amount=1))
    log[2] = dataclasses.replace(edited, hash=expected_hash(edited), log_id=last.log_id)
    report = run(night, log, checkpoints=[early, late], guarded={"p-1": 100 + 102 + 1})
    assert where(report) == {
        ("chains", "cage", 2),  # missing
        ("checkpoints", "cage", 2),  # signed, deleted
        ("checkpoints", "cage", 4),  # signed, re-hashed: reached in order all the same
        ("checkpoints", "log", None),  # the early one's log entry is gone
    }
    [at_4] = [d for d in report.discrepancies if (d.stream, d.seq) == ("cage", 4)]
    assert "is not the one" in at_4.what and at_4.found == log[2].hash


def test_an_export_of_envelopes_is_audited_with_no_store() -> None:
    night = Night()
    night.add("cage", ChipsIssued(player="p-1", amount=700))
    night.add("cage", ChipsRedeemed(player="p-1", amount=200))
    key = Ed25519PrivateKey.generate()
    cp = weigh_checkpoint("export", signed(night, key), key.public_key(), ORG)
    clean = audit_events(ORG, iter(night.log), [cp])
    assert clean.ok and clean.events == 2 and clean.checkpoints == 1
    cut_short = audit_events(ORG, iter(night.log[:1]), [cp])
    assert where(cut_short) == {("checkpoints", "cage", 2), ("checkpoints", "log", None)}
    none = audit_events(ORG, iter(night.log), [], no_checkpoint="no checkpoint in the export")
    assert [d.what for d in none.discrepancies] == ["no checkpoint in the export"]
