"""What the org log's tail reads of an entry before decoding it (services/cluster/tail.py):
its stream and seq, read from the head of the stored array, the same as a whole unpack
gives, for any entry."""

from __future__ import annotations

import random

import msgpack
import pytest

from events.codec import encode
from events.envelope import seal
from events.tables import BetPlaced
from services.cluster.tail import stream_and_seq


def _stored(stream: str, seq: int, rng: random.Random) -> bytes:
    body = BetPlaced(
        round=rng.randint(1, 500),
        bet_id=f"b-{rng.randint(0, 10**9)}",
        player=f"p-{rng.randint(1, 200)}",
        bet={"kind": "straight", "numbers": [str(rng.randint(0, 36))]},
        amount=rng.randint(1, 10**6),
    )
    env = seal(
        body,
        id=f"{rng.getrandbits(128):032x}",
        stream=stream,
        seq=seq,
        ts=rng.randint(0, 2**41),
        actor="p-1",
        causation="c-1",
        correlation=None if rng.random() < 0.5 else "round:1",
        prev_hash="0" * 64,
    )
    return encode(env)


def test_the_stream_and_seq_of_stored_envelopes_are_what_a_whole_unpack_reads() -> None:
    rng = random.Random(20261202)
    for _ in range(300):
        stream = rng.choice(["table:t-01", "cage", "raffle:queen-of-hearts", "table:ü-✓"])
        seq = rng.choice([1, rng.randint(2, 2**20), 2**53])
        raw = _stored(stream, seq, rng)
        whole = msgpack.unpackb(raw, raw=False)
        assert stream_and_seq(raw) == (whole[3], whole[4]) == (stream, seq)


@pytest.mark.parametrize(
    "fields",
    [
        ["id", "T", 1, "table:t-01", "7", 0],  # a seq stored as text
        ["id", "T", 1, 42, 7],  # a stream stored as a number
        ["id", "T", 1, "table:t-01", True, 0],  # a seq stored as a bool
    ],
)
def test_an_entry_of_another_shape_reads_as_a_whole_unpack_does(fields: list[object]) -> None:
    raw = msgpack.packb(fields)
    assert stream_and_seq(raw) == (fields[3], fields[4])


@pytest.mark.parametrize("raw", [msgpack.packb(["id", "T", 1, "s"]), b"\xc1", b""])
def test_an_entry_too_short_or_not_msgpack_fails_as_a_whole_unpack_does(raw: bytes) -> None:
    def whole(raw: bytes) -> tuple[object, object]:
        fields = msgpack.unpackb(raw, raw=False)
        return fields[3], fields[4]

    with pytest.raises(Exception) as expected:
        whole(raw)
    with pytest.raises(Exception) as got:
        stream_and_seq(raw)
    assert type(got.value) is type(expected.value)
