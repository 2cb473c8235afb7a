"""Crashes in the middle of a round, against the real ``casino-night serve`` process.

The embedded Redis runs with ``appendfsync always`` (the default): a bet the server
acknowledged is on disk. (a) ``kill -9`` of the server mid-round, bets in flight, then a
restart on the same data directory; (b) ``kill -9`` of its redis-server child mid-round,
which the server's watcher restarts from its AOF while clients keep retrying. Either way
no acknowledged bet is lost or doubled, a retry with the same command id returns the first
reply and changes nothing, the round settles at the fixed odds and the books balance.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from typing import Any

from tests.e2e.conftest import ServeFactory
from tests.e2e.serve import (
    ServeProcess,
    expected_paid,
    pid_alive,
    random_bet,
    retry_until_ok,
    wait_until_dead,
)
from tests.support import WsClient

TABLES: list[dict[str, Any]] = [
    {"id": "roulette-1", "outcome_mode": "dealer", "options": {}},
    {"id": "roulette-2", "outcome_mode": "rng", "options": {}},
    {"id": "roulette-3", "outcome_mode": "dealer", "options": {"options": ["basket"]}},
]
PLAYERS = ["p-1", "p-2", "p-3", "p-4"]
CHIPS = 50_000
RETRYABLE = ("unavailable", "internal")


class Crew:
    """The night's websocket clients; reconnected after a server restart."""

    def __init__(self, server: ServeProcess) -> None:
        self.server = server
        self.auditor_token = server.token("auditor")
        self.players: dict[str, WsClient] = {}
        self.cashier: WsClient | None = None
        self.dealer: WsClient | None = None

    async def connect(self) -> None:
        s = self.server
        await s.close_clients()
        self.cashier = await s.connect(s.token("cashier"))
        self.dealer = await s.connect(s.dealer_token(*(t["id"] for t in TABLES)))
        self.players = {p: await s.connect(s.player_token(p)) for p in PLAYERS}

    async def stream(self, stream: str) -> list[dict[str, Any]]:
        status, page = await self.server.get(
            f"/api/streams/{stream}/events?limit=10000", self.auditor_token
        )
        assert status == 200, page
        events: list[dict[str, Any]] = page["events"]
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        return events

    async def table(self, table: str) -> dict[str, Any]:
        status, view = await self.server.get(f"/api/tables/{table}", self.auditor_token)
        assert status == 200, view
        return dict(view)

    async def config(self, table: str) -> dict[str, Any]:
        return dict((await self.table(table))["config"])


def bet_msg(
    cmd_id: str, table: str, player: str, bet: dict[str, Any], amount: int
) -> dict[str, Any]:
    return {
        "op": "place_bet",
        "id": cmd_id,
        "table": table,
        "player": player,
        "bet": bet,
        "amount": amount,
    }


def placed_by_command(events: list[dict[str, Any]]) -> Counter[str]:
    return Counter(e["causation"] for e in events if e["type"] == "BetPlaced")


async def check_books(server: ServeProcess, crew: Crew, org: str) -> dict[str, Any]:
    """Balances from the events themselves (chips bought, bets placed, payouts recomputed at
    the fixed odds) equal the store's guarded balances and the bankroll projection."""
    expected: Counter[str] = Counter()
    for e in await crew.stream("cage"):
        sign = 1 if e["type"] == "ChipsIssued" else -1
        expected[e["data"]["player"]] += sign * e["data"]["amount"]
    for t in TABLES:
        bets: dict[str, tuple[str, dict[str, Any], int]] = {}
        for e in await crew.stream(f"table:{t['id']}"):
            d = e["data"]
            if e["type"] == "BetPlaced":
                expected[d["player"]] -= d["amount"]
                bets[d["bet_id"]] = (d["player"], d["bet"], d["amount"])
            elif e["type"] == "BetCancelled":
                expected[d["player"]] += d["amount"]
            elif e["type"] == "Settled":
                for s in d["settlements"]:
                    player, bet, amount = bets[s["bet_id"]]
                    assert s["paid"] == expected_paid(bet, amount, d["outcome"]["pocket"])
                    expected[player] += s["paid"]
    await server.wait_ready()
    status, bankrolls = await server.get("/api/bankrolls", crew.auditor_token)
    assert status == 200
    balances = {p: v["balance"] for p, v in bankrolls["players"].items()}
    assert balances == dict(expected)
    assert await server.store_balances(org) == dict(expected)
    o = bankrolls["organization"]
    assert sum(balances.values()) + o["house_win"] == o["issued"] - o["redeemed"]
    return dict(bankrolls)


