"""Sealing as the server did it before the per-type encoders (the version at 9b85f72): the
generic ``to_data`` walk, a new msgpack packer per call, the envelope built by its dataclass
``__init__``, a command's write and stored reply packed by ``msgpack.packb``. The tests
compare the current sealing with this byte for byte, and write stores with it for
``verify`` and the actor to read."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack

from events.base import Event
from events.envelope import Envelope
from events.money import money_moves
from services.store.redis_store import Appended, EventStore

_PRIMITIVE = (str, int, bool, float, type(None), bytes)


def _sorted_fields(cls: type[Any]) -> tuple[tuple[str, int], ...]:
    if dataclasses.is_dataclass(cls):
        names = [f.name for f in dataclasses.fields(cls)]
    else:
        names = list(cls._fields)
    return tuple(sorted((n, i) for i, n in enumerate(names)))


def to_data(value: Any) -> Any:
    """The old generic walk: records and mappings to dicts with sorted keys, tuples to lists."""
    if isinstance(value, _PRIMITIVE):
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: to_data(value[i]) for name, i in _sorted_fields(type(value))}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: to_data(getattr(value, name)) for name, _i in _sorted_fields(type(value))}
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_data(value[k]) for k in sorted(value)}
    return value


def _pack(value: Any) -> bytes:
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def seal(
    body: Event,
    *,
    id: str,
    stream: str,
    seq: int,
    ts: int,
    actor: str,
    causation: str,
    correlation: str | None,
    prev_hash: str,
) -> Envelope:
    """The old ``seal``: the same bytes hashed and stored."""
    data = to_data(body)
    data_bytes = _pack(data)
    head = _pack(
        (id, body.NAME, body.VERSION, stream, seq, ts, actor, causation, correlation, prev_hash)
    )[1:]
    digest = hashlib.sha256(bytes([0x9B]) + head + data_bytes).hexdigest()
    env = Envelope(
        id=id,
        type=body.NAME,
        version=body.VERSION,
        stream=stream,
        seq=seq,
        ts=ts,
        actor=actor,
        causation=causation,
        correlation=correlation,
        prev_hash=prev_hash,
        hash=digest,
        data=data,
    )
    return env.with_raw(bytes([0x9C]) + head + _pack(digest) + data_bytes)


def event_id(*, stream: str, actor: str, causation: str, index: int) -> str:
    return hashlib.sha256(_pack([stream, actor, causation, index])).hexdigest()[:32]


def pack_result(fingerprint: str, reply: dict[str, Any]) -> bytes:
    return _pack([fingerprint, reply])


def pack_write(
    key: str, result: bytes, events: Sequence[Envelope], moves: Sequence[tuple[str, int]]
) -> bytes:
    """A command's part of the append script's argument, as ``CommandWrite`` packed it."""
    raws = [env.raw for env in events]
    item = [key, result, [[p, d] for p, d in moves], raws]
    packed: bytes = msgpack.packb(item, use_bin_type=False)
    return packed


@dataclass(frozen=True)
class LegacyWrite:
    """What ``EventStore.append`` reads of a command's write, packed the old way."""

    events: Sequence[Envelope]
    packed: bytes


async def append_legacy(
    store: EventStore,
    stream: str,
    actor: str,
    causation: str,
    bodies: Sequence[Event],
    *,
    ts: int,
    correlation: str | None = None,
) -> list[Envelope]:
    """Append one command's events to ``stream`` exactly as the old server wrote them:
    old ids, old seal, old stored reply and write (a system command has no key)."""
    head = await store.head(stream)
    envelopes = []
    prev, seq = head.last_hash, head.version
    for index, body in enumerate(bodies):
        seq += 1
        env = seal(
            body,
            id=event_id(stream=stream, actor=actor, causation=causation, index=index),
            stream=stream,
            seq=seq,
            ts=ts,
            actor=actor,
            causation=causation,
            correlation=correlation,
            prev_hash=prev,
        )
        prev = env.hash
        envelopes.append(env)
    key = "" if actor == "system" else f"{actor}/{causation}"
    result = pack_result(f"fp-{causation}", {"ok": True, "result": {"seq": seq}})
    moves = [(m.player, m.cents) for body in bodies for m in money_moves(body)]
    write = LegacyWrite(envelopes, pack_write(key, result, envelopes, moves))
    outcome = await store.append(stream, head, [write])  # type: ignore[list-item]
    assert isinstance(outcome, Appended), outcome
    return envelopes
