"""Several real ``casino-night serve`` processes for one organization on one Redis
(docs/ARCHITECTURE.md, "Several processes"): any process takes any command (forwarded to
the stream's owner, applied once, answered once), every subscriber on any process sees
every event of its streams in order, a ``kill -9`` of one of three under load moves its
streams to the others with nothing acknowledged lost or applied twice, and a process
stopped (SIGSTOP) past its lease cannot write when it resumes.

Leases are short here (1 s, renewed every 0.25 s) to keep the suite fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis.asyncio as aioredis

from services.cluster.identity import default_node_id
from services.cluster.leases import parse_holder
from services.cluster.placement import assign
from services.store import keys
from services.store.embedded import EmbeddedRedis, free_port
from tests.e2e.serve import EXE, ServeProcess, night_toml, random_bet
from tests.support import WsClient

LEASE_ENV = {"CASINO_LEASE_SECONDS": "1.0", "CASINO_LEASE_RENEW_SECONDS": "0.25"}
LEASE_SECONDS = 1.0
TABLE_IDS = ["t-1", "t-2", "t-3", "t-4"]
TABLES: list[dict[str, Any]] = [{"id": t, "outcome_mode": "dealer"} for t in TABLE_IDS]
PLAYERS = ["p-1", "p-2"]
CHIPS = 100_000
RETRY = ("unavailable", "busy")
"""What a client retries with the same id: the owner moved or was unreachable."""
CONFIG = {"offered": ["red", "black", "odd", "even", "straight"], "max_inside": 200,
          "max_outside": 200, "min_bet": 25}  # fmt: skip
STREAMS = ["license", "cage", *(f"table:{t}" for t in TABLE_IDS)]

Nodes = Callable[..., Awaitable[list[ServeProcess]]]


def node_id(server: ServeProcess) -> str:
    return default_node_id(server.data_dir)


@pytest.fixture
async def admin(redis_server: EmbeddedRedis) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.Redis.from_url(redis_server.url)
    yield client
    await client.aclose()


@pytest.fixture
async def nodes(tmp_path: Path, redis_server: EmbeddedRedis, org: str) -> AsyncIterator[Nodes]:
    """``await nodes(n)``: n started processes of one organization on the shared Redis."""
    if not EXE.exists():
        pytest.fail(f"{EXE} is missing: install the project into this venv (make install)")
    started: list[ServeProcess] = []
    text = night_toml(org, TABLES, PLAYERS)

    async def factory(n: int, **kw: Any) -> list[ServeProcess]:
        out = []
        for _ in range(n):
            server = ServeProcess(
                tmp_path / f"node-{len(started) + 1}",
                text,
                redis_url=redis_server.url,
                env=LEASE_ENV,
                **kw,
            )
            started.append(server)
            await server.start()
            out.append(server)
        return out

    yield factory
    for server in started:
        if server.running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(server.pid, signal.SIGCONT)
        await server.aclose()


async def holders(admin: aioredis.Redis, org: str) -> dict[str, str | None]:
    values = await admin.mget([keys.lease(org, s) for s in STREAMS])
    out: dict[str, str | None] = {}
    for stream, value in zip(STREAMS, values, strict=True):
        holder = parse_holder(value)
        out[stream] = None if holder is None else holder.node
    return out


async def placed(admin: aioredis.Redis, org: str, live: list[ServeProcess]) -> dict[str, str]:
    """Wait until every stream is held by the live node the placement prefers; who holds
    what."""
    ids = [node_id(s) for s in live]
    want: dict[str, str | None] = {}
    got: dict[str, str | None] = {}
    for _ in range(200):
        got = await holders(admin, org)
        # Settled: every stream held, and where the placement keeps it given who holds it.
        want = dict(assign(ids, STREAMS, {s: n for s, n in got.items() if n is not None}))
        if got == want:
            return {s: n for s, n in got.items() if n is not None}
        await asyncio.sleep(0.05)
    raise AssertionError(f"streams not placed: {got}, wanted {want}")


def by_node(servers: list[ServeProcess]) -> dict[str, ServeProcess]:
    return {node_id(s): s for s in servers}


async def stream_events(server: ServeProcess, stream: str) -> list[dict[str, Any]]:
    status, page = await server.get(
        f"/api/streams/{stream}/events?limit=10000", server.token("auditor")
    )
    assert status == 200, page
    events: list[dict[str, Any]] = page["events"]
    return events


def applied_once(events: list[dict[str, Any]], ids: set[str]) -> None:
    """Each command id of ``ids`` caused events, and every command's events are one
    contiguous run (a command applied twice would leave two)."""
    runs: dict[tuple[str, str], list[int]] = defaultdict(list)
    for e in events:
        runs[(e["actor"], e["causation"])].append(e["seq"])
    for (actor, causation), seqs in runs.items():
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), (actor, causation, seqs)
    causations = {c for _a, c in runs}
    assert ids <= causations, sorted(ids - causations)[:5]


async def verified(server: ServeProcess) -> None:
    done = await server.cli("verify")
    assert done.returncode == 0, done.stdout + done.stderr
    await server.audited()


def bet_msg(cmd_id: str, table: str, player: str, rng: random.Random) -> dict[str, Any]:
    bet, amount = random_bet(rng, CONFIG)
    return {"op": "place_bet", "id": cmd_id, "table": table, "player": player, "bet": bet,
            "amount": amount}  # fmt: skip


def spin(rng: random.Random, last: str | None) -> tuple[dict[str, str], str]:
    """A dealer's outcome: the pocket, spun from the previous one (4620.4(c)(3))."""
    pocket = str(rng.randint(0, 36))
    outcome = {"pocket": pocket} if last is None else {"pocket": pocket, "spun_from": last}
    return outcome, pocket


