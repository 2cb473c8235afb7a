"""msgpack codec for envelopes as they sit in Redis Streams entries (one field ``e``)."""

from __future__ import annotations

from typing import Any

import msgpack

from events.envelope import Envelope


def encode(env: Envelope) -> bytes:
    """Pack an envelope as a msgpack array in a fixed field order."""
    if env.raw is not None:
        return env.raw
    packed: bytes = msgpack.packb(
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
        ],
        use_bin_type=True,
    )
    return packed


def decode(raw: bytes, log_id: str | None = None) -> Envelope:
    """Unpack what :func:`encode` wrote."""
    f: list[Any] = msgpack.unpackb(raw, raw=False)
    return Envelope(
        id=f[0],
        type=f[1],
        version=f[2],
        stream=f[3],
        seq=f[4],
        ts=f[5],
        actor=f[6],
        causation=f[7],
        correlation=f[8],
        prev_hash=f[9],
        hash=f[10],
        data=f[11],
        log_id=log_id,
    ).with_raw(raw)


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
