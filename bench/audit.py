"""Figure 15: ``casino-night audit``'s throughput over a generated night of 1,000,000 events.

The night is made with the pure rules, not a server, as a night's floor plays (``MIX``):
200 players sold chips at the cage; then, step by step at random, a round at one of 10
roulette tables (dealer mode: 8 ``PlaceBet`` of random kinds and stakes, ``CallNoMoreBets``,
a dealer's ``RecordOutcome``, a seeded random pocket spun from the last) or of 6 money
wheels (RNG mode: 8 bets on random spaces, the server's draw), mostly; some Black Jack
rounds at 2 RNG tables (3 hands, insurance and the peek when an ace shows, each hand's
actions at random among those the rules allow, every card committed); rounds of Chuck-a-Luck
and Under and Over Seven (RNG); a standard raffle's sales of 1 to 5 tickets; and a bell jar
deal's sales of 1 to 10 tickets with the winners among them redeemed (a deal of 4,000
tickets, the next registered and put in play when one sells out). Every command is decided
by the rules the server runs (the table actor's adapter with the server's chance on a
seeded generator, the raffles' and the deals' ``decide``) and its events sealed into their
stream's hash chain (``events.envelope.seal``). The sealed bytes are written to the org log
alone, in bulk (5,000 a script call that ``XADD``s them, sent while the next 5,000 are
made), and the players' balances to the guarded balances; the audit reads only the log.
Then the audit runs as the command does (every rule checker of ``services.audit.rules``,
the chains and the balances; a tqdm progress bar on stderr), over the whole log, twice; the
best run counts. A profile of the engine's own loop is in docs/AUDIT.md.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator, Mapping
from typing import Any

import redis.asyncio as aioredis

from bench.common import Result, at_least, own_redis, progress, redis_url, unique_org
from events.base import Event
from events.bell_jars import FlarePrize
from events.cage import ChipsIssued
from events.codec import decode, encode
from events.envelope import GENESIS_HASH, event_id, seal
from events.money import balance_moves
from services.aggregates import RuleError
from services.audit.command import audit, default_workers
from services.bell_jars import rules as jar_rules
from services.bell_jars.state import (
    DealState,
    PutDealInPlay,
    RecordSale,
    RedeemTicket,
    RegisterDeal,
)
from services.chance import ServerChance, seal_key
from services.games.black_jack import Act, Deal, Insure, Peek
from services.games.black_jack_state import round_stage, turn_hand
from services.games.single_outcome import DrawOutcome, RecordOutcome
from services.games.wheels import betting_spaces
from services.raffles import rules as raffle_rules
from services.raffles.state import RaffleState, RecordDrawingMethod, SellTicket, SetupRaffle
from services.store import keys
from services.store.redis_store import EventStore
from services.tables.actor import TableRules
from services.tables.rules import CallNoMoreBets, OpenRound, OpenTable, PlaceBet, TableState

PLAYERS = 200
BETS_PER_ROUND = 8
BUY_IN = 10_000_000
"""Each player's chips (cents): more than any night of stakes below can take."""
BETS: list[tuple[dict[str, Any], int]] = [
    ({"kind": "odd"}, 100),
    ({"kind": "even"}, 100),
    ({"kind": "high"}, 125),
    ({"kind": "column", "column": 1}, 100),
    ({"kind": "straight", "numbers": ["17"]}, 50),
    ({"kind": "split", "numbers": ["17", "20"]}, 50),
]
"""Bets every default roulette table takes (their stakes within its limits)."""
WRITE_BATCH = 5_000
SEED = 15
RUNS = 2
"""Audits of the night with each number of processes (interleaved); the best counts."""


