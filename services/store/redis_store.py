"""The event store on Redis Streams (docs/ARCHITECTURE.md, "The append script").

One organization per store. Each aggregate is one stream with explicit IDs ``0-<seq>``;
every event is also appended to the organization's log. Appends go through one Lua
script that checks the expected version and last hash, idempotency keys and balance
guards, and writes everything or nothing. Streams are never trimmed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import msgpack
import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.cluster import RedisCluster

from events.codec import decode, encode
from events.envelope import GENESIS_HASH, Envelope
from events.records import fast_init
from services.store import keys, replication
from services.store.writer import AppendWriter


class BalanceMove(NamedTuple):
    """A signed change to a player's chip balance; a negative move is guarded (never < 0).
    A named tuple: one per bet, packed as the ``[player, delta]`` the script reads."""

    player: str
    delta: int


MAX_MOVE = 2**53 - 1
"""Largest balance move the append script takes: Lua's numbers are exact up to 2^53."""
ROUND_OPENED = "RoundOpened"
"""The event the append script indexes by its round (``keys.rounds``): each ``RoundOpened``
of a table, so a recall finds any round in a fixed number of reads (services/recall.py)."""
ROUND_INDEXED = "table:"
"""The streams whose round index the script keeps and marks ``complete`` when it begins
them: the tables'."""
ROUND_INDEX_COMPLETE = "complete"
"""The round index's member that says it holds every round of its stream since seq 1."""


_pack_old_spec: Callable[[Any], bytes] = msgpack.Packer(use_bin_type=False).pack
"""msgpack without the bin type, by one packer made once (``packb`` makes one per call)."""
_pack: Callable[[Any], bytes] = msgpack.Packer(use_bin_type=True).pack


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class CommandWrite:
    """What one command writes: its events, balance moves and stored result (for retries).

    Encoded for the append script as it is made (``packed``), so that a command whose
    data cannot be encoded fails alone, before it joins a batch with other commands."""

    key: str
    result: bytes
    events: Sequence[Envelope] = ()
    moves: Sequence[BalanceMove] = ()
    packed: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for m in self.moves:
            # The script adds moves with HINCRBY: a move it could not add must fail here,
            # alone, not halfway through a batch's writes.
            if type(m.delta) is not int or abs(m.delta) > MAX_MOVE:
                raise OverflowError(f"balance move {m.delta!r} is not a whole number of cents")
        # A move is a named tuple: msgpack writes it as the array [player, delta].
        item = [self.key, self.result, list(self.moves), [encode(env) for env in self.events]]
        # The old msgpack spec (no bin type): the cmsgpack of Redis 6.2 reads only raw strings.
        object.__setattr__(self, "packed", _pack_old_spec(item))


