"""A night of wheels against the real ``casino-night serve`` process.

A cashier sells chips to four players. A money wheel (standard layout, the dealer enters
the section) runs seeded random rounds, every bet paid the bill's face "to 1" or the
flag's / joker's odds set in the night file (4620.8(b)(2)). A merchandise wheel with a small
custom layout, a lowered aggregate prize limit and an opening inventory runs rounds: each
winning bet is handed the oldest item of its section's prize class, never cash
(4620.10(d)); a member in charge restocks it; an ops client holds a ``control_sheet`` view
subscription and sees every sheet pushed. The server is restarted cleanly, then killed with
``kill -9`` in the middle of a merchandise round and restarted; clients reconnect and the
round goes on. The merchandise wheel then plays until the value awarded reaches its limit
(or no item left fits under it) and closes itself (4620.10(e)): its next command is
``table_closed``.

The test keeps its own model of the shelf (items by class, oldest first; the round's
exposure per section; the aggregate) and predicts every reply from it: which bets are
refused with ``out_of_stock`` or ``prize_limit``, which items go to whom, when the wheel
closes. At the end the control sheet over HTTP, the bankrolls, the streams' settlements and
``casino-night replay --show`` (after the server stopped) all agree with that model and with
each other.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.serve import EXE, Books, ServeProcess, pid_alive, toml_value, wait_until_dead
from tests.support import WsClient

ORG = "e2e-wheel-night"
MONEY = "money-1"
PRIZES = "prizes-1"
PLAYERS = ("p-1", "p-2", "p-3", "p-4")
CHIPS = 30_000
SEED = 462008

# The money wheel: the standard layout, flag and joker at odds the night file sets.
FLAG_ODDS = 30
JOKER_ODDS = 25
PAYS_TO_ONE = {
    "$1": 1,
    "$2": 2,
    "$5": 5,
    "$10": 10,
    "$20": 20,
    "flag": FLAG_ODDS,
    "joker": JOKER_ODDS,
}
"""4620.8(b)(2): the bill's number is the payoff odds; flag and joker at the layout's odds."""
MONEY_MAX_BET = 500  # 4620.8(b)(3)
MONEY_STAKES = (25, 50, 100, 200, 500)
MONEY_ROUNDS_PER_PHASE = 3

# The merchandise wheel: a small custom layout, a lowered aggregate limit.
LIMIT = 12_000
SINGLE_LIMIT = 2_000
PRIZE_MAX_BET = 200  # 4620.10(c)
PRIZE_SECTIONS: list[dict[str, Any]] = [
    {"shows": ["1"], "prize": "mug"},
    {"shows": ["2"], "prize": "mug"},
    {"shows": ["3"], "prize": "shirt"},
    {"shows": ["4"]},
    {"shows": ["2"], "prize": "shirt"},
    {"shows": ["1", "3"], "prize": "mug"},
    {"shows": ["2", "4"]},
]
PRIZE_SPACES = ("1", "2", "3", "4")
PRIZE_STAKES = (25, 50, 100, 200)
OPENING: list[dict[str, Any]] = [
    {"item": "mug-1", "prize": "mug", "value": 500},
    {"item": "mug-2", "prize": "mug", "value": 500},
    {"item": "shirt-1", "prize": "shirt", "value": 1_500, "donated": True},
]
RESTOCK_VALUES = {"mug": (300, 400, 500), "shirt": (1_200, 1_500, 1_800)}
RESTOCK_BELOW = 2
"""The member in charge restocks a prize class when fewer items than this are left of it
(every prize-winning space of this layout can win a mug: without two mugs, most bets on
it are out of stock)."""
MAX_PRIZE_ROUNDS = 80


def wheel_night_toml() -> str:
    tables: list[tuple[str, str, dict[str, Any]]] = [
        (
            MONEY,
            "money_wheel",
            {
                "layout": "standard",
                "odds": {"flag": FLAG_ODDS, "joker": JOKER_ODDS},
                "max_bet": MONEY_MAX_BET,
            },
        ),
        (
            PRIZES,
            "merchandise_wheel",
            {
                "layout": "custom",
                "sections": PRIZE_SECTIONS,
                "max_bet": PRIZE_MAX_BET,
                "single_prize_limit": SINGLE_LIMIT,
                "aggregate_prize_limit": LIMIT,
                "inventory": OPENING,
            },
        ),
    ]
    lines = [
        f"players = {toml_value(list(PLAYERS))}",
        "",
        "[organization]",
        f"id = {toml_value(ORG)}",
        'name = "End-to-end wheel night"',
        "",
        "[license]",
        'number = "GC-E2E-0008"',
        'games = ["roulette", "money_wheel", "merchandise_wheel"]',
        'period_start = "2026-11-01"',
        'period_end = "2026-12-31"',
        "",
        "[occasion]",
        'id = "e2e-wheel-night"',
        'name = "End-to-end wheel night"',
        "",
        "[cage]",
        "max_transaction = 100000",
    ]
    for table_id, game, options in tables:
        lines += [
            "",
            "[[tables]]",
            f"id = {toml_value(table_id)}",
            f"game = {toml_value(game)}",
            'outcome_mode = "dealer"',
            "[tables.options]",
        ]
        lines += [f"{key} = {toml_value(value)}" for key, value in options.items()]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Bet:
    table: str
    round: int
    player: str
    space: str
    amount: int


def prize_sections_won_by(space: str) -> list[int]:
    """Where a merchandise bet wins: its space shows and the section names a prize."""
    return [i for i, s in enumerate(PRIZE_SECTIONS) if space in s["shows"] and "prize" in s]


@dataclass
class ShelfModel:
    """The test's own merchandise wheel: the shelf, the round's exposure, the awards."""

    limit: int
    stocked: list[dict[str, Any]] = field(default_factory=list)
    by_prize: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    awarded: list[dict[str, Any]] = field(default_factory=list)
    exposure: Counter[int] = field(default_factory=Counter)
    closed: bool = False

    @property
    def aggregate(self) -> int:
        return sum(a["value"] for a in self.awarded)

    @property
    def headroom(self) -> int:
        return self.limit - self.aggregate

    def left(self) -> list[dict[str, Any]]:
        """The items still on the shelf, in stocking order."""
        gone = {a["item"] for a in self.awarded}
        return [i for i in self.stocked if i["item"] not in gone]

    def stock(self, items: list[dict[str, Any]]) -> None:
        for raw in items:
            item = {**raw, "donated": raw.get("donated", False)}
            self.stocked.append(item)
            self.by_prize.setdefault(item["prize"], []).append(item)

    def refusal(self, space: str) -> str | None:
        """Why a bet on ``space`` must be refused now: for each section it could win on (in
        wheel order), every winner there, this bet included, must get an item of the
        section's class (``out_of_stock``) within the aggregate limit (``prize_limit``)."""
        for section in prize_sections_won_by(space):
            winners = self.exposure[section] + 1
            items = self.by_prize.get(PRIZE_SECTIONS[section]["prize"], [])
            if winners > len(items):
                return "out_of_stock"
            if sum(i["value"] for i in items[:winners]) > self.headroom:
                return "prize_limit"
        return None

    def expose(self, space: str, delta: int) -> None:
        for section in prize_sections_won_by(space):
            self.exposure[section] += delta

    def award(self, round_: int, section: int, live: dict[str, Bet]) -> list[dict[str, Any]]:
        """Each winning bet, in the order placed, gets the oldest item of the class."""
        prize = PRIZE_SECTIONS[section].get("prize")
        out: list[dict[str, Any]] = []
        if prize is None:
            return out
        for bet_id, bet in live.items():
            if bet.space not in PRIZE_SECTIONS[section]["shows"]:
                continue
            item = self.by_prize[prize].pop(0)
            award = {
                "round": round_,
                "bet_id": bet_id,
                "player": bet.player,
                "item": item["item"],
                "prize": prize,
                "value": item["value"],
                "donated": item["donated"],
                "aggregate": self.aggregate + item["value"],
            }
            self.awarded.append(award)
            out.append(award)
        return out

    def must_close(self) -> bool:
        """The aggregate reached the limit, or the shelf holds items but none of those next
        in line (the oldest of each class: items go oldest first) fits under it."""
        heads = [items[0]["value"] for items in self.by_prize.values() if items]
        return self.aggregate >= self.limit or (bool(heads) and min(heads) > self.headroom)

    def sheet(self) -> dict[str, Any]:
        """The control sheet as the server must show it (without its timestamps)."""
        left = self.left()
        return {
            "table": PRIZES,
            "limit": self.limit,
            "aggregate": self.aggregate,
            "distance_to_limit": self.limit - self.aggregate,
            "awarded": list(self.awarded),
            "inventory": left,
            "inventory_value": sum(i["value"] for i in left),
            "stocked_count": len(self.stocked),
            "stocked_value": sum(i["value"] for i in self.stocked),
            "closed": "prize_limit" if self.closed else None,
        }