class _Chains:
    """Seals events into their streams' hash chains, as an actor does."""

    def __init__(self, balances: dict[str, int], last: dict[str, bytes]) -> None:
        self.balances = balances
        self.last = last
        """Each stream's last stored envelope."""
        self.heads: dict[str, tuple[int, str]] = {}
        self.commands = 0
        self.ts = int(time.time() * 1000) - 6 * 3_600_000

    def seal(self, stream: str, events: list[Event], actor: str, corr: str | None) -> list[bytes]:
        self.commands += 1
        self.ts += 7
        causation = f"cmd-{self.commands}"
        seq, prev = self.heads.get(stream, (0, GENESIS_HASH))
        out = []
        for i, ev in enumerate(events):
            seq += 1
            env = seal(
                ev,
                id=event_id(stream=stream, actor=actor, causation=causation, index=i),
                stream=stream,
                seq=seq,
                ts=self.ts,
                actor=actor,
                causation=causation,
                correlation=corr,
                prev_hash=prev,
            )
            prev = env.hash
            out.append(encode(env))
        self.heads[stream] = (seq, prev)
        if out:
            self.last[stream] = out[-1]
        for player, cents in balance_moves(events):
            self.balances[player] = self.balances.get(player, 0) + cents
        return out


MIX: tuple[tuple[str, int], ...] = (
    ("roulette", 40),
    ("money_wheel", 36),
    ("black_jack", 6),
    ("dice", 8),
    ("raffle", 5),
    ("bell_jar", 5),
)
"""What the night plays, step by step (weights of each step: a round at a table, a raffle's
sale, a bell jar's sale and its winners redeemed): roulette and a money wheel mostly, as a
night's floor is, then Black Jack, dice, a raffle and a bell jar deal."""
ROULETTE_TABLES = 10
WHEEL_TABLES = 6
BLACK_JACK_TABLES = 2
DICE_GAMES = ("chuck_a_luck", "under_and_over_seven")
DEAL_TICKETS = 4_000
DEAL_PRICE = 100
SECRET = b"bench audit secret, 32 bytes ok!"


def night(
    total: int,
    balances: dict[str, int],
    seed: int = SEED,
    *,
    last: dict[str, bytes] | None = None,
) -> Iterator[bytes]:
    """About ``total`` stored envelopes of a night of :data:`MIX`, in commit order, every
    event decided by the pure rules (the tables' through the table actor's adapter, a
    server draw from a seeded generator); each player's balance left in ``balances`` (what
    the append script would guard), and each stream's last envelope in ``last``."""
    rng = random.Random(seed)
    chains = _Chains(balances, {} if last is None else last)
    players = [f"p-{i:03d}" for i in range(PLAYERS)]
    made = 0
    for p in players:
        made += 1
        yield from chains.seal("cage", [ChipsIssued(player=p, amount=BUY_IN)], "cashier:c", None)
    table_rules = TableRules(ServerChance(seal_key(SECRET), random.Random(seed)))
    tables: dict[str, list[TableState]] = {}

    def open_table(kind: str, game: str, mode: str, n: int) -> Iterator[bytes]:
        nonlocal made
        state = table_rules.initial(f"table:{game}-{n}")
        config = {"tie_option": 2} if game == "black_jack" else {}  # 4620.5(h): licensed
        opened = table_rules.decide(
            state,
            OpenTable(game=game, config=config, outcome_mode=mode),  # type: ignore[arg-type]
        )
        tables.setdefault(kind, []).append(_fold_with(table_rules, state, opened))
        made += len(opened)
        yield from chains.seal(f"table:{game}-{n}", opened, "system", None)

    for n in range(ROULETTE_TABLES):
        yield from open_table("roulette", "roulette", "dealer", n + 1)
    for n in range(WHEEL_TABLES):
        yield from open_table("money_wheel", "money_wheel", "rng", n + 1)
    for n in range(BLACK_JACK_TABLES):
        yield from open_table("black_jack", "black_jack", "rng", n + 1)
    for n, game in enumerate(DICE_GAMES):
        yield from open_table("dice", game, "rng", n + 1)
    wheel_spaces = betting_spaces(tables["money_wheel"][0].config, "money_wheel")
    dice_bets = {game: _dice_bets(game) for game in DICE_GAMES}
    raffle = _Raffle(rng)
    jar = _Jar(rng)
    kinds = [k for k, _ in MIX]
    weights = [w for _, w in MIX]
    while made < total:
        kind = rng.choices(kinds, weights)[0]
        if kind == "raffle":
            stream, steps = raffle.stream, raffle.steps()
        elif kind == "bell_jar":
            stream = jar.stream  # read before the step: a deal sold out names the next
            steps = jar.steps()
        else:
            t = rng.randrange(len(tables[kind]))
            state = tables[kind][t]
            stream = f"table:{state.table}"
            played, state = _table_round(table_rules, state, kind, rng, players,
                                         wheel_spaces, dice_bets)  # fmt: skip
            tables[kind][t] = state
            steps = played
        for events, actor, corr in steps:
            made += len(events)
            yield from chains.seal(stream, events, actor, corr)


