"""A whole casino night against the real ``casino-night serve`` process.

Four roulette tables (two with a physical wheel, two drawn by the server's CSPRNG), six
players, a cashier, dealers and auditors over real websockets; many rounds in parallel.
The test keeps its own books from what the server acknowledged and checks them against
the server's: every bet settles at the fixed odds (4620.4(d)-(e)), money is conserved,
the bankroll projection equals the store's guarded balances, ``verify`` finds every hash
chain intact and ``replay`` rebuilds the very bankrolls the live server showed. A
subscriber that drops and resubscribes with ``since`` misses nothing and sees nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tests.e2e.conftest import ServeFactory
from tests.e2e.serve import (
    POCKETS,
    Books,
    ServeProcess,
    expected_paid,
    pid_alive,
    random_bet,
)
from tests.support import WsClient

ORG = "e2e-whole-night"
TABLES: list[dict[str, Any]] = [
    {
        "id": "roulette-1",
        "outcome_mode": "dealer",
        "options": {"options": ["basket", "five_adjacent"]},
    },
    {"id": "roulette-2", "outcome_mode": "rng", "options": {}},
    {
        "id": "roulette-3",
        "outcome_mode": "dealer",
        "options": {"max_inside": 100, "max_outside": 300},
    },
    {"id": "roulette-4", "outcome_mode": "rng", "options": {"options": ["seven_numbers"]}},
]
PLAYERS = [f"p-{i}" for i in range(1, 7)]
ROUNDS = 6
CHIPS = 60_000
SEED = 20261129
WATCHED = "table:roulette-1"


@dataclass
class RoundPlan:
    bets: list[tuple[str, dict[str, Any], int]]
    cancel: int | None
    pocket: str


def plan_night(
    rng: random.Random, configs: dict[str, Any], rounds_per_table: int = ROUNDS
) -> dict[str, list[RoundPlan]]:
    """Who bets what, what is cancelled, which pocket the dealer enters: all from the seed."""
    plans: dict[str, list[RoundPlan]] = {}
    for t in TABLES:
        rounds = []
        for _ in range(rounds_per_table):
            bets = []
            for player in rng.sample(PLAYERS, k=rng.randint(2, len(PLAYERS))):
                for _ in range(rng.randint(1, 2)):
                    bet, amount = random_bet(rng, configs[t["id"]])
                    bets.append((player, bet, amount))
            cancel = rng.randrange(len(bets)) if rng.random() < 0.5 else None
            rounds.append(RoundPlan(bets=bets, cancel=cancel, pocket=rng.choice(POCKETS)))
        plans[t["id"]] = rounds
    return plans


class Night:
    def __init__(self, server: ServeProcess) -> None:
        self.server = server
        self.books = Books()
        self.auditor = server.token("auditor")
        self.players: dict[str, WsClient] = {}
        self.dealers: dict[str, WsClient] = {}
        self.watch_before: list[dict[str, Any]] = []
        self.watch_after: WsClient | None = None
        self.watch_since = -1

    async def run_table(self, table: str, plan: list[RoundPlan], watcher: WsClient | None) -> None:
        dealer = self.dealers[table]
        books = self.books
        previous: str | None = None
        for number, rnd in enumerate(plan, start=1):
            opened = await dealer.cmd("open_round", table=table)
            assert opened["ok"], opened
            assert opened["result"]["round"] == number
            replies = await asyncio.gather(
                *(
                    self.players[p].cmd("place_bet", table=table, player=p, bet=bet, amount=amount)
                    for p, bet, amount in rnd.bets
                )
            )
            live: dict[str, tuple[str, dict[str, Any], int]] = {}
            for (p, bet, amount), reply in zip(rnd.bets, replies, strict=True):
                assert reply["ok"], (table, p, bet, amount, reply)
                live[reply["result"]["bet_id"]] = (p, bet, amount)
                books.wagered[p] += amount
                books.handle[table] += amount
                books.bets[table] += 1
            assert len(live) == len(rnd.bets), "every bet gets its own id"
            if rnd.cancel is not None:
                bet_id = list(live)[rnd.cancel]
                p, _bet, amount = live.pop(bet_id)
                cancelled = await self.players[p].cmd("cancel_bet", table=table, bet_id=bet_id)
                assert cancelled["ok"], cancelled
                books.wagered[p] -= amount
                books.handle[table] -= amount
                books.bets[table] -= 1
            assert (await dealer.cmd("no_more_bets", table=table))["ok"]
            p0, bet0, amount0 = rnd.bets[0]
            late = await self.players[p0].cmd(
                "place_bet", table=table, player=p0, bet=bet0, amount=amount0
            )
            assert not late["ok"] and late["error"]["code"] == "bets_closed", late  # 4620.4(c)(1)
            if table in ("roulette-2", "roulette-4"):
                done = await dealer.cmd("draw_outcome", table=table)
            else:
                outcome: dict[str, Any] = {"pocket": rnd.pocket}
                if previous is not None:
                    outcome["spun_from"] = previous
                done = await dealer.cmd("record_outcome", table=table, outcome=outcome)
            assert done["ok"], done
            pocket = done["result"]["outcome"]["pocket"]
            if table not in ("roulette-2", "roulette-4"):
                assert pocket == rnd.pocket
            previous = pocket
            paid = 0
            for p, bet, amount in live.values():
                won = expected_paid(bet, amount, pocket)
                books.paid[p] += won
                paid += won
            books.paid_out[table] += paid
            books.rounds[table] += 1
            assert done["result"]["wagered"] == sum(a for _p, _b, a in live.values())
            assert done["result"]["paid"] == paid, (table, number, pocket, live, done)
            # The Settled event lists every live bet of the round once, with its payout.
            head = done["result"]["seq"]
            status, page = await self.server.get(
                f"/api/streams/table:{table}/events?since={head - 1}&limit=1", self.auditor
            )
            assert status == 200
            settled = page["events"][0]
            assert settled["type"] == "Settled" and settled["data"]["round"] == number
            assert {s["bet_id"]: s["paid"] for s in settled["data"]["settlements"]} == {
                bet_id: expected_paid(bet, amount, pocket)
                for bet_id, (_p, bet, amount) in live.items()
            }
            if watcher is not None:
                await self._watch_step(number, watcher)

    async def _watch_step(self, number: int, watcher: WsClient) -> None:
        """After round 2 the watcher drops; after round 4 it resubscribes with ``since``."""
        if number == 2:
            await watcher.close()
            self.watch_before = [e for e in watcher.events if e["stream"] == WATCHED]
            self.watch_since = max(e["seq"] for e in self.watch_before)
        elif number == 4:
            again = await self.server.connect(self.server.token("auditor", "watcher"))
            sub = await again.cmd("subscribe", stream=WATCHED, since=self.watch_since)
            assert sub["ok"], sub
            assert sub["result"]["head"] > self.watch_since, "events happened while away"
            self.watch_after = again


async def test_a_whole_night_balances_replays_and_verifies(serve: ServeFactory) -> None:
    started = time.monotonic()
    server = await serve(ORG, TABLES, PLAYERS)
    night = Night(server)
    books = night.books
    auditor = night.auditor
    rng = random.Random(SEED)

    status, tables = await server.get("/api/tables", auditor)
    assert status == 200
    configs = {t["table"]: t["config"] for t in tables["tables"]}
    assert sorted(configs) == [t["id"] for t in TABLES]
    plans = plan_night(rng, configs)

    async with asyncio.timeout(60):
        cashier = await server.connect(server.token("cashier"))
        watcher = await server.connect(server.token("auditor", "watcher"))
        assert (await watcher.cmd("subscribe", stream=WATCHED, since=0))["ok"]
        for p in PLAYERS:
            night.players[p] = await server.connect(server.player_token(p))
            bought = await cashier.cmd("buy_chips", player=p, amount=CHIPS)
            assert bought["ok"], bought
            books.bought[p] += CHIPS
        over = await cashier.cmd("buy_chips", player="p-1", amount=100_001)
        assert not over["ok"] and over["error"]["code"] == "over_limit"
        for t in TABLES:
            night.dealers[t["id"]] = await server.connect(server.dealer_token(t["id"]))
        other_table = await night.dealers["roulette-2"].cmd("open_round", table="roulette-1")
        assert not other_table["ok"] and other_table["error"]["code"] == "forbidden"

        await asyncio.gather(
            *(
                night.run_table(
                    t["id"], plans[t["id"]], watcher if t["id"] == "roulette-1" else None
                )
                for t in TABLES
            )
        )

        # The cage at the end of the night: a cash-out over the balance moves nothing.
        broke = await cashier.cmd("cash_out", player="p-1", amount=books.balance("p-1") + 1)
        assert not broke["ok"] and broke["error"]["code"] == "insufficient_funds", broke
        for p in PLAYERS:
            amount = books.balance(p) // 2
            if amount:
                out = await cashier.cmd("cash_out", player=p, amount=amount)
                assert out["ok"], out
                books.redeemed[p] += amount

        # The resubscribed watcher gets exactly what it missed, then live events: no gap,
        # no duplicate.
        status, page = await server.get(f"/api/streams/{WATCHED}/events?limit=10000", auditor)
        assert status == 200
        stored = page["events"]
        assert night.watch_after is not None
        after = await night.watch_after.wait_events(WATCHED, len(stored) - night.watch_since)
        seen = night.watch_before + after
        assert [e["seq"] for e in seen] == list(range(1, len(stored) + 1))
        assert [(e["id"], e["hash"]) for e in seen] == [(e["id"], e["hash"]) for e in stored]
        assert all(e["seq"] > night.watch_since for e in after)

        # Every stream is a gapless hash chain; every table is idle with nothing on it.
        counts: dict[str, int] = {}
        for t in TABLES:
            status, page = await server.get(
                f"/api/streams/table:{t['id']}/events?limit=10000", auditor
            )
            events = page["events"]
            counts[f"table:{t['id']}"] = len(events)
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
            assert all(b["prev_hash"] == a["hash"] for a, b in itertools.pairwise(events))
            placed = [e["data"]["bet_id"] for e in events if e["type"] == "BetPlaced"]
            assert len(placed) == len(set(placed))
            settled = [
                s["bet_id"]
                for e in events
                if e["type"] == "Settled"
                for s in e["data"]["settlements"]
            ]
            cancelled = [e["data"]["bet_id"] for e in events if e["type"] == "BetCancelled"]
            assert sorted(settled + cancelled) == sorted(placed), (
                "every bet settles or is cancelled"
            )
            status, view = await server.get(f"/api/tables/{t['id']}", auditor)
            assert (view["phase"], view["bets"], view["round"]) == ("idle", [], ROUNDS)
        for stream in ("cage", "license"):
            status, page = await server.get(f"/api/streams/{stream}/events?limit=10000", auditor)
            counts[stream] = len(page["events"])
        total_events = sum(counts.values())

        # The bankrolls: the projection, the test's books and the store's balances agree.
        await server.wait_ready()
        status, bankrolls = await server.get("/api/bankrolls", auditor)
        assert status == 200
        org = bankrolls["organization"]
        players = bankrolls["players"]
        balances = {p: players[p]["balance"] for p in PLAYERS}
        assert sum(balances.values()) + org["house_win"] == org["issued"] - org["redeemed"]
        assert org["issued"] == sum(books.bought.values())
        assert org["redeemed"] == sum(books.redeemed.values())
        assert org["handle"] == sum(books.handle.values())
        assert org["paid_out"] == sum(books.paid_out.values())
        assert org["outstanding"] == org["issued"] - org["redeemed"]
        assert balances == {p: books.balance(p) for p in PLAYERS}
        for p in PLAYERS:
            assert players[p] == books.player(p)
            status, own = await server.get(f"/api/bankrolls/players/{p}", server.player_token(p))
            assert status == 200 and own == {"player": p, **players[p]}
        status, _ = await server.get("/api/bankrolls/players/p-2", server.player_token("p-1"))
        assert status == 403
        status, _ = await server.get("/api/bankrolls", server.player_token("p-1"))
        assert status == 403
        assert await server.store_balances(ORG) == balances
        assert bankrolls["tables"] == {
            t["id"]: {
                "handle": books.handle[t["id"]],
                "paid_out": books.paid_out[t["id"]],
                "house_win": books.handle[t["id"]] - books.paid_out[t["id"]],
                "rounds": ROUNDS,
                "bets": books.bets[t["id"]],
            }
            for t in TABLES
        }
        assert org["house_win"] == sum(t["house_win"] for t in bankrolls["tables"].values())

    # Stop the server; then the offline tools on its data directory.
    await server.close_clients()
    redis_pid = server.redis_pid
    assert await server.terminate() == 0
    assert not pid_alive(redis_pid), "the embedded redis-server stops with the server"

    verified = await server.cli("verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    report = await server.audited("--occasion", "e2e-night")
    assert "- Reported: occasion e2e-night" in report
    verified_streams = {
        line.split()[1].rstrip(":")
        for line in verified.stdout.splitlines()
        if line.startswith("ok")
    }
    # Every stream of the night is walked (verify may report more, e.g. the org log itself).
    assert {"cage", "license", *(f"table:{t['id']}" for t in TABLES)} <= verified_streams
    assert "BROKEN" not in verified.stdout

    replayed = await server.cli("replay", "--show")
    assert replayed.returncode == 0, replayed.stderr
    # The JSON report, after any log line the command printed before it.
    printed = replayed.stdout
    report = json.loads(printed[printed.index("{") :])
    assert report["events"] == total_events
    rebuilt = report["bankrolls"]
    assert rebuilt["players"] == bankrolls["players"]
    assert rebuilt["tables"] == bankrolls["tables"]
    assert rebuilt["organization"] == bankrolls["organization"]
    assert rebuilt["occasions"] == bankrolls["occasions"]
    assert time.monotonic() - started < 60


async def test_an_org_log_subscriber_gets_every_event_once_in_order(serve: ServeFactory) -> None:
    """Subscribed to ``log`` before the night starts, an auditor gets every event of every
    stream exactly once, in org-log order, while four tables play at once."""
    server = await serve("e2e-org-log", TABLES, PLAYERS)
    night = Night(server)
    auditor = night.auditor
    status, tables = await server.get("/api/tables", auditor)
    assert status == 200
    configs = {t["table"]: t["config"] for t in tables["tables"]}
    plans = plan_night(random.Random(SEED + 1), configs, rounds_per_table=3)
    async with asyncio.timeout(30):
        log_sub = await server.connect(auditor)
        assert (await log_sub.cmd("subscribe", stream="log", since=0))["ok"]
        cashier = await server.connect(server.token("cashier"))
        for p in PLAYERS:
            night.players[p] = await server.connect(server.player_token(p))
            assert (await cashier.cmd("buy_chips", player=p, amount=CHIPS))["ok"]
        for t in TABLES:
            night.dealers[t["id"]] = await server.connect(server.dealer_token(t["id"]))
        await asyncio.gather(*(night.run_table(t["id"], plans[t["id"]], None) for t in TABLES))
        status, page = await server.get("/api/streams/log/events?limit=10000", auditor)
        assert status == 200
        stored = page["events"]
        deadline = time.monotonic() + 3
        for stream, count in Counter(e["stream"] for e in stored).items():
            with contextlib.suppress(TimeoutError):
                await log_sub.wait_events(
                    stream, count, timeout=max(0.0, deadline - time.monotonic())
                )
        got = [e["id"] for e in log_sub.events]
        missing = [(e["log_id"], e["stream"], e["seq"]) for e in stored if e["id"] not in set(got)]
        assert not missing, f"{len(missing)} of {len(stored)} events never reached the subscriber"
        assert got == [e["id"] for e in stored], "every event once, in org-log order"
    await server.audited_live("e2e-org-log")
