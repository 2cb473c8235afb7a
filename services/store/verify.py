"""Walk a stream's hash chain and report the first break (``casino-night verify``)."""

from __future__ import annotations

from dataclasses import dataclass

from events.envelope import GENESIS_HASH, expected_hash
from services.store.redis_store import EventStore


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainBreak:
    """Where a stream's chain breaks and why."""

    stream: str
    seq: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainReport:
    stream: str
    events: int
    breaks: tuple[ChainBreak, ...]

    @property
    def ok(self) -> bool:
        return not self.breaks


async def verify_stream(store: EventStore, stream: str, batch: int = 1000) -> ChainReport:
    """Check every event: seq runs 1, 2, … with no gap; each hash recomputes from its fields;
    each ``prev_hash`` is the previous event's hash; the meta hash matches the last event.
    Stops at the first break (everything after it is unproven)."""
    prev = GENESIS_HASH
    count = 0
    while True:
        page = await store.read(stream, since=count, limit=batch)
        for env in page:
            count += 1
            reason = None
            if env.seq != count or env.stream != stream:
                reason = f"expected seq {count} of {stream}, found seq {env.seq} of {env.stream}"
            elif env.prev_hash != prev:
                reason = "prev_hash does not match the previous event's hash"
            elif expected_hash(env) != env.hash:
                reason = "hash does not match the event's contents (altered event)"
            if reason:
                return ChainReport(
                    stream=stream,
                    events=count,
                    breaks=(ChainBreak(stream=stream, seq=count, reason=reason),),
                )
            prev = env.hash
        if len(page) < batch:
            break
    head = await store.head(stream)
    if head.version != count or head.last_hash != prev:
        brk = ChainBreak(
            stream=stream, seq=count, reason="stream meta does not match its last event"
        )
        return ChainReport(stream=stream, events=count, breaks=(brk,))
    return ChainReport(stream=stream, events=count, breaks=())


async def verify_all(store: EventStore) -> list[ChainReport]:
    """Verify every aggregate stream of the organization."""
    return [await verify_stream(store, name) for name in await store.stream_names()]
