"""Walk the hash chains and the org log, and report the first break (``casino-night verify``).

Per aggregate stream: entry ids are ``0-<seq>`` with seq 1, 2, … and no gap; every hash
recomputes from its event; every ``prev_hash`` is the previous event's hash; the stream's
meta hash matches its last event. The org log: every entry is a copy of exactly one stream
event (same hash, and the stream entry points back at this log entry), none is missing,
and each recomputes to its hash, so a change to the log that projections fold is caught too.
"""

from __future__ import annotations

from dataclasses import dataclass

from events.codec import decode
from events.envelope import GENESIS_HASH, expected_hash
from services.store.redis_store import EventStore

LOG = "log"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChainBreak:
    """Where a stream's chain (or the log) breaks and why."""

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


Index = dict[tuple[str, int], tuple[str | None, str]]
"""(stream, seq) -> (org-log id the stream entry names, hash)."""


def _broken(stream: str, count: int, seq: int, reason: str) -> ChainReport:
    return ChainReport(
        stream=stream, events=count, breaks=(ChainBreak(stream=stream, seq=seq, reason=reason),)
    )


async def verify_stream(
    store: EventStore, stream: str, batch: int = 1000, index: Index | None = None
) -> ChainReport:
    """Check one aggregate stream's chain up to the version its meta names when the walk
    starts (a server may go on appending: later events wait for the next run); stop at the
    first break (the rest is unproven).

    When ``index`` is given, every event checked is recorded in it for :func:`verify_log`."""
    head = await store.head(stream)
    prev = GENESIS_HASH
    count = 0
    while count < head.version:
        page = await store.read_raw(stream, since=count, limit=min(batch, head.version - count))
        for entry_id, raw, log_id in page:
            count += 1
            env = decode(raw, log_id)
            reason = None
            if entry_id != f"0-{count}":
                reason = f"expected entry 0-{count}, found entry {entry_id}"
            elif env.seq != count or env.stream != stream:
                reason = f"expected seq {count} of {stream}, found seq {env.seq} of {env.stream}"
            elif env.prev_hash != prev:
                reason = "prev_hash does not match the previous event's hash"
            elif expected_hash(env) != env.hash:
                reason = "hash does not match the event's contents (altered event)"
            if reason:
                return _broken(stream, count, count, reason)
            if index is not None:
                index[(stream, count)] = (log_id, env.hash)
            prev = env.hash
        if not page:
            break
    if head.version != count or head.last_hash != prev:
        return _broken(stream, count, count, "stream meta does not match its last event")
    return ChainReport(stream=stream, events=count, breaks=())


def _position(log_id: str) -> tuple[int, int]:
    ms, _, seq = log_id.partition("-")
    return int(ms), int(seq or 0)


async def verify_log(
    store: EventStore, index: Index, versions: dict[str, int], batch: int = 1000
) -> ChainReport:
    """Check the org log against the streams verified in ``index`` (up to ``versions``).

    The log is read after the streams, up to its last entry at that moment: every verified
    event must be in it exactly once; an entry for a later seq of a stream was appended
    after that stream was walked and waits for the next run."""
    upto = await store.log_head()
    last = _position(upto)
    seen: set[tuple[str, int]] = set()
    after = "0"
    count = 0
    while upto != "0":
        page = [e for e in await store.log_raw(after, batch) if _position(e[0]) <= last]
        for log_id, raw in page:
            count += 1
            env = decode(raw, log_id)
            key = (env.stream, env.seq)
            known = index.get(key)
            reason = None
            if known is None:
                if env.seq > versions.get(env.stream, 0) and expected_hash(env) == env.hash:
                    continue  # appended after its stream was walked
                reason = f"log entry {log_id} names {env.stream} seq {env.seq}, no such event"
            elif key in seen:
                reason = f"log entry {log_id} repeats {env.stream} seq {env.seq}"
            elif known[1] != env.hash or expected_hash(env) != env.hash:
                reason = f"log entry {log_id} differs from {env.stream} seq {env.seq}"
            elif known[0] != log_id:
                reason = f"{env.stream} seq {env.seq} points at log entry {known[0]}, not {log_id}"
            if reason:
                return _broken(LOG, count, count, reason)
            seen.add(key)
        if len(page) < batch:
            break
        after = page[-1][0]
    missing = sorted(set(index) - seen)
    if missing:
        stream, seq = missing[0]
        return _broken(LOG, count, count, f"{stream} seq {seq} is missing from the log")
    return ChainReport(stream=LOG, events=count, breaks=())


async def verify_all(store: EventStore) -> list[ChainReport]:
    """Verify every aggregate stream of the organization, then its org log.

    Safe on a live store: each stream is checked up to its version when its walk starts,
    and the log up to its last entry once the streams are done; events appended meanwhile
    are checked by the next run."""
    index: Index = {}
    reports = [await verify_stream(store, name, index=index) for name in await store.stream_names()]
    if all(r.ok for r in reports):
        versions = {r.stream: r.events for r in reports}
        reports.append(await verify_log(store, index, versions))
    return reports
