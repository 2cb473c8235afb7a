"""Walk the hash chains and the org log, and report the first break (``casino-night verify``).

Per aggregate stream: entry ids are ``0-<seq>`` with seq 1, 2, … and no gap; every hash
recomputes from its event; every ``prev_hash`` is the previous event's hash; the stream's
meta hash matches its last event. The org log: every entry is a copy of exactly one stream
event (same hash, and the stream entry points back at this log entry), none is missing,
and each recomputes to its hash, so a change to the log that projections fold is caught too.
Commands: no command's events appear twice (:class:`CommandCheck`). The chains are checked
against a signed checkpoint kept outside Redis by ``services.store.anchor``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from events.codec import decode
from events.envelope import GENESIS_HASH, Envelope, expected_hash
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


def proven(report: ChainReport) -> int:
    """The last seq of a stream whose chain the report proves (all of an intact stream; up
    to the event before the first break of a broken one)."""
    return report.events if report.ok else report.breaks[0].seq - 1


async def verify_stream(
    store: EventStore,
    stream: str,
    batch: int = 1000,
    index: Index | None = None,
    commands: CommandCheck | None = None,
) -> ChainReport:
    """Check one aggregate stream's chain up to the version its meta names when the walk
    starts (a server may go on appending: later events wait for the next run); stop at the
    first break (the rest is unproven).

    When ``index`` is given, every event checked is recorded in it for :func:`verify_log`;
    when ``commands`` is, every event checked is shown to it."""
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
            if commands is not None:
                commands.observe(env)
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


async def verify_all(
    store: EventStore, *, also: Iterable[str] = (), commands: CommandCheck | None = None
) -> list[ChainReport]:
    """Verify every aggregate stream of the organization (those the stream set names and
    those in ``also``, e.g. the streams a checkpoint signed), then its org log.

    Safe on a live store: each stream is checked up to its version when its walk starts,
    and the log up to its last entry once the streams are done; events appended meanwhile
    are checked by the next run."""
    index: Index = {}
    names = sorted(set(await store.stream_names()) | set(also))
    reports = [await verify_stream(store, name, index=index, commands=commands) for name in names]
    if all(r.ok for r in reports):
        versions = {r.stream: r.events for r in reports}
        reports.append(await verify_log(store, index, versions))
    return reports


@dataclass(frozen=True, slots=True, kw_only=True)
class Duplicate:
    """An event at (``stream``, ``seq``) that repeats what an earlier one (``first_stream``,
    ``first_seq``, earlier in commit order) already was: a later run of events of the same
    command (``kind`` ``command``), or the same event id (``kind`` ``event id``)."""

    kind: str
    stream: str
    seq: int
    first_stream: str
    first_seq: int
    what: str
    """The command's causation and actor, or the event id."""

    def describe(self) -> str:
        """``<stream> seq <n>: …`` for the report."""
        if self.kind == "command":
            again = "applied again; its first events are at"
        else:
            again = "repeats the event at"
        first = f"{self.first_stream} seq {self.first_seq}"
        return f"{self.stream} seq {self.seq}: {self.what} {again} {first}"


_NOWHERE = (sys.maxsize, 0)
"""The commit position of an event whose stream entry names no log entry: last."""


class CommandCheck:
    """Finds a command applied twice, from the events :func:`verify_stream` checks.

    A command is identified by its envelope's ``actor`` (``<role>:<sub>``, or ``system``)
    and ``causation`` (the command id); the events one application writes are consecutive
    in one stream (a run). A later run with the identity of an earlier one, in any stream,
    is that command applied again; so is an event id seen twice (event ids are unique, and
    an adjacent second application repeats them when ids derive from the command).

    Memory: the walk keeps one 64-bit digest per run and per event id, never the strings.
    Only a digest seen twice is looked at again, by :meth:`findings`, which walks the streams
    once more for those digests alone, confirms them on the exact strings (a digest
    collision is no finding) and orders each command's runs by commit order."""

    def __init__(self) -> None:
        self.runs = 0
        """Runs of events seen: the commands that wrote events."""
        self.events = 0
        self._runs: set[int] = set()
        self._ids: set[int] = set()
        self._suspect_runs: set[int] = set()
        self._suspect_ids: set[int] = set()
        self._prev: tuple[str, str, str] | None = None

    def observe(self, env: Envelope) -> None:
        """Note one checked event; streams are shown one after the other, each in order."""
        self.events += 1
        current = (env.stream, env.actor, env.causation)
        if current != self._prev:
            self._prev = current
            self.runs += 1
            digest = hash((env.actor, env.causation))
            if digest in self._runs:
                self._suspect_runs.add(digest)
            else:
                self._runs.add(digest)
        digest = hash(env.id)
        if digest in self._ids:
            self._suspect_ids.add(digest)
        else:
            self._ids.add(digest)

    async def findings(
        self, store: EventStore, versions: Mapping[str, int], batch: int = 1000
    ) -> list[Duplicate]:
        """Every later repetition, confirmed, by stream and seq; ``versions``: how far each
        stream was checked (:func:`proven`). Reads the store again only if a digest repeated."""
        if not self._suspect_runs and not self._suspect_ids:
            return []
        Where = list[tuple[tuple[int, int], str, int]]
        runs: dict[tuple[str, str], Where] = {}
        ids: dict[str, Where] = {}
        for stream in sorted(versions):
            prev: tuple[str, str] | None = None
            count = 0
            upto = versions[stream]
            while count < upto:
                page = await store.read_raw(stream, since=count, limit=min(batch, upto - count))
                for _entry_id, raw, log_id in page:
                    count += 1
                    env = decode(raw)
                    at = (_position(log_id) if log_id else _NOWHERE, stream, env.seq)
                    identity = (env.actor, env.causation)
                    if identity != prev:
                        prev = identity
                        if hash(identity) in self._suspect_runs:
                            runs.setdefault(identity, []).append(at)
                    if hash(env.id) in self._suspect_ids:
                        ids.setdefault(env.id, []).append(at)
                if not page:
                    break
        out: list[Duplicate] = []
        for kind, found in (
            ("command", {f"command {c!r} of {a}": w for (a, c), w in runs.items()}),
            ("event id", {f"event id {i}": w for i, w in ids.items()}),
        ):
            for what, where in found.items():
                where.sort()
                _pos, first_stream, first_seq = where[0]
                out += [
                    Duplicate(
                        kind=kind,
                        stream=stream,
                        seq=seq,
                        first_stream=first_stream,
                        first_seq=first_seq,
                        what=what,
                    )
                    for _p, stream, seq in where[1:]
                ]
        return sorted(out, key=lambda d: (d.stream, d.seq, d.kind))
