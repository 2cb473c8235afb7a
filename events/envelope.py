"""The envelope: the metadata the store keeps around every event body, and its hash chain.

Fields (docs/ARCHITECTURE.md, "The hash chain"): event id, type, schema version, stream,
seq (aggregate version, from 1 with no gaps), occurred-at (ms), actor (who did it),
causation (the command id), correlation (the round or drawing it belongs to), prev hash,
hash, and the body's data.
The org-log entry id is assigned by Redis when the event is appended, so it is carried
beside the envelope (``log_id``) and is not covered by the hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack

from events.base import Data, Event, from_data, to_data
from events.records import assembler

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
    raw: bytes | None = field(default=None, init=False, compare=False, repr=False)
    """A cache of the stored msgpack bytes, set by ``seal`` and ``decode`` only: any copy
    (``dataclasses.replace``) drops it, so an edited envelope is always packed afresh."""
    body: Event | None = field(default=None, init=False, compare=False, repr=False)
    """The typed body it was sealed from (set by ``seal`` only; a copy drops it)."""

    def with_raw(self, raw: bytes) -> Envelope:
        object.__setattr__(self, "raw", raw)
        return self

    def with_log_id(self, log_id: str) -> Envelope:
        """Set the org-log id the store assigned: only on an envelope not yet published
        (the actor's own, between the append and the publish), so no reader sees it change."""
        object.__setattr__(self, "log_id", log_id)
        return self

    def event(self) -> Event:
        """The typed body, upcast to the current version."""
        if self.body is not None:
            return self.body
        return from_data(self.type, self.version, self.data)


assemble = assembler(Envelope)
"""``assemble(id, type, version, stream, seq, ts, actor, causation, correlation,
prev_hash, hash, data, log_id, raw, body)``: an :class:`Envelope` with every field given,
set slot by slot (a frozen dataclass's own ``__init__`` costs several times more; seal and
decode build one per event). For the store's own readers and writers only: ``raw`` must
be the envelope's encoding."""


def canonical(value: Any) -> Any:
    """Plain data with every mapping's keys sorted, so equal data encodes to equal bytes."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    return value


_pack: Callable[[Any], bytes] = msgpack.Packer(use_bin_type=True).pack
"""msgpack with the bin type, by one packer made once (``packb`` makes a new one per call).
A packer is not for two threads at once: sealing runs on the event loop's thread."""


HASHED_FIELDS = 11
"""The hash covers a msgpack array of 11 items: the 10 metadata fields, then the data."""
ENCODED_FIELDS = 12
"""The stored envelope is a msgpack array of 12 items: the 10 metadata fields, hash, data."""


def _fixarray(n: int) -> bytes:
    return bytes([0x90 | n])


_HASHED_HEADER = _fixarray(HASHED_FIELDS)
_ENCODED_HEADER = _fixarray(ENCODED_FIELDS)


def _head(metadata: tuple[Any, ...]) -> bytes:
    """The packed metadata fields, in envelope order, as they stand in the array: packed as
    one array of ten, less its one-byte header (a fixarray's, as ten < 16)."""
    return _pack(metadata)[1:]


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
    """SHA-256 over the msgpack array ``[id, type, version, stream, seq, ts, actor, causation,
    correlation, prev_hash, data]``: every envelope field but the hash (and the org-log id,
    which Redis assigns), with every map of ``data`` in sorted key order, so the hash does
    not depend on how a reader ordered the keys (JSON tools may not keep them)."""
    head = _head((id, type, version, stream, seq, ts, actor, causation, correlation, prev_hash))
    return hashlib.sha256(_HASHED_HEADER + head + _pack(canonical(data))).hexdigest()


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
    """Wrap an event body in its envelope and compute its link in the stream's hash chain.

    The data and metadata are packed once: the same bytes feed the one hash and the
    stored entry (``raw``). ``to_data`` already sorts every map's keys (by the body type's
    own encoder), so these bytes are the canonical form :func:`chain_hash` recomputes."""
    data = to_data(body)
    data_bytes = _pack(data)
    head = _pack(
        (id, body.NAME, body.VERSION, stream, seq, ts, actor, causation, correlation, prev_hash)
    )[1:]
    digest = hashlib.sha256(_HASHED_HEADER + head + data_bytes).hexdigest()
    return assemble(
        id,
        body.NAME,
        body.VERSION,
        stream,
        seq,
        ts,
        actor,
        causation,
        correlation,
        prev_hash,
        digest,
        data,
        None,
        _ENCODED_HEADER + head + _pack(digest) + data_bytes,
        body,
    )


def event_id(*, stream: str, actor: str, causation: str, index: int) -> str:
    """The id of the ``index``-th event (from 0) a command appends to ``stream``: 32 hex
    digits of SHA-256 over who sent it and its command id. Derived, not random, so that a
    command applied twice shows as repeated event ids (``casino-night verify``)."""
    return hashlib.sha256(_pack([stream, actor, causation, index])).hexdigest()[:32]


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