async def test_a_command_sent_to_the_non_owner_is_forwarded_applied_once_and_fanned_out(
    nodes: Nodes, admin: aioredis.Redis, org: str
) -> None:
    servers = await nodes(2)
    owners = await placed(admin, org, servers)
    named = by_node(servers)
    # The cage's commands go to the process that does not own the cage.
    cage_owner = named[owners["cage"]]
    other = next(s for s in servers if s is not cage_owner)
    cashier = await other.connect(other.token("cashier"))
    buys = []
    for p in PLAYERS:
        reply = await cashier.cmd("buy_chips", player=p, amount=CHIPS)
        assert reply["ok"], reply
        buys.append(reply)
    first = await cashier.send({"op": "buy_chips", "id": "buy-once", "player": "p-1",
                                "amount": 300})  # fmt: skip
    assert first["ok"], first
    assert first["result"] == {"seq": 3, "player": "p-1", "amount": 300}
    # The same id again, on the owner this time: the stored reply, nothing applied again.
    cashier_on_owner = await cage_owner.connect(cage_owner.token("cashier"))
    again = await cashier_on_owner.send({"op": "buy_chips", "id": "buy-once", "player": "p-1",
                                         "amount": 300})  # fmt: skip
    assert again == first
    retried = await cashier.send({"op": "buy_chips", "id": "buy-once", "player": "p-1",
                                  "amount": 300})  # fmt: skip
    assert retried == first
    conflict = await cashier.send({"op": "buy_chips", "id": "buy-once", "player": "p-1",
                                   "amount": 301})  # fmt: skip
    assert conflict["error"]["code"] == "conflict"
    # Each forwarded command got exactly one reply.
    for reply in buys:
        assert cashier.arrivals.count(("re", reply["re"])) == 1
    assert cashier.arrivals.count(("re", "buy-once")) == 3  # sent three times
    # Bad input is answered where it arrives, and is not forwarded.
    forwarded = await metric(other, "casino_forwarded_commands_total")
    bad = await cashier.cmd("buy_chips", player="p-1", amount=-5)
    assert bad["error"]["code"] == "bad_request", bad
    assert await metric(other, "casino_forwarded_commands_total") == forwarded
    cage = await stream_events(other, "cage")
    assert [e["causation"] for e in cage].count("buy-once") == 1
    assert await admin.hexists(keys.commands(org), "cashier:cashier/buy-once")
    status, bank = await other.get("/api/bankrolls/players/p-1", other.token("cashier"))
    for _ in range(100):  # the projection folds the log a moment later
        if status == 200 and bank["bought"] == CHIPS + 300:
            break
        await asyncio.sleep(0.05)
        status, bank = await other.get("/api/bankrolls/players/p-1", other.token("cashier"))
    assert bank["bought"] == CHIPS + 300

    # A table owned by one process: subscribed to and played through the other.
    table = next(t for t in TABLE_IDS if named[owners[f"table:{t}"]] is cage_owner)
    stream = f"table:{table}"
    owner, reader = named[owners[stream]], other
    watcher = await reader.connect(reader.token("auditor"))
    sub = await watcher.cmd("subscribe", stream=stream, since=0)
    assert sub["ok"] and sub["result"]["head"] == 1, sub
    dealer = await reader.connect(reader.dealer_token(table))
    players = {p: await (reader if p == "p-1" else owner).connect(reader.player_token(p))
               for p in PLAYERS}  # fmt: skip
    rng = random.Random(11)
    last: str | None = None
    for r in range(3):
        assert (await dealer.cmd("open_round", table=table))["ok"]
        for p in PLAYERS:
            placed_bet = await players[p].send(bet_msg(f"{table}-{r}-{p}", table, p, rng))
            assert placed_bet["ok"], placed_bet
        assert (await dealer.cmd("no_more_bets", table=table))["ok"]
        outcome, last = spin(rng, last)
        recorded = await dealer.cmd("record_outcome", table=table, outcome=outcome)
        assert recorded["ok"], recorded
    events = await stream_events(owner, stream)
    head = events[-1]["seq"]
    got = await watcher.wait_events(stream, head)
    assert [e["seq"] for e in got] == list(range(1, head + 1))
    assert [e["hash"] for e in got] == [e["hash"] for e in events]
    # The read API on the process that does not own the table.
    status, view = await reader.get(f"/api/tables/{table}", reader.token("auditor"))
    assert status == 200 and view["seq"] == head and view["round"] == 3
    status, owners_view = await owner.get(f"/api/tables/{table}", owner.token("auditor"))
    assert view == owners_view
    applied_once(events, {f"{table}-{r}-{p}" for r in range(3) for p in PLAYERS})
    await verified(reader)
    # A clean stop leaves the members and releases its leases at once: the other process
    # takes its streams without waiting for them to expire.
    gone = node_id(owner)
    assert await owner.terminate() == 0
    assert await admin.hget(keys.members(org), gone) is None
    assert gone not in (await holders(admin, org)).values()
    await placed(admin, org, [reader])
    again = await cashier.cmd("buy_chips", player="p-2", amount=1)
    assert again["ok"], again