def _array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` items (its items follow, packed)."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


@dataclass(frozen=True, slots=True, kw_only=True)
class Appended:
    """The batch was written; ``log_ids`` are the org-log ids of its events, in order."""

    log_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionConflict:
    """Another writer moved the stream: reload and decide again."""

    version: int
    last_hash: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DuplicateCommand:
    """Command ``index`` of the batch was already applied (a retry that raced)."""

    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class InsufficientFunds:
    """Command ``index`` would take ``player``'s balance below zero; nothing was written."""

    index: int
    player: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Fenced:
    """The writer's lease is not the stream's lease (it lost ownership, or never had it);
    nothing was written. ``holder`` is the lease's current value ('' when none)."""

    holder: str


AppendOutcome = Appended | VersionConflict | DuplicateCommand | InsufficientFunds | Fenced


@dataclass(frozen=True, slots=True)
class RoundMarks:
    """What a table's round index holds of one round (:meth:`EventStore.round_marks`): the
    seq of its ``RoundOpened`` (None: not indexed), the nearest indexed (round, seq) before
    and after it, and whether the index holds every round since seq 1."""

    exact: int | None
    before: tuple[int, int] | None
    after: tuple[int, int] | None
    complete: bool


@dataclass(slots=True)
class Head:
    """A stream's version (last seq, 0 when empty) and last hash."""

    version: int
    last_hash: str = GENESIS_HASH


MAX_CONNECTIONS = 128
"""Redis connections one process may open; more callers wait their turn (up to
``POOL_TIMEOUT_SECONDS``) instead of failing, so a burst of subscribers never errors."""
POOL_TIMEOUT_SECONDS = 5.0


RedisClient = aioredis.Redis | RedisCluster
"""A single Redis (or Valkey) server, or a Redis Cluster."""


class RedisAccessError(RuntimeError):
    """The Redis named by a URL could not be used at all: unreachable, a wrong user or
    password, a user refused a command the server needs, or a TLS certificate that is not
    trusted. The message names the URL without its password."""


_SECRET_QUERY = frozenset({"password", "ssl_password"})


def redact(url: str) -> str:
    """``url`` with its password (and any ``ssl_password`` option) replaced by ``***``: the
    only form of a Redis URL that may reach a log line or a message."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        user, _sep, host = netloc.rpartition("@")
        name = user.partition(":")[0]
        netloc = f"{name}:***@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if k in _SECRET_QUERY else v) for k, v in pairs], safe="/*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


async def open_redis(url: str, max_connections: int = MAX_CONNECTIONS) -> RedisClient:
    """A client for the server at ``url``; a cluster client when that server is a node of a
    Redis Cluster (every key of an organization shares the ``{org}`` hash tag, so its
    appends stay single-slot and atomic there too).

    ``url`` is passed to redis-py whole: ``redis://user:password@host:port/0`` logs in as a
    Redis 6 ACL user (``redis://:password@…`` as the default user), and ``rediss://`` speaks
    TLS, with redis-py's query options (``ssl_ca_certs``, ``ssl_cert_reqs``,
    ``ssl_certfile``, ``ssl_keyfile``, ``ssl_check_hostname``). The first call to the
    server is made here: if it fails (unreachable, refused login or command, untrusted
    certificate), :class:`RedisAccessError` says why."""
    client = connect(url, max_connections)
    try:
        info: Any = await client.info("cluster")
    except (redis.exceptions.RedisError, OSError) as e:
        await close_redis(client)
        raise RedisAccessError(f"cannot use the Redis at {redact(url)}: {_reason(e)}") from e
    if not info.get("cluster_enabled"):
        return client
    await client.aclose(close_connection_pool=True)
    cluster = RedisCluster.from_url(
        url,
        max_connections=max_connections,
        decode_responses=False,
        socket_connect_timeout=2,
        socket_timeout=10,
    )
    try:
        await cluster.initialize()
    except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException, OSError) as e:
        await cluster.aclose()
        raise RedisAccessError(
            f"cannot use the Redis Cluster at {redact(url)}: {_reason(e)}"
        ) from e
    return cluster


def _reason(error: BaseException) -> str:
    """What went wrong, in Redis's or the TLS library's words."""
    text = str(error).strip() or type(error).__name__
    if isinstance(error, redis.exceptions.AuthenticationError):
        return f"login refused ({text})"
    if isinstance(error, redis.exceptions.NoPermissionError):
        return f"the user may not run a command the server needs ({text})"
    return text


async def close_redis(client: RedisClient) -> None:
    if isinstance(client, RedisCluster):
        await client.aclose()
    else:
        await client.aclose(close_connection_pool=True)


def connect(url: str, max_connections: int = MAX_CONNECTIONS) -> aioredis.Redis:
    """A client for ``url`` with a blocking pool of ``max_connections`` connections."""
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=POOL_TIMEOUT_SECONDS,
        decode_responses=False,
        socket_connect_timeout=2,
        socket_timeout=10,
        health_check_interval=5,
    )
    return aioredis.Redis(connection_pool=pool)


def _identity(response: Any, **_options: Any) -> Any:
    return response


def _fields(fields: Any) -> dict[bytes, bytes]:
    """An entry's fields, from a raw reply (a flat list) or a parsed one (a dict)."""
    if isinstance(fields, dict):
        return fields
    return dict(zip(fields[::2], fields[1::2], strict=True))


def _payload(fields: Any) -> bytes:
    """The packed envelope of an org-log entry (its fields are exactly ``e``, payload)."""
    payload: bytes = fields[b"e"] if isinstance(fields, dict) else fields[1]
    return payload


def _stream_entry(entry_id: bytes, fields: Any) -> tuple[str, bytes, str | None]:
    """(entry id, packed envelope, org-log id) of an aggregate-stream entry."""
    values = _fields(fields)
    log_id = values.get(b"l")
    return entry_id.decode(), values[b"e"], log_id.decode() if log_id is not None else None


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class EventStore:
    """The organization's event store on one Redis (or one Cluster slot, via ``{org}``)."""

    def __init__(
        self, redis: RedisClient, org: str, *, wait_replicas: int = 0, wait_timeout_ms: int = 1000
    ) -> None:
        """``wait_replicas`` > 0: an append is acknowledged only once that many replicas
        confirmed it within ``wait_timeout_ms`` (``WAIT``), and a stored reply is handed out
        only once they hold it; else the call fails with
        :class:`~services.store.replication.NotReplicated` (``unavailable``)."""
        self.redis = redis
        self.org = org
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        source = resources.files("services.store").joinpath("append.lua").read_text()
        self.writer = AppendWriter(
            redis, source, wait_replicas=wait_replicas, wait_timeout_ms=wait_timeout_ms
        )
        self._log = keys.log(org)
        # Reads of entries skip redis-py's reply parsing (a dict per entry, in Python): a
        # client on the same pool whose XRANGE replies stay raw lists, parsed here. (A
        # cluster client has a pool per node: it keeps its parsed replies.)
        self._raw: Any = redis
        pool = getattr(redis, "connection_pool", None)
        if pool is not None:
            self._raw = aioredis.Redis(connection_pool=pool)
            self._raw.set_response_callback("XRANGE", _identity)
            self._raw.set_response_callback("XREAD", _identity)

    async def head(self, stream: str) -> Head:
        """The stream's version and last hash, from its meta hash."""
        version, last = await self.redis.hmget(keys.meta(self.org, stream), ["v", "h"])
        if version is None:
            return Head(0)
        return Head(int(version), _s(last))

    async def append(
        self, stream: str, expected: Head, commands: Sequence[CommandWrite], lease: str = ""
    ) -> AppendOutcome:
        """Append the commands' events atomically after ``expected``; see the Lua script.

        ``lease`` is the stream's lease value the writer holds (``services.cluster``): the
        script writes nothing and answers :class:`Fenced` unless the lease key holds exactly
        that value; ``''`` (no lease) is allowed only while the stream has no lease."""
        last_hash = expected.last_hash
        rounds: list[list[str]] = []
        for cmd in commands:
            if cmd.events:
                last_hash = cmd.events[-1].hash
                # The round index's entries, as text (exact in Lua whatever their size).
                rounds += [
                    [str(env.data["round"]), str(env.seq)]
                    for env in cmd.events
                    if env.type == ROUND_OPENED and type(env.data.get("round")) is int
                ]
        packed = _array_header(len(commands)) + b"".join(cmd.packed for cmd in commands)
        args = [
            stream,
            expected.version,
            expected.last_hash,
            GENESIS_HASH,
            packed,
            last_hash,
            lease,
            "1" if stream.startswith(ROUND_INDEXED) else "",
            _pack_old_spec(rounds) if rounds else "",
        ]
        reply = await self.writer.call(
            [
                keys.stream(self.org, stream),
                keys.meta(self.org, stream),
                self._log,
                keys.commands(self.org),
                keys.balances(self.org),
                keys.streams(self.org),
                keys.lease(self.org, stream),
                keys.rounds(self.org, stream),
            ],
            args,
        )
        status = _s(reply[0])
        if status == "ok":
            return Appended(log_ids=tuple(_s(x) for x in reply[1:]))
        if status == "conflict":
            return VersionConflict(version=int(reply[1]), last_hash=_s(reply[2]))
        if status == "duplicate":
            return DuplicateCommand(index=int(reply[1]) - 1)
        if status == "insufficient":
            return InsufficientFunds(index=int(reply[1]) - 1, player=_s(reply[2]))
        if status == "fenced":
            return Fenced(holder=_s(reply[1]))
        raise RuntimeError(f"append script replied {reply!r}")

    async def confirm_replicated(self) -> None:
        """With ``wait_replicas``: return once that many replicas hold everything the
        primary holds now, else raise :class:`~services.store.replication.NotReplicated`;
        without, return at once."""
        if self.wait_replicas:
            await replication.confirm_on_master(
                self.redis,
                keys.replication_barrier(self.org),
                self.wait_replicas,
                self.wait_timeout_ms,
            )

    async def read_raw(
        self, stream: str, since: int = 0, limit: int | None = None
    ) -> list[tuple[str, bytes, str | None]]:
        """Entries of ``stream`` after seq ``since``: (entry id, packed envelope, org-log id)."""
        entries: Any = await self._raw.xrange(
            keys.stream(self.org, stream), min=f"0-{since + 1}", max="+", count=limit
        )
        return [_stream_entry(i, f) for i, f in entries]

    async def round_marks(self, stream: str, number: int) -> RoundMarks:
        """What the round index of ``stream`` (``keys.rounds``) says of round ``number``, in
        one round trip: the seq of its ``RoundOpened``, the nearest indexed rounds before and
        after it, and whether the index is complete."""
        key = keys.rounds(self.org, stream)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrangebyscore(key, number, number, start=0, num=1)
        pipe.zrevrangebyscore(key, f"({number}", 1, start=0, num=1, withscores=True)
        pipe.zrangebyscore(key, f"({number}", "+inf", start=0, num=1, withscores=True)
        pipe.zscore(key, ROUND_INDEX_COMPLETE)
        exact, before, after, complete = await pipe.execute()

        def seq(member: Any) -> int | None:
            text = _s(member)
            return int(text) if text.isascii() and text.isdigit() and len(text) <= 19 else None

        def mark(found: Any) -> tuple[int, int] | None:
            if not found or seq(found[0][0]) is None:
                return None  # none, or not a seq: the recall searches instead
            member, score = found[0]
            return int(score), int(_s(member))

        return RoundMarks(
            exact=seq(exact[0]) if exact else None,
            before=mark(before),
            after=mark(after),
            complete=complete is not None,
        )

    async def read(self, stream: str, since: int = 0, limit: int | None = None) -> list[Envelope]:
        """Events of ``stream`` with seq > ``since``, in order (at most ``limit``)."""
        return [
            decode(raw, log_id) for _i, raw, log_id in await self.read_raw(stream, since, limit)
        ]

    async def read_all(self, stream: str, batch: int = 1000) -> list[Envelope]:
        """Every event of ``stream``, fetched in batches."""
        out: list[Envelope] = []
        while True:
            got = await self.read(stream, since=len(out), limit=batch)
            out += got
            if len(got) < batch:
                return out

    async def tail_log_raw(
        self, after: str, limit: int = 1000, block_ms: int = 1000
    ) -> list[tuple[str, bytes]]:
        """Wait up to ``block_ms`` for raw org-log entries after ``after``."""
        got: Any = await self._raw.xread({self._log: after}, count=limit, block=block_ms)
        out: list[tuple[str, bytes]] = []
        # Raw replies (the single-Redis client): [[key, [[id, [b"e", payload]], ...]]], or
        # a map of key -> entries; a cluster client's are parsed (fields as a dict).
        streams = got.items() if isinstance(got, dict) else (got or [])
        for _key, entries in streams:
            out += [(_s(i), _payload(f)) for i, f in entries]
        return out

    async def log_head(self) -> str:
        """The id of the org log's last entry, ``0`` when empty."""
        last: Any = await self.redis.xrevrange(self._log, count=1)
        return _s(last[0][0]) if last else "0"

    async def log_raw(self, after: str = "0", limit: int = 1000) -> list[tuple[str, bytes]]:
        """Raw org-log entries (id, packed envelope) after ``after``, for fast replays."""
        lo = f"({after}" if after != "0" else "-"
        entries: Any = await self._raw.xrange(self._log, min=lo, max="+", count=limit)
        # A log entry's fields are exactly ["e", payload].
        return [(i.decode(), _payload(f)) for i, f in entries]

    async def lookup(
        self, command_keys: Sequence[str], players: Sequence[str]
    ) -> tuple[list[bytes | None], dict[str, int]]:
        """In one round trip: stored results by idempotency key (None where new) and the
        balances of ``players``. With ``wait_replicas``, a stored result is returned only
        once that many replicas hold it (a second round trip, only when one was found)."""
        pipe = self.redis.pipeline(transaction=False)
        if command_keys:
            pipe.hmget(keys.commands(self.org), command_keys)
        if players:
            pipe.hmget(keys.balances(self.org), players)
        got: Any = await pipe.execute() if command_keys or players else []
        results: list[bytes | None] = list(got[0]) if command_keys else []
        if any(r is not None for r in results):
            # A stored reply may be that of an append whose WAIT fell short: answer from it
            # only once the replicas hold it too.
            await self.confirm_replicated()
        raw = got[-1] if players else []
        return results, {
            p: int(v) if v is not None else 0 for p, v in zip(players, raw, strict=True)
        }

    async def log_payloads(self, after: str = "0", limit: int = 1000) -> tuple[list[bytes], str]:
        """The packed envelopes of the org-log entries after ``after`` and the last entry's
        id (``after`` when there are none): the replay's fast path."""
        lo = f"({after}" if after != "0" else "-"
        entries: Any = await self._raw.xrange(self._log, min=lo, max="+", count=limit)
        if not entries:
            return [], after
        if self._raw is not self.redis:  # the reply as Redis sent it: [id, [b"e", payload]]
            return [f[1] for _i, f in entries], entries[-1][0].decode()
        return [_payload(f) for _i, f in entries], entries[-1][0].decode()

    async def command_results(self, command_keys: Sequence[str]) -> list[bytes | None]:
        """Stored results of earlier commands by idempotency key (None where new)."""
        return (await self.lookup(command_keys, ()))[0]

    async def balance(self, player: str) -> int:
        """The player's guarded chip balance in cents."""
        value = await self.redis.hget(keys.balances(self.org), player)
        return int(value) if value is not None else 0

    async def balances(self) -> dict[str, int]:
        got = await self.redis.hgetall(keys.balances(self.org))
        return {_s(k): int(v) for k, v in got.items()}

    async def stream_names(self) -> list[str]:
        """Every aggregate stream of the organization, sorted."""
        return sorted(_s(x) for x in await self.redis.smembers(keys.streams(self.org)))


def pack_result(fingerprint: str, reply: dict[str, Any]) -> bytes:
    """The stored form of a command's reply, with the fingerprint of what was asked."""
    return _pack([fingerprint, reply])


def unpack_result(raw: bytes) -> tuple[str, dict[str, Any]]:
    fingerprint, reply = msgpack.unpackb(raw, raw=False)
    return fingerprint, reply
