"""A night of the dice games whose round takes several rolls, against the real
``casino-night serve`` process: a Bang table (4620.15, dealer mode: the dice entered as they
lie) over several games with a big six riding from the first game to the fourth, and a
Beat the Dealer table (4620.14, RNG mode: the server rolls), every command over a websocket.

At each table the server is killed with ``kill -9`` between the dealer's roll and the
player's (Bang: the shooter's) roll and restarted on the same data directory: the table
reads back exactly as it was, the dealer's roll retried with its id gets its first reply
(the same dice) and changes nothing, and the game goes on. At the end the test recomputes
every settlement from the events alone, with its own statement of the rules, and holds
each ``PartSettled`` to it; money is conserved (the bankroll projection, the store's
guarded balances and the test's books agree, balances plus the house result equal chips
issued less redeemed); and ``casino-night verify`` finds every chain intact.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from pathlib import Path
from typing import Any

from tests.e2e.serve import EXE, ServeProcess, toml_value, wait_until_dead
from tests.support import WsClient

ORG = "e2e-dice"
BANG = "bang-1"
BTD = "btd-1"
PLAYERS = ("p-1", "p-2", "p-3", "p-4")
CHIPS = 20_000


def night_toml() -> str:
    return "\n".join(
        [
            f"players = {toml_value(list(PLAYERS))}",
            "[organization]",
            f"id = {toml_value(ORG)}",
            'name = "End-to-end dice night"',
            "[license]",
            'number = "GC-E2E-0014"',
            'games = ["bang", "beat_the_dealer"]',
            'period_start = "2026-11-01"',
            'period_end = "2026-12-31"',
            "[occasion]",
            'id = "e2e-dice"',
            'name = "End-to-end dice night"',
            "[[tables]]",
            f"id = {toml_value(BANG)}",
            'game = "bang"',
            'outcome_mode = "dealer"',
            "[tables.options]",
            "seats = 6",
            "[[tables]]",
            f"id = {toml_value(BTD)}",
            'game = "beat_the_dealer"',
            'outcome_mode = "rng"',
            "",
        ]
    )


# The rules, as the test states them from the text (not the server's code).

WINS = {
    "field": {2, 3, 4, 9, 10, 11, 12},
    "under_seven": {2, 3, 4, 5, 6},
    "any_seven": {7},
    "over_seven": {8, 9, 10, 11, 12},
}
PAYS = {"any_seven": 4}


def bang_decides(kind: str, total: int, point: int | None) -> int | None:
    """What a unit bet pays back on this roll (0: lost), or None: not decided by it."""
    if kind in WINS:
        return 1 + PAYS.get(kind, 1) if total in WINS[kind] else 0
    if kind in ("big_six", "big_eight"):
        number = 6 if kind == "big_six" else 8
        return 2 if total == number else 0 if total == 7 else None
    return None if point is None else (2 if total > point else 0)  # hi_dice, ties lost


def recompute(events: list[dict[str, Any]], game: str) -> dict[str, tuple[str, int]]:
    """Every bet's expected (result, paid) from the stream's bets and rolls alone, and a
    check that each PartSettled says exactly that."""
    open_bets: dict[str, tuple[str, str, int]] = {}
    expected: dict[str, tuple[str, int]] = {}
    point: int | None = None
    for e in events:
        d = e["data"]
        if e["type"] == "BetPlaced":
            open_bets[d["bet_id"]] = (d["bet"]["kind"], d["player"], d["amount"])
        elif e["type"] == "BetCancelled":
            del open_bets[d["bet_id"]]
        elif e["type"] == "RoundOpened":
            point = None
        elif e["type"] == "DiceRolled":
            assert d["total"] == sum(d["dice"]) and all(1 <= f <= 6 for f in d["dice"])
            if d["turn"] == "dealer":
                point = d["total"]
                decider: int | None = None
            else:
                decider = point
            for bet_id, (kind, player, amount) in list(open_bets.items()):
                if game == "bang":
                    unit = bang_decides(kind, d["total"], decider)
                elif d["turn"] == "player" and player == d["player"]:
                    assert point is not None
                    unit = 2 if d["total"] > point else 0
                else:
                    unit = None
                if unit is not None:
                    expected[bet_id] = ("won" if unit else "lost", unit * amount)
                    del open_bets[bet_id]
        elif e["type"] == "PartSettled":
            for s in d["settlements"]:
                if s["result"] == "returned":
                    open_bets.pop(s["bet_id"])
                    expected[s["bet_id"]] = ("returned", s["amount"])
                assert expected[s["bet_id"]] == (s["result"], s["paid"]), (e, expected)
    assert not open_bets or game == "bang"
    return expected


class Night:
    def __init__(self, server: ServeProcess) -> None:
        self.server = server
        self.ids = itertools.count(1)
        self.clients: dict[str, WsClient] = {}
        self.sent: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {}
        self.bought: Counter[str] = Counter()

    async def connect(self) -> None:
        s = self.server
        await s.close_clients()
        self.clients = {
            "cashier": await s.connect(s.token("cashier")),
            "dealer": await s.connect(s.dealer_token(BANG, BTD)),
        }
        for p in PLAYERS:
            self.clients[p] = await s.connect(s.player_token(p))

    async def ok(self, who: str, op: str, **fields: Any) -> dict[str, Any]:
        msg = {"op": op, "id": f"{op}-{next(self.ids)}", **fields}
        reply = await self.clients[who].send(dict(msg))
        assert reply["ok"], (who, msg, reply)
        self.sent[msg["id"]] = (who, msg, reply)
        return reply

    async def view(self, table: str) -> dict[str, Any]:
        status, view = await self.server.get(
            f"/api/tables/{table}", self.server.player_token("p-1")
        )
        assert status == 200, view
        return dict(view)

    async def crash(self, table: str, last: dict[str, Any]) -> None:
        """kill -9 now, restart on the same data directory; the table reads back as it was,
        and the last command retried with its id gets its first reply, changing nothing."""
        before = await self.view(table)
        old_redis = self.server.redis_pid
        self.server.kill9()
        await self.server.restart()
        assert await wait_until_dead(old_redis, 5)
        await self.connect()
        assert await self.view(table) == before
        who, msg, first = self.sent[last["re"]]
        assert await self.clients[who].send(dict(msg)) == first
        assert (await self.view(table))["seq"] == before["seq"], "the retry was applied again"

    async def stream(self, name: str) -> list[dict[str, Any]]:
        status, page = await self.server.get(
            f"/api/streams/{name}/events?limit=10000", self.server.token("auditor")
        )
        assert status == 200, page
        return list(page["events"])

    async def check_money(self) -> None:
        await self.server.wait_ready()
        status, bankrolls = await self.server.get("/api/bankrolls", self.server.token("auditor"))
        assert status == 200, bankrolls
        balances = {p: v["balance"] for p, v in bankrolls["players"].items()}
        assert await self.server.store_balances(ORG) == balances
        o = bankrolls["organization"]
        assert sum(balances.values()) + o["house_win"] == o["issued"] - o["redeemed"]


# Bang: (bets before the dealer's roll, the dealer's dice, bets after it, the shooter's
# dice). p-1's big six of game 1 rides until game 4's shooter rolls a 6.
BANG_GAMES: list[
    tuple[list[tuple[str, str, int]], list[int], list[tuple[str, str, int]], list[int]]
] = [
    (
        [("p-1", "big_six", 500), ("p-2", "field", 200), ("p-3", "hi_dice", 300)],
        [4, 5],
        [("p-2", "any_seven", 100), ("p-4", "big_eight", 200)],
        [5, 5],
    ),
    (
        [("p-2", "hi_dice", 500), ("p-4", "under_seven", 100)],
        [2, 1],
        [("p-3", "field", 100)],
        [4, 4],
    ),
    ([("p-3", "over_seven", 400)], [5, 4], [], [2, 3]),
    ([("p-4", "hi_dice", 100)], [1, 1], [("p-2", "field", 100)], [3, 3]),
    ([("p-1", "big_eight", 100)], [3, 2], [], [6, 6]),
]


async def bang_night(night: Night) -> None:
    for seat, p in enumerate(PLAYERS, start=1):
        await night.ok("dealer", "seat_player", table=BANG, seat=seat, player=p)
    six = ""
    for game, (before, dealer_dice, after, shooter_dice) in enumerate(BANG_GAMES, start=1):
        await night.ok("dealer", "open_round", table=BANG)
        for p, kind, amount in before:
            reply = await night.ok(
                p, "place_bet", table=BANG, player=p, bet={"kind": kind}, amount=amount
            )
            if game == 1 and kind == "big_six":
                six = reply["result"]["bet_id"]
        await night.ok("dealer", "no_more_bets", table=BANG)
        rolled = await night.ok("dealer", "roll", table=BANG, dice=dealer_dice, thrown_by="dealer")
        if game == 2:
            await night.crash(BANG, rolled)
        for p, kind, amount in after:
            await night.ok(p, "place_bet", table=BANG, player=p, bet={"kind": kind}, amount=amount)
        await night.ok("dealer", "no_more_bets", table=BANG)
        shooter = (await night.view(BANG))["shooter"]
        # the dice pass clockwise: seat 1 (the first bettor on the dealer's left) first
        assert shooter["seat"] == (game - 1) % len(PLAYERS) + 1, (game, shooter)
        shot = await night.ok(
            "dealer",
            "roll",
            table=BANG,
            dice=shooter_dice,
            player=shooter["player"],
            thrown_by="player",
        )
        assert shot["result"]["round_ended"]
        layout = (await night.view(BANG))["layout"]
        riding = [b["bet_id"] for b in layout]
        assert (six in riding) == (game < 4), (game, layout)
    events = await night.stream(f"table:{BANG}")
    settled_six = [
        e
        for e in events
        if e["type"] == "PartSettled"
        for s in e["data"]["settlements"]
        if s["bet_id"] == six
    ]
    assert [(e["data"]["round"], e["data"]["part"]) for e in settled_six] == [(4, "shooter_roll")]
    # the night's end: the big eight of game 5 still rides and comes back at the close
    assert (await night.view(BANG))["layout"], "a big bet should still ride"
    await night.ok("dealer", "close_table", table=BANG, reason="night over")
    events = await night.stream(f"table:{BANG}")
    expected = recompute(events, "bang")
    assert expected[six] == ("won", 1000)
    assert events[-2]["type"] == "PartSettled" and events[-2]["data"]["part"] == "closing"


async def btd_night(night: Night) -> None:
    for rnd in range(1, 7):
        await night.ok("dealer", "open_round", table=BTD)
        bettors = PLAYERS[: 1 + rnd % 4]
        for i, p in enumerate(bettors):
            await night.ok(
                p,
                "place_bet",
                table=BTD,
                player=p,
                bet={"kind": "beat_the_dealer"},
                amount=100 * (i + 1),
            )
        await night.ok("dealer", "no_more_bets", table=BTD)
        rolled = await night.ok("dealer", "roll", table=BTD)
        [dealer] = rolled["result"]["rolls"]
        assert dealer["thrown_by"] == "rng" and dealer["turn"] == "dealer"
        if rnd == 3:
            await night.crash(BTD, rolled)
            assert (await night.view(BTD))["dealer"] == dealer
        for p in reversed(bettors):
            reply = await night.ok("dealer", "roll", table=BTD, player=p)
            [roll] = reply["result"]["rolls"]
            [s] = reply["result"]["settled"][0]["settlements"]
            assert s["result"] == ("won" if roll["total"] > dealer["total"] else "lost")
        assert (await night.view(BTD))["phase"] == "idle"
    recompute(await night.stream(f"table:{BTD}"), "beat_the_dealer")


async def test_a_dice_night_survives_kill_9_between_the_dealers_roll_and_the_players(
    tmp_path: Path,
) -> None:
    assert EXE.exists(), f"{EXE} is missing: make install"
    server = ServeProcess(tmp_path / ORG, night_toml())
    try:
        async with asyncio.timeout(120):
            await server.start()
            night = Night(server)
            await night.connect()
            for p in PLAYERS:
                await night.ok("cashier", "buy_chips", player=p, amount=CHIPS)
            await bang_night(night)
            await btd_night(night)
            await night.check_money()
            # every balance is what the events' own settlements give
            paid: Counter[str] = Counter()
            for table in (BANG, BTD):
                for e in await night.stream(f"table:{table}"):
                    d = e["data"]
                    if e["type"] == "BetPlaced":
                        paid[d["player"]] -= d["amount"]
                    elif e["type"] == "PartSettled":
                        for s in d["settlements"]:
                            paid[s["player"]] += s["paid"]
            balances = await server.store_balances(ORG)
            assert balances == {p: CHIPS + paid[p] for p in PLAYERS}
            redis_pid = server.redis_pid
            assert await server.terminate() == 0
            assert await wait_until_dead(redis_pid, 10)
            verified = await server.cli("verify")
            assert verified.returncode == 0, verified.stdout + verified.stderr
            await server.audited()
            assert "BROKEN" not in verified.stdout
    finally:
        await server.aclose()
