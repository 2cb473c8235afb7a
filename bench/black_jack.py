"""Black Jack (``--only black_jack``): actions per second through the server, and the time
the pure rules take to decide one action.

(a) Through the server: ``casino-night serve`` in a child process (as in bench/e2e.py)
against this benchmark's Redis, ``TABLES`` RNG Black Jack tables of seven spaces (two
decks, tie option 1), seven player websockets per table (one per space) and a dealer
websocket per table. Each table is a closed loop: its dealer opens a round, its seven
players bet at once, the dealer deals (and peeks when insurance is offered), and then the
player whose hand it is acts (hit, stand, double or split, by a fixed plain strategy) as
soon as the previous reply arrives, round after round. The client follows the hands from
the replies alone (the cards dealt, the actions, the parts settled); should it ever lose
track it reads the table's view once over HTTP. The figure is acknowledged ``act`` replies
per second over all tables, after a warm-up.

(b) The pure rules, no I/O: ``TableRules.decide`` of the table actor's adapter (the game's
``prepare``, which unseals the shoe's seed, recomputes the box's order and seals two fresh
seeds, then ``rules.decide``) at a seven-space table with two decks: a ``hit`` on the
first hand after the deal, and the ``stand`` of the last hand, which turns up the hole
card, plays the dealer's hand and settles every hand. Median of many runs each.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import (
    CpuMeter,
    RawWs,
    Result,
    ServerProcess,
    gather_all,
    night_doc,
    own_redis,
    percentile,
    progress,
    redis_url,
    token,
    unique_org,
)
from events.base import Event
from events.black_jack import HoleCardRevealed
from events.tables import PartSettled, RoundEnded
from services.chance import ServerChance, seal_key
from services.games import black_jack as bj
from services.games.black_jack_state import hand_done, round_stage, turn_hand
from services.tables import rules
from services.tables.actor import TableRules
from services.tables.rules import OpenRound, OpenTable, PlaceBet, TableState

TABLES = 12
SPACES = 7
DECKS = 2
STAKE = 100
CHIPS = 1_000_000
OPTIONS = {"decks": DECKS, "spaces": SPACES}
TENS = frozenset({"10", "J", "Q", "K"})


# --------------------------------------------------------------------------------------------
# (a) through the server
# --------------------------------------------------------------------------------------------


def _count(cards: list[str]) -> int:
    ranks = [c[:-1] for c in cards]
    hard = sum(1 if r == "A" else 10 if r in TENS else int(r) for r in ranks)
    return hard + 10 if "A" in ranks and hard <= 11 else hard


def _hard(cards: list[str]) -> int:
    return sum(1 if c[:-1] == "A" else 10 if c[:-1] in TENS else int(c[:-1]) for c in cards)


@dataclass
class TrackedHand:
    """A hand as the client follows it from the replies."""

    hand: str
    space: int
    cards: list[str] = field(default_factory=list)
    split: bool = False
    aces: bool = False
    stood: bool = False
    doubled: bool = False
    settled: bool = False

    def done(self) -> bool:
        """As the rules say (4620.5(h)(3), (k)(4), (l)(1)): no decision left on it."""
        if self.settled or self.stood or self.doubled:
            return True
        return (self.aces and len(self.cards) >= 2) or _count(self.cards) >= 21


def plain(hand: TrackedHand) -> str:
    """Split a pair (not tens), double a first-two-card 10 or 11, hit to 17."""
    cards = hand.cards
    if len(cards) == 2:
        a, b = cards[0][:-1], cards[1][:-1]
        if a == b and a not in TENS:
            return "split"
        if not hand.split and _hard(cards) in (10, 11):
            return "double"
    return "hit" if _count(cards) < 17 else "stand"


class Table:
    """One table's closed loop: a round after the other, each command sent as soon as the
    reply before it arrived."""

    def __init__(self, port: int, table: str, dealer: RawWs, players: list[RawWs]) -> None:
        self.port = port
        self.table = table
        self.dealer = dealer
        self.players = players
        self.reader = token("auditor", "bench-reader")
        self.recording = False
        self.acts = 0
        self.commands = 0
        self.rounds = 0
        self.resyncs = 0
        self.latencies: list[float] = []
        self.codes: Counter[str] = Counter()
        self.hands: list[TrackedHand] = []
        self.up: str | None = None
        self.peeked = False
        self.ended = False

    async def send(self, ws: RawWs, op: str, **fields: Any) -> dict[str, Any]:
        started = time.perf_counter()
        reply = await asyncio.wait_for(ws.request(op, table=self.table, **fields), 60)
        if reply.get("ok"):
            if self.recording:
                self.commands += 1
                if op == "act":
                    self.acts += 1
                    self.latencies.append(time.perf_counter() - started)
        else:
            self.codes[reply["error"]["code"]] += 1
        return reply

    def hand(self, hand_id: str) -> TrackedHand:
        return next(h for h in self.hands if h.hand == hand_id)

    def follow(self, result: dict[str, Any]) -> None:
        """Fold a reply's game part: the step's action first, then its cards and parts."""
        for a in result["actions"]:
            h = self.hand(a["hand"])
            if a["action"] == "split":
                aces = h.cards[0][:-1] == "A"
                left = TrackedHand(a["new_hand"], h.space, h.cards[1:], split=True, aces=aces)
                h.cards, h.split, h.aces = h.cards[:1], True, aces
                self.hands.insert(self.hands.index(h) + 1, left)
            elif a["action"] == "stand":
                h.stood = True
            elif a["action"] == "double":
                h.doubled = True
        for c in result["cards"]:
            if c["to"] == "dealer":
                if self.up is None:
                    self.up = c["card"]
            else:
                self.hand(c["to"]).cards.append(c["card"])
        for part in result["settled"]:
            if part["part"].startswith("hand:"):
                self.hand(part["part"].removeprefix("hand:")).settled = True
        self.ended = self.ended or bool(result["round_ended"])

    async def resync(self) -> None:
        """The table's view over HTTP (a client that lost track reads it once)."""
        self.resyncs += 1
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(
            f"GET /api/tables/{self.table} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            f"{self.reader}\r\nConnection: close\r\n\r\n".encode()
        )
        raw = await reader.read()
        writer.close()
        view = json.loads(raw.split(b"\r\n\r\n", 1)[1])
        self.ended = view["phase"] == "idle"
        self.peeked = view["stage"] != "insurance"
        self.up = view.get("dealer", {}).get("up")
        self.hands = [
            TrackedHand(
                h["hand"],
                h["space"],
                list(h["cards"]),
                split=sum(1 for x in view["hands"] if x["space"] == h["space"]) > 1,
                settled=h["state"] != "playing",
            )
            for h in view.get("hands", [])
        ]

    async def play_round(self) -> None:
        opened = await self.send(self.dealer, "open_round")
        if not opened.get("ok"):
            await self.resync()
            if not self.ended:
                await self.finish_round()
            return
        bets = [
            self.send(p, "place_bet", player=f"{self.table}-p{s}", bet={"space": s}, amount=STAKE)
            for s, p in enumerate(self.players, start=1)
        ]
        await gather_all(*bets)
        self.hands = [TrackedHand(f"{s}.0", s) for s in range(1, SPACES + 1)]
        self.up, self.peeked, self.ended = None, False, False
        dealt = await self.send(self.dealer, "deal")
        if dealt.get("ok"):
            self.follow(dealt["result"])
        else:
            await self.resync()
        await self.finish_round()

    async def finish_round(self) -> None:
        while not self.ended:
            if self.up is not None and self.up[:-1] == "A" and not self.peeked:
                reply = await self.send(self.dealer, "peek")
                self.peeked = True
                if reply.get("ok"):
                    self.follow(reply["result"])
                else:
                    await self.resync()
                continue
            current = next((h for h in self.hands if not h.done()), None)
            if current is None:
                await self.resync()
                continue
            player = self.players[current.space - 1]
            reply = await self.send(player, "act", hand=current.hand, action=plain(current))
            if reply.get("ok"):
                self.follow(reply["result"])
            else:
                await self.resync()
        self.rounds += 1

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.play_round()


