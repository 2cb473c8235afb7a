"""tools/verify_export.py never crashes on a damaged export (docs/AUDIT.md, "The export and
the standalone verifier"): any field of any line missing, of the wrong type or huge is
named as a BROKEN line and the verifier exits 1. Seeded fuzzing of a whole export of every
kind of event the totals read, run in-process (the tool loaded by path)."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from events.envelope import GENESIS_HASH, chain_hash
from services.export import FORMAT, VERSION, line_bytes, trailer_signed_bytes
from services.store import anchor
from tests.unit.test_verify_export import tool

SETTLED = {
    "round": 1, "outcome": {"number": 7}, "wagered": 900, "paid": 1400,
    "settlements": [
        {"bet_id": "b1", "player": "p-1", "amount": 400, "result": "won", "paid": 800},
        {"bet_id": "b2", "player": "p-2", "amount": 500, "result": "push", "paid": 500},
        {"bet_id": "b3", "player": "p-1", "amount": 0, "result": "returned", "paid": 100},
    ],
}  # fmt: skip
NIGHT: list[tuple[str, str, dict[str, Any]]] = [
    ("cage", "ChipsIssued", {"player": "p-1", "amount": 2000}),
    ("cage", "ChipsIssued", {"player": "p-2", "amount": 1000}),
    ("table:r-1", "RoundOpened", {"round": 1}),
    ("table:r-1", "BetPlaced", {"round": 1, "bet_id": "b1", "player": "p-1", "amount": 400,
                                "bet": {"kind": "straight", "number": 7}}),
    ("table:r-1", "BetPlaced", {"round": 1, "bet_id": "b2", "player": "p-2", "amount": 500,
                                "bet": {}}),
    ("table:r-1", "BetPlaced", {"round": 1, "bet_id": "b3", "player": "p-1", "amount": 100,
                                "bet": {}}),
    ("table:r-1", "WagerAdded", {"round": 1, "bet_id": "b1", "wager_id": "w1",
                                 "player": "p-1", "amount": 50, "kind": "double"}),
    ("table:r-1", "BetCancelled", {"round": 1, "bet_id": "b1", "player": "p-1",
                                   "amount": 50}),
    ("table:r-1", "Settled", SETTLED),
    ("table:r-1", "PartSettled", {**SETTLED, "part": "insurance", "settlements": [],
                                  "wagered": 0, "paid": 0}),
    ("table:r-1", "RoundEnded", {"round": 1}),
    ("raffle:x", "TicketSold", {"round": 1, "serials": [1, 2, 3], "amount": 300,
                                "player": "p-1", "price": 100}),
    ("raffle:x", "PrizeAwarded", {"round": 1, "serial": 2, "prize": "grand", "amount": 150,
                                  "cash": True}),
    ("raffle:x", "PrizeAwarded", {"round": 1, "serial": 3, "prize": "tv", "amount": 90,
                                  "cash": False}),
    ("deal:d1", "DealRegistered", {"kind": "bell_jar", "prizes": [100, 50]}),
    ("deal:d2", "DealRegistered", {"kind": "bell_jar", "prizes": [100]}),
    ("deal:d2", "DealCommingled", {"lead": "d1", "at": 1}),
    ("deal:d1", "TicketsSold", {"count": 10, "amount": 500, "seller": "s", "at": 2}),
    ("deal:d1", "TicketRedeemed", {"prize": 0, "value": 100, "kind": "cash"}),
    ("deal:d2", "TicketRedeemed", {"prize": 0, "value": 40, "kind": "merchandise"}),
    ("cage", "ChipsRedeemed", {"player": "p-2", "amount": 1000}),
]  # fmt: skip
HUGE = 10**30
DAMAGES: list[Any] = [
    "1", "", "x" * 5000, "9" * 5000 + "-1", "1²-1", -1, 0, HUGE, -HUGE, 2**64, 1.5,
    float("inf"), float("nan"), True, False, None, [], {}, [1, "a"], [{}], [[1]],
    {"a": 1}, {"paid": "1"},
    json.loads("[" * 40 + "]" * 40),
]  # fmt: skip
"""What a damaged field becomes: text where a number is, a number too big for msgpack or
for cents, a float, a list, a map, nothing."""
NAMED = re.compile(
    r"^(line \d+|[^ ]+ seq -?\d+|checkpoint #|trailer|no (header|public key|checkpoint|trailer)|"
    r"log entry )"
)
"""How every problem starts: the line, the stream and seq, the checkpoint or the trailer."""


def whole_export(key: Ed25519PrivateKey) -> list[dict[str, Any]]:
    """The documents of a whole export of :data:`NIGHT`, one checkpoint of every head, the
    trailer signed (each event hashed by the server's ``chain_hash``)."""
    heads: dict[str, tuple[int, str]] = {}
    events = []
    for i, (stream, kind, data) in enumerate(NIGHT, start=1):
        seq, prev = heads.get(stream, (0, GENESIS_HASH))
        event: dict[str, Any] = {
            "id": f"e{i}", "type": kind, "version": 1, "stream": stream, "seq": seq + 1,
            "ts": 1_764_000_000_000 + i, "actor": "cashier:c", "causation": f"c{i}",
            "correlation": None, "prev_hash": prev, "data": data,
        }  # fmt: skip
        event["hash"] = chain_hash(**event)
        event["log_id"] = f"1764000000000-{i}"
        heads[stream] = (seq + 1, event["hash"])
        events.append(event)
    checkpoint = anchor.Checkpoint(
        organization="org", counter=1, time_ms=1_764_000_000_000, reason="shutdown",
        log_id=f"1764000000000-{len(NIGHT)}", streams=heads,
        key=anchor.fingerprint(key.public_key()),
    )  # fmt: skip
    public = key.public_key()
    docs: list[dict[str, Any]] = [
        {"kind": "header", "format": FORMAT, "version": VERSION, "organization": "org",
         "organization_name": "Org", "scope": {"occasion": None, "streams": "all"},
         "exported_at": 1, "exported_at_utc": "x", "log_end": events[-1]["log_id"]},
        {"kind": "key", "algorithm": "Ed25519", "fingerprint": anchor.fingerprint(public),
         "pem": anchor.public_pem(public)},
        {"kind": "checkpoint", "checkpoint": json.loads(anchor.sign(key, checkpoint))},
        *({"kind": "event", "event": e} for e in events),
    ]  # fmt: skip
    streams = {
        name: {"events": seq, "last_seq": seq, "last_hash": digest}
        for name, (seq, digest) in heads.items()
    }
    docs.append(
        {"kind": "trailer", "lines": len(docs), "events": len(events), "checkpoints": 1,
         "streams": streams}
    )  # fmt: skip
    return docs


def signed(
    docs: list[dict[str, Any]], key: Ed25519PrivateKey, damaged: frozenset[int] = frozenset()
) -> list[bytes]:
    """The lines of ``docs`` as the key's holder would write them: every event re-chained
    (its ``prev_hash`` the hash before it, unless it is one of the ``damaged`` lines) and
    re-hashed, the checkpoint's heads (unless damaged) and signature, the trailer's counts
    and streams (unless damaged), digest and signature made to match."""
    heads: dict[str, tuple[int, str]] = {}
    events = 0
    for i, doc in enumerate(docs):
        event = doc.get("event")
        if doc.get("kind") == "event" and isinstance(event, dict):
            events += 1
            stream = event.get("stream")
            if i not in damaged and isinstance(stream, str):
                event["prev_hash"] = heads.get(stream, (0, GENESIS_HASH))[1]
            try:
                fields = {k: event[k] for k in (*anchor_fields(), "data")}
                event["hash"] = chain_hash(**fields)
                if isinstance(stream, str):
                    heads[stream] = (event["seq"], event["hash"])
            except Exception:  # a field missing or unhashable: the damage stays
                pass
    for i, doc in enumerate(docs):
        checkpoint = doc.get("checkpoint")
        if doc.get("kind") == "checkpoint" and isinstance(checkpoint, dict):
            body = checkpoint.get("body")
            if isinstance(body, dict):
                if i not in damaged:
                    body["streams"] = {n: {"seq": q, "hash": h} for n, (q, h) in heads.items()}
                message = anchor.canonical(body)
                checkpoint["signature"] = base64.b64encode(key.sign(message)).decode()
    lines = [line_bytes(d) for d in docs[:-1]]
    trailer = docs[-1]
    if isinstance(trailer, dict) and trailer.get("kind") == "trailer":
        if len(docs) - 1 not in damaged:
            trailer["lines"], trailer["events"] = len(lines), events
            trailer["streams"] = {
                n: {"events": q, "last_seq": q, "last_hash": h} for n, (q, h) in heads.items()
            }
        trailer["sha256"] = hashlib.sha256(b"".join(lines)).hexdigest()
        trailer.pop("signature", None)
        trailer["signature"] = base64.b64encode(key.sign(trailer_signed_bytes(trailer))).decode()
    return [*lines, line_bytes(trailer)]


def anchor_fields() -> tuple[str, ...]:
    return ("id", "type", "version", "stream", "seq", "ts", "actor", "causation",
            "correlation", "prev_hash")  # fmt: skip


def paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside ``value`` (map keys and list indexes), ``value`` itself first."""
    out = [at]
    if isinstance(value, dict):
        for k, v in value.items():
            out += paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += paths(v, (*at, i))
    return out


def damage(doc: dict[str, Any], rng: random.Random) -> str:
    """Damage one field of ``doc`` in place (remove it or give it a value of
    :data:`DAMAGES`); what was done, for the failure message."""
    places = paths(doc)[1:]
    if not places:
        return "nothing left to damage"
    place = rng.choice(places)
    parent: Any = doc
    for step in place[:-1]:
        parent = parent[step]
    last = place[-1]
    if isinstance(parent, dict) and rng.random() < 0.3:
        del parent[last]
        return f"removed {place}"
    new = copy.deepcopy(rng.choice(DAMAGES))
    parent[last] = new
    return f"{place} = {str(new)[:40]}"


def run(verify_export: Any, path: Path, lines: list[bytes], capsys: Any) -> tuple[int, str]:
    path.write_bytes(b"".join(lines))
    status = verify_export.main([str(path)])
    text = capsys.readouterr().out
    assert verify_export.main([str(path), "--json"]) == status
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is (status == 0)
    return status, text


def test_an_undamaged_export_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    verify_export = tool()
    key = Ed25519PrivateKey.generate()
    status, text = run(verify_export, tmp_path / "x.jsonl", signed(whole_export(key), key), capsys)
    assert status == 0, text
    assert "table:r-1: wagered 9.00, paid 13.00, house result -4.00, rounds 2" in text
    assert "deal:d1: sales 5.00, cash prizes 1.00, bank 4.00" in text


@pytest.mark.parametrize("resign", [False, True], ids=["edited", "re-signed"])
def test_every_damaged_field_is_named_and_never_a_traceback(
    resign: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file edited by anyone (every digest and signature then fails, and the damage is
    named with its line) or re-signed by the key's holder (every hash, the checkpoint and
    the trailer made to match: the damaged figure itself must be refused), one to three
    fields of any line damaged, 400 copies each: exit 1 or (a re-signed harmless edit) 0,
    every problem named, none from the verifier's last-resort guard."""
    verify_export = tool()
    rng = random.Random(1414 + resign)
    key = Ed25519PrivateKey.generate()
    clean = whole_export(key)
    original = signed(copy.deepcopy(clean), key)
    failed = 0
    for n in range(400):
        docs = copy.deepcopy(clean)
        index = rng.randrange(len(docs))
        # Edited: one line, 1 to 3 of its fields; re-signed: also up to 2 fields elsewhere.
        others = [rng.randrange(len(docs)) for _ in range(rng.randrange(3) if resign else 0)]
        done = [damage(docs[i], rng) for i in [index] * rng.randint(1, 3) + others]
        hit = frozenset([index, *others])
        lines = signed(docs, key, hit) if resign else [*original[:index], line_bytes(docs[index])]
        if not resign:
            lines += original[index + 1 :]
        if lines == original:
            continue
        status, text = run(verify_export, tmp_path / f"{n}.jsonl", lines, capsys)
        why = f"copy {n}, line {index + 1}: {done}\n{text}"
        problems = [x[len("BROKEN  ") :] for x in text.splitlines() if x.startswith("BROKEN")]
        assert all(NAMED.match(p) for p in problems), why
        assert not any("cannot be checked" in p for p in problems), why
        if not resign:
            assert status == 1 and problems, why
        else:
            assert status == (1 if problems else 0), why
        failed += status
    assert failed > 200  # most damage is refused even when re-signed


def test_lines_no_json_reader_can_take_and_a_kept_checkpoint_nested_too_deep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line nested deeper than any reader recurses, a number of 100,000 digits, a line
    that is not UTF-8, an event whose data is nested deep enough to exhaust the encoder:
    each is that line's problem; a ``--checkpoint`` file nested too deep cannot be read
    (status 2), never a traceback."""
    verify_export = tool()
    key = Ed25519PrivateKey.generate()
    docs = whole_export(key)
    docs[5]["event"]["data"] = json.loads("[" * 900 + "]" * 900)
    lines = signed(docs, key)
    odd = {
        3: b"[" * 200_000 + b"]" * 200_000 + b"\n",
        4: b'{"kind":"event","event":' + b"9" * 100_000 + b"}\n",
        7: b'{"kind":"event","event":"\xff\xfe"}\n',
    }
    for index, line in odd.items():
        lines[index] = line
    status, text = run(verify_export, tmp_path / "odd.jsonl", lines, capsys)
    assert status == 1, text
    problems = [x for x in text.splitlines() if x.startswith("BROKEN")]
    for index in odd:
        assert any(f"line {index + 1}:" in p for p in problems), (index, text)
    assert any(p.startswith("BROKEN  table:r-1 seq 3: ") for p in problems), text
    assert not any("cannot be checked" in p for p in problems), text
    kept = tmp_path / "kept.json"
    kept.write_text("[" * 200_000 + "]" * 200_000)
    assert verify_export.main([str(tmp_path / "odd.jsonl"), "--checkpoint", str(kept)]) == 2
    assert "verify_export.py:" in capsys.readouterr().err
