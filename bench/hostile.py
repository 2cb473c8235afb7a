"""Hostile clients against the real server process: fairness and a memory soak.

``fairness``: a good player bets at a steady rate at one table; in alternate phases of the
same run another player floods that table from 4 connections with 500 bets in flight on
each. The figure is the good player's p99 with the flooder over its p99 without (target
<= 3x), each phase repeated and the spread reported.

``soak``: while a good player bets as above, hostile sockets abuse the server for a while:
a socket that never reads sends 300 subscribes to a 5,000-event stream every 2 s, another
sends cheap requests it never reads the replies of (reconnecting when dropped), a player
floods a table as above, a client sends lone surrogates and 1,500-level JSON, another
floods pings, and one keeps 16 GETs of the long stream's page going. The
server's RSS is sampled before, during and after (once the abusive sockets are closed and
the flooded round, whose acknowledged bets the table holds until then, is settled).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from bench.common import (
    RawWs,
    Result,
    ServerProcess,
    at_most,
    gather_all,
    night_doc,
    own_redis,
    percentile,
    progress,
    redis_url,
    token,
    unique_org,
)

GOOD_RATE = 100.0
"""The good player's bets per second (Poisson arrivals)."""
FLOOD_CONNECTIONS = 4
FLOOD_WINDOW = 500
"""Bets the flooder keeps in flight on each of its connections."""
TABLE = "fair-1"
STORM_EVENTS = 5_000
STORM_SUBSCRIBES = 300
STORM_EVERY = 2.0


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def bet_text(player: str, cid: str, number: int, table: str = TABLE) -> str:
    return (
        f'{{"op":"place_bet","table":"{table}","player":"{player}","id":"{cid}",'
        f'"bet":{{"kind":"straight","numbers":["{number}"]}},"amount":1}}'
    )


class Good:
    """One player's tablet: bets at a steady rate; records each bet's latency."""

    def __init__(self, ws: RawWs, player: str, seed: int) -> None:
        self.ws = ws
        self.player = player
        self.rng = random.Random(seed)
        self.sent: dict[str, float] = {}
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self.n = 0
        ws.handler = self.on_text

    def on_text(self, payload: bytes, _now: float) -> None:
        msg = json.loads(payload)
        sent = self.sent.pop(msg.get("re"), None)
        if sent is None:
            return
        if msg.get("ok"):
            self.latencies.append(time.perf_counter() - sent)
        else:
            code = msg["error"]["code"]
            self.errors[code] = self.errors.get(code, 0) + 1

    async def bet_for(self, seconds: float) -> list[float]:
        """Bet at ``GOOD_RATE`` for ``seconds``; the latencies (s) of the bets answered."""
        self.latencies = []
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        at = loop.time()
        while at < until:
            await asyncio.sleep(max(0.0, at - loop.time()))
            self.n += 1
            cid = f"g{self.n}"
            self.sent[cid] = time.perf_counter()
            self.ws.send_text(bet_text(self.player, cid, self.rng.randrange(37)))
            at += self.rng.expovariate(GOOD_RATE)
        deadline = time.monotonic() + 15
        while self.sent and time.monotonic() < deadline:  # noqa: ASYNC110 - a bounded wait
            await asyncio.sleep(0.05)
        return self.latencies


class Flooder:
    """One connection of a flooding player: keeps ``FLOOD_WINDOW`` bets in flight."""

    def __init__(self, ws: RawWs, player: str, tag: str) -> None:
        self.ws = ws
        self.player = player
        self.tag = tag
        self.on = False
        self.n = 0
        self.acked = 0
        ws.handler = self.on_text

    def start(self) -> None:
        self.on = True
        for _ in range(FLOOD_WINDOW):
            self.send()

    def send(self) -> None:
        self.n += 1
        self.ws.send_text(bet_text(self.player, f"{self.tag}-{self.n}", self.n % 37))

    def on_text(self, payload: bytes, _now: float) -> None:
        self.acked += 1
        if self.on:
            self.send()


def p99_ms(latencies: list[float]) -> float:
    return percentile(latencies, 99) * 1000


@contextlib.asynccontextmanager
async def _served(
    name: str, tables: list[str], players: list[str]
) -> AsyncIterator[tuple[ServerProcess, list[RawWs]]]:
    """The server process on a Redis of its own, with chips for ``players`` and a round
    open at each of ``tables``; yields it and a list of clients, all closed at the end."""
    doc = night_doc(
        unique_org(name),
        [{"id": t, "game": "roulette", "outcome_mode": "rng", "options": {}} for t in tables],
        players,
        max_transaction=100_000_000,
    )
    with own_redis() as redis, tempfile.TemporaryDirectory(prefix=f"cn-bench-{name}-") as tmp:
        progress(f"{name}: starting the server process")
        server = ServerProcess(doc, redis_url(redis), Path(tmp))
        await server.start()
        clients: list[RawWs] = []
        try:
            clients += await _setup(server, players, tables)
            yield server, clients
        except BaseException:
            server.stop(failed=True)
            raise
        finally:
            for c in clients:
                c.close()
            server.stop()