def untimed(sheet: dict[str, Any]) -> dict[str, Any]:
    """A control sheet without its times (``at``, ``stocked_at``, ``closed_at``)."""
    out = {k: v for k, v in sheet.items() if k != "closed_at"}
    out["awarded"] = [{k: v for k, v in a.items() if k != "at"} for a in sheet["awarded"]]
    out["inventory"] = [
        {k: v for k, v in i.items() if k != "stocked_at"} for i in sheet["inventory"]
    ]
    return out


class WheelNight:
    """The night's clients (reconnected after every restart), its books and its models."""

    def __init__(self, server: ServeProcess) -> None:
        self.server = server
        self.rng = random.Random(SEED)
        self.ids = itertools.count(1)
        self.items = itertools.count(1)
        self.auditor = server.token("auditor")
        self.books = Books()
        self.shelf = ShelfModel(limit=LIMIT)
        self.shelf.stock(OPENING)
        self.bets: dict[str, Bet] = {}
        self.cancelled: set[str] = set()
        self.refused: Counter[str] = Counter()
        self.money_sections: list[list[str]] = []
        self.money_round = 0
        self.prize_round = 0
        self.restocks = 0
        self.players: dict[str, WsClient] = {}
        self._cashier: WsClient | None = None
        self._dealer: WsClient | None = None
        self._member: WsClient | None = None
        self._watcher: WsClient | None = None

    @property
    def cashier(self) -> WsClient:
        assert self._cashier is not None
        return self._cashier

    @property
    def dealer(self) -> WsClient:
        assert self._dealer is not None
        return self._dealer

    @property
    def member(self) -> WsClient:
        assert self._member is not None
        return self._member

    @property
    def watcher(self) -> WsClient:
        assert self._watcher is not None
        return self._watcher

    async def call(self, client: WsClient, op: str, **fields: Any) -> dict[str, Any]:
        # Ids unique for the whole night: the server keeps every command id forever, and a
        # reconnected WsClient's own ids (from id(self)) could repeat an earlier client's.
        return await client.send({"op": op, "id": f"w-{next(self.ids)}", **fields})

    async def refused_with(self, code: str, client: WsClient, op: str, **fields: Any) -> None:
        reply = await self.call(client, op, **fields)
        assert not reply["ok"] and reply["error"]["code"] == code, (code, op, fields, reply)

    # Connections and restarts.

    async def connect(self) -> None:
        """(Re)connect every client; the ops watcher subscribes to the control sheet and
        its first reply is the sheet as the model has it."""
        s = self.server
        await s.close_clients()
        self._cashier = await s.connect(s.token("cashier"))
        self._dealer = await s.connect(s.dealer_token(MONEY, PRIZES))
        self._member = await s.connect(s.token("member_in_charge", "mic-1"))
        self._watcher = await s.connect(s.token("ops", "ops-watch"))
        self.players = {p: await s.connect(s.player_token(p)) for p in PLAYERS}
        sub = await self.call(self.watcher, "subscribe", view="control_sheet", table=PRIZES)
        assert sub["ok"], sub
        assert sub["result"]["view"] == "control_sheet"
        assert untimed(sub["result"]["data"]) == self.shelf.sheet()

    async def clean_restart(self) -> None:
        await self.server.close_clients()
        assert await self.server.terminate() == 0
        await self.after_restart()

    async def crash_restart(self) -> None:
        """``kill -9`` of the server with every client connected, then a restart."""
        old_redis = self.server.redis_pid
        self.server.kill9()
        await self.after_restart()
        assert await wait_until_dead(old_redis, 5), "the crashed server's redis-server was left"

    async def after_restart(self) -> None:
        await self.server.restart()
        await self.server.wait_ready()
        await self.connect()
        # The wheel's state was rebuilt from its stream: the same prize position.
        status, view = await self.server.get(f"/api/tables/{PRIZES}", self.auditor)
        assert status == 200, view
        on_shelf = Counter(i["prize"] for i in self.shelf.left())
        assert view["prizes"] == {
            "aggregate": self.shelf.aggregate,
            "limit": LIMIT,
            "headroom": self.shelf.headroom,
            "on_shelf": dict(sorted(on_shelf.items())),
        }
        assert view["closed"] is self.shelf.closed

    # The money wheel.

    async def money_rounds(self, count: int) -> None:
        for _ in range(count):
            await self.money_wheel_round()

    async def money_wheel_round(self) -> None:
        rng = self.rng
        self.money_round += 1
        number = self.money_round
        opened = await self.call(self.dealer, "open_round", table=MONEY)
        assert opened["ok"] and opened["result"]["round"] == number, opened
        live: dict[str, Bet] = {}
        for p in PLAYERS:
            for _ in range(rng.randint(1, 2)):
                space, amount = rng.choice(list(PAYS_TO_ONE)), rng.choice(MONEY_STAKES)
                reply = await self.call(
                    self.players[p],
                    "place_bet",
                    table=MONEY,
                    player=p,
                    bet={"space": space},
                    amount=amount,
                )
                assert reply["ok"], (p, space, amount, reply)
                bet = Bet(MONEY, number, p, space, amount)
                live[reply["result"]["bet_id"]] = self.bets[reply["result"]["bet_id"]] = bet
                self.wager(bet)
        over = rng.choice(PLAYERS)
        await self.refused_with(
            "over_limit",
            self.players[over],
            "place_bet",
            table=MONEY,
            player=over,
            bet={"space": "$20"},
            amount=MONEY_MAX_BET + 1,
        )
        assert (await self.call(self.dealer, "no_more_bets", table=MONEY))["ok"]
        section = rng.randrange(len(self.money_sections))
        done = await self.call(
            self.dealer, "record_outcome", table=MONEY, outcome={"section": section}
        )
        assert done["ok"], done
        result = done["result"]
        assert result["outcome"] == {"section": section}
        paid = 0
        for bet in live.values():
            won = money_paid(bet, self.money_sections[section])
            self.books.paid[bet.player] += won
            paid += won
        assert result["wagered"] == sum(b.amount for b in live.values())
        assert result["paid"] == paid, (number, section, live, result)
        self.books.paid_out[MONEY] += paid
        self.books.rounds[MONEY] += 1

    def wager(self, bet: Bet, sign: int = 1) -> None:
        self.books.wagered[bet.player] += sign * bet.amount
        self.books.handle[bet.table] += sign * bet.amount
        self.books.bets[bet.table] += sign

    # The merchandise wheel.

    def short_classes(self) -> list[str]:
        """The prize classes with fewer than RESTOCK_BELOW items left on the shelf."""
        left = Counter(i["prize"] for i in self.shelf.left())
        return [c for c in sorted(RESTOCK_VALUES) if left[c] < RESTOCK_BELOW]

    async def restock(self) -> None:
        """The member in charge puts new items of every short class (else a mug and a
        shirt) on the shelf."""
        rng = self.rng
        items = []
        for prize in self.short_classes() or sorted(RESTOCK_VALUES):
            for _ in range(rng.randint(1, 2)):
                items.append(
                    {
                        "item": f"{prize}-r{next(self.items)}",
                        "prize": prize,
                        "value": rng.choice(RESTOCK_VALUES[prize]),
                        "donated": rng.random() < 0.3,
                    }
                )
        reply = await self.call(self.member, "add_stock", table=PRIZES, items=items)
        assert reply["ok"] and reply["result"]["stocked"] == len(items), reply
        self.shelf.stock(items)
        self.restocks += 1
        count = len(self.shelf.stocked)
        pushed = await self.watcher.wait_view(lambda d: d["stocked_count"] == count)
        assert untimed(pushed) == self.shelf.sheet()

    async def bad_restocks(self) -> None:
        """Restocks the rules refuse change nothing (the sheet is checked after)."""
        mug = {"item": "mug-x", "prize": "mug", "value": 300}
        await self.refused_with(
            "duplicate_item",
            self.member,
            "add_stock",
            table=PRIZES,
            items=[{**mug, "item": OPENING[0]["item"]}],
        )
        await self.refused_with(
            "duplicate_item", self.member, "add_stock", table=PRIZES, items=[mug, mug]
        )
        await self.refused_with(
            "prize_over_limit",
            self.member,
            "add_stock",
            table=PRIZES,
            items=[mug, {**mug, "item": "mug-y", "value": SINGLE_LIMIT + 1}],
        )
        await self.refused_with("wrong_game", self.member, "add_stock", table=MONEY, items=[mug])
        await self.refused_with("forbidden", self.dealer, "add_stock", table=PRIZES, items=[mug])
        await self.refused_with(
            "forbidden", self.players["p-1"], "add_stock", table=PRIZES, items=[mug]
        )

    async def place_prize_bet(
        self, live: dict[str, Bet], player: str, space: str, amount: int
    ) -> str | None:
        """A bet at the merchandise wheel, refused exactly when the model says; its id."""
        expected = self.shelf.refusal(space)
        reply = await self.call(
            self.players[player],
            "place_bet",
            table=PRIZES,
            player=player,
            bet={"space": space},
            amount=amount,
        )
        if expected is not None:
            assert not reply["ok"] and reply["error"]["code"] == expected, (
                player,
                space,
                expected,
                reply,
            )
            self.refused[expected] += 1
            return None
        assert reply["ok"], (player, space, amount, self.shelf.exposure, reply)
        bet_id: str = reply["result"]["bet_id"]
        bet = Bet(PRIZES, self.prize_round, player, space, amount)
        live[bet_id] = self.bets[bet_id] = bet
        self.wager(bet)
        self.shelf.expose(space, +1)
        return bet_id

    async def cancel_prize_bet(self, live: dict[str, Bet], bet_id: str) -> None:
        bet = live.pop(bet_id)
        reply = await self.call(self.players[bet.player], "cancel_bet", table=PRIZES, bet_id=bet_id)
        assert reply["ok"], reply
        self.cancelled.add(bet_id)
        self.wager(bet, -1)
        self.shelf.expose(bet.space, -1)

    async def prize_wheel_round(
        self, *, first: bool = False, crash_midway: bool = False, aim: float = 0.3
    ) -> None:
        """One round; the dealer's wheel stops on a section someone can win on with
        probability ``aim`` (else anywhere)."""
        rng = self.rng
        shelf = self.shelf
        if self.short_classes():
            await self.restock()
        self.prize_round += 1
        number = self.prize_round
        opened = await self.call(self.dealer, "open_round", table=PRIZES)
        assert opened["ok"] and opened["result"]["round"] == number, opened
        shelf.exposure.clear()
        live: dict[str, Bet] = {}
        if first:
            await self.scripted_opening(live)
        plan = [
            (p, rng.choice(PRIZE_SPACES), rng.choice(PRIZE_STAKES))
            for p in PLAYERS
            for _ in range(rng.randint(1, 3))
        ]
        for i, (p, space, amount) in enumerate(plan):
            if crash_midway and i == len(plan) // 2:
                # Bets acknowledged so far are on disk; the restarted wheel counts them.
                await self.crash_restart()
                status, view = await self.server.get(f"/api/tables/{PRIZES}", self.auditor)
                assert status == 200
                assert (view["round"], view["phase"]) == (number, "betting")
                assert [b["bet_id"] for b in view["bets"]] == list(live)
            await self.place_prize_bet(live, p, space, amount)
        assert (await self.call(self.dealer, "no_more_bets", table=PRIZES))["ok"]
        winning = [
            i
            for i in range(len(PRIZE_SECTIONS))
            if "prize" in PRIZE_SECTIONS[i]
            and any(b.space in PRIZE_SECTIONS[i]["shows"] for b in live.values())
        ]
        if winning and rng.random() < aim:
            section = rng.choice(winning)
        else:
            section = rng.randrange(len(PRIZE_SECTIONS))
        done = await self.call(
            self.dealer, "record_outcome", table=PRIZES, outcome={"section": section}
        )
        assert done["ok"], done
        result = done["result"]
        awards = shelf.award(number, section, live)
        assert result["outcome"] == {"section": section}
        assert result["paid"] == 0, result  # merchandise, never cash, 4620.10(d)
        assert result["wagered"] == sum(b.amount for b in live.values())
        keys = ("bet_id", "player", "item", "prize", "value")
        assert result.get("awards", []) == [{k: a[k] for k in keys} for a in awards], (
            number,
            section,
            live,
            result,
        )
        assert shelf.aggregate <= LIMIT
        if shelf.must_close():
            shelf.closed = True
        assert result.get("closed") == ("prize_limit" if shelf.closed else None), result
        self.books.rounds[PRIZES] += 1
        # The watcher is pushed the sheet as it stands after the round.
        awarded, stocked, closed = len(shelf.awarded), len(shelf.stocked), shelf.sheet()["closed"]
        pushed = await self.watcher.wait_view(
            lambda d: (
                (len(d["awarded"]), d["stocked_count"], d["closed"]) == (awarded, stocked, closed)
            )
        )
        assert untimed(pushed) == shelf.sheet()

    async def scripted_opening(self, live: dict[str, Bet]) -> None:
        """Round 1 starts with two mugs on the shelf: a third bet that could win a mug is
        out of stock until one of the two is taken back; merchandise is never wagered and
        a wager is at most $2 (4620.10(c))."""
        assert self.shelf.refusal("1") is None
        first = await self.place_prize_bet(live, "p-1", "1", 100)
        second = await self.place_prize_bet(live, "p-2", "1", 200)
        assert first and second
        assert self.shelf.refusal("1") == "out_of_stock"
        assert await self.place_prize_bet(live, "p-3", "1", 50) is None
        assert await self.place_prize_bet(live, "p-3", "3", 50) is None  # section 5: a mug
        await self.cancel_prize_bet(live, second)
        assert await self.place_prize_bet(live, "p-3", "1", 50)
        await self.refused_with(
            "merchandise_wager",
            self.players["p-4"],
            "place_bet",
            table=PRIZES,
            player="p-4",
            bet={"space": "2", "prize": "mug"},
            amount=100,
        )
        await self.refused_with(
            "over_limit",
            self.players["p-4"],
            "place_bet",
            table=PRIZES,
            player="p-4",
            bet={"space": "2"},
            amount=PRIZE_MAX_BET + 1,
        )


