"""Sealing by per-type encoders and reused packers writes the same bytes, hashes and ids as
the generic sealing before it (tests/legacy_seal.py), so every stream already in a store
and every stream written now are one format: read, verified and replayed alike."""

from __future__ import annotations

import random
from typing import Any

import pytest

from events.base import Event, to_data
from events.codec import decode, encode
from events.envelope import GENESIS_HASH, event_id, expected_hash, seal
from events.tables import BetPlaced, BetSettlement, Settled, TableOpened
from services.store.redis_store import BalanceMove, CommandWrite, pack_result
from tests import legacy_seal
from tests.unit.test_events import ALL_SAMPLES

META: dict[str, Any] = {
    "id": "5b2c0e6f9d1a4c3b8e7f60a1d2c3b4e5",
    "stream": "table:roulette-1",
    "seq": 12,
    "ts": 1_795_957_757_735,
    "actor": "player:p-1",
    "causation": "b-17",
    "correlation": "roulette-1#3",
    "prev_hash": "a" * 64,
}


def _shuffled(value: Any, rng: random.Random) -> Any:
    """The same data with every dict's keys in another order."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: _shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@pytest.mark.parametrize("body", ALL_SAMPLES, ids=lambda e: type(e).NAME)
def test_every_event_type_seals_to_the_bytes_the_old_sealing_wrote(body: Event) -> None:
    new = seal(body, **META)
    old = legacy_seal.seal(body, **META)
    assert to_data(body) == legacy_seal.to_data(body)
    assert new.hash == old.hash
    assert new.data == old.data
    assert encode(new) == encode(old)
    assert decode(encode(new)) == old
    assert expected_hash(new) == new.hash


def test_loosely_typed_data_in_any_key_order_seals_as_before() -> None:
    rng = random.Random(4620)
    for i in range(200):
        config = {
            "wheel": rng.choice(["double_zero", "single_zero"]),
            "odds": {"basket": [11, 1], "color_eight": [7, 2]},
            "options": [rng.choice(["basket", "five_adjacent"]) for _ in range(rng.randrange(3))],
            "nested": [{"z": 1, "a": [{"y": None, "b": True}]}, (1, 2.5, "x", b"raw")],
            "max_inside": rng.randrange(1, 200),
        }
        body = TableOpened(
            table=f"t-{i}", game="roulette", config=_shuffled(config, rng), outcome_mode="rng"
        )
        assert encode(seal(body, **META)) == encode(legacy_seal.seal(body, **META))
        bet = _shuffled({"numbers": [str(rng.randrange(37))], "kind": "straight"}, rng)
        placed = BetPlaced(round=i, bet_id=f"t.{i}.3", player="p-1", bet=bet, amount=i + 1)
        assert encode(seal(placed, **META)) == encode(legacy_seal.seal(placed, **META))


def test_a_large_settlement_seals_as_before() -> None:
    rng = random.Random(7)
    settlements = tuple(
        BetSettlement(f"t.1.{n}", f"p-{rng.randrange(200)}", 5, rng.choice(["won", "lost"]), 180)
        for n in range(2_000)
    )
    body = Settled(
        round=1,
        outcome={"spun_from": "5", "pocket": "17"},
        settlements=settlements,
        wagered=10_000,
        paid=180,
    )
    assert encode(seal(body, **META)) == encode(legacy_seal.seal(body, **META))


def test_ids_replies_and_writes_are_packed_as_before() -> None:
    for index in range(3):
        ids = {"stream": "cage", "actor": "cashier:c", "causation": "s-1", "index": index}
        assert event_id(**ids) == legacy_seal.event_id(**ids)
    reply = {"ok": True, "result": {"seq": 3, "round": 1, "bet_id": "roulette-1.1.3"}}
    assert pack_result("f" * 64, reply) == legacy_seal.pack_result("f" * 64, reply)
    body = BetPlaced(round=1, bet_id="r.1.3", player="p-1", bet={"kind": "red"}, amount=5)
    env = seal(body, **{**META, "prev_hash": GENESIS_HASH})
    write = CommandWrite(
        key="player:p-1/b-17",
        result=pack_result("f" * 64, reply),
        events=[env],
        moves=[BalanceMove(player="p-1", delta=-5)],
    )
    assert write.packed == legacy_seal.pack_write(
        "player:p-1/b-17", pack_result("f" * 64, reply), [env], [("p-1", -5)]
    )


def test_a_packer_that_failed_packs_the_next_value_whole() -> None:
    """One packer serves every call: a value it cannot pack leaves nothing behind."""
    bad = BetPlaced(round=1, bet_id="r.1.3", player="p-\udcff", bet={"kind": "red"}, amount=5)
    with pytest.raises(UnicodeEncodeError):
        seal(bad, **META)
    with pytest.raises(UnicodeEncodeError):
        CommandWrite(key="k-\udcff", result=b"r", moves=[BalanceMove(player="p", delta=1)])
    good = BetPlaced(round=1, bet_id="r.1.3", player="p-1", bet={"kind": "red"}, amount=5)
    env = seal(good, **META)
    assert encode(env) == encode(legacy_seal.seal(good, **META))
    write = CommandWrite(key="k", result=b"r", events=[env])
    assert write.packed == legacy_seal.pack_write("k", b"r", [env], [])