class Seat:
    """A client that keeps its command ids across reconnects to whichever process is up."""

    def __init__(self, servers: list[ServeProcess], token: str, start: int) -> None:
        self.servers = servers
        self.token = token
        self.at = start
        self.client: WsClient | None = None
        self.acked: dict[str, dict[str, Any]] = {}

    def live(self) -> list[ServeProcess]:
        return [s for s in self.servers if s.running]

    async def connect(self) -> WsClient:
        while True:
            live = self.live()
            server = live[self.at % len(live)]
            try:
                self.client = await server.connect(self.token)
                return self.client
            except Exception:
                self.at += 1
                await asyncio.sleep(0.05)

    async def send(self, msg: dict[str, Any], deadline: float) -> dict[str, Any]:
        """Until ok, with the same id: reconnect to another process when this one fails."""
        while time.monotonic() < deadline:
            client = self.client
            if client is None or client.closed.done():
                client = await self.connect()
            try:
                reply = await client.send(dict(msg), timeout=3)
            except (TimeoutError, ConnectionError, RuntimeError):
                self.at += 1
                self.client = None
                continue
            if reply["ok"]:
                self.acked[msg["id"]] = reply
                return reply
            assert reply["error"]["code"] in RETRY, (msg, reply)
            await asyncio.sleep(0.05)
        raise TimeoutError(f"no ok reply for {msg}")


class Watcher:
    """A subscriber of one stream that resumes with ``since`` on another process when its
    process dies; ``seqs`` is everything it received, in order."""

    def __init__(self, servers: list[ServeProcess], stream: str, start: int) -> None:
        self.seat = Seat(servers, servers[0].token("auditor"), start)
        self.stream = stream
        self.seqs: list[int] = []
        self.resumed = 0
        self._clients: list[WsClient] = []

    def _drain(self) -> None:
        for client in self._clients:
            new = [e["seq"] for e in client.events if e["stream"] == self.stream]
            client.events.clear()
            self.seqs += new

    async def follow(self) -> None:
        while True:
            self._drain()
            client = await self.seat.connect()
            self._clients = [client]
            since = self.seqs[-1] if self.seqs else 0
            try:
                reply = await client.cmd("subscribe", stream=self.stream, since=since)
            except (TimeoutError, ConnectionError):
                self.seat.at += 1
                continue
            assert reply["ok"], reply
            await client.closed
            self.resumed += 1
            self.seat.at += 1

    def received(self) -> list[int]:
        self._drain()
        return self.seqs


