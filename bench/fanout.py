"""Figure 5: fan-out of one table's events to 1,000 websocket subscribers.

The server is ``casino-night serve`` in a child process against this benchmark's Redis.
1,000 player websockets (in this process) subscribe to one RNG roulette table. A dealer
and 10 players then make that table produce ``RATE`` events per second for ``seconds``:
rounds of RoundOpened, straight bets spread evenly over the round, NoMoreBets,
OutcomeRecorded and Settled, each command sent at its scheduled time. The latency of one
delivery is the subscriber's receive time (``time.time()`` when the frame's bytes arrive)
minus the event's ``ts`` (ms, stamped by the actor just before the append), both this
machine's clock.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from pathlib import Path

from bench.common import (
    CpuMeter,
    RawWs,
    Result,
    ServerProcess,
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

TABLE = "fan-1"
STREAM = f"table:{TABLE}"
RATE = 100
"""Events per second the table produces."""
BETTORS = 10
BETS_PER_ROUND = RATE // 2 - 4
"""Two rounds a second: RoundOpened, the bets, NoMoreBets, OutcomeRecorded, Settled."""
TS = re.compile(rb'"ts":(\d+)')


class Subscriber:
    """One tablet watching the table: records each event's delay from its ``ts``."""

    def __init__(self, ws: RawWs) -> None:
        self.ws = ws
        self.since_ms = 0
        self.delays: list[int] = []
        self.received = 0

    def on_text(self, payload: bytes, now: float) -> None:
        if payload.startswith(b'{"ev"'):
            m = TS.search(payload)
            if m is None:
                return
            ts = int(m.group(1))
            if ts >= self.since_ms:
                self.received += 1
                self.delays.append(int(now * 1000) - ts)
        else:
            self.ws._dispatch(payload, now)


async def drive(
    dealer: RawWs, bettors: list[RawWs], players: list[str], seconds: float
) -> tuple[int, int]:
    """Make the table produce RATE events/s for ``seconds``.

    Every command is sent at its own time slot without waiting for the one before, as
    independent tablets would; the dealer waits for the round to open before bets are
    sent, and for the bets' replies before calling no more bets. Returns the events the
    table appended (from the ok replies) and the bets refused.
    """
    loop = asyncio.get_running_loop()
    slot = 1.0 / RATE
    start = loop.time()
    n = 0
    made = 0
    refused = 0

    async def at(k: int) -> None:
        await asyncio.sleep(max(0.0, start + k * slot - loop.time()))

    b = 0
    while loop.time() - start < seconds:
        await at(n)
        await dealer.cmd("open_round", table=TABLE)
        n += 1
        made += 1
        pending = []
        for _ in range(BETS_PER_ROUND):
            await at(n)
            i = b % len(bettors)
            pending.append(
                bettors[i].request(
                    "place_bet",
                    table=TABLE,
                    player=players[i],
                    bet={"kind": "straight", "numbers": [str(b % 37)]},
                    amount=1,
                )
            )
            b += 1
            n += 1
        replies = await asyncio.wait_for(asyncio.gather(*pending), 60)
        ok = sum(1 for r in replies if r.get("ok"))
        made += ok
        refused += len(replies) - ok
        await at(n)
        await dealer.cmd("no_more_bets", table=TABLE)
        n += 1
        await at(n)
        await dealer.cmd("draw_outcome", table=TABLE, timeout=60)  # OutcomeRecorded + Settled
        n += 2
        made += 3
    return made, refused


async def run(quick: bool) -> list[Result]:
    subscribers_n = 1000
    seconds = 4.0 if quick else 10.0
    org = unique_org("fanout")
    players = [f"p-{i:02d}" for i in range(BETTORS)]
    doc = night_doc(
        org, [{"id": TABLE, "game": "roulette", "outcome_mode": "rng", "options": {}}], players
    )
    with own_redis() as redis, tempfile.TemporaryDirectory(prefix="cn-bench-fan-") as tmp:
        server = ServerProcess(doc, redis_url(redis), Path(tmp))
        progress("fanout: starting the server process")
        await server.start()
        clients: list[RawWs] = []
        try:
            cashier = await RawWs.connect(server.port, token("cashier", "cashier-1"))
            dealer = await RawWs.connect(server.port, token("dealer", "dealer-1", tables=(TABLE,)))
            bettors = [
                await RawWs.connect(server.port, token("player", p, player=p)) for p in players
            ]
            clients += [cashier, dealer, *bettors]
            await gather_all(
                *(cashier.cmd("buy_chips", player=p, amount=1_000_000) for p in players)
            )
            progress(f"fanout: connecting {subscribers_n:,} subscriber websockets")
            socks = await connect_many(
                server.port,
                [token("player", f"watcher-{i}", player=f"w-{i}") for i in range(subscribers_n)],
            )
            clients += socks
            subs = [Subscriber(ws) for ws in socks]
            since_ms = int(time.time() * 1000)
            for s in subs:
                s.since_ms = since_ms
                s.ws.handler = s.on_text
            # At most 50 subscribes at once: each one's catch-up read takes a connection of
            # the server's Redis pool, which refuses (MaxConnectionsError -> "internal")
            # beyond redis-py's default of 100 connections.
            gate = asyncio.Semaphore(50)

            async def subscribe(s: Subscriber) -> None:
                async with gate:
                    await s.ws.cmd("subscribe", stream=STREAM, since=0)

            await gather_all(*(subscribe(s) for s in subs))
            assert redis.proc is not None
            meter = CpuMeter({"server": server.pid, "redis": redis.proc.pid, "bench": os.getpid()})
            progress(
                f"fanout: {RATE} events/s for {seconds:.0f} s to {subscribers_n:,} subscribers"
            )
            meter.begin()
            started = time.perf_counter()
            made, refused = await drive(dealer, bettors, players, seconds)
            elapsed = time.perf_counter() - started
            meter.end()
            expected = made * subscribers_n
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                if sum(s.received for s in subs) >= expected:
                    break
                await asyncio.sleep(0.05)
            drained = time.perf_counter() - started - elapsed
            received = sum(s.received for s in subs)
            dropped = sum(1 for s in subs if s.ws.closed.done())
            delays = [d for s in subs for d in s.delays]
        except BaseException:
            server.stop(failed=True)
            raise
        finally:
            for c in clients:
                c.close()
            server.stop()
    p99 = percentile(delays, 99) if delays else None
    return [
        Result(
            f"5a fan-out p50, {subscribers_n:,} subscribers, {RATE} events/s",
            percentile(delays, 50) if delays else None,
            "ms",
            note=f"server: `casino-night serve` child process; subscribers: {subscribers_n:,}"
            f" websockets in the bench process; {made:,} events in {elapsed:.1f} s ="
            f" {made / elapsed:,.0f}/s ({refused} bets refused); {received:,} of {expected:,}"
            " deliveries"
            f" ({100 * received / max(expected, 1):.1f} %), last ones {drained:.1f} s after the"
            f" driver stopped; {dropped} subscribers disconnected; CPU while driving:"
            f" {meter.summary()}",
        ),
        at_most(
            f"5b fan-out p99, {subscribers_n:,} subscribers, {RATE} events/s",
            p99,
            "ms",
            100,
            note=f"delay = receive time.time() - event ts (ms); max {max(delays, default=0):,} ms",
        ),
    ]
