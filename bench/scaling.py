"""Figure 10: acknowledged bets per second with one server process and with two, in one run.

The night, the load and the client are figure 2's (20 roulette tables, 200 player
websockets, straight 1-cent bets, ``WINDOW`` in flight per client, closed loop), against one
Redis (``appendfsync always``). Each configuration gets an organization of its own:

- one process: every client on it;
- two processes (``casino-night serve`` twice, the same night and Redis, a data directory
  each, so two nodes): the tables split between them by the leases (rendezvous placement),
  and the clients spread over both in turn, as a round-robin load balancer would, so about
  half the bets reach the process that does not own their table and are forwarded;
- two processes, each client on the process that owns its table, as a load balancer that
  routes by table would (no forwarding).

The machine has two cores that the servers, Redis and this client share: the figure shows
what a second process buys here, not on a machine with a core per process (docs/OPERATIONS.md,
"Several processes").
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import redis.asyncio as aioredis

from bench.common import (
    CpuMeter,
    RawWs,
    Result,
    ServerProcess,
    connect_many,
    gather_all,
    own_redis,
    progress,
    redis_url,
    token,
)
from bench.e2e import PER_TABLE, TABLES, WINDOW, Bettor, closed_loop, roulette_night
from services.aggregates import table_stream
from services.cluster.identity import default_node_id
from services.store import keys

SETTLE_SECONDS = 30.0
"""Longest the bench waits for the tables to split between the processes."""


async def _leases_held(port: int) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    body = (await reader.read()).decode(errors="replace")
    writer.close()
    m = re.search(r"^casino_leases_held ([0-9.e+]+)$", body, re.M)
    return int(float(m.group(1))) if m else 0


async def _settled(servers: list[ServerProcess], streams: int) -> list[int]:
    """Wait until every stream is held and the split has stood still for a second."""
    deadline = time.monotonic() + SETTLE_SECONDS
    last: list[int] = []
    steady_since = time.monotonic()
    while time.monotonic() < deadline:
        held = [await _leases_held(s.port) for s in servers]
        if held != last:
            last, steady_since = held, time.monotonic()
        elif sum(held) == streams and all(held) and time.monotonic() - steady_since >= 1.0:
            return held
        await asyncio.sleep(0.2)
    raise RuntimeError(f"the streams did not settle over the processes: {last}")


async def _owners(url: str, org: str, tables: list[str]) -> dict[str, str]:
    """Table -> the node id holding its lease."""
    client = aioredis.Redis.from_url(url)
    try:
        values = await client.mget([keys.lease(org, table_stream(t)) for t in tables])
    finally:
        await client.aclose()
    return {t: v.decode().split("|")[0] for t, v in zip(tables, values, strict=True) if v}


async def _configuration(
    url: str, redis_pid: int, processes: int, by_owner: bool, seconds: float, label: str
) -> tuple[float, str]:
    tables, players, doc = roulette_night("scale")
    org = doc["organization"]["id"]
    with ExitStack() as stack:
        dirs = [
            Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cn-bench-scale-")))
            for _ in range(processes)
        ]
        servers = [ServerProcess(doc, url, d) for d in dirs]
        clients: list[RawWs] = []
        try:
            progress(f"scaling ({label}): starting {processes} server process(es)")
            await gather_all(*(s.start() for s in servers))
            held = await _settled(servers, TABLES + 2)  # the tables, the cage, the license
            cashier = await RawWs.connect(servers[0].port, token("cashier", "cashier-1"))
            dealer = await RawWs.connect(
                servers[0].port, token("dealer", "dealer-1", tables=tuple(tables))
            )
            clients += [cashier, dealer]
            await gather_all(
                *(cashier.cmd("buy_chips", player=p, amount=1_000_000) for p in players)
            )
            await gather_all(*(dealer.cmd("open_round", table=t) for t in tables))
            node_port = {
                default_node_id(d / "data"): s.port for d, s in zip(dirs, servers, strict=True)
            }
            owners = await _owners(url, org, tables) if by_owner else {}
            ports = []
            for i in range(len(players)):
                table = tables[i // PER_TABLE]
                if by_owner:
                    ports.append(node_port[owners[table]])
                else:
                    ports.append(servers[i % processes].port)
            socks: dict[int, RawWs] = {}
            for port in sorted(set(ports)):
                mine = [i for i, p in enumerate(ports) if p == port]
                got = await connect_many(
                    port, [token("player", players[i], player=players[i]) for i in mine]
                )
                clients += got
                socks.update(zip(mine, got, strict=True))
            bettors = [
                Bettor(socks[i], tables[i // PER_TABLE], players[i], seed=i)
                for i in range(len(players))
            ]
            pids = {f"server{i + 1}": s.pid for i, s in enumerate(servers)}
            meter = CpuMeter({**pids, "redis": redis_pid, "bench": os.getpid()})
            progress(f"scaling ({label}): closed loop, {seconds:.0f} s")
            phase = await closed_loop(bettors, 1.0, seconds, meter)
        except BaseException:
            for s in servers:
                s.stop(failed=True)
            raise
        finally:
            for c in clients:
                c.close()
            for s in servers:
                s.stop()
    errors = ", ".join(f"{k} {v}" for k, v in phase.codes.items()) or "none"
    note = (
        f"{phase.ok:,} ok in {phase.seconds:.1f} s; streams held per process {held};"
        f" p50 {phase.ms(50):.1f} ms, p99 {phase.ms(99):.1f} ms; CPU {phase.cpu};"
        f" errors: {errors}"
    )
    return phase.rate, note


async def run(quick: bool) -> list[Result]:
    seconds = 4.0 if quick else 8.0
    with own_redis() as redis:
        assert redis.proc is not None
        pid = redis.proc.pid
        one, one_note = await _configuration(
            redis_url(redis), pid, 1, False, seconds, "one process"
        )
        two, two_note = await _configuration(
            redis_url(redis), pid, 2, False, seconds, "two processes, spread"
        )
        owned, owned_note = await _configuration(
            redis_url(redis), pid, 2, True, seconds, "two processes, by table"
        )
    how = (
        f"figure 2's night and load ({TABLES} rng roulette tables, {TABLES * PER_TABLE} player"
        f" websockets, {WINDOW} bets in flight each, closed loop) on one Redis (appendfsync"
        " always); each configuration its own organization, the same run"
    )
    return [
        Result(
            "10a scaling: acknowledged bets/s, one server process",
            one,
            "bets/s",
            note=f"{how}; {one_note}",
        ),
        Result(
            "10b scaling: acknowledged bets/s, two processes, clients spread over both",
            two,
            "bets/s",
            note="clients in turn on each process (about half the bets forwarded to their"
            f" table's owner); {two_note}",
        ),
        Result(
            "10c scaling: acknowledged bets/s, two processes, clients on their table's owner",
            owned,
            "bets/s",
            note=f"each client on the process holding its table's lease; {owned_note}",
        ),
        Result(
            "10d scaling: two processes spread / one process",
            two / one if one else None,
            "x",
            digits=2,
            note="the same run, on a 2-core machine shared by both servers, Redis and the client",
        ),
        Result(
            "10e scaling: two processes by table / one process",
            owned / one if one else None,
            "x",
            digits=2,
        ),
    ]
