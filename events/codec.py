"""msgpack codec for envelopes as they sit in Redis Streams entries (one field ``e``).

The stored envelope is a msgpack array in a fixed field order; this module is the one
place that knows the order (every reader goes through :func:`decode`, :func:`fold_view`
or :func:`stream_of`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgpack
import msgspec

from events.base import Data, current_version, upcast
from events.envelope import Envelope, _pack, assemble

_TYPE, _VERSION, _STREAM, _TS, _DATA = 1, 2, 3, 5, 11
"""Positions in the stored array (see :func:`encode`) of what a fold reads."""


def encode(env: Envelope) -> bytes:
    """Pack an envelope as a msgpack array in a fixed field order."""
    if env.raw is not None:
        return env.raw
    return _pack(
        [
            env.id,
            env.type,
            env.version,
            env.stream,
            env.seq,
            env.ts,
            env.actor,
            env.causation,
            env.correlation,
            env.prev_hash,
            env.hash,
            env.data,
        ]
    )


def decode(raw: bytes, log_id: str | None = None) -> Envelope:
    """Unpack what :func:`encode` wrote."""
    f: list[Any] = msgpack.unpackb(raw, raw=False)
    return assemble(
        f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], log_id, raw, None
    )


def fold_view(raw: bytes) -> tuple[str, str, Data, int]:
    """What a projection folds of a stored envelope: its type, stream, data and occurred-at
    (unix ms), the data upcast by the event registry to the type's current version. Only
    the data of an older version goes through the upcasters (a current one is passed as
    stored, so a rebuild pays for upcasting only where there is some); a type the registry
    does not know is passed as stored (the projections fold only the types they name)."""
    f: list[Any] = msgpack.unpackb(raw, raw=False)
    type_ = f[_TYPE]
    data = f[_DATA]
    version = f[_VERSION]
    current = current_version(type_)
    if version != current and current is not None:
        data = upcast(type_, version, data)
    return type_, f[_STREAM], data, f[_TS]


class _Folded(msgspec.Struct, array_like=True):
    """The stored array (see :func:`encode`) as a fold reads it: the type, version, stream,
    occurred-at and data decoded; the id, seq, actor, causation, correlation and hashes
    left undecoded (``msgspec.Raw``), which a rebuild never reads."""

    id: msgspec.Raw
    type: str
    version: int
    stream: str
    seq: msgspec.Raw
    ts: int
    actor: msgspec.Raw
    causation: msgspec.Raw
    correlation: msgspec.Raw
    prev_hash: msgspec.Raw
    hash: msgspec.Raw
    data: dict[str, Any]


_decode_folded = msgspec.msgpack.Decoder(_Folded).decode


def fold_into(payloads: Iterable[bytes], apply: Callable[[str, str, Data, int], None]) -> None:
    """``apply(type, stream, data, ts)`` for each stored envelope, in order, as
    :func:`fold_view` reads it (a rebuild's loop: the registry's versions looked up once
    per type). An envelope is decoded typed, only in the fields a fold reads (three times
    cheaper than unpacking all of it); one of another shape goes through
    :func:`fold_view`, which reads it as it always did. Handed straight to ``apply``, with
    no generator between: a rebuild of one projection spent a tenth of its time there."""
    versions: dict[str, int | None] = {}
    decode_folded = _decode_folded
    for raw in payloads:
        try:
            f = decode_folded(raw)
        except (msgspec.ValidationError, msgspec.DecodeError):
            apply(*fold_view(raw))
            continue
        type_ = f.type
        current = versions.get(type_, -1)
        if current == -1:
            current = versions[type_] = current_version(type_)
        if f.version != current and current is not None:
            apply(type_, f.stream, upcast(type_, f.version, f.data), f.ts)
        else:
            apply(type_, f.stream, f.data, f.ts)


def stream_of(raw: bytes) -> str:
    """The stream a stored envelope belongs to."""
    stream: str = msgpack.unpackb(raw, raw=False)[_STREAM]
    return stream


def to_json(env: Envelope) -> dict[str, Any]:
    """The event as PROTOCOL.md shows it to clients (``{"ev": ...}`` holds this)."""
    out: dict[str, Any] = {
        "id": env.id,
        "type": env.type,
        "version": env.version,
        "stream": env.stream,
        "seq": env.seq,
        "ts": env.ts,
        "actor": env.actor,
        "causation": env.causation,
        "correlation": env.correlation,
        "prev_hash": env.prev_hash,
        "hash": env.hash,
        "data": env.data,
    }
    if env.log_id is not None:
        out["log_id"] = env.log_id
    return out
