"""tools/verify_export.py's own msgpack encoder writes the bytes msgpack-python writes, so
the standalone verifier recomputes every hash exactly as events/envelope.py does."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from events.base import Event
from events.cage import ChipsIssued, ChipsRedeemed
from events.codec import to_json
from events.envelope import GENESIS_HASH, canonical, chain_hash, seal
from events.tables import BetPlaced, BetSettlement, Settled
from services.export import FORMAT, VERSION, line_bytes, trailer_signed_bytes
from services.store import anchor

TOOL = Path(__file__).resolve().parents[2] / "tools" / "verify_export.py"
BOUNDARIES = [
    0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**53 - 1, 2**64 - 1,
    -1, -31, -32, -33, -128, -129, -32768, -32769, -(2**31), -(2**31) - 1, -(2**63),
]  # fmt: skip


def tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_export", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def value(rng: random.Random, depth: int = 0) -> Any:
    """A random value of what event data holds, long strings and big containers included."""
    choice = rng.randrange(9 if depth < 2 else 5)
    if choice == 0:
        n = rng.choice(BOUNDARIES) + rng.choice((0, 1, -1))
        return n if -(2**63) <= n < 2**64 else 0
    if choice == 1:
        return "".join(rng.choice("aé€🂡 ") for _ in range(rng.choice((0, 5, 31, 32, 255, 300))))
    if choice == 2:
        return rng.choice((None, True, False))
    if choice == 3:
        return rng.randint(-(2**40), 2**40)
    if choice == 4:
        return rng.random() * 1000
    size = rng.choice((0, 3, 15, 16, 70) if depth == 0 else (0, 2, 15, 16))
    if choice in (5, 6):
        return [value(rng, depth + 1) for _ in range(size)]
    return {f"k{rng.randrange(10_000)}": value(rng, depth + 1) for _ in range(size)}


def test_the_encoder_matches_msgpack_on_every_width_and_the_hash_matches_the_servers() -> None:
    verify_export = tool()
    packer = msgpack.Packer(use_bin_type=True)
    rng = random.Random(14)
    for n in BOUNDARIES:
        out = bytearray()
        verify_export.pack(n, out)
        assert bytes(out) == packer.pack(n), n
    for _ in range(300):
        data = value(rng)
        out = bytearray()
        verify_export.pack(data, out)
        assert bytes(out) == packer.pack(canonical(data))
        event = {
            "id": "e1", "type": "T", "version": 1, "stream": "s", "seq": rng.randint(1, 2**40),
            "ts": rng.randint(0, 2**45), "actor": "a", "causation": "c",
            "correlation": rng.choice((None, "r")), "prev_hash": "0" * 64,
            "data": {"x": data, "b": [data]},
        }  # fmt: skip
        assert verify_export.event_hash(event) == chain_hash(**event)
        assert verify_export.canonical(event["data"]) == canonical(event["data"])


def make_export(bodies: list[tuple[str, Event]], key: Ed25519PrivateKey) -> list[bytes]:
    """The lines of a whole export of ``bodies`` (stream, body), in that order, signed by
    ``key`` with a checkpoint of every head: what the key's holder could write."""
    heads: dict[str, tuple[int, str]] = {}
    events = []
    for i, (stream, body) in enumerate(bodies, start=1):
        seq, prev = heads.get(stream, (0, GENESIS_HASH))
        env = seal(
            body, id=f"e{i}", stream=stream, seq=seq + 1, ts=1_764_000_000_000 + i,
            actor="cashier:c", causation=f"c{i}", correlation=None, prev_hash=prev,
        )  # fmt: skip
        heads[stream] = (env.seq, env.hash)
        events.append(to_json(env.with_log_id(f"1764000000000-{i}")))
    checkpoint = anchor.Checkpoint(
        organization="org", counter=1, time_ms=1_764_000_000_000, reason="shutdown",
        log_id=f"1764000000000-{len(bodies)}", streams=heads,
        key=anchor.fingerprint(key.public_key()),
    )  # fmt: skip
    public = key.public_key()
    docs: list[dict[str, Any]] = [
        {"kind": "header", "format": FORMAT, "version": VERSION, "organization": "org",
         "scope": {"occasion": None, "streams": "all"}},
        {"kind": "key", "fingerprint": anchor.fingerprint(public),
         "pem": anchor.public_pem(public)},
        {"kind": "checkpoint", "checkpoint": json.loads(anchor.sign(key, checkpoint))},
        *({"kind": "event", "event": e} for e in events),
    ]  # fmt: skip
    lines = [line_bytes(d) for d in docs]
    streams = {
        name: {"events": seq, "last_seq": seq, "last_hash": digest}
        for name, (seq, digest) in heads.items()
    }
    trailer: dict[str, Any] = {
        "kind": "trailer", "lines": len(lines), "events": len(events), "checkpoints": 1,
        "streams": streams, "sha256": hashlib.sha256(b"".join(lines)).hexdigest(),
    }  # fmt: skip
    trailer["signature"] = base64.b64encode(key.sign(trailer_signed_bytes(trailer))).decode()
    return [*lines, line_bytes(trailer)]


def test_a_re_signed_export_whose_money_the_store_would_refuse_is_named() -> None:
    """The key's holder can sign any file: the chains and signatures hold, the money does
    not (a cash-out beyond the balance, a settlement that pays more than its lines)."""
    verify_export = tool()
    key = Ed25519PrivateKey.generate()
    night: list[tuple[str, Event]] = [
        ("cage", ChipsIssued(player="p-1", amount=1000)),
        ("table:r-1", BetPlaced(round=1, bet_id="b1", player="p-1", bet={}, amount=400)),
        (
            "table:r-1",
            Settled(round=1, outcome={}, settlements=(BetSettlement("b1", "p-1", 400, "won", 800),),
                    wagered=400, paid=800),
        ),
        ("cage", ChipsRedeemed(player="p-1", amount=1400)),
    ]  # fmt: skip
    clean = verify_export.verify(make_export(night, key))
    assert clean.problems == []
    totals = clean.totals.report()
    assert totals["tables"]["table:r-1"] == {
        "wagered": 400,
        "paid": 800,
        "rounds": 1,
        "house_result": -400,
    }
    assert totals["cage"] == {"issued": 1000, "redeemed": 1400, "outstanding": -400}
    assert totals["balances"] == {"p-1": 0}

    greedy = [*night[:3], ("cage", ChipsRedeemed(player="p-1", amount=1500))]
    problems = verify_export.verify(make_export(greedy, key)).problems
    assert problems == [
        "cage seq 2: p-1's balance goes below zero (-100 cents): the store never lets it"
    ]
    padded = [
        *night[:2],
        (
            "table:r-1",
            Settled(round=1, outcome={}, settlements=(BetSettlement("b1", "p-1", 400, "won", 800),),
                    wagered=400, paid=900),
        ),
    ]  # fmt: skip
    problems = verify_export.verify(make_export(padded, key)).problems
    assert problems == [
        "table:r-1 seq 2: Settled says wagered 400, paid 900; its lines add up to wagered 400, "
        "paid 800"
    ]