async def through_the_server(seconds: float, warmup: float) -> tuple[list[Table], float, str]:
    org = unique_org("black-jack")
    tables = [f"bj-{i:02d}" for i in range(1, TABLES + 1)]
    players = [f"{t}-p{s}" for t in tables for s in range(1, SPACES + 1)]
    doc = night_doc(
        org,
        [
            {"id": t, "game": "black_jack", "outcome_mode": "rng", "options": OPTIONS}
            for t in tables
        ],
        players,
    )
    doc["license"]["games"] = ["black_jack"]
    doc["license"]["tie_option"] = 1
    with own_redis() as redis, tempfile.TemporaryDirectory(prefix="cn-bench-bj-") as tmp:
        server = ServerProcess(doc, redis_url(redis), Path(tmp))
        progress("black_jack: starting the server process")
        await server.start()
        clients: list[RawWs] = []
        try:
            cashier = await RawWs.connect(server.port, token("cashier", "cashier-1"))
            clients.append(cashier)
            progress(f"black_jack: selling chips to {len(players)} players")
            await gather_all(*(cashier.cmd("buy_chips", player=p, amount=CHIPS) for p in players))
            loops = []
            for t in tables:
                dealer = await RawWs.connect(server.port, token("dealer", f"d-{t}", tables=(t,)))
                socks = [  # one tablet per space
                    await RawWs.connect(server.port, token("player", p, player=p))
                    for p in players
                    if p.startswith(f"{t}-")
                ]
                clients += [dealer, *socks]
                loops.append(Table(server.port, t, dealer, socks))
            assert redis.proc is not None
            meter = CpuMeter({"server": server.pid, "redis": redis.proc.pid, "bench": os.getpid()})
            progress(
                f"black_jack: {TABLES} tables x {SPACES} spaces, closed loop, "
                f"{warmup:.0f} s warm-up + {seconds:.0f} s"
            )
            stop = asyncio.Event()
            running = [asyncio.create_task(table.run(stop)) for table in loops]
            await asyncio.sleep(warmup)
            for table in loops:
                table.recording = True
            meter.begin()
            started = time.perf_counter()
            await asyncio.sleep(seconds)
            for table in loops:
                table.recording = False
            elapsed = time.perf_counter() - started
            meter.end()
            stop.set()
            await gather_all(*running)
        except BaseException:
            server.stop(failed=True)
            raise
        finally:
            for c in clients:
                c.close()
            server.stop()
    return loops, elapsed, meter.summary()


