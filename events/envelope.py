"""The envelope: the metadata the store keeps around every event body, and its hash chain.

Fields (DESIGN.md, event store): event id, type, schema version, stream, seq (aggregate
version, from 1 with no gaps), occurred-at (ms), actor (who did it), causation (the command
id), correlation (the round or drawing it belongs to), prev hash, hash, and the body's data.
The org-log entry id is assigned by Redis when the event is appended, so it is carried
beside the envelope (``log_id``) and is not covered by the hash.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import msgpack

from events.base import Data, Event, from_data, to_data

GENESIS_HASH = "0" * 64
"""The ``prev_hash`` of every stream's first event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Envelope:
    """One stored event: metadata plus the body as plain data."""

    id: str
    type: str
    version: int
    stream: str
    seq: int
    ts: int
    actor: str
    causation: str
    correlation: str | None
    prev_hash: str
    hash: str
    data: Data
    log_id: str | None = field(default=None, compare=False)

    def event(self) -> Event:
        """The typed body, upcast to the current version."""
        return from_data(self.type, self.version, self.data)


def canonical(value: Any) -> Any:
    """Plain data with every mapping's keys sorted, so equal data encodes to equal bytes."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


def chain_hash(
    *,
    id: str,
    type: str,
    version: int,
    stream: str,
    seq: int,
    ts: int,
    actor: str,
    causation: str,
    correlation: str | None,
    prev_hash: str,
    data: Data,
) -> str:
    """SHA-256 over the canonical msgpack of every envelope field but the hash itself."""
    body = [id, type, version, stream, seq, ts, actor, causation, correlation, prev_hash]
    body.append(canonical(data))
    return hashlib.sha256(msgpack.packb(body, use_bin_type=True)).hexdigest()


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
    """Wrap an event body in its envelope and compute its link in the stream's hash chain."""
    data = to_data(body)
    digest = chain_hash(
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
        data=data,
    )
    return Envelope(
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


def expected_hash(env: Envelope) -> str:
    """The hash an envelope must carry, recomputed from its other fields."""
    return chain_hash(
        id=env.id,
        type=env.type,
        version=env.version,
        stream=env.stream,
        seq=env.seq,
        ts=env.ts,
        actor=env.actor,
        causation=env.causation,
        correlation=env.correlation,
        prev_hash=env.prev_hash,
        data=env.data,
    )