async def _setup(server: ServerProcess, players: list[str], tables: list[str]) -> list[RawWs]:
    cashier = await RawWs.connect(server.port, token("cashier", "cashier-1"))
    dealer = await RawWs.connect(server.port, token("dealer", "dealer-1", tables=tuple(tables)))
    await gather_all(*(cashier.cmd("buy_chips", player=p, amount=100_000_000) for p in players))
    await gather_all(*(dealer.cmd("open_round", table=t) for t in tables))
    return [cashier, dealer]


async def _flooders(server: ServerProcess, player: str) -> list[Flooder]:
    socks = [
        await RawWs.connect(server.port, token("player", player, player=player))
        for _ in range(FLOOD_CONNECTIONS)
    ]
    return [Flooder(ws, player, f"f{i}") for i, ws in enumerate(socks)]


async def fairness(quick: bool) -> list[Result]:
    seconds = 3.0 if quick else 6.0
    rounds = 2 if quick else 3
    async with _served("fair", [TABLE], ["good", "flood"]) as (server, clients):
        good = Good(
            await RawWs.connect(server.port, token("player", "good", player="good")), "good", 7
        )
        clients.append(good.ws)
        flooders = await _flooders(server, "flood")
        clients += [f.ws for f in flooders]
        alone: list[float] = []
        flooded: list[float] = []
        ratios: list[float] = []
        flood_rates: list[float] = []
        for r in range(rounds):
            progress(f"fairness: round {r + 1}/{rounds}, the good player alone, {seconds:.0f} s")
            a = p99_ms(await good.bet_for(seconds))
            progress(f"fairness: round {r + 1}/{rounds}, with the flooder, {seconds:.0f} s")
            before = sum(f.acked for f in flooders)
            for f in flooders:
                f.start()
            await asyncio.sleep(1.0)
            t0 = time.perf_counter()
            b = p99_ms(await good.bet_for(seconds))
            flood_rates.append(
                (sum(f.acked for f in flooders) - before) / (time.perf_counter() - t0 + 1.0)
            )
            for f in flooders:
                f.on = False
            await asyncio.sleep(2.0)  # the flood's last bets drain
            alone.append(a)
            flooded.append(b)
            ratios.append(b / a)
    ratio = sorted(ratios)[len(ratios) // 2]
    note = (
        f"one table; the good player bets 1 cent at {GOOD_RATE:.0f}/s (Poisson); the flooder"
        f" keeps {FLOOD_WINDOW} bets in flight on each of {FLOOD_CONNECTIONS} connections"
        f" (acknowledged {min(flood_rates):,.0f}-{max(flood_rates):,.0f} bets/s); {rounds}"
        f" rounds of {seconds:.0f} s alone then {seconds:.0f} s flooded, same run: good p99"
        f" alone {', '.join(f'{x:.1f}' for x in alone)} ms; flooded"
        f" {', '.join(f'{x:.1f}' for x in flooded)} ms; ratios"
        f" {', '.join(f'{x:.2f}' for x in ratios)} (median shown);"
        f" good errors: {good.errors or 'none'}"
    )
    return [
        Result(
            "7a fairness: good p99 alone (median of rounds)",
            sorted(alone)[len(alone) // 2],
            "ms",
            digits=1,
        ),
        Result(
            "7b fairness: good p99 beside a flooder (median)",
            sorted(flooded)[len(flooded) // 2],
            "ms",
            digits=1,
        ),
        at_most("7c fairness: flooded p99 / alone p99", ratio, "x", 3, note=note, digits=2),
    ]


class Storm:
    """A socket that reads nothing and sends ``STORM_SUBSCRIBES`` subscribes to a long
    stream every ``STORM_EVERY`` seconds (reconnecting when the server drops it)."""

    def __init__(self, port: int, stream: str) -> None:
        self.port = port
        self.stream = stream
        self.drops = 0

    async def run(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        while loop.time() < until:
            ws = await RawWs.connect(self.port, token("auditor", "storm"))
            assert ws.transport is not None
            ws.transport.pause_reading()
            n = 0
            while loop.time() < until and not ws.closed.done():
                for _ in range(STORM_SUBSCRIBES):
                    n += 1
                    ws.send_text(
                        json.dumps({"op": "subscribe", "id": f"s{n}", "stream": self.stream})
                    )
                await asyncio.sleep(STORM_EVERY)
            ws.close()
            self.drops += 1


class Unread:
    """Sockets that send cheap requests and never read a reply: each writes
    ``UNREAD_REQUESTS`` at once (built once, so the bench's own CPU stays with the good
    player), and a new socket does so every second."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sent = 0
        self.connections = 0

    async def run(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        first = await RawWs.connect(self.port, token("auditor", "unread"))
        blob = (
            masked_text_frame(json.dumps({"op": "unsubscribe", "id": "x" * 100, "stream": "cage"}))
            * UNREAD_REQUESTS
        )
        socks = [first]
        while loop.time() < until:
            ws = socks[-1]
            assert ws.transport is not None
            ws.transport.pause_reading()
            ws.transport.write(blob)
            self.connections += 1
            self.sent += UNREAD_REQUESTS
            await asyncio.sleep(1.0)
            socks.append(await RawWs.connect(self.port, token("auditor", "unread")))
        for ws in socks:
            ws.close()


UNREAD_REQUESTS = 50_000


def masked_text_frame(text: str) -> bytes:
    """A client's text frame (RFC 6455 5.2) with a zero mask (the payload as it is)."""
    payload = text.encode()
    n = len(payload)
    if n < 126:
        head = bytes((0x81, 0x80 | n))
    elif n < 65_536:
        head = bytes((0x81, 0x80 | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x81, 0x80 | 127)) + n.to_bytes(8, "big")
    return head + b"\x00\x00\x00\x00" + payload


class PingFlood:
    """Pings as fast as the server takes them (``PING_CHUNK`` empty pings per write, a write
    whenever the last has left), reading the pongs: each ping costs the server a parse and
    an answer, and aiohttp's own answering was unpaced."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sent = 0

    async def run(self, until: float) -> None:
        ws = await RawWs.connect(self.port, token("auditor", "pinger"))
        assert ws.transport is not None
        chunk = b"\x89\x80\x00\x00\x00\x00" * PING_CHUNK  # masked, empty (RFC 6455 5.5.2)
        loop = asyncio.get_running_loop()
        while loop.time() < until and not ws.transport.is_closing():
            if ws.transport.get_write_buffer_size() < len(chunk):
                ws.transport.write(chunk)
                self.sent += PING_CHUNK
            await asyncio.sleep(0.01)
        ws.close()


PING_CHUNK = 10_000


class ViewFlood:
    """``VIEW_FLOOD_GETS`` GETs of a long stream's whole page of events (megabytes each) kept
    going at once by one principal, from a process of its own (reading megabytes a second
    would take the bench's CPU from the good player): before views were paced, building
    them held the event loop for everyone."""

    def __init__(self, port: int, stream: str) -> None:
        self.url = f"http://127.0.0.1:{port}/api/streams/{stream}/events?limit=10000"
        self.answered: dict[str, int] = {}
        self.bytes = 0

    async def run(self, until: float) -> None:
        loop = asyncio.get_running_loop()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            VIEW_FLOODER,
            self.url,
            token("auditor", "viewer"),
            str(VIEW_FLOOD_GETS),
            str(max(0.0, until - loop.time())),
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await proc.communicate()
        counts = json.loads(out)
        self.bytes = counts.pop("bytes")
        self.answered = counts


VIEW_FLOODER = r"""
import asyncio, json, sys
import aiohttp

async def main(url, tok, gets, seconds):
    counts = {"bytes": 0}
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {tok}"}) as s:
        async def one():
            while True:
                async with s.get(url) as r:
                    counts["bytes"] += len(await r.read())
                    counts[str(r.status)] = counts.get(str(r.status), 0) + 1
        # The GETs still waiting at the end are dropped, as a client that gives up would.
        try:
            await asyncio.wait_for(asyncio.gather(*(one() for _ in range(gets))), seconds)
        except TimeoutError:
            pass
    print(json.dumps(counts))

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
"""
VIEW_FLOOD_GETS = 16


class Garbage:
    """Lone surrogates, 1,500-level JSON and 60 KiB-wide JSON, twenty of each a second."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.codes: dict[str, int] = {}

    async def run(self, until: float) -> None:
        ws = await RawWs.connect(self.port, token("player", "garbage", player="garbage"))

        def on_text(payload: bytes, _now: float) -> None:
            msg = json.loads(payload)
            if "error" in msg:
                code = msg["error"]["code"]
                self.codes[code] = self.codes.get(code, 0) + 1

        ws.handler = on_text
        loop = asyncio.get_running_loop()
        deep = '{"op":"place_bet","x":' + "[" * 1500 + "]" * 1500 + "}"
        # 60 KiB of empty arrays: cheap to send, costly to parse and check.
        wide = '{"op":"nope","id":"w","a":[' + ",".join(["[]"] * 20_000) + "]}"
        n = 0
        while loop.time() < until:
            n += 1
            bad = bet_text("garbage", f"x\\ud800{n}", 1)
            ws.send_text(bad)
            ws.send_text(deep)
            ws.send_text(wide)
            await asyncio.sleep(0.05)
        ws.close()


async def soak(quick: bool) -> list[Result]:
    seconds = 10.0 if quick else 20.0
    tables = [TABLE, "long-1"]
    players = ["good", "flood", "filler", "garbage"]
    async with _served("soak", tables, players) as (server, clients):
        progress(f"soak: filling long-1 with {STORM_EVENTS:,} events")
        filler = await RawWs.connect(server.port, token("player", "filler", player="filler"))
        clients.append(filler)
        for start in range(0, STORM_EVENTS, 250):
            await gather_all(
                *(
                    filler.cmd(
                        "place_bet",
                        table="long-1",
                        player="filler",
                        bet={"kind": "red"},
                        amount=1,
                    )
                    for _ in range(start, min(start + 250, STORM_EVENTS))
                )
            )
        good = Good(
            await RawWs.connect(server.port, token("player", "good", player="good")), "good", 11
        )
        clients.append(good.ws)
        progress("soak: the good player alone, 4 s")
        quiet = p99_ms(await good.bet_for(4.0))
        rss_before = rss_mib(server.pid)
        flooders = await _flooders(server, "flood")
        clients += [f.ws for f in flooders]
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        storm, unread, garbage, pings, views = (
            Storm(server.port, "table:long-1"),
            Unread(server.port),
            Garbage(server.port),
            PingFlood(server.port),
            ViewFlood(server.port, "table:long-1"),
        )
        progress(
            f"soak: abuse for {seconds:.0f} s (storm, unread replies, flood, garbage, pings, views)"
        )
        for f in flooders:
            f.start()
        samples: list[float] = []

        async def sample() -> None:
            while loop.time() < until:
                samples.append(rss_mib(server.pid))
                await asyncio.sleep(0.25)

        tasks = [
            asyncio.ensure_future(t.run(until)) for t in (storm, unread, garbage, pings, views)
        ]
        tasks.append(asyncio.ensure_future(sample()))
        during_latencies = await good.bet_for(seconds - 1.0)
        await gather_all(*tasks)
        for f in flooders:
            f.on = False
            f.ws.close()
        rss_during = max(samples)
        progress("soak: abusive sockets closed; the flooded round settled; 5 s to settle")
        await asyncio.sleep(2.0)  # the flood's last bets drain
        dealer = clients[1]
        for op in ("no_more_bets", "draw_outcome", "open_round"):
            await dealer.cmd(op, table=TABLE)
        await asyncio.sleep(3.0)
        rss_after = rss_mib(server.pid)
        after = p99_ms(await good.bet_for(3.0))
    during = p99_ms(during_latencies)
    note = (
        f"{seconds:.0f} s of abuse at once: {STORM_SUBSCRIBES} subscribes to a"
        f" {STORM_EVENTS:,}-event stream every {STORM_EVERY:.0f} s on a socket that never reads"
        f" ({storm.drops} connections); {unread.sent:,} cheap requests never read on"
        f" {unread.connections} connections; a flooder with {FLOOD_CONNECTIONS} x"
        f" {FLOOD_WINDOW} bets in flight; lone surrogates, 1,500-level and 60 KiB-wide JSON"
        f" from one player (replies"
        f" {garbage.codes}); {pings.sent:,} pings written by a socket reading its pongs;"
        f" {VIEW_FLOOD_GETS} GETs of the {STORM_EVENTS:,}-event page kept going by one"
        f" principal (answers {views.answered}, {views.bytes / 2**20:.0f} MiB);"
        f" RSS before {rss_before:.0f} MiB, max during {rss_during:.0f} MiB,"
        f" after {rss_after:.0f} MiB; good p99 quiet {quiet:.1f} ms, during {during:.1f} ms,"
        f" after {after:.1f} ms; good errors {good.errors or 'none'}"
    )
    return [
        Result("8a soak: server RSS before abuse", rss_before, "MiB"),
        at_most(
            "8b soak: server RSS growth during abuse", rss_during - rss_before, "MiB", 100, digits=0
        ),
        at_most(
            "8c soak: server RSS growth after abuse", rss_after - rss_before, "MiB", 30, digits=0
        ),
        at_most(
            "8d soak: good p99 during abuse / quiet", during / quiet, "x", 3, note=note, digits=2
        ),
    ]