# --------------------------------------------------------------------------------------------
# (b) the pure rules
# --------------------------------------------------------------------------------------------


def _step(adapter: TableRules, state: TableState, command: Any) -> TableState:
    """One command as the table actor decides it (prepare, then the rules), folded."""
    return rules.fold(state, adapter.decide(state, command))


def _table(seed: int) -> tuple[TableRules, TableState]:
    """A seven-space RNG table just dealt (two decks), its hands to play, or the next seed's
    when this deal left no decision (a dealer natural, insurance offered)."""
    while True:
        adapter = TableRules(ServerChance(seal_key(b"bench black jack"), random.Random(seed)))
        config = {"tie_option": 1, **OPTIONS}
        state = adapter.initial("table:bj")
        state = _step(
            adapter, state, OpenTable(game="black_jack", config=config, outcome_mode="rng")
        )
        state = _step(adapter, state, OpenRound())
        for space in range(1, SPACES + 1):
            bet = PlaceBet(player=f"p-{space}", bet={"space": space}, amount=STAKE)
            state = _step(adapter, state, bet)
        state = _step(adapter, state, bj.Deal())
        if round_stage(state.play) == "players":
            return adapter, state
        seed += 1


def _last_hand(adapter: TableRules, state: TableState) -> TableState:
    """Every hand but the last stands: the last hand's decision is the round's last one."""
    while sum(1 for h in state.play.hands if not hand_done(h)) > 1:
        current = turn_hand(state.play)
        assert current is not None
        state = _step(adapter, state, bj.Act(hand=current.hand, action="stand"))
    return state


def median_us(fn: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1e6)
    return statistics.median(times)