def _dice_bets(game: str) -> list[dict[str, Any]]:
    from services.games.over_under_seven import OVER_UNDER_SEVEN
    from services.games.three_dice import CHUCK_A_LUCK

    bets: list[dict[str, Any]] = (
        CHUCK_A_LUCK if game == "chuck_a_luck" else OVER_UNDER_SEVEN
    ).every_bet()
    return bets


_Step = tuple[list[Event], str, str | None]


def _table_round(
    table_rules: TableRules,
    state: TableState,
    kind: str,
    rng: random.Random,
    players: list[str],
    wheel_spaces: tuple[str, ...],
    dice_bets: Mapping[str, list[dict[str, Any]]],
) -> tuple[list[_Step], TableState]:
    """One round at a table of ``kind``, every command decided by the table rules."""
    dealer = f"dealer:{state.table}"
    out: list[_Step] = []

    def do(command: Any, actor: str = dealer) -> bool:
        nonlocal state
        try:
            events = table_rules.decide(state, command)
        except RuleError:
            return False
        state = _fold_with(table_rules, state, events)
        out.append((events, actor, f"{state.table}#{state.round}"))
        return True

    do(OpenRound())
    if kind == "black_jack":
        for space in (1, 3, 5):
            player = rng.choice(players)
            do(PlaceBet(player=player, bet={"space": space}, amount=100), f"player:{player}")
        do(Deal())
        while not state.play.ended:
            play = state.play
            if round_stage(play) == "insurance":
                for h in play.hands:
                    do(Insure(hand=h.hand, amount=h.wager // 2))
                do(Peek())
                continue
            hand = turn_hand(play)
            if hand is None:
                break
            for action in rng.sample(["split", "double", "hit", "stand"], 4):
                if do(Act(hand=hand.hand, action=action)):
                    break
        return out, state
    for _ in range(BETS_PER_ROUND if kind != "dice" else 3):
        player = rng.choice(players)
        if kind == "roulette":
            bet, stake = rng.choice(BETS)
            amount = stake * rng.randint(1, 4)
        elif kind == "money_wheel":
            bet, amount = {"space": rng.choice(wheel_spaces)}, 100 * rng.randint(1, 4)
        else:
            bet, amount = rng.choice(dice_bets[state.game]), 100
        do(PlaceBet(player=player, bet=bet, amount=amount), f"player:{player}")
    do(CallNoMoreBets())
    if kind == "roulette":
        last = state.play.last_outcome
        do(RecordOutcome(outcome={"pocket": str(rng.randrange(1, 37)), "spun_from": last}))
    else:
        do(DrawOutcome())
    return out, state


class _Raffle:
    """A standard raffle on sale all night: each step a sale of 1 to 5 tickets."""

    stream = "raffle:r-1"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.state = RaffleState(raffle="r-1")
        self.now = int(time.time() * 1000) - 6 * 3_600_000
        config = {
            "name": "Parish raffle",
            "organization": "St. Mary's Parish Council",
            "identification_number": "GC-ID-77",
            "location": "Parish hall",
            "price": 500,
            "first_drawing_at": self.now + 30 * 86_400_000,
            "prizes": [{"description": "Cash", "value": 50_000}],
        }
        self.pending: list[_Step] = [
            self._run(SetupRaffle(kind="standard", config=config, board_commitments=())),
            self._run(RecordDrawingMethod(method="rng", description="drawn in plain view")),
        ]

    def _run(self, command: Any) -> _Step:
        events = raffle_rules.decide(self.state, command)
        for ev in events:
            self.state = raffle_rules.evolve(self.state, ev)
        return events, "seller:s-1", None

    def steps(self) -> list[_Step]:
        out, self.pending = self.pending, []
        count = self.rng.randint(1, 5)
        self.now += 1_000
        out.append(self._run(SellTicket(count=count, amount=count * 500, now_ms=self.now)))
        return out


class _Jar:
    """A bell jar deal in play: each step a sale of 1 to 10 tickets and the winners among
    them redeemed; a deal sold out is followed by the next one."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.number = 0
        self.now = int(time.time() * 1000) - 6 * 3_600_000
        self.pending: list[_Step] = []
        self._next_deal()

    def _next_deal(self) -> None:
        self.number += 1
        deal = f"d-{self.number}"
        self.stream = f"deal:{deal}"
        self.state = DealState(deal=deal)
        prizes = (
            FlarePrize(5_000, 4, "cash", "", "cash"),
            FlarePrize(1_000, 40, "cash", "", "cash"),
            FlarePrize(200, 400, "cash", "", "cash"),
        )
        serial = f"S-{self.number}"
        self.pending.append(self._run(RegisterDeal(
            kind="bell_jar", supplier="Acme Gaming Supply", supplier_license="SUP-77",
            invoice_number=f"INV-{self.number}", invoice_date="2026-11-20",
            serial_number=serial, ticket_serial=serial, flare_serial=serial,
            invoice_serial=serial, form_number="F-1", ticket_count=DEAL_TICKETS,
            ticket_price=DEAL_PRICE, cost=40_000, prizes=prizes, now_ms=self.now,
            serial_holder=deal,
        )))  # fmt: skip
        self.pending.append(self._run(PutDealInPlay(container="jar", column="", now_ms=self.now)))
        # The winning tickets, dealt at random among the deal's.
        self.winners = [line for line, p in enumerate(prizes) for _ in range(p.count)]
        self.winners += [-1] * (DEAL_TICKETS - len(self.winners))
        self.rng.shuffle(self.winners)

    def _run(self, command: Any) -> _Step:
        events = jar_rules.decide(self.state, command)
        self.state = jar_rules.fold(self.state, events)
        return events, "seller:s-1", None

    def steps(self) -> list[_Step]:
        out, self.pending = self.pending, []
        self.now += 1_000
        left = self.state.receptacle_tickets - self.state.sold
        count = min(left, self.rng.randint(1, 10))
        sold = self.state.sold
        out.append(self._run(RecordSale(count=count, amount=count * DEAL_PRICE,
                                        seller="seller:s-1", now_ms=self.now)))  # fmt: skip
        for n in range(sold, sold + count):
            if self.winners[n] >= 0 and not self.state.closed:
                out.append(self._run(RedeemTicket(
                    prize=self.winners[n], ticket=f"{self.stream}-t-{n}",
                    redeemed_by="seller:s-1", now_ms=self.now, lead=None,
                )))  # fmt: skip
        if self.state.closed:  # sold out: the next deal opens with the next step
            self._next_deal()
        return out


def _fold_with(table_rules: TableRules, state: TableState, events: list[Event]) -> TableState:
    for ev in events:
        state = table_rules.evolve(state, ev)
    return state


_APPEND_ALL = """
for i = 1, #ARGV do redis.call('XADD', KEYS[1], '*', 'e', ARGV[i]) end
return #ARGV
"""
"""Appends a batch of stored envelopes to the org log in one call (one command for Redis
to parse instead of one per entry)."""


async def fill(client: aioredis.Redis, org: str, total: int) -> int:
    """Write a night of about ``total`` events to the org log in bulk and its players'
    balances to the guarded balances; how many events. Each batch of :data:`WRITE_BATCH`
    goes in one script call, sent while the next batch is made."""
    balances: dict[str, int] = {}
    append_all = client.register_script(_APPEND_ALL)
    log_key = keys.log(org)
    count = 0
    batch: list[bytes] = []
    sending: asyncio.Task[Any] | None = None
    last: dict[str, bytes] = {}
    for raw in night(total, balances, last=last):
        batch.append(raw)
        count += 1
        if len(batch) == WRITE_BATCH:
            if sending is not None:
                await sending
            sending = asyncio.ensure_future(append_all(keys=[log_key], args=batch))
            batch = []
    if sending is not None:
        await sending
    if batch:
        await append_all(keys=[log_key], args=batch)
    await client.hset(keys.balances(org), mapping=balances)  # type: ignore[arg-type]
    await _stream_heads(client, org, last)
    return count


async def _stream_heads(client: aioredis.Redis, org: str, last: Mapping[str, bytes]) -> None:
    """What the append script keeps of each stream beside the org log, for the audit's check
    of the streams' own heads: its meta (seq and hash), its last event, its name in the
    index (the earlier events of a stream are in the log only: the check reads no other)."""
    pipe = client.pipeline(transaction=False)
    for raw in last.values():
        head = decode(raw)
        pipe.hset(keys.meta(org, head.stream), mapping={"v": head.seq, "h": head.hash})
        pipe.xadd(keys.stream(org, head.stream), {"e": raw}, id=f"0-{head.seq}")
        pipe.sadd(keys.streams(org), head.stream)
    await pipe.execute()


async def audit_rate(store: EventStore, workers: int) -> tuple[float, int, int]:
    """One audit of the whole log as ``casino-night audit`` runs it (its pass shared among
    ``workers`` processes, the progress bar on): (events/s, events, findings)."""
    started = time.perf_counter()
    report = await audit(store, (), no_checkpoint=None, progress=True, workers=workers)
    elapsed = time.perf_counter() - started
    return report.events / elapsed, report.events, len(report.discrepancies)


async def run(quick: bool) -> list[Result]:
    total = 200_000 if quick else 1_000_000
    workers = default_workers()
    with own_redis() as redis:
        url = redis_url(redis)
        client = aioredis.Redis.from_url(url, decode_responses=False)
        try:
            org = unique_org("audit")
            progress(f"audit: generating and writing a night of ~{total:,} events")
            started = time.perf_counter()
            count = await fill(client, org, total)
            made_s = time.perf_counter() - started
            store = EventStore(client, org)
            rates: dict[int, list[float]] = {workers: [], 1: []}
            for i in range(RUNS):
                for n in rates:
                    progress(f"audit: run {i + 1}/{RUNS}, {n} process(es)")
                    rate, events, found = await audit_rate(store, n)
                    if events != count or found:
                        raise RuntimeError(f"audited {events} of {count} events, {found} findings")
                    rates[n].append(rate)
        finally:
            await client.aclose()
    night_note = (
        f"{count:,} events of a night's mix (roulette and a money wheel mostly, Black Jack, "
        f"dice, a raffle's sales, a bell jar deal's sales and redemptions) made by the pure "
        f"rules and written to the org log 5,000 a script call, in {made_s:.0f} s; every "
        f"checker run"
    )
    shared = rates[workers]
    single = rates[1]
    return [
        at_least(
            f"15 audit throughput (casino-night audit, {workers} processes, progress bar on)",
            max(shared),
            "events/s",
            100_000,
            note=f"{night_note}; the pass shared among {workers} processes (the default: one "
            f"a core); best of {RUNS}: {', '.join(f'{r:,.0f}' for r in shared)}",
        ),
        Result(
            "15b audit throughput, one process (--workers 1)",
            max(single),
            "events/s",
            note=f"the same night, the same command in one process, runs interleaved with "
            f"15's; best of {RUNS}: {', '.join(f'{r:,.0f}' for r in single)}",
        ),
    ]