async def play_rounds(
    servers: list[ServeProcess], table: str, index: int, stop: asyncio.Event, rounds: list[int]
) -> dict[str, dict[str, Any]]:
    """A dealer and its players run whole rounds on ``table`` until ``stop``, each command
    retried with its id until ok (through any process); every round is settled."""
    rng = random.Random(index)
    dealer = Seat(servers, servers[0].dealer_token(table), index)
    players = {p: Seat(servers, servers[0].player_token(p), index + i + 1)
               for i, p in enumerate(PLAYERS)}  # fmt: skip
    n = 0
    last: str | None = None
    while not stop.is_set():
        deadline = time.monotonic() + 30
        n += 1
        await dealer.send({"op": "open_round", "id": f"{table}-open-{n}", "table": table},
                          deadline)  # fmt: skip
        await asyncio.gather(
            *(s.send(bet_msg(f"{table}-{n}-{p}", table, p, rng), deadline)
              for p, s in players.items())
        )  # fmt: skip
        await dealer.send({"op": "no_more_bets", "id": f"{table}-nmb-{n}", "table": table},
                          deadline)  # fmt: skip
        outcome, last = spin(rng, last)
        await dealer.send({"op": "record_outcome", "id": f"{table}-out-{n}", "table": table,
                           "outcome": outcome}, deadline)  # fmt: skip
        rounds.append(n)
    acked = dict(dealer.acked)
    for seat in players.values():
        acked.update(seat.acked)
    for seat in (dealer, *players.values()):
        if seat.client is not None:
            await seat.client.close()
    return acked


async def test_kill_9_of_one_of_three_under_load_loses_nothing_and_every_round_goes_on(
    nodes: Nodes, admin: aioredis.Redis, org: str
) -> None:
    servers = await nodes(3)
    owners = await placed(admin, org, servers)
    cashier = Seat(servers, servers[0].token("cashier"), 0)
    for p in PLAYERS:
        await cashier.send({"op": "buy_chips", "id": f"buy-{p}", "player": p, "amount": CHIPS},
                           time.monotonic() + 20)  # fmt: skip
    watchers = {t: Watcher(servers, f"table:{t}", i) for i, t in enumerate(TABLE_IDS)}
    follow = [asyncio.create_task(w.follow()) for w in watchers.values()]
    stop = asyncio.Event()
    rounds: dict[str, list[int]] = {t: [] for t in TABLE_IDS}
    load = [asyncio.create_task(play_rounds(servers, t, i * 7, stop, rounds[t]))
            for i, t in enumerate(TABLE_IDS)]  # fmt: skip
    try:
        # Some rounds everywhere, then the owner of t-1 dies mid-flow.
        for _ in range(600):
            if min(len(r) for r in rounds.values()) >= 2:
                break
            await asyncio.sleep(0.05)
        victim = by_node(servers)[owners["table:t-1"]]
        victim_id = node_id(victim)
        victim.kill9()
        survivors = [s for s in servers if s is not victim]
        before = {t: len(r) for t, r in rounds.items()}
        # Its streams move to the others within a few seconds.
        moved = await placed(admin, org, survivors)
        assert victim_id not in moved.values()
        # The projections run on: one survivor holds their lease (a standby took it if
        # the victim had it).
        survivor_ids = {node_id(s) for s in survivors}
        for _ in range(200):
            holder = parse_holder(await admin.get(keys.lease(org, "projections")))
            if holder is not None and holder.node in survivor_ids:
                break
            await asyncio.sleep(0.05)
        assert holder is not None and holder.node in survivor_ids
        # Every table goes on: rounds are opened and settled after the kill.
        for _ in range(600):
            if all(len(rounds[t]) >= before[t] + 2 for t in TABLE_IDS):
                break
            await asyncio.sleep(0.05)
        assert all(len(rounds[t]) >= before[t] + 2 for t in TABLE_IDS), rounds
    finally:
        stop.set()
    acked: dict[str, dict[str, Any]] = {}
    for done in await asyncio.gather(*load):
        acked.update(done)
    live = survivors[0]
    for t in TABLE_IDS:
        stream = f"table:{t}"
        events = await stream_events(live, stream)
        mine = {k for k in acked if k.startswith(f"{t}-")}
        # No acknowledged command lost, none applied twice.
        applied_once(events, mine)
        by_seq = {e["seq"]: e for e in events}
        for k in mine:
            assert by_seq[acked[k]["result"]["seq"]]["causation"] == k
        head = events[-1]["seq"]
        # The round in play was closed and settled: the table is idle.
        status, view = await live.get(f"/api/tables/{t}", live.token("auditor"))
        assert status == 200 and view["phase"] == "idle" and view["seq"] == head, view
        # The subscriber saw every event once, in order, across its reconnects.
        watcher = watchers[t]
        for _ in range(200):
            if watcher.received()[-1:] == [head]:
                break
            await asyncio.sleep(0.05)
        assert watcher.received() == list(range(1, head + 1))
    assert any(w.resumed for w in watchers.values())
    for task in follow:
        task.cancel()
    await asyncio.gather(*follow, return_exceptions=True)
    await verified(live)