def money_paid(bet: Bet, shows: list[str]) -> int:
    """Stake plus winnings at the section's odds, or 0 for a losing bet."""
    return bet.amount * (1 + PAYS_TO_ONE[bet.space]) if bet.space in shows else 0


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ServeProcess]:
    if not EXE.exists():
        pytest.fail(f"{EXE} is missing: install the project into this venv (make install)")
    process = ServeProcess(tmp_path / "wheel-night", wheel_night_toml())
    try:
        await process.start()
        yield process
    finally:
        await process.aclose()


async def test_a_night_of_wheels_survives_restarts_and_closes_at_the_prize_limit(
    server: ServeProcess,
) -> None:
    started = time.monotonic()
    night = WheelNight(server)
    books = night.books
    shelf = night.shelf
    auditor = night.auditor

    async with asyncio.timeout(60):
        status, view = await server.get(f"/api/tables/{MONEY}", auditor)
        assert status == 200, view
        config = view["config"]
        assert config["odds"] == {"flag": [FLAG_ODDS, 1], "joker": [JOKER_ODDS, 1]}
        night.money_sections = [s["shows"] for s in config["sections"]]
        assert len(night.money_sections) == 54  # the standard layout, 4620.8(a)
        assert all(len(shows) == 1 for shows in night.money_sections)
        assert {shows[0] for shows in night.money_sections} == set(PAYS_TO_ONE)

        await night.connect()
        for p in PLAYERS:
            bought = await night.call(night.cashier, "buy_chips", player=p, amount=CHIPS)
            assert bought["ok"], bought
            books.bought[p] += CHIPS

        # Before any restart: rounds at both wheels, a restock, restocks refused.
        await night.money_rounds(MONEY_ROUNDS_PER_PHASE)
        await night.prize_wheel_round(first=True)
        await night.bad_restocks()
        await night.restock()
        for _ in range(2):
            await night.prize_wheel_round()
        assert not shelf.closed, "the wheel must still be open at the restart (change SEED)"

        # A clean restart: the clients reconnect, the sheet is the same, play goes on.
        await night.clean_restart()
        await night.money_rounds(MONEY_ROUNDS_PER_PHASE)
        for _ in range(2):
            await night.prize_wheel_round()
        assert not shelf.closed, "the wheel must still be open at the crash (change SEED)"

        # kill -9 in the middle of a merchandise round; then until the wheel closes itself.
        await night.prize_wheel_round(crash_midway=True)
        await night.money_rounds(MONEY_ROUNDS_PER_PHASE)
        while not shelf.closed:
            assert night.prize_round < MAX_PRIZE_ROUNDS, "the wheel never reached its limit"
            await night.prize_wheel_round(aim=0.8)
        assert night.restocks >= 2
        # Some bets could not be honoured by the shelf or under the limit, and were refused.
        assert night.refused["out_of_stock"] > 0, night.refused
        assert night.refused["prize_limit"] > 0, night.refused

        # The closed wheel takes no command; the money wheel plays on.
        await night.refused_with("table_closed", night.dealer, "open_round", table=PRIZES)
        await night.refused_with(
            "table_closed",
            night.players["p-1"],
            "place_bet",
            table=PRIZES,
            player="p-1",
            bet={"space": "1"},
            amount=25,
        )
        await night.refused_with(
            "table_closed",
            night.member,
            "add_stock",
            table=PRIZES,
            items=[{"item": "mug-late", "prize": "mug", "value": 100}],
        )
        await night.money_wheel_round()

        # The cage: half of p-1's balance back in cash.
        out = books.balance("p-1") // 2
        assert (await night.call(night.cashier, "cash_out", player="p-1", amount=out))["ok"]
        books.redeemed["p-1"] += out

        # The control sheet over HTTP: the model's, and the last one pushed.
        await server.wait_ready()
        status, sheet = await server.get(f"/api/control-sheets/{PRIZES}", auditor)
        assert status == 200, sheet
        expected = shelf.sheet()
        assert untimed(sheet) == expected
        assert sheet["closed"] == "prize_limit" and isinstance(sheet["closed_at"], int)
        assert sheet["aggregate"] == sum(a["value"] for a in sheet["awarded"]) <= LIMIT
        assert all(a["aggregate"] <= LIMIT for a in sheet["awarded"])
        assert [a["aggregate"] for a in sheet["awarded"]] == list(
            itertools.accumulate(a["value"] for a in sheet["awarded"])
        )
        assert all(isinstance(a["round"], int) and a["round"] >= 1 for a in sheet["awarded"])
        ats = [a["at"] for a in sheet["awarded"]]
        assert ats == sorted(ats) and all(at > 0 for at in ats)
        awarded_ids = {a["item"] for a in sheet["awarded"]}
        assert {i["item"] for i in sheet["inventory"]} == {
            i["item"] for i in shelf.stocked
        } - awarded_ids
        assert sheet["stocked_value"] == sheet["aggregate"] + sheet["inventory_value"]
        assert sheet["distance_to_limit"] == LIMIT - sheet["aggregate"]
        # Closed because the limit was reached or no item next in line (the oldest of each
        # class; the sheet lists the shelf in stocking order) fits under it.
        heads: dict[str, int] = {}
        for entry in sheet["inventory"]:
            heads.setdefault(entry["prize"], entry["value"])
        assert sheet["distance_to_limit"] == 0 or (
            heads and min(heads.values()) > sheet["distance_to_limit"]
        )
        pushed = await night.watcher.wait_view(lambda d: d["closed"] == "prize_limit")
        assert untimed(pushed) == expected
        status, sheets = await server.get("/api/control-sheets", auditor)
        assert status == 200 and sheets == {"control_sheets": [sheet]}
        status, own = await server.get(f"/api/control-sheets/{PRIZES}", server.dealer_token(PRIZES))
        assert status == 200 and own == sheet
        status, _ = await server.get(f"/api/control-sheets/{PRIZES}", server.dealer_token(MONEY))
        assert status == 403
        status, _ = await server.get("/api/control-sheets", server.player_token("p-1"))
        assert status == 403

        # Every bet settled once, at the payout the test computes; the awards of the stream.
        for table in (MONEY, PRIZES):
            status, page = await server.get(
                f"/api/streams/table:{table}/events?limit=10000", auditor
            )
            assert status == 200
            events = page["events"]
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
            placed = [e["data"]["bet_id"] for e in events if e["type"] == "BetPlaced"]
            assert sorted(placed) == sorted(
                b for b, bet in night.bets.items() if bet.table == table
            )
            settled: list[str] = []
            for e in events:
                if e["type"] != "Settled":
                    continue
                section = e["data"]["outcome"]["section"]
                for s in e["data"]["settlements"]:
                    bet = night.bets[s["bet_id"]]
                    assert (s["player"], s["amount"]) == (bet.player, bet.amount)
                    if table == MONEY:
                        assert s["paid"] == money_paid(bet, night.money_sections[section])
                    else:
                        wins = section in prize_sections_won_by(bet.space)
                        assert (s["result"], s["paid"]) == ("won" if wins else "lost", 0)
                    settled.append(s["bet_id"])
            cancelled = [e["data"]["bet_id"] for e in events if e["type"] == "BetCancelled"]
            assert sorted(settled + cancelled) == sorted(placed)
            if table == PRIZES:
                assert set(cancelled) == night.cancelled
                awards = [e["data"] for e in events if e["type"] == "MerchandiseAwarded"]
                assert awards == shelf.awarded
                closing = [e for e in events if e["type"] == "PrizeLimitReached"]
                assert len(closing) == 1 and closing[0] == events[-1]
                assert closing[0]["data"] == {"aggregate": shelf.aggregate, "limit": LIMIT}

        # The bankrolls: no cash paid at the merchandise wheel, money conserved.
        status, bankrolls = await server.get("/api/bankrolls", auditor)
        assert status == 200
        tables = bankrolls["tables"]
        assert tables[PRIZES]["paid_out"] == 0
        assert tables[PRIZES]["handle"] == books.handle[PRIZES]
        assert tables == {
            t: {
                "handle": books.handle[t],
                "paid_out": books.paid_out[t],
                "house_win": books.handle[t] - books.paid_out[t],
                "rounds": books.rounds[t],
                "bets": books.bets[t],
            }
            for t in (MONEY, PRIZES)
        }
        players = bankrolls["players"]
        for p in PLAYERS:
            assert players[p] == books.player(p)
        org = bankrolls["organization"]
        balances = {p: players[p]["balance"] for p in PLAYERS}
        assert sum(balances.values()) + org["house_win"] == org["issued"] - org["redeemed"]
        assert org["issued"] == sum(books.bought.values())
        assert org["redeemed"] == sum(books.redeemed.values())
        assert org["house_win"] == sum(t["house_win"] for t in tables.values())
        assert await server.store_balances(ORG) == balances

    # Stop the server; the offline tools on its data directory give the same books.
    await server.close_clients()
    redis_pid = server.redis_pid
    assert await server.terminate() == 0
    assert await wait_until_dead(redis_pid, 10) and not pid_alive(redis_pid)
    verified = await server.cli("verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    await server.audited()
    assert "BROKEN" not in verified.stdout
    replayed = await server.cli("replay", "--show")
    assert replayed.returncode == 0, replayed.stderr
    printed = replayed.stdout
    report = json.loads(printed[printed.index("{") :])
    assert report["control_sheets"] == {PRIZES: sheet}
    rebuilt = report["bankrolls"]
    for key in ("players", "tables", "organization", "occasions"):
        assert rebuilt[key] == bankrolls[key], key
    assert time.monotonic() - started < 30
