"""Figure 2: acknowledged bets per second over websockets, and latency from send to reply.

The server is ``casino-night serve`` in a child process (uvloop, its own projections
runner, logging as in production) against this benchmark's Redis (``appendfsync
always``). The night has 20 roulette tables and 200 players; the cashier sells each player
chips and a dealer opens a round at every table. Then 200 player websockets, 10 per table,
bet straight-up 1 cent bets for their own account, each bet its own frame, in three phases:

- throughput: closed loop, each client keeps ``WINDOW`` bets in flight (a new one as soon
  as a reply arrives) for ``seconds``; acknowledged (``ok``) bets per second.
- latency: open loop at the target rate (5,000 bets/s offered in all, every client sending
  at random (Poisson) times at 1/200 of it); send-to-reply p50 and p99.
- light load: the same open loop at half the closed-loop rate measured above; its p99.
- moderate load: the same open loop at ``MODERATE_RATE``, the same for every version; the
  server's CPU per acknowledged bet there. At a few commands per actor batch a bet costs
  the server far more than at saturation (every batch is its own append, every wake-up its
  own), which is what holds 2d's p99 up: this figure compares that cost between versions.

The open loop's arrivals are drawn by one sender for all clients (a Poisson stream at the
whole rate, each arrival going to a client drawn at random, which makes every client's
arrivals a Poisson stream at its share), so the bench's own process spends little per bet
on timers: it shares the two cores with the server and Redis. Replies are read by their
first bytes (``{"re":"…","ok":true``); only refusals are parsed as JSON.

Between the phases the dealers settle the rounds and open new ones, so that every phase
starts with empty rounds. Latencies are measured in this process from writing the frame to
reading the reply frame.

Before each open-loop phase the bench has Redis rewrite its AOF and waits until it is done
(:func:`_compact_aof`). The bench writes in seconds what a night writes in hours, so the
AOF doubles every few seconds and Redis's own rewrite (a fork that writes the whole
dataset, hundreds of megabytes, on the same two cores) would otherwise land in a random
phase: on the 2-core machine, a phase with one had a p99 of 55-120 ms where the same phase
without one had 12-22 ms. The closed loop runs with Redis's rewrites as they come, as it
did before this was done.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from bench.common import (
    CpuMeter,
    RawWs,
    Result,
    ServerProcess,
    at_least,
    at_most,
    connect_many,
    gather_all,
    night_doc,
    own_redis,
    percentile,
    progress,
    redis_url,
    token,
    unique_org,
)
from services.store.embedded import EmbeddedRedis

TABLES = 20
PER_TABLE = 10
WINDOW = 8
TARGET_RATE = 5_000
ARRIVAL_TICK = 0.001
"""Open loop: the sender sleeps at least this long (the event loop's timer resolution) and
then sends every arrival due; a bet's latency counts from when it was sent."""
MODERATE_RATE = 1_000
"""Figure 2f's offered rate: well below saturation on every version measured."""
MAX_OUTSTANDING = 256
"""Open loop: a client with this many bets unanswered skips its next send (counted)."""


class Bettor:
    """One player's tablet: bets for its own account at one table."""

    def __init__(self, ws: RawWs, table: str, player: str, seed: int) -> None:
        self.ws = ws
        self.table = table
        self.player = player
        self.rng = random.Random(seed)
        self.sent: dict[str, tuple[float, bool]] = {}
        self.n = 0
        self.closed_loop = False
        self.recording = False
        """Count ok replies that arrive now (the throughput window)."""
        self.measuring = False
        """Record the latency of bets sent now (answered whenever)."""
        self.latencies: list[float] = []
        self.ok_in_window = 0
        self.codes: Counter[str] = Counter()
        self.skipped = 0
        self.prefix = f'{{"op":"place_bet","table":"{table}","player":"{player}",'
        ws.handler = self.on_text

    def send_bet(self) -> None:
        self.n += 1
        cid = f"b{self.n}"
        number = self.rng.randrange(37)
        text = (
            f'{self.prefix}"id":"{cid}","bet":{{"kind":"straight","numbers":["{number}"]}},'
            '"amount":1}'
        )
        self.sent[cid] = (time.perf_counter(), self.measuring)
        self.ws.send_text(text)

    def on_text(self, payload: bytes, _now: float) -> None:
        got = time.perf_counter()
        msg: dict[str, Any] | None = None
        if payload.startswith(b'{"re":"'):
            # A reply, as the server writes it: the id and the verdict are its first bytes.
            end = payload.find(b'"', 7)
            re: Any = payload[7:end].decode()
            ok = payload.startswith(b',"ok":true', end + 1)
        else:
            msg = json.loads(payload)
            re, ok = msg.get("re"), bool(msg.get("ok"))
        entry = self.sent.pop(re, None)
        if entry is None:
            return
        sent, measured = entry
        if ok:
            if self.recording:
                self.ok_in_window += 1
            if measured:
                self.latencies.append(got - sent)
        elif measured or self.recording:
            refusal = msg if msg is not None else json.loads(payload)
            self.codes[refusal["error"]["code"]] += 1
        if self.closed_loop:
            self.send_bet()

    def offer(self) -> None:
        """An open-loop arrival: a bet, unless this client has too many unanswered."""
        if len(self.sent) >= MAX_OUTSTANDING:
            self.skipped += 1
        else:
            self.send_bet()


async def _arrivals(bettors: list[Bettor], rate: float, until: float, seed: int) -> None:
    """Poisson arrivals at ``rate`` in all until ``until`` (loop time), each to a client
    drawn at random: one timer for all of them, and every arrival due by the time it
    wakes (at most ``ARRIVAL_TICK`` late) is sent then."""
    loop = asyncio.get_running_loop()
    rng = random.Random(seed)
    at = loop.time() + rng.expovariate(rate)
    while at < until:
        now = loop.time()
        if at > now:
            # No shorter sleeps than the loop's timer resolution, which would spin.
            await asyncio.sleep(max(at - now, ARRIVAL_TICK))
            now = loop.time()
        while at <= now and at < until:
            bettors[rng.randrange(len(bettors))].offer()
            at += rng.expovariate(rate)


def _reset(bettors: list[Bettor]) -> None:
    for b in bettors:
        b.latencies = []
        b.ok_in_window = 0
        b.codes = Counter()
        b.skipped = 0


async def _drain(bettors: list[Bettor], timeout: float = 15.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = sum(len(b.sent) for b in bettors)
        if not left:
            return 0
        await asyncio.sleep(0.05)
    return sum(len(b.sent) for b in bettors)


async def _settle_and_reopen(dealer: RawWs, tables: list[str]) -> tuple[float, int]:
    """Close every round, draw and settle it, open the next; the slowest settle, in ms."""
    await gather_all(*(dealer.cmd("no_more_bets", table=t) for t in tables))
    started = time.perf_counter()

    async def draw(t: str) -> tuple[float, int]:
        reply = await dealer.cmd("draw_outcome", table=t, timeout=60)
        return time.perf_counter() - started, len(reply["result"])

    took = await gather_all(*(draw(t) for t in tables))
    await gather_all(*(dealer.cmd("open_round", table=t) for t in tables))
    return max(t for t, _ in took) * 1000, len(took)


def _batch_mean(metrics: str) -> float | None:
    total = re.search(r"^casino_append_batch_size_sum ([0-9.e+]+)$", metrics, re.M)
    count = re.search(r"^casino_append_batch_size_count ([0-9.e+]+)$", metrics, re.M)
    if not total or not count or not float(count.group(1)):
        return None
    return float(total.group(1)) / float(count.group(1))


def _gc_pauses(metrics: str) -> tuple[float | None, str]:
    """The longest collector pause (ms) a server's /metrics reports, over its generations,
    and a note with each generation's passes and longest (None: a server without them)."""
    longest: dict[str, float] = {}
    for gen, value in re.findall(
        r'^casino_gc_pause_longest_seconds\{generation="(\d)"\} ([0-9.e+-]+)$', metrics, re.M
    ):
        longest[gen] = float(value) * 1000
    if not longest:
        return None, "the server exports no casino_gc_pause_longest_seconds"
    counts = dict(
        re.findall(
            r'^casino_gc_pause_seconds_count\{generation="(\d)"\} ([0-9.e+-]+)$', metrics, re.M
        )
    )
    parts = [
        f"gen{g}: {float(counts.get(g, 0)):.0f} passes, longest {longest[g]:.1f} ms"
        for g in sorted(longest)
    ]
    return max(longest.values()), "; ".join(parts)


AOF_REWRITE_TIMEOUT = 120.0
"""Longest the bench waits for Redis to rewrite its AOF between two phases."""


async def _compact_aof(server: EmbeddedRedis) -> float:
    """Have the bench's Redis rewrite its AOF (``BGREWRITEAOF``) and wait until it is done,
    a rewrite already under way first (or one Redis began meanwhile, instead); the seconds
    it took."""
    started = time.perf_counter()
    client = aioredis.from_url(redis_url(server))
    try:

        async def rewriting() -> bool:
            info = await client.info("persistence")
            return bool(info["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"])

        async def settled() -> None:
            while await rewriting():
                if time.perf_counter() - started > AOF_REWRITE_TIMEOUT:
                    raise TimeoutError("the bench's Redis did not finish its AOF rewrite")
                await asyncio.sleep(0.05)

        await settled()
        try:
            await client.bgrewriteaof()
        except aioredis.ResponseError as e:
            # Redis began one of its own since the look above: wait for that one instead.
            if "already in progress" not in str(e):
                raise
        await settled()
        status = (await client.info("persistence"))["aof_last_bgrewrite_status"]
        if status != "ok":
            raise RuntimeError(f"the bench's Redis failed its AOF rewrite ({status})")
    finally:
        await client.aclose()
    return time.perf_counter() - started


async def _metrics(port: int) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    body = await reader.read()
    writer.close()
    return body.decode(errors="replace")


@dataclass
class Phase:
    """What one load phase measured."""

    ok: int
    seconds: float
    latencies: list[float]
    codes: Counter[str]
    cpu: str
    skipped: int = 0
    unanswered: int = 0
    server_cpu: float = 0.0
    """The server process's CPU over the window, % of one core."""

    @property
    def rate(self) -> float:
        return self.ok / self.seconds

    def ms(self, p: float) -> float:
        return percentile(self.latencies, p) * 1000


def _collect(bettors: list[Bettor], seconds: float, meter: CpuMeter) -> Phase:
    return Phase(
        ok=sum(b.ok_in_window for b in bettors),
        seconds=seconds,
        latencies=[x for b in bettors for x in b.latencies],
        codes=sum((b.codes for b in bettors), Counter()),
        cpu=meter.summary(),
        skipped=sum(b.skipped for b in bettors),
        server_cpu=meter.used.get("server", 0.0),
    )


def _open_window(bettors: list[Bettor], meter: CpuMeter) -> float:
    """After the warm-up: count and time from now on; returns the window's start."""
    _reset(bettors)
    for b in bettors:
        b.recording = b.measuring = True
    meter.begin()
    return time.perf_counter()


async def closed_loop(
    bettors: list[Bettor], warmup: float, seconds: float, meter: CpuMeter
) -> Phase:
    """Each client keeps WINDOW bets in flight."""
    for b in bettors:
        b.closed_loop = True
        for _ in range(WINDOW):
            b.send_bet()
    await asyncio.sleep(warmup)
    started = _open_window(bettors, meter)
    await asyncio.sleep(seconds)
    for b in bettors:
        b.recording = b.measuring = False
        b.closed_loop = False
    elapsed = time.perf_counter() - started
    meter.end()
    phase = _collect(bettors, elapsed, meter)
    phase.unanswered = await _drain(bettors)
    return phase


async def open_loop(
    bettors: list[Bettor], rate: float, warmup: float, seconds: float, meter: CpuMeter
) -> Phase:
    """Every client sends at Poisson times, ``rate`` bets/s in all."""
    until = asyncio.get_running_loop().time() + warmup + seconds
    sender = asyncio.create_task(_arrivals(bettors, rate, until, seed=round(rate)))
    await asyncio.sleep(warmup)
    started = _open_window(bettors, meter)
    await sender
    elapsed = time.perf_counter() - started
    meter.end()
    for b in bettors:
        b.recording = b.measuring = False
    unanswered = await _drain(bettors)
    phase = _collect(bettors, elapsed, meter)
    phase.unanswered = unanswered
    return phase


def roulette_night(name: str) -> tuple[list[str], list[str], dict[str, Any]]:
    """Figure 2's night for a new organization: its tables, its players and the night file
    (``TABLES`` rng roulette tables, ``PER_TABLE`` players a table)."""
    tables = [f"t-{i:02d}" for i in range(1, TABLES + 1)]
    players = [f"p-{i:03d}" for i in range(1, TABLES * PER_TABLE + 1)]
    doc = night_doc(
        unique_org(name),
        [{"id": t, "game": "roulette", "outcome_mode": "rng", "options": {}} for t in tables],
        players,
    )
    return tables, players, doc


@dataclass
class LoadNight:
    """Figure 2's night, running: the server process and its Redis, the dealer's socket on
    every table (each with a round open), the bettors, and every socket to close."""

    server: ServerProcess
    redis: Any
    dealer: RawWs
    tables: list[str]
    bettors: list[Bettor]
    clients: list[RawWs]


@contextlib.asynccontextmanager
async def load_night(name: str) -> AsyncIterator[LoadNight]:
    """Figure 2's night (:func:`roulette_night`) served by a ``casino-night serve`` child
    on the bench's own Redis: chips sold to every player, a round open at every table, a
    websocket per player; stopped (and its sockets closed) at the end."""
    tables, players, doc = roulette_night(name)
    with own_redis() as redis, tempfile.TemporaryDirectory(prefix=f"cn-bench-{name}-") as tmp:
        server = ServerProcess(doc, redis_url(redis), Path(tmp))
        progress(f"{name}: starting the server process")
        await server.start()
        clients: list[RawWs] = []
        try:
            cashier = await RawWs.connect(server.port, token("cashier", "cashier-1"))
            dealer = await RawWs.connect(
                server.port, token("dealer", "dealer-1", tables=tuple(tables))
            )
            clients += [cashier, dealer]
            progress(f"{name}: selling chips to 200 players, opening 20 rounds")
            await gather_all(
                *(cashier.cmd("buy_chips", player=p, amount=1_000_000) for p in players)
            )
            await gather_all(*(dealer.cmd("open_round", table=t) for t in tables))
            progress(f"{name}: connecting 200 player websockets")
            socks = await connect_many(server.port, [token("player", p, player=p) for p in players])
            clients += socks
            bettors = [
                Bettor(ws, tables[i // PER_TABLE], players[i], seed=i) for i, ws in enumerate(socks)
            ]
            yield LoadNight(server, redis, dealer, tables, bettors, clients)
        except BaseException:
            server.stop(failed=True)
            raise
        finally:
            for c in clients:
                c.close()
            server.stop()


async def run(quick: bool) -> list[Result]:
    seconds = 4.0 if quick else 8.0
    warmup = 1.0
    async with load_night("e2e") as night:
        server, redis, dealer, tables, bettors = (
            night.server,
            night.redis,
            night.dealer,
            night.tables,
            night.bettors,
        )
        assert redis.proc is not None
        meter = CpuMeter({"server": server.pid, "redis": redis.proc.pid, "bench": os.getpid()})

        progress(f"e2e: closed loop, {WINDOW} bets in flight per client, {seconds:.0f} s")
        closed = await closed_loop(bettors, warmup, seconds, meter)
        after_closed = await _metrics(server.port)
        batch_closed = _batch_mean(after_closed)
        gc_longest, gc_note = _gc_pauses(after_closed)
        progress("e2e: settling 20 rounds and opening the next")
        settle_ms, _ = await _settle_and_reopen(dealer, tables)

        compacted = [await _compact_aof(redis)]
        progress(f"e2e: open loop at {TARGET_RATE:,} bets/s offered, {seconds:.0f} s")
        target = await open_loop(bettors, TARGET_RATE, warmup, seconds, meter)
        await _settle_and_reopen(dealer, tables)

        light_rate = max(100.0, round(closed.rate / 2, -2))
        compacted.append(await _compact_aof(redis))
        progress(f"e2e: open loop at {light_rate:,.0f} bets/s offered, {seconds:.0f} s")
        light = await open_loop(bettors, light_rate, warmup, seconds, meter)
        await _settle_and_reopen(dealer, tables)

        compacted.append(await _compact_aof(redis))
        progress(f"e2e: open loop at {MODERATE_RATE:,} bets/s offered, {seconds:.0f} s")
        moderate = await open_loop(bettors, MODERATE_RATE, warmup, seconds, meter)
        batch_all = _batch_mean(await _metrics(server.port))

    errors = ", ".join(f"{k} {v}" for k, v in (closed.codes + target.codes).items()) or "none"
    how = (
        "server: `casino-night serve` child process (uvloop, REDIS_URL at the bench's redis,"
        f" appendfsync always); 200 player websockets ({PER_TABLE} per table x {TABLES} rng"
        " tables), straight 1-cent bets, one frame per bet; before each open-loop phase"
        " Redis's AOF rewritten and waited for (" + ", ".join(f"{c:.1f}" for c in compacted) + " s)"
    )

    def open_note(phase: Phase, rate: float) -> str:
        return (
            f"Poisson arrivals, {rate / TABLES / PER_TABLE:.1f} bets/s per client;"
            f" {phase.ok:,} ok in {phase.seconds:.1f} s = {phase.rate:,.0f} bets/s achieved;"
            f" p50 {phase.ms(50):.1f} ms, p99 {phase.ms(99):.1f} ms, max {phase.ms(100):.1f} ms;"
            f" {phase.skipped} sends skipped (client had {MAX_OUTSTANDING} unanswered);"
            f" {phase.unanswered} unanswered 15 s after; CPU {phase.cpu}"
        )

    return [
        at_least(
            f"2a e2e acknowledged bets/s (closed loop, {WINDOW} in flight/client)",
            closed.rate,
            "bets/s",
            TARGET_RATE,
            note=f"{how}; {closed.ok:,} ok in {closed.seconds:.1f} s after {warmup:.0f} s"
            f" warm-up; latency at saturation p50 {closed.ms(50):.1f} ms, p99"
            f" {closed.ms(99):.1f} ms; mean actor batch {batch_closed or 0:.1f} commands"
            f" ({batch_all or 0:.1f} over all phases); CPU {closed.cpu}; errors: {errors};"
            f" then settling 20 rounds of ~{closed.ok // TABLES:,} bets: slowest"
            f" draw_outcome reply {settle_ms:.0f} ms",
        ),
        Result(
            f"2b e2e latency p50 at {TARGET_RATE:,} bets/s offered (open loop)",
            target.ms(50),
            "ms",
            note=open_note(target, TARGET_RATE),
            digits=1,
        ),
        at_most(
            f"2c e2e latency p99 at {TARGET_RATE:,} bets/s offered (open loop)",
            target.ms(99),
            "ms",
            50,
            digits=1,
        ),
        at_most(
            "2d e2e latency p99 at half the closed-loop rate",
            light.ms(99),
            "ms",
            50,
            note=f"open loop at {light_rate:,.0f} bets/s offered, half of 2a (at least 100);"
            f" {open_note(light, light_rate)}",
            digits=1,
        ),
        Result(
            "2e e2e longest GC pause (server start to the end of the closed loop)",
            gc_longest,
            "ms",
            note="casino_gc_pause_longest_seconds of the server's /metrics after 2a, the"
            f" longest of its generations (the whole process waits for a pass); {gc_note}",
            digits=1,
        ),
        Result(
            f"2f e2e server CPU per acknowledged bet at {MODERATE_RATE:,} bets/s offered",
            moderate.server_cpu / 100 * 1e6 / moderate.rate if moderate.ok else None,
            "µs",
            note="the server's CPU over the window / the bets acknowledged in it;"
            f" {open_note(moderate, MODERATE_RATE)}",
        ),
    ]