async def test_a_process_stopped_past_its_lease_cannot_write_when_it_resumes(
    nodes: Nodes, admin: aioredis.Redis, org: str
) -> None:
    servers = await nodes(2)
    owners = await placed(admin, org, servers)
    named = by_node(servers)
    table = TABLE_IDS[0]
    stream = f"table:{table}"
    paused = named[owners[stream]]
    other = next(s for s in servers if s is not paused)
    cashier = await other.connect(other.token("cashier"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=CHIPS))["ok"]
    dealer = await paused.connect(paused.dealer_token(table))
    assert (await dealer.cmd("open_round", table=table, id="open-1"))["ok"]
    player = await paused.connect(paused.player_token("p-1"))
    before = await stream_events(other, stream)
    lease_before = parse_holder(await admin.get(keys.lease(org, stream)))
    assert lease_before is not None and lease_before.node == node_id(paused)

    os.kill(paused.pid, signal.SIGSTOP)
    try:
        # While it is stopped, a bet reaches its socket (the kernel holds it for it).
        rng = random.Random(3)
        held = bet_msg("held-bet", table, "p-1", rng)
        pending = asyncio.create_task(player.send(dict(held), timeout=30))
        # Past its lease: the other process takes the stream.
        await asyncio.sleep(LEASE_SECONDS)
        await placed(admin, org, [other])
    finally:
        os.kill(paused.pid, signal.SIGCONT)
    # The resumed process's lease is gone: whatever it held is answered from the stream's
    # new owner (forwarded) or ``unavailable``; a retry with the same id applies it once.
    reply = await pending
    if not reply["ok"]:
        assert reply["error"]["code"] == "unavailable", reply
        reply = await player.send(dict(held))
    assert reply["ok"], reply
    assert await player.send(dict(held)) == reply
    # A command sent to the resumed process goes to the new owner.
    more = bet_msg("after-resume", table, "p-1", rng)
    assert (await player.send(dict(more)))["ok"]
    events = await stream_events(other, stream)
    assert events[: len(before)] == before
    applied_once(events, {"held-bet", "after-resume"})
    assert [e["causation"] for e in events].count("held-bet") == 1
    # The stream was taken over with a new fencing token (it may move back to the resumed
    # process since: that takes yet another one).
    holder = parse_holder(await admin.get(keys.lease(org, stream)))
    assert holder is not None and holder.token > lease_before.token
    # The paused process learnt it lost the stream: a fenced append, or its renewal.
    said = paused.stderr_text() + paused.out_path().read_text(errors="replace")
    assert "append_fenced" in said or "lease_lost" in said
    await verified(other)


async def test_processes_share_one_port_and_one_data_directory_serves_one_process(
    nodes: Nodes, admin: aioredis.Redis, org: str, redis_server: EmbeddedRedis
) -> None:
    port = free_port()
    servers = await nodes(2, args=["--reuse-port"], port=port)
    await placed(admin, org, servers)
    # Connections to the one port reach both processes; each answers every command.
    for _ in range(40):
        client = await servers[0].connect(servers[0].token("cashier"))
        reply = await client.cmd("buy_chips", player="p-1", amount=1)
        assert reply["ok"], reply
        await client.close()
    # /metrics, on the same port, comes from either: the owner of the cage forwarded
    # nothing, the other forwarded the buys it took.
    forwarded = {await metric(servers[0], "casino_forwarded_commands_total") for _ in range(40)}
    assert 0.0 in forwarded and max(forwarded) > 0, forwarded
    assert len(forwarded) == 2
    # A second serve on a data directory in use exits 2 and says why.
    twin = ServeProcess(servers[0].workdir, servers[0].night.read_text(),
                        redis_url=redis_server.url, env=LEASE_ENV)  # fmt: skip
    assert await twin.run_until_exit() == 2
    assert "another casino-night serve uses the data directory" in twin.stderr_text()
    assert servers[0].running
    await servers[0].audited()  # what both processes wrote to the one store


async def metric(server: ServeProcess, name: str) -> float:
    """A figure of ``/metrics``, on a new connection (with ``--reuse-port``, whichever
    process the kernel gives it to)."""
    connector = aiohttp.TCPConnector(force_close=True)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(server.base + "/metrics") as r,
    ):
        text = await r.text()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no {name} in /metrics")
