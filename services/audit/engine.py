"""The audit's engine: one pass over the org log, in order, feeding every checker.

The source is the org log of a store (read in pages, up to the entry that was last when the
audit began) or any iterable of envelopes (an export); the signed checkpoints and the
balances the store guards are inputs. The engine checks the hash chains itself, as it
decodes each event (docs/AUDIT.md, "Hash chains, checkpoints and balances"), and hands
each event only to the checkers whose ``types`` hold it. What is reported can be narrowed
to an occasion or a time window (:class:`Scope`); every event is still read and checked,
since a figure may need earlier ones (a table's configuration, a round's bets).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast, runtime_checkable

import msgspec
import redis.asyncio as aioredis

from events.envelope import GENESIS_HASH, Envelope, assemble, expected_hash
from services.audit.balances import unfoldable
from services.audit.base import Checker, Discrepancy, JSONValue
from services.audit.chains import ChainChecker, SignedCheckpoint
from services.audit.dealing import Owners, Share
from services.store import keys
from services.store.redis_store import EventStore

PAGE = 3000
"""Org-log entries fetched per read: as the projection runner reads (projections/runner.py)."""
REPORT_FORMAT = "casino-night audit 1"
OCCASION_STARTED = "OccasionStarted"
OCCASION_ONLY = b"o"
"""The field an entry dealt to a share carries in place of ``e`` when the share is to read
it (an ``OccasionStarted`` of another share's stream) but not check it."""


class _Stored(msgspec.Struct, array_like=True):
    """A stored envelope (``events.codec.encode``'s array) with its data left as bytes: the
    bytes the hash covers, and decoded only for an event some checker reads."""

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
    data: msgspec.Raw


_decode_stored = msgspec.msgpack.Decoder(_Stored).decode
_decode_data = msgspec.msgpack.Decoder(dict[str, Any]).decode
_HASHED_PREFIX = hashlib.sha256(b"\x9b")
"""SHA-256 fed the msgpack header of the hashed array of 11 items (``events.envelope.
chain_hash``), copied for each event: the stored array of 12 is that header's place, the
same 10 metadata fields, the hash, the data; the hash is over the rest as stored."""
_PACKED_HASH = 66
"""A hash as it stands in the stored array: str 8 header (2 bytes), 64 hex digits."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """What the report covers; every event is read and checked all the same.

    ``occasion``: the events after that occasion's ``OccasionStarted`` and before the next
    ``OccasionStarted``, in log order. ``since_ms`` / ``until_ms``: the events whose
    occurred-at (unix ms) is at or after ``since_ms`` and before ``until_ms``. Together:
    both. A discrepancy is reported when its event is in scope, or when it is about a whole
    stream, player or checkpoint (no seq)."""

    occasion: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None

    @property
    def whole(self) -> bool:
        return self.occasion is None and self.since_ms is None and self.until_ms is None

    def to_json(self) -> dict[str, JSONValue]:
        return {"occasion": self.occasion, "since_ms": self.since_ms, "until_ms": self.until_ms}


WHOLE_LOG = Scope()
"""The report covers every event."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckSummary:
    """One checker's line of the report."""

    name: str
    checked: Mapping[str, int]
    discrepancies: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditReport:
    """What the audit read, what each checker checked, and every discrepancy in scope."""

    organization: str
    log_head: str
    """The last org-log entry read (``0``: none); the audit reads nothing after it."""
    events: int
    events_in_scope: int
    scope: Scope
    checks: tuple[CheckSummary, ...]
    discrepancies: tuple[Discrepancy, ...]
    checkpoints: int
    """Signed checkpoints given (each checked against the chains)."""
    occasions: tuple[str, ...] = ()
    """The occasions the log started (``OccasionStarted``), in order."""
    figures: Mapping[str, list[dict[str, JSONValue]]] = field(default_factory=dict)
    """Figures of the whole log the checkers recomputed and the log records nowhere else
    (``banks``: each bell jar receptacle's bank), by name: rows of one shape each."""

    @property
    def ok(self) -> bool:
        return not self.discrepancies

    def to_json(self) -> dict[str, JSONValue]:
        """The report as ``audit.json`` holds it (docs/AUDIT.md)."""
        return {
            "format": REPORT_FORMAT,
            "organization": self.organization,
            "log_head": self.log_head,
            "events": self.events,
            "events_in_scope": self.events_in_scope,
            "scope": self.scope.to_json(),
            "checkpoints": self.checkpoints,
            "occasions": list(self.occasions),
            "ok": self.ok,
            **{name: list(rows) for name, rows in sorted(self.figures.items())},
            "checks": [
                {"name": c.name, "checked": dict(c.checked), "discrepancies": c.discrepancies}
                for c in self.checks
            ],
            "discrepancies": [
                {
                    "check": d.check,
                    "stream": d.stream,
                    "seq": d.seq,
                    "what": d.what,
                    "expected": d.expected,
                    "found": d.found,
                    "log_id": d.log_id,
                }
                for d in self.discrepancies
            ],
        }


@runtime_checkable
class DataFolder(Protocol):
    """A checker that reads only an event's type, version and data: the engine hands it
    those (``fold``) instead of an envelope, so an event no other checker reads is never
    assembled into one (the balances: three events in four)."""

    def fold(self, type_: str, version: int, data: dict[str, Any]) -> None: ...


_Route = tuple[tuple[Callable[[Envelope], None], ...], tuple[Callable[[str, int, Any], None], ...]]
"""For one event type: the checkers' ``observe`` that take it, and the folders' ``fold``."""


class Audit:
    """The pass: feed it the log's events in order (:meth:`feed_raw` for stored entries,
    :meth:`feed` for envelopes), then :meth:`finish`.

    ``checkers``: every checker but the chains' (the rule checkers of
    ``services.audit.rules.RULE_CHECKERS`` and the balance checker), fed in that order;
    the engine links every event into its own :class:`ChainChecker` (given ``checkpoints``,
    and ``no_checkpoint``, why there are none, when none could be found)."""

    def __init__(
        self,
        organization: str,
        checkers: Sequence[Checker],
        *,
        checkpoints: Sequence[SignedCheckpoint] = (),
        no_checkpoint: str | None = None,
        scope: Scope = WHOLE_LOG,
        share: Share | None = None,
    ) -> None:
        self.organization = organization
        self.scope = scope
        self.share = share
        """Set when the pass is shared among processes (``services.audit.shares``): the
        first share reads the log, checks the streams it keeps and deals every other
        share its entries (:attr:`outbox`); another share is fed only its own."""
        lead = share is None or share.index == 0
        self.chains = ChainChecker(
            checkpoints, none_because=no_checkpoint if lead else None, owns_log=lead
        )
        self._owners = Owners(share.of) if share is not None and lead else None
        self.outbox: list[list[Any]] = [[] for _ in range(share.of if share else 0)]
        """The first share's: per share, the entries dealt to it from the pages fed so
        far (taken away by the caller after each page); an ``OccasionStarted`` goes to
        every share, marked as one to read but not check (:data:`OCCASION_ONLY`)."""
        self.checkers: list[Checker] = list(checkers)
        self.events = 0
        self.in_scope = 0
        self.last_log_id = "0"
        self._routes: dict[str, _Route] = {}
        self._occasion: str | None = None
        self.occasions: dict[str, None] = {}
        """Every occasion the log started, in order."""
        self._whole = scope.whole
        self._ranges: dict[str, list[int]] = {}
        """Per stream: the first and last seq in scope."""

    def _route(self, type_: str) -> _Route:
        wants = [c for c in self.checkers if c.types is None or type_ in c.types]
        route = (
            tuple(c.observe for c in wants if not isinstance(c, DataFolder)),
            tuple(c.fold for c in wants if isinstance(c, DataFolder)),
        )
        self._routes[type_] = route
        return route

    def _scoped(self, stream: str, seq: int, ts: int) -> None:
        scope = self.scope
        if scope.occasion is not None and self._occasion != scope.occasion:
            return
        if scope.since_ms is not None and ts < scope.since_ms:
            return
        if scope.until_ms is not None and ts >= scope.until_ms:
            return
        self.in_scope += 1
        span = self._ranges.get(stream)
        if span is None:
            self._ranges[stream] = [seq, seq]
        else:
            span[1] = seq

    def feed_raw(self, entries: Sequence[Sequence[Any]]) -> None:
        """Take org-log entries as ``XRANGE`` replies them, ``[id, [b"e", payload]]`` (id
        as bytes or str, the payload a stored envelope), in log order.

        The hash is recomputed from the stored bytes themselves (the server stores exactly
        the bytes it hashed); an entry whose bytes do not give its hash is recomputed as
        ``events.envelope.expected_hash`` does (canonical data) before it is called altered."""
        routes = self._routes
        chains = self.chains
        streams = chains.streams
        # The signed log entries' ids, as str and as the bytes Redis replies with.
        log_pins = {*chains.log_pins, *(k.encode() for k in chains.log_pins)}
        hasher = _HASHED_PREFIX.copy
        whole = self._whole
        in_order = 0
        owners = self._owners
        owned = owners.owned if owners is not None else None
        me = self.share.index if self.share is not None else 0
        dealt = self.share is not None and owners is None  # a share fed by the first
        outbox = self.outbox
        foreign = 0
        for entry in entries:
            raw = entry[1][1]
            try:
                f = _decode_stored(raw)
            except (msgspec.ValidationError, msgspec.DecodeError) as e:
                if chains.owns_log:
                    chains.unreadable(_text(entry[0]), str(e))
                else:
                    foreign += 1
                continue
            if owned is not None and owners is not None:
                owner = owned.get(f.stream)
                if owner is None:
                    owner = owners.assign(f.stream)
                    if owner != me:
                        chains.foreign.add(f.stream)
                if f.type == OCCASION_STARTED:  # every share follows the occasions
                    marked = (entry[0], (OCCASION_ONLY, raw))
                    for k, box in enumerate(outbox):
                        if k != me and k != owner:
                            box.append(marked)
                if owner != me:  # another share's stream: dealt to it
                    foreign += 1
                    outbox[owner].append(entry)
                    if f.type == OCCASION_STARTED:
                        self._occasion_started(f.data)
                    if entry[0] in log_pins:
                        chains.saw_log(_text(entry[0]))
                    continue
            elif dealt and entry[1][0] == OCCASION_ONLY:
                foreign += 1
                self._occasion_started(f.data)
                continue
            data_raw = f.data
            h = hasher()
            h.update(raw[1 : len(raw) - len(data_raw) - _PACKED_HASH])
            h.update(data_raw)
            sound = h.hexdigest() == f.hash
            type_ = f.type
            route = routes.get(type_)
            if route is None:
                route = self._route(type_)
            observers, folders = route
            env = None
            log_id: str | None = None
            if observers or folders or not sound or type_ == OCCASION_STARTED:
                try:
                    data = _decode_data(data_raw)
                except (msgspec.ValidationError, msgspec.DecodeError) as e:
                    # Not a map of fields (a forged event re-hashed): named, read by no check.
                    log_id = _text(entry[0])
                    chains.unreadable_data(f.stream, f.seq, type_, log_id, str(e))
                    observers = folders = ()
                    data = {}
                for fold in folders:
                    try:
                        fold(type_, f.version, data)
                    except Exception as e:  # a forged event's data: named, the audit goes on
                        _unfoldable(fold, type_, f.stream, f.seq, _text(entry[0]), e)
                if observers or not sound:
                    log_id = _text(entry[0])
                    env = assemble(
                        f.id, type_, f.version, f.stream, f.seq, f.ts, f.actor, f.causation,
                        f.correlation, f.prev_hash, f.hash, data, log_id, raw, None,
                    )  # fmt: skip
                    if not sound:
                        sound = expected_hash(env) == f.hash
                if type_ == OCCASION_STARTED:
                    self._occasion_started(data_raw)
            st = streams.get(f.stream)
            seq = f.seq
            if (
                sound
                and st is not None
                and seq == st.seq + 1
                and f.prev_hash == st.hash
                and seq != st.next_pin
                and entry[0] not in log_pins
            ):
                st.seq = seq
                st.hash = f.hash
                in_order += 1
            else:
                if log_id is None:
                    log_id = _text(entry[0])
                chains.link(f.stream, seq, f.prev_hash, f.hash, sound, log_id, env)
            if env is not None:
                for observe in observers:
                    observe(env)
            if not whole:
                self._scoped(f.stream, seq, f.ts)
        chains.events += in_order
        self.events += len(entries) - foreign
        if owners is not None:
            chains.dealt += foreign
        if entries:
            chains.any_log_id = True
            self.last_log_id = _text(entries[-1][0])

    def _occasion_started(self, data_raw: msgspec.Raw | bytes) -> None:
        """An ``OccasionStarted``: the occasion every later event belongs to, until the next
        (read by every share, whatever stream it is on)."""
        try:
            occasion = _decode_data(data_raw).get("occasion")
        except (msgspec.ValidationError, msgspec.DecodeError):
            occasion = None  # the stream's owner names the event's data as unreadable
        self._occasion = occasion
        self.occasions[str(occasion)] = None

    def feed(self, envelopes: Iterable[Envelope]) -> None:
        """Take envelopes in log order (an export's, as its reader gives them): each one's
        hash is recomputed from its fields (``events.envelope.expected_hash``)."""
        chains = self.chains
        routes = self._routes
        whole = self._whole
        for env in envelopes:
            try:
                sound = expected_hash(env) == env.hash
            except Exception:  # data no encoder can hash (a forged export): not the hash
                sound = False
            chains.link(env.stream, env.seq, env.prev_hash, env.hash, sound, env.log_id, env)
            if env.type == OCCASION_STARTED:
                self._occasion = env.data.get("occasion")
                self.occasions[str(self._occasion)] = None
            route = routes.get(env.type)
            if route is None:
                route = self._route(env.type)
            for fold in route[1]:
                try:
                    fold(env.type, env.version, env.data)
                except Exception as e:  # a forged event's data: named, the audit goes on
                    _unfoldable(fold, env.type, env.stream, env.seq, env.log_id, e)
            for observe in route[0]:
                observe(env)
            if not whole:
                self._scoped(env.stream, env.seq, env.ts)
            self.events += 1
            if env.log_id is not None:
                self.last_log_id = env.log_id

    @property
    def scoped_seqs(self) -> Mapping[str, tuple[int, int]]:
        """Per stream this engine checked: the first and last seq in scope."""
        return {name: (span[0], span[1]) for name, span in self._ranges.items()}

    def absorb_scope(self, spans: Mapping[str, tuple[int, int]]) -> None:
        """The seqs in scope of the streams another share checked, so that what is found
        of them outside the pass (``finish(also=)``: the streams' own heads) is held to
        the same scope as in one pass."""
        for name, (first, last) in spans.items():
            self._ranges[name] = [first, last]

    def _in_scope(self, d: Discrepancy) -> bool:
        if self._whole or d.seq is None:
            return True
        span = self._ranges.get(d.stream)
        return span is not None and span[0] <= d.seq <= span[1]

    def finish(self, *, also: Sequence[Discrepancy] = ()) -> AuditReport:
        """End the pass: each checker's end-of-log checks, then the report (``also``:
        discrepancies found outside the pass, e.g. the store's stream heads)."""
        self.chains.finish()
        found: list[Discrepancy] = []
        checks = []
        figures: dict[str, list[dict[str, JSONValue]]] = {}
        for checker in (self.chains, *self.checkers):
            if checker is not self.chains:
                try:
                    checker.finish()
                    gives = getattr(checker, "figures", None)
                    if gives is not None:
                        figures.update(gives())
                except Exception as e:  # state forged data left: named, the report still made
                    checker.discrepancies.append(
                        Discrepancy(
                            check=checker.name,
                            stream="log",
                            seq=None,
                            what=f"the {checker.name} check could not finish on what the log "
                            "holds (forged data its events left)",
                            expected="a log its rules can read",
                            found=repr(e),
                        )
                    )
            mine = [d for d in checker.discrepancies if self._in_scope(d)]
            if checker is self.chains:
                mine += [d for d in also if self._in_scope(d)]
            found += mine
            checks.append(
                CheckSummary(
                    name=checker.name, checked=dict(checker.checked), discrepancies=len(mine)
                )
            )
        return AuditReport(
            organization=self.organization,
            log_head=self.last_log_id,
            events=self.events,
            events_in_scope=self.events if self._whole else self.in_scope,
            scope=self.scope,
            checks=tuple(checks),
            discrepancies=tuple(found),
            checkpoints=self.chains.checkpoints,
            occasions=tuple(self.occasions),
            figures=figures,
        )


def _unfoldable(
    fold: Callable[[str, int, Any], None],
    type_: str,
    stream: str,
    seq: int,
    log_id: str | None,
    error: Exception,
) -> None:
    """Name, as a discrepancy of the folder's own check, an event its ``fold`` raised on
    (every folder is a checker's bound ``fold``)."""
    checker: Any = cast(Any, fold).__self__
    checker.discrepancies.append(unfoldable(checker.name, type_, stream, seq, log_id, error))


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _position(log_id: str) -> tuple[int, int]:
    ms, _, seq = log_id.partition("-")
    return int(ms), int(seq or 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """What the store held at one moment (one transaction): the org log's last entry, its
    length, the last id Redis generated for it (a deleted entry's too), and the balances
    the append script guards."""

    log_head: str
    length: int
    generated: str = "0"
    guarded: Mapping[str, int] = field(default_factory=dict)


async def snapshot(store: EventStore) -> Snapshot:
    """Read the log's head, length and last generated id and the guarded balances in one
    ``MULTI``: the append script is atomic, so the balances are exactly those the log up to
    that head gives, even on a live store."""
    log_key = keys.log(store.org)
    pipe = store.redis.pipeline(transaction=True)
    pipe.xrevrange(log_key, count=1)
    pipe.xlen(log_key)
    pipe.hgetall(keys.balances(store.org))
    pipe.xinfo_stream(log_key)
    last, length, balances, info = await pipe.execute(raise_on_error=False)
    head = _text(last[0][0]) if last else "0"
    generated = "0"
    if not isinstance(info, Exception):  # no log yet: XINFO has no stream to describe
        generated = _text(info["last-generated-id"])
    return Snapshot(
        log_head=head,
        length=int(length),
        generated=generated,
        guarded={_text(k): int(v) for k, v in balances.items()},
    )


async def read_log(
    audit: Audit,
    store: EventStore,
    upto: str,
    *,
    on_page: Callable[[int], object] | None = None,
    page: int = PAGE,
) -> None:
    """Feed ``audit`` the org log from its start to entry ``upto`` (inclusive), in pages;
    the next page is fetched while this one is checked. ``on_page(n)`` after each page of
    ``n`` entries (the progress bar). Never writes."""
    if upto == "0":
        return
    with cyclic_gc_paused():
        await _read_log(audit, store, upto, on_page, page)


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """No cyclic garbage collection during the pass: what the pass allocates (each event's
    decoded data) is freed by reference counting, and what lives on (the checkers' state)
    would otherwise be scanned over and over; it halved the decoding's cost, as measured
    (docs/AUDIT.md). The collector is restored after, as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _raw_reader(store: EventStore) -> Any:
    """A client on the store's pool whose ``XRANGE`` replies stay as Redis sent them (a
    list per entry, ids as bytes), as ``EventStore`` reads its own; a cluster client keeps
    its parsed replies (a dict of fields per entry: made a list here)."""
    pool = getattr(store.redis, "connection_pool", None)
    if pool is None:
        return None
    reader = aioredis.Redis(connection_pool=pool)
    reader.set_response_callback("XRANGE", lambda response, **_options: response)
    return reader


async def _read_log(
    audit: Audit,
    store: EventStore,
    upto: str,
    on_page: Callable[[int], object] | None,
    page: int,
) -> None:
    last = _position(upto)
    reader = _raw_reader(store)
    log_key = keys.log(store.org)

    async def fetch_after(after: str) -> list[Any]:
        low = "-" if after == "0" else f"({after}"
        if reader is None:  # a cluster client: fields parsed into a dict
            got: Any = await store.redis.xrange(log_key, min=low, max=upto, count=page)
            return [(i, (b"e", f[b"e"])) for i, f in got]
        entries: list[Any] = await reader.xrange(log_key, min=low, max=upto, count=page)
        return entries

    fetch = asyncio.ensure_future(fetch_after("0"))
    try:
        while True:
            entries = await fetch
            if not entries:
                break
            done = len(entries) < page or _position(_text(entries[-1][0])) >= last
            if not done:
                fetch = asyncio.ensure_future(fetch_after(_text(entries[-1][0])))
            audit.feed_raw(entries)
            if on_page is not None:
                on_page(len(entries))
            if done:
                break
    finally:
        fetch.cancel()  # a page still on its way when the pass stops short (a share failed)


async def stream_heads(
    store: EventStore, tips: Mapping[str, tuple[int, str]], generated: str
) -> list[Discrepancy]:
    """The store's own record of each stream against what the log gave (``tips``: stream ->
    last seq and hash in the log), read after the pass: the stream's meta must be at or past
    that seq and its entry at that seq must be that event. The stream's next event, if it
    has one, must name a log entry Redis had not yet made when the audit began (after
    ``generated``, the log's last generated id then, deleted entries included): else it was
    appended before and its copy is missing from the log (a stream the log holds no event
    of at all, or one whose last copies were deleted)."""
    out: list[Discrepancy] = []
    made = _position(generated)
    for name in sorted(set(await store.stream_names()) | set(tips)):
        seq, digest = tips.get(name, (0, GENESIS_HASH))
        head = await store.head(name)
        if head.version < seq:
            out.append(
                Discrepancy(
                    check="chains",
                    stream=name,
                    seq=head.version + 1,
                    what=f"the stream's meta ends at seq {head.version}; the log goes to {seq}",
                    expected=seq,
                    found=head.version,
                )
            )
            continue
        since = max(seq - 1, 0)
        page = await store.read_raw(name, since=since, limit=2 if seq else 1)
        at = {entry_id: (raw, logged) for entry_id, raw, logged in page}
        if seq:
            mine = at.get(f"0-{seq}")
            found: JSONValue = None if mine is None else _decode_stored(mine[0]).hash
            if found != digest:
                out.append(
                    Discrepancy(
                        check="chains",
                        stream=name,
                        seq=seq,
                        what=f"the stream's event at seq {seq} is not the log's copy",
                        expected=digest,
                        found=found,
                    )
                )
        later = at.get(f"0-{seq + 1}")
        if later is not None and (later[1] is None or _position(later[1]) <= made):
            out.append(
                Discrepancy(
                    check="chains",
                    stream=name,
                    seq=seq + 1,
                    what=f"the stream's seq {seq + 1} was appended before the audit began, "
                    "but the org log does not hold it",
                    expected=None,
                    found=later[1],
                )
            )
    return out