async def verify_offline(server: ServeProcess) -> None:
    await server.close_clients()
    redis_pid = server.redis_pid
    assert await server.terminate() == 0
    assert await wait_until_dead(redis_pid, 10)
    verified = await server.cli("verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "BROKEN" not in verified.stdout
    await server.audited()


async def test_kill_9_of_the_server_mid_round_loses_and_doubles_nothing(
    serve: ServeFactory,
) -> None:
    org = "e2e-crash-server"
    table = "roulette-1"
    server = await serve(org, TABLES, PLAYERS)
    crew = Crew(server)
    rng = random.Random(4620)
    async with asyncio.timeout(45):
        await crew.connect()
        assert crew.cashier is not None and crew.dealer is not None
        for p in PLAYERS:
            assert (await crew.cashier.cmd("buy_chips", player=p, amount=CHIPS))["ok"]
        config = await crew.config(table)
        # Round 1 settles normally, so round 2's outcome must name where it was spun from.
        assert (await crew.dealer.cmd("open_round", table=table))["ok"]
        for p in PLAYERS:
            bet, amount = random_bet(rng, config)
            assert (await crew.players[p].send(bet_msg(f"r1-{p}", table, p, bet, amount)))["ok"]
        assert (await crew.dealer.cmd("no_more_bets", table=table))["ok"]
        assert (await crew.dealer.cmd("record_outcome", table=table, outcome={"pocket": "17"}))[
            "ok"
        ]
        opened = await crew.dealer.cmd("open_round", table=table)
        assert opened["ok"] and opened["result"]["round"] == 2

        # Acknowledged bets, one after another.
        sent: dict[str, tuple[str, dict[str, Any]]] = {}
        replies: dict[str, dict[str, Any]] = {}
        for i in range(8):
            p = PLAYERS[i % len(PLAYERS)]
            bet, amount = random_bet(rng, config)
            msg = bet_msg(f"a-{i}", table, p, bet, amount)
            sent[msg["id"]] = (p, msg)
            replies[msg["id"]] = await crew.players[p].send(dict(msg))
            assert replies[msg["id"]]["ok"], replies[msg["id"]]

        # Bets in flight while the server is killed.
        async def fire(p: str, msg: dict[str, Any]) -> None:
            client = crew.players[p]
            if client.closed.done():
                return  # the socket is gone: never sent
            try:
                replies[msg["id"]] = await client.send(dict(msg), timeout=3)
            except Exception:  # the connection died under it: fate unknown
                return

        tasks: list[asyncio.Task[None]] = []
        in_flight: list[str] = []
        old_redis = server.redis_pid

        def launch(cmd_id: str) -> None:
            p = PLAYERS[len(in_flight) % len(PLAYERS)]
            msg = bet_msg(cmd_id, table, p, *random_bet(rng, config))
            sent[cmd_id] = (p, msg)
            in_flight.append(cmd_id)
            tasks.append(asyncio.create_task(fire(p, msg)))

        # Bets one every 2 ms until some are acknowledged, ...
        while sum(1 for k in in_flight if k in replies) < 4:
            assert len(in_flight) < 200, "the server acknowledged too few bets"
            launch(f"k-{len(in_flight)}")
            await asyncio.sleep(0.002)
        # ... then a burst, and the kill while it is in flight, ...
        for _ in range(8):
            launch(f"k-{len(in_flight)}")
        await asyncio.sleep(0.0005)
        # ... and one that the client sends as the server dies.
        launch("k-last")
        server.kill9()
        await asyncio.gather(*tasks)
        acked = [k for k in sent if k in replies]
        unacked = [k for k in sent if k not in replies]
        assert all(replies[k]["ok"] for k in acked), [replies[k] for k in acked]
        assert any(k.startswith("k-") for k in acked) and unacked

        # Restart on the same data directory: the old redis-server is gone, the round is open.
        await server.restart()
        assert await wait_until_dead(old_redis, 5), "the crashed server's redis-server was left"
        assert server.redis_pid != old_redis
        await crew.connect()
        assert crew.cashier is not None and crew.dealer is not None
        stream = f"table:{table}"
        sub = await crew.dealer.cmd("subscribe", stream=stream, since=0)
        assert sub["ok"], sub
        events = await crew.dealer.wait_events(stream, sub["result"]["head"])
        assert events == await crew.stream(stream)
        by_command = placed_by_command(events)
        by_seq = {e["seq"]: e for e in events}
        for k in acked:
            assert by_command[k] == 1, f"acknowledged bet {k} is there {by_command[k]} times"
            result = replies[k]["result"]
            placed = by_seq[result["seq"]]
            assert (placed["type"], placed["causation"], placed["data"]["bet_id"]) == (
                "BetPlaced",
                k,
                result["bet_id"],
            )
        assert all(n == 1 for n in by_command.values())
        view = await crew.table(table)
        assert (view["round"], view["phase"]) == (2, "betting")
        round_bets = {
            e["data"]["bet_id"]
            for e in events
            if e["type"] == "BetPlaced" and e["data"]["round"] == 2
        }
        assert {b["bet_id"] for b in view["bets"]} == round_bets
        assert {
            replies[k]["result"]["bet_id"] for k in acked if k.startswith(("a-", "k-"))
        } <= round_bets

        # A retry of an acknowledged command returns the first reply and changes nothing.
        head = view["seq"]
        for k in acked:
            p, msg = sent[k]
            assert await crew.players[p].send(dict(msg)) == replies[k]
        assert (await crew.table(table))["seq"] == head

        # The client retries what it never heard back about: each bet then exists once.
        for k in unacked:
            p, msg = sent[k]
            first = await crew.players[p].send(dict(msg))
            assert first["ok"], first
            assert await crew.players[p].send(dict(msg)) == first
            replies[k] = first
        events = await crew.stream(stream)
        by_command = placed_by_command(events)
        assert {k: by_command[k] for k in sent} == dict.fromkeys(sent, 1)
        assert all(n == 1 for n in by_command.values())

        # The round is still open: more bets, then no more bets and the outcome settle all.
        for i, p in enumerate(PLAYERS):
            bet, amount = random_bet(rng, config)
            assert (await crew.players[p].send(bet_msg(f"after-{i}", table, p, bet, amount)))["ok"]
        assert (await crew.dealer.cmd("no_more_bets", table=table))["ok"]
        done = await crew.dealer.cmd(
            "record_outcome", table=table, outcome={"pocket": "32", "spun_from": "17"}
        )
        assert done["ok"], done
        events = await crew.stream(stream)
        round_placed = {
            e["data"]["bet_id"]: e["data"]
            for e in events
            if e["type"] == "BetPlaced" and e["data"]["round"] == 2
        }
        assert len(round_placed) == len(sent) + len(PLAYERS)
        settled = events[-1]
        assert settled["type"] == "Settled" and settled["data"]["round"] == 2
        assert {s["bet_id"]: s["paid"] for s in settled["data"]["settlements"]} == {
            b: expected_paid(d["bet"], d["amount"], "32") for b, d in round_placed.items()
        }
        assert done["result"]["paid"] == sum(s["paid"] for s in settled["data"]["settlements"])
        await check_books(server, crew, org)
    await verify_offline(server)


async def test_kill_9_of_redis_mid_round_is_survived_by_retrying(serve: ServeFactory) -> None:
    org = "e2e-crash-redis"
    server = await serve(org, TABLES, PLAYERS)
    crew = Crew(server)
    rng = random.Random(4621)
    tables = ("roulette-1", "roulette-2")
    async with asyncio.timeout(45):
        await crew.connect()
        cashier, dealer = crew.cashier, crew.dealer
        assert cashier is not None and dealer is not None
        for p in PLAYERS:
            assert (await cashier.cmd("buy_chips", player=p, amount=CHIPS))["ok"]
        configs = {t: await crew.config(t) for t in tables}
        for t in tables:
            assert (await dealer.cmd("open_round", table=t))["ok"]

        sent: dict[str, tuple[str, dict[str, Any]]] = {}
        replies: dict[str, dict[str, Any]] = {}
        for i in range(8):
            p, t = PLAYERS[i % len(PLAYERS)], tables[i % 2]
            bet, amount = random_bet(rng, configs[t])
            msg = bet_msg(f"a-{i}", t, p, bet, amount)
            sent[msg["id"]] = (p, msg)
            replies[msg["id"]] = await crew.players[p].send(dict(msg))
            assert replies[msg["id"]]["ok"]

        # Every player keeps betting through the outage, retrying each command with its id.
        plans: dict[str, list[dict[str, Any]]] = {p: [] for p in PLAYERS}
        for i in range(48):
            p, t = PLAYERS[i % len(PLAYERS)], tables[(i // len(PLAYERS)) % 2]
            bet, amount = random_bet(rng, configs[t])
            msg = bet_msg(f"r-{i}", t, p, bet, amount)
            sent[msg["id"]] = (p, msg)
            plans[p].append(msg)
        deadline = time.monotonic() + 25
        refused: Counter[str] = Counter()

        async def retrying(p: str) -> None:
            client = crew.players[p]
            for msg in plans[p]:
                while True:
                    assert time.monotonic() < deadline, f"no ok reply for {msg['id']}"
                    try:
                        reply = await client.send(dict(msg), timeout=5)
                    except TimeoutError:
                        continue
                    if reply["ok"]:
                        replies[msg["id"]] = reply
                        break
                    assert reply["error"]["code"] in RETRYABLE, reply
                    refused[reply["error"]["code"]] += 1
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.01)

        async def chips_during_outage() -> dict[str, Any]:
            msg = {"op": "buy_chips", "id": "buy-during", "player": "p-1", "amount": 1000}
            return await retry_until_ok(cashier, msg, deadline=deadline, codes=RETRYABLE)

        bettors = [asyncio.create_task(retrying(p)) for p in PLAYERS]
        while sum(1 for k in replies if k.startswith("r-")) < 8:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.005)
        old_redis = server.kill_redis9()
        buy = asyncio.create_task(chips_during_outage())
        await asyncio.gather(*bettors)
        assert (await buy)["ok"]
        assert not pid_alive(old_redis)
        while server.current_redis_pid() in (
            None,
            old_redis,
        ):  # the watcher's new redis-server writes its pid
            assert time.monotonic() < deadline, "the embedded redis-server was not restarted"
            await asyncio.sleep(0.05)
        assert pid_alive(server.redis_pid) and server.running
        assert "embedded_redis_died" in server.stderr_text()

        # Nothing acknowledged is lost, nothing is doubled, replies match the stream.
        by_command: Counter[str] = Counter()
        by_seq: dict[tuple[str, int], dict[str, Any]] = {}
        for t in tables:
            events = await crew.stream(f"table:{t}")
            by_command += placed_by_command(events)
            by_seq.update({(t, e["seq"]): e for e in events})
        assert {k: by_command[k] for k in sent} == dict.fromkeys(sent, 1)
        assert all(n == 1 for n in by_command.values())
        for k, (_p, msg) in sent.items():
            result = replies[k]["result"]
            placed = by_seq[(msg["table"], result["seq"])]
            assert (placed["causation"], placed["data"]["bet_id"]) == (k, result["bet_id"])
        cage = await crew.stream("cage")
        assert [e["causation"] for e in cage].count("buy-during") == 1
        p, msg = sent["r-0"]
        assert await crew.players[p].send(dict(msg)) == replies["r-0"]

        # Both rounds settle every bet once, at the fixed odds.
        for t in tables:
            await retry_until_ok(
                dealer,
                {"op": "no_more_bets", "id": f"nmb-{t}", "table": t},
                deadline=deadline,
                codes=RETRYABLE,
            )
        done = await retry_until_ok(
            dealer,
            {
                "op": "record_outcome",
                "id": "outcome-1",
                "table": "roulette-1",
                "outcome": {"pocket": "00"},
            },
            deadline=deadline,
            codes=RETRYABLE,
        )
        drawn = await retry_until_ok(
            dealer,
            {"op": "draw_outcome", "id": "outcome-2", "table": "roulette-2"},
            deadline=deadline,
            codes=RETRYABLE,
        )
        for t, reply in (("roulette-1", done), ("roulette-2", drawn)):
            events = await crew.stream(f"table:{t}")
            placed = {e["data"]["bet_id"]: e["data"] for e in events if e["type"] == "BetPlaced"}
            assert len(placed) == sum(1 for _p, m in sent.values() if m["table"] == t)
            settled = events[-1]
            assert settled["type"] == "Settled"
            pocket = reply["result"]["outcome"]["pocket"]
            assert {s["bet_id"]: s["paid"] for s in settled["data"]["settlements"]} == {
                b: expected_paid(d["bet"], d["amount"], pocket) for b, d in placed.items()
            }
            assert (await crew.table(t))["phase"] == "idle"
        await check_books(server, crew, org)
    await verify_offline(server)
