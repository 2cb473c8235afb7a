"""Figure 1: event-store appends per second on Redis with ``appendfsync always``.

Each append is what a table actor writes for accepted bets: per command, one ``BetPlaced``
envelope, its idempotency key, its stored reply and a guarded balance move, through
``EventStore.append`` (the Lua script) and the append writer's pipelines. Envelopes are
sealed (hash chained) before the timed loop; msgpack encoding, the script call and Redis's
fsync are inside it. The cost of ``seal`` itself is reported on its own row.

In the same run, against the same disk: eventsourcing-py (``pip install -e '.[bench]'``) on
SQLite in WAL mode with ``synchronous=FULL`` (every commit fsynced, as ``appendfsync
always`` fsyncs every acknowledged write), one aggregate per stream and one event of the
same fields as a ``BetPlaced`` per save, 50 threads and one; and ``redis-benchmark``'s
XADD with 50 clients on the same Redis, the ceiling of what that Redis fsyncs a second.

For one sequential writer (1i), three floors measured in the same runs: redis-benchmark's
bare XADD from one client (1l), this store's own script calls sent one at a time from a
blocking socket with no event loop and no append writer (1m), and 1m against SQLite (1n):
the most 1i could be with any client of this script on this Redis and disk.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import hiredis
import redis.asyncio as aioredis

from bench.common import Result, at_least, own_redis, progress, redis_url, unique_org
from events.codec import encode
from events.envelope import GENESIS_HASH, event_id, seal
from events.tables import BetPlaced
from services.store import keys
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import (
    Appended,
    BalanceMove,
    CommandWrite,
    EventStore,
    Head,
    pack_result,
)
from services.store.writer import PIPELINES, AppendWriter

STREAMS = 50
BATCHES = (8, 32)
"""Commands per append in the concurrent figures (group commits; the actor takes up to 64)."""
ES_VERSION = "9.5.6"
"""The eventsourcing-py release compared with (pinned in pyproject.toml's ``bench`` extra)."""
TARGET_CONCURRENT_RATIO = 5.0
"""This store with 50 writers (one command per append) against SQLite with 50 threads."""
TARGET_SEQUENTIAL_RATIO = 1.0
"""This store with one sequential writer against SQLite with one thread."""


def _commands(stream: str, player: str, count: int, ts: int) -> list[CommandWrite]:
    """``count`` bet commands for ``stream``, their envelopes sealed as one hash chain."""
    out: list[CommandWrite] = []
    prev = GENESIS_HASH
    table = stream.removeprefix("table:")
    for seq in range(1, count + 1):
        bet_id = f"{table}.1.{seq}"
        body = BetPlaced(
            round=1,
            bet_id=bet_id,
            player=player,
            bet={"kind": "straight", "numbers": [str(seq % 37)]},
            amount=1,
        )
        env = seal(
            body,
            id=uuid.uuid4().hex,
            stream=stream,
            seq=seq,
            ts=ts,
            actor=f"player:{player}",
            causation=f"c-{seq}",
            correlation=f"{table}#1",
            prev_hash=prev,
        )
        prev = env.hash
        reply = {"ok": True, "result": {"seq": seq, "round": 1, "bet_id": bet_id}}
        out.append(
            CommandWrite(
                key=f"{player}/c-{seq}",
                result=pack_result("f" * 64, reply),
                events=(env,),
                moves=(BalanceMove(player=player, delta=-1),),
            )
        )
    return out


async def _fund(client: aioredis.Redis, org: str, players: list[str]) -> None:
    await client.hset(keys.balances(org), mapping=dict.fromkeys(players, 10**12))


async def sequential(url: str, count: int, seconds: float) -> tuple[float, int]:
    """One stream, one awaited append of one command (one event) at a time."""
    client = aioredis.Redis.from_url(url, decode_responses=False)
    org = unique_org("store-seq")
    store = EventStore(client, org)
    store.writer.start()
    try:
        await _fund(client, org, ["p-0"])
        commands = _commands("table:seq", "p-0", count, int(time.time() * 1000))
        head = Head(0)
        await store.append("table:seq", head, commands[:1])  # warm the script cache
        head = Head(1, commands[0].events[0].hash)
        done = 0
        started = time.perf_counter()
        deadline = started + seconds
        for cmd in commands[1:]:
            outcome = await store.append("table:seq", head, [cmd])
            if not isinstance(outcome, Appended):
                raise RuntimeError(f"append refused: {outcome}")
            env = cmd.events[0]
            head = Head(env.seq, env.hash)
            done += 1
            if time.perf_counter() >= deadline:
                break
        return done / (time.perf_counter() - started), done
    finally:
        await store.writer.stop()
        await client.aclose()


class _Capture:
    """Takes the append writer's place in an :class:`EventStore` to keep each script call's
    keys and arguments instead of sending them (answering each as an accepted append)."""

    def __init__(self, sha: str) -> None:
        self.sha = sha
        self.commands: list[bytes] = []

    async def call(self, keys: list[str], args: list[Any]) -> Any:
        self.commands.append(hiredis.pack_command(("EVALSHA", self.sha, len(keys), *keys, *args)))
        return [b"ok", b"0-1"]


async def script_calls(url: str, count: int) -> tuple[list[bytes], int]:
    """The EVALSHA commands that :func:`sequential`'s appends of ``count`` commands send, for
    a fresh organization (funded), and how many bytes one is."""
    client = aioredis.Redis.from_url(url, decode_responses=False)
    org = unique_org("store-script")
    store = EventStore(client, org)
    source = store.writer.source
    capture = _Capture(store.writer.script.sha)
    store.writer = capture  # type: ignore[assignment]
    try:
        await client.script_load(source)
        await _fund(client, org, ["p-0"])
        head = Head(0)
        for cmd in _commands("table:seq", "p-0", count, int(time.time() * 1000)):
            await store.append("table:seq", head, [cmd])
            env = cmd.events[0]
            head = Head(env.seq, env.hash)
    finally:
        await client.aclose()
    return capture.commands, len(capture.commands[-1])


def script_alone(redis: EmbeddedRedis, commands: list[bytes], seconds: float) -> float:
    """Send ``commands`` one at a time on a blocking socket, each reply awaited (no event
    loop, no append writer: next to no client), for at most ``seconds``: what one sequential
    writer would get if the client cost nothing. Appends per second; every reply must be an
    accepted append."""
    tcp = redis_url(redis) == redis.url
    family = socket.AF_INET if tcp else socket.AF_UNIX
    where: Any = ("127.0.0.1", redis.port) if tcp else str(redis.socket_path)
    reader = hiredis.Reader()
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.connect(where)

        def ask(command: bytes) -> Any:
            sock.sendall(command)
            while (reply := reader.gets()) is False:
                data = sock.recv(65536)
                if not data:
                    raise ConnectionError("Redis closed the connection")
                reader.feed(data)
            if isinstance(reply, hiredis.ReplyError):
                raise RuntimeError(f"Redis refused: {reply}")
            return reply

        if redis.password:
            auth: tuple[Any, ...] = ("AUTH", redis.password)
            ask(hiredis.pack_command(auth))
        done = 0
        started = time.perf_counter()
        deadline = started + seconds
        for command in commands:
            reply = ask(command)
            if reply[0] != b"ok":
                raise RuntimeError(f"append refused: {reply!r}")
            done += 1
            if time.perf_counter() >= deadline:
                break
        return done / (time.perf_counter() - started)


async def concurrent(
    url: str, work: list[list[CommandWrite]], batch: int, pipelines: int = PIPELINES
) -> tuple[float, int, float]:
    """``STREAMS`` tasks, each appending ``batch`` commands at a time to its own stream,
    through an append writer with ``pipelines`` in flight: (events/s, events, this
    process's CPU µs per event)."""
    client = aioredis.Redis.from_url(url, decode_responses=False, max_connections=STREAMS + 4)
    org = unique_org("store-conc")
    store = EventStore(client, org)
    store.writer = AppendWriter(client, store.writer.source, pipelines=pipelines)
    store.writer.start()
    try:
        await _fund(client, org, [c[0].moves[0].player for c in work])

        async def writer(stream: str, commands: list[CommandWrite]) -> int:
            head = Head(0)
            written = 0
            for i in range(0, len(commands), batch):
                part = commands[i : i + batch]
                outcome = await store.append(stream, head, part)
                if not isinstance(outcome, Appended):
                    raise RuntimeError(f"append refused: {outcome}")
                last = part[-1].events[-1]
                head = Head(last.seq, last.hash)
                written += len(part)
            return written

        # Open the connections first so that the timed part measures appends, not connects.
        await asyncio.gather(*(client.ping() for _ in range(STREAMS)))
        cpu = time.process_time()
        started = time.perf_counter()
        counts = await asyncio.gather(*(writer(c[0].events[0].stream, c) for c in work))
        elapsed = time.perf_counter() - started
        cpu = time.process_time() - cpu
        total = sum(counts)
        return total / elapsed, total, cpu / total * 1e6
    finally:
        await store.writer.stop()
        await client.aclose()


def seal_cost(count: int = 5000) -> float:
    """Microseconds to seal one BetPlaced envelope (to_data, canonical msgpack, SHA-256)."""
    bodies = [
        BetPlaced(round=1, bet_id=f"x.1.{i}", player="p-0", bet={"kind": "red"}, amount=1)
        for i in range(count)
    ]
    prev = GENESIS_HASH
    started = time.perf_counter()
    for i, body in enumerate(bodies):
        prev = seal(
            body,
            id=event_id(stream="table:x", actor="player:p-0", causation=f"c-{i}", index=0),
            stream="table:x",
            seq=i + 1,
            ts=0,
            actor="player:p-0",
            causation=f"c-{i}",
            correlation="x#1",
            prev_hash=prev,
        ).hash
    return (time.perf_counter() - started) / count * 1e6


@functools.cache
def _eventsourcing() -> tuple[Any, Any, Any]:
    """eventsourcing-py's Application, an aggregate taking BetPlaced events, and its SQLite
    connection pool (imported here: the library is only in the ``bench`` extra)."""
    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event
    from eventsourcing.sqlite import SQLiteConnectionPool

    class Table(Aggregate):
        @event("BetPlaced")
        def place_bet(
            self, round: int, bet_id: str, player: str, bet: dict[str, Any], amount: int
        ) -> None:
            pass

    return Application, Table, SQLiteConnectionPool


def sqlite_appends(
    directory: Path, threads: int, per_thread: int, seconds: float
) -> tuple[float, int, int]:
    """eventsourcing-py on SQLite (WAL, ``synchronous=FULL``): ``threads`` threads, each
    saving one event at a time to an aggregate of its own, for at most ``seconds``:
    (events/s, events, bytes of one stored event's state)."""
    application, table_class, pool_class = _eventsourcing()
    create = pool_class._create_connection

    def full_sync(pool: Any) -> Any:
        # FULL is SQLite's usual default; set it so the comparison never rests on a build.
        conn = create(pool)
        conn._sqlite_conn.execute("PRAGMA synchronous=FULL")
        return conn

    db = directory / f"es-{threads}-{time.monotonic_ns()}.db"
    pool_class._create_connection = full_sync
    try:
        app: Any = application(
            env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(db)}
        )
        with app.recorder.datastore.transaction(commit=False) as cursor:
            cursor.execute("PRAGMA journal_mode")
            journal = cursor.fetchone()[0]
            cursor.execute("PRAGMA synchronous")
            sync = cursor.fetchone()[0]
        if journal.lower() != "wal" or sync != 2:
            raise RuntimeError(f"SQLite runs journal_mode={journal} synchronous={sync}")
        tables = [table_class() for _ in range(threads)]
        app.save(*tables)
        gate = threading.Barrier(threads + 1)
        done = [0] * threads
        deadline = [0.0]

        def writer(i: int) -> None:
            table = tables[i]
            gate.wait()
            for n in range(per_thread):
                table.place_bet(
                    round=1,
                    bet_id=f"t{i}.1.{n + 1}",
                    player=f"p-{i}",
                    bet={"kind": "straight", "numbers": [str(n % 37)]},
                    amount=1,
                )
                app.save(table)
                done[i] += 1
                if time.perf_counter() >= deadline[0]:
                    return

        workers = [threading.Thread(target=writer, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        started = time.perf_counter()
        deadline[0] = started + seconds
        gate.wait()
        for w in workers:
            w.join()
        elapsed = time.perf_counter() - started
        size = _stored_size(app, tables[0])
        app.close()
        return sum(done) / elapsed, sum(done), size
    finally:
        pool_class._create_connection = create


def _stored_size(app: Any, table: Any) -> int:
    """Bytes of the state of the aggregate's last stored event."""
    [last] = app.recorder.select_events(table.id, desc=True, limit=1)
    return len(last.state)


_RPS = re.compile(r"([0-9][0-9.]*) requests per second")


def redis_benchmark_xadd(
    redis: EmbeddedRedis, payload_bytes: int, requests: int, clients: int = 50
) -> float | None:
    """``redis-benchmark``'s XADD rate with ``clients`` clients, one command each in flight
    (``-P 1``), a field of ``payload_bytes``; None when redis-benchmark is not installed."""
    binary = shutil.which("redis-benchmark")
    if binary is None:
        return None
    # The bench's own throwaway Redis: its password may show on a command line.
    socket = redis.socket_path if redis_url(redis) != redis.url else None
    where = (
        ["-s", str(socket)] if socket is not None else ["-h", "127.0.0.1", "-p", str(redis.port)]
    )
    args = [binary, *where, "-a", redis.password or ""]
    args += ["-c", str(clients), "-n", str(requests), "-P", "1", "-q"]
    args += ["XADD", "bench-stream", "*", "e", "x" * payload_bytes]
    done = subprocess.run(args, capture_output=True, text=True, check=True, timeout=300)
    found = _RPS.findall(done.stdout.replace("\r", "\n"))
    if not found:
        raise RuntimeError(f"redis-benchmark printed no rate: {done.stdout[-300:]!r}")
    return float(found[-1])


def _spread(rates: list[float]) -> str:
    return ", ".join(f"{r:,.0f}" for r in rates)


async def run(quick: bool) -> list[Result]:
    seq_seconds = 2.0 if quick else 4.0
    per_stream = 400 if quick else 1000
    runs = 1 if quick else 3
    es_seconds = 3.0 if quick else 5.0
    have_es = importlib.util.find_spec("eventsourcing") is not None
    with own_redis() as redis, tempfile.TemporaryDirectory(prefix="cn-bench-sqlite-") as tmp:
        ts = int(time.time() * 1000)
        # The same sealed streams serve every run, each run under an organization of its own.
        work = [_commands(f"table:s{i}", f"p-{i}", per_stream, ts) for i in range(STREAMS)]
        payload = len(encode(work[0][0].events[0]))  # what each XADD of an append stores
        seq: list[float] = []
        seq_n = 0
        one: list[float] = []
        one_cpu: list[float] = []
        single: list[float] = []
        es_conc: list[float] = []
        es_seq: list[float] = []
        es_size = 0
        bare_seq: list[float | None] = []
        alone: list[float] = []
        script_bytes = 0
        # Interleaved, so that both stores share whatever else the machine does.
        for r in range(runs):
            progress(f"store: one stream, sequential appends (run {r + 1}/{runs})")
            rate, seq_n = await sequential(redis_url(redis), 4000 if quick else 12000, seq_seconds)
            seq.append(rate)
            if have_es:
                progress(f"store: eventsourcing-py on SQLite, 1 thread (run {r + 1}/{runs})")
                rate, _n, es_size = await asyncio.to_thread(
                    sqlite_appends, Path(tmp), 1, 10**6, es_seconds
                )
                es_seq.append(rate)
            # What any client could get from this Redis and disk one append at a time: C, a
            # bare XADD, no script; the floor under 1a is the AOF's write + fsync.
            progress(f"store: redis-benchmark XADD, 1 client (run {r + 1}/{runs})")
            bare_seq.append(
                await asyncio.to_thread(
                    redis_benchmark_xadd, redis, payload, 4000 if quick else 10_000, 1
                )
            )
            progress(f"store: the append script alone, one at a time (run {r + 1}/{runs})")
            calls, script_bytes = await script_calls(redis_url(redis), 4000 if quick else 12000)
            alone.append(await asyncio.to_thread(script_alone, redis, calls, seq_seconds))
            progress(f"store: {STREAMS} streams concurrent, 1 command per append (run {r + 1})")
            rate, _n, cpu = await concurrent(redis_url(redis), work, 1)
            one.append(rate)
            one_cpu.append(cpu)
            rate, _n, _cpu = await concurrent(redis_url(redis), work, 1, pipelines=1)
            single.append(rate)
            if have_es:
                progress(f"store: eventsourcing-py on SQLite, {STREAMS} threads (run {r + 1})")
                rate, _n, _size = await asyncio.to_thread(
                    sqlite_appends, Path(tmp), STREAMS, 10**6, es_seconds
                )
                es_conc.append(rate)
        conc: dict[int, list[float]] = {}
        for batch in BATCHES:
            progress(f"store: {STREAMS} streams concurrent, {batch} commands per append")
            conc[batch] = [
                (await concurrent(redis_url(redis), work, batch))[0] for _ in range(runs)
            ]
        progress("store: redis-benchmark XADD, 50 clients")
        ceiling = await asyncio.to_thread(
            redis_benchmark_xadd, redis, payload, 20_000 if quick else 100_000
        )
    seal_us = seal_cost()
    seq_rate = statistics.median(seq)
    one_rate = statistics.median(one)
    of = f"median of {runs}"
    rows = [
        Result(
            "1a store appends, 1 stream sequential (1 event/append)",
            seq_rate,
            "events/s",
            note=f"{seq_n:,} awaited EventStore.append calls, each 1 BetPlaced + key + result"
            " + balance move; envelopes pre-sealed; encode + Lua + fsync timed;"
            f" {of}: {_spread(seq)}",
        )
    ]
    for letter, (batch, rates) in zip("bc", conc.items(), strict=True):
        rows.append(
            at_least(
                f"1{letter} store appends, {STREAMS} streams concurrent ({batch} events/append)",
                statistics.median(rates),
                "events/s",
                40_000,
                note=f"{STREAMS} tasks x {per_stream:,} events, {batch} commands per append (each"
                " 1 BetPlaced + key + result + balance move); pre-sealed; encode + Lua + fsync"
                f" timed; {of}: {_spread(rates)}",
            )
        )
    rows.append(
        Result(
            "1d seal() of one BetPlaced (not in 1a-1c)",
            seal_us,
            "us/event",
            note="the event id (SHA-256 of stream, sender, command id), to_data, canonical msgpack,"
            " the chain hash (SHA-256): what the actor pays per event",
            digits=1,
        )
    )
    rows.append(
        Result(
            f"1e store appends, {STREAMS} streams concurrent (1 event/append)",
            one_rate,
            "events/s",
            note=f"as 1b with one command per append, {PIPELINES} pipelines in flight;"
            f" {of}: {_spread(one)}; this process's CPU {statistics.median(one_cpu):.0f} us"
            f" an append; with 1 pipeline in flight: {_spread(single)}",
        )
    )
    if have_es:
        rows.append(
            Result(
                f"1f eventsourcing-py {ES_VERSION} on SQLite, {STREAMS} threads (1 event/save)",
                statistics.median(es_conc),
                "events/s",
                note=f"WAL, synchronous=FULL, same disk as Redis's AOF; one aggregate per thread,"
                f" one event per save ({es_size} bytes stored, this store's is {payload});"
                f" {es_seconds:.0f} s a run; {of}: {_spread(es_conc)}",
            )
        )
        rows.append(
            Result(
                f"1g eventsourcing-py {ES_VERSION} on SQLite, 1 thread (1 event/save)",
                statistics.median(es_seq),
                "events/s",
                note=f"as 1f with one thread; {of}: {_spread(es_seq)}",
            )
        )
        conc_ratios = [a / b for a, b in zip(one, es_conc, strict=True)]
        seq_ratios = [a / b for a, b in zip(seq, es_seq, strict=True)]
        rows.append(
            at_least(
                "1h ratio 1e / 1f (50 writers: this store / SQLite)",
                statistics.median(conc_ratios),
                "x",
                TARGET_CONCURRENT_RATIO,
                note=f"{of} ratios, each of two runs measured one after the other:"
                f" {', '.join(f'{r:.2f}' for r in conc_ratios)}",
                digits=2,
            )
        )
        rows.append(
            at_least(
                "1i ratio 1a / 1g (one sequential writer: this store / SQLite)",
                statistics.median(seq_ratios),
                "x",
                TARGET_SEQUENTIAL_RATIO,
                note=f"{of} ratios, each of two runs measured one after the other:"
                f" {', '.join(f'{r:.2f}' for r in seq_ratios)}",
                digits=2,
            )
        )
    else:
        missing = "eventsourcing not installed (the bench extra)"
        for figure, unit in (
            (
                f"1f eventsourcing-py {ES_VERSION} on SQLite, {STREAMS} threads (1 event/save)",
                "events/s",
            ),
            (f"1g eventsourcing-py {ES_VERSION} on SQLite, 1 thread (1 event/save)", "events/s"),
            ("1h ratio 1e / 1f (50 writers: this store / SQLite)", "x"),
            ("1i ratio 1a / 1g (one sequential writer: this store / SQLite)", "x"),
        ):
            rows.append(Result(figure, None, unit, absent=missing))
    if ceiling is None:
        rows.append(
            Result(
                "1j redis-benchmark XADD, 50 clients, same Redis",
                None,
                "requests/s",
                absent="redis-benchmark not found",
                note="not measured: install redis-tools (make bench does, with apt-get)",
            )
        )
    else:
        rows.append(
            Result(
                "1j redis-benchmark XADD, 50 clients, same Redis",
                ceiling,
                "requests/s",
                note=f"redis-benchmark -c 50 -P 1 XADD bench-stream * e <{payload} bytes>,"
                " appendfsync always: one XADD per request, no script",
            )
        )
        rows.append(
            Result(
                "1k ratio 1e / 1j (50 writers: this store / redis-benchmark XADD)",
                one_rate / ceiling,
                "x",
                note="each append runs the whole script: 2 XADD, 2 HSET, HINCRBY, SADD and checks",
                digits=2,
            )
        )
    rows.extend(_sequential_ceiling(bare_seq, alone, seq, es_seq, payload, script_bytes, of))
    return rows


def _ratios(tops: list[float], bottoms: list[float]) -> tuple[float, str]:
    ratios = [a / b for a, b in zip(tops, bottoms, strict=True)]
    return statistics.median(ratios), ", ".join(f"{r:.2f}" for r in ratios)


def _sequential_ceiling(
    bare: list[float | None],
    alone: list[float],
    seq: list[float],
    es_seq: list[float],
    payload: int,
    script_bytes: int,
    of: str,
) -> list[Result]:
    """1l-1n, measured right after 1a and 1g in each run: what one sequential writer could
    get from this Redis on this disk with next to no client. 1l is redis-benchmark's bare
    XADD, one at a time; 1m the append script alone (:func:`script_alone`); 1n sets 1m
    against SQLite, the most 1i could be with any client of this script."""
    rows: list[Result] = []
    rates = [rate for rate in bare if rate is not None]
    figure = "1l redis-benchmark XADD, 1 client, same Redis"
    if rates:
        _, each = _ratios(seq, rates)
        rows.append(
            Result(
                figure,
                statistics.median(rates),
                "requests/s",
                note=f"redis-benchmark -c 1 -P 1 XADD <{payload} bytes>, appendfsync always: one"
                f" XADD at a time, no script; {of}: {_spread(rates)}; 1a / 1l: {each}",
            )
        )
    else:
        rows.append(Result(figure, None, "requests/s", absent="redis-benchmark not found"))
    _, each = _ratios(seq, alone)
    rows.append(
        Result(
            "1m the append script alone, 1 stream sequential (1 event/append)",
            statistics.median(alone),
            "events/s",
            note=f"1a's EVALSHA commands ({script_bytes:,} bytes each), sent one at a time on a"
            f" blocking socket: no event loop, no append writer; {of}: {_spread(alone)};"
            f" 1a / 1m (the client's share): {each}",
        )
    )
    ratio = "1n ratio 1m / 1g (one sequential writer: the script with no client / SQLite)"
    if len(es_seq) == len(alone):
        median, each = _ratios(alone, es_seq)
        rows.append(
            Result(
                ratio,
                median,
                "x",
                note=f"1i's ceiling with this script, Redis and disk: {of}: {each}",
                digits=2,
            )
        )
    else:
        rows.append(
            Result(ratio, None, "x", absent="eventsourcing not installed (the bench extra)")
        )
    return rows