def pure_rules(runs: int) -> tuple[float, float, float, float, list[Event]]:
    """Median µs of (hit: prepare + decide, hit: decide alone, stand: prepare + decide,
    stand: decide alone) and the stand's events."""
    adapter, state = _table(1)
    current = turn_hand(state.play)
    assert current is not None
    hit = bj.Act(hand=current.hand, action="hit")
    game = rules.table_game(state)
    prepared_hit = game.prepare(
        state.config, state.play, rules.round_view(state), hit, adapter.chance
    )
    hit_us = median_us(lambda: adapter.decide(state, hit), runs)
    hit_decide_us = median_us(lambda: rules.decide(state, prepared_hit), runs)

    last = _last_hand(adapter, state)
    current = turn_hand(last.play)
    assert current is not None
    stand = bj.Act(hand=current.hand, action="stand")
    prepared_stand = game.prepare(
        last.config, last.play, rules.round_view(last), stand, adapter.chance
    )
    stand_us = median_us(lambda: adapter.decide(last, stand), runs)
    stand_decide_us = median_us(lambda: rules.decide(last, prepared_stand), runs)
    events = adapter.decide(last, stand)
    assert any(isinstance(e, HoleCardRevealed) for e in events)
    assert isinstance(events[-1], RoundEnded)
    return hit_us, hit_decide_us, stand_us, stand_decide_us, events


# --------------------------------------------------------------------------------------------


async def run(quick: bool) -> list[Result]:
    runs = 501 if quick else 2001
    progress(f"black_jack: pure rules, median of {runs} runs each")
    hit_us, hit_decide_us, stand_us, stand_decide_us, events = pure_rules(runs)
    settled = sum(len(e.settlements) for e in events if isinstance(e, PartSettled))

    seconds, warmup = (4.0, 1.0) if quick else (8.0, 2.0)
    loops, elapsed, cpu = await through_the_server(seconds, warmup)
    acts = sum(t.acts for t in loops)
    commands = sum(t.commands for t in loops)
    latencies = [x for t in loops for x in t.latencies]
    codes = sum((t.codes for t in loops), Counter())
    errors = ", ".join(f"{k} {v}" for k, v in codes.items()) or "none"
    rounds = sum(t.rounds for t in loops)
    return [
        Result(
            f"9a black_jack acknowledged actions/s ({TABLES} tables x {SPACES} spaces,"
            " closed loop)",
            acts / elapsed,
            "actions/s",
            note=f"server: `casino-night serve` child process (REDIS_URL at the bench's redis,"
            f" appendfsync always); {TABLES} rng tables, {DECKS} decks, a dealer and"
            f" {SPACES} player websockets per table, each table one closed loop (open_round,"
            f" 7 bets at once, deal, peek on an ace, then every act as soon as the reply"
            f" before it arrived; plain strategy: split pairs but tens, double 10-11, hit to"
            f" 17); {acts:,} acts ok in {elapsed:.1f} s after {warmup:.0f} s warm-up"
            f" ({commands / elapsed:,.0f} table commands/s in all, {rounds:,} rounds);"
            f" act reply latency p50 {percentile(latencies, 50) * 1000:.1f} ms, p99"
            f" {percentile(latencies, 99) * 1000:.1f} ms; CPU {cpu}; errors: {errors};"
            f" client resyncs {sum(t.resyncs for t in loops)}",
        ),
        Result(
            f"9b black_jack prepare + decide(hit), {SPACES} spaces",
            hit_us,
            "us",
            note=f"median of {runs}; TableRules.decide: the game's prepare (unseal the"
            f" shoe's seed, look up the {52 * DECKS}-card box's order, memoised; no fresh"
            f" seeds while the box is full) then rules.decide; decide alone"
            f" {hit_decide_us:.0f} us",
            digits=0,
        ),
        Result(
            f"9c black_jack prepare + decide(stand: dealer's play, {SPACES} hands settled)",
            stand_us,
            "us",
            note=f"median of {runs}; the last hand stands: the hole card is turned up, the"
            f" dealer draws, {settled} wagers settle, the cards are discarded, RoundEnded"
            f" ({len(events)} events); decide alone {stand_decide_us:.0f} us",
            digits=0,
        ),
    ]
