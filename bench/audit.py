"""Figure 15: ``casino-night audit``'s throughput over a generated night of 1,000,000 events.

The night is made with the pure rules, not a server: 20 roulette tables opened with the
table rules (``services.tables.rules.decide``/``evolve``) and 200 players sold chips at the
cage; then rounds at random tables, each ``OpenRound``, 8 ``PlaceBet`` of random kinds and
stakes, ``CallNoMoreBets`` and a dealer's ``RecordOutcome`` (a seeded random pocket, spun
from the last), every event decided and settled by the rules and sealed into its stream's
hash chain (``events.envelope.seal``). The sealed bytes are written to the org log alone, in
bulk (5,000 a script call that ``XADD``s them, sent while the next 5,000 are made), and the
players' balances to the guarded balances; the audit reads only the log. Then the audit
runs as the command does (every rule checker of ``services.audit.rules``, the chains and
the balances; a tqdm progress bar on stderr), over the whole log, twice; the best run counts.
A profile of the engine's own loop is in docs/AUDIT.md.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

import redis.asyncio as aioredis
from tqdm import tqdm

from bench.common import Result, at_least, own_redis, progress, unique_org
from events.base import Event
from events.cage import ChipsIssued
from events.codec import encode
from events.envelope import GENESIS_HASH, event_id, seal
from events.money import balance_moves
from services.audit.balances import BalanceChecker
from services.audit.engine import Audit, read_log, snapshot
from services.audit.rules import RULE_CHECKERS
from services.games.single_outcome import RecordOutcome
from services.store import keys
from services.store.redis_store import EventStore
from services.tables import rules
from services.tables.rules import CallNoMoreBets, OpenRound, OpenTable, PlaceBet, TableState

TABLES = 20
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


class _Chains:
    """Seals events into their streams' hash chains, as an actor does."""

    def __init__(self, balances: dict[str, int]) -> None:
        self.balances = balances
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
        for player, cents in balance_moves(events):
            self.balances[player] = self.balances.get(player, 0) + cents
        return out


def night(total: int, balances: dict[str, int], seed: int = SEED) -> Iterator[bytes]:
    """About ``total`` stored envelopes of a night of roulette, in commit order; each
    player's balance left in ``balances`` (what the append script would guard)."""
    rng = random.Random(seed)
    chains = _Chains(balances)
    players = [f"p-{i:03d}" for i in range(PLAYERS)]
    made = 0
    for p in players:
        made += 1
        yield from chains.seal("cage", [ChipsIssued(player=p, amount=BUY_IN)], "cashier:c", None)
    states: list[TableState] = []
    for t in range(TABLES):
        state = TableState(table=f"roulette-{t + 1}")
        opened = rules.decide(state, OpenTable(game="roulette", config={}, outcome_mode="dealer"))
        states.append(_fold(state, opened))
        made += len(opened)
        yield from chains.seal(f"table:{state.table}", opened, "system", None)
    while made < total:
        t = rng.randrange(TABLES)
        state = states[t]
        stream = f"table:{state.table}"
        dealer = f"dealer:d-{t + 1}"
        steps: list[tuple[Any, str]] = [(OpenRound(), dealer)]
        for _ in range(BETS_PER_ROUND):
            bet, stake = rng.choice(BETS)
            player = rng.choice(players)
            amount = stake * rng.randint(1, 4)
            steps.append((PlaceBet(player=player, bet=bet, amount=amount), f"player:{player}"))
        steps.append((CallNoMoreBets(), dealer))
        last = state.play.last_outcome
        outcome = {"pocket": str(rng.randrange(1, 37)), "spun_from": last}
        steps.append((RecordOutcome(outcome=outcome), dealer))
        for command, actor in steps:
            events = rules.decide(state, command)
            state = _fold(state, events)
            made += len(events)
            yield from chains.seal(stream, events, actor, f"{state.table}#{state.round}")
        states[t] = state


def _fold(state: TableState, events: list[Event]) -> TableState:
    for ev in events:
        state = rules.evolve(state, ev)
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
    for raw in night(total, balances):
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
    return count


async def audit_rate(store: EventStore) -> tuple[float, int, int]:
    """One audit of the whole log, with the progress bar on: (events/s, events, findings)."""
    moment = await snapshot(store)
    checkers = [*(make() for make in RULE_CHECKERS), BalanceChecker(moment.guarded)]
    audit = Audit(store.org, checkers, no_checkpoint=None)
    started = time.perf_counter()
    with tqdm(total=moment.length, unit="ev", unit_scale=True, file=sys.stderr) as bar:
        await read_log(audit, store, moment.log_head, on_page=bar.update)
    report = audit.finish()
    elapsed = time.perf_counter() - started
    return report.events / elapsed, report.events, len(report.discrepancies)


async def run(quick: bool) -> list[Result]:
    total = 200_000 if quick else 1_000_000
    with own_redis() as redis:
        client = aioredis.Redis.from_url(redis.url, decode_responses=False)
        try:
            org = unique_org("audit")
            progress(f"audit: generating and writing a night of ~{total:,} events")
            started = time.perf_counter()
            count = await fill(client, org, total)
            made_s = time.perf_counter() - started
            store = EventStore(client, org)
            rates = []
            for i in range(2):
                progress(f"audit: run {i + 1}/2")
                rate, events, found = await audit_rate(store)
                if events != count or found:
                    raise RuntimeError(f"audited {events} of {count} events, {found} findings")
                rates.append(rate)
        finally:
            await client.aclose()
    return [
        at_least(
            "15 audit throughput (casino-night audit's engine, progress bar on)",
            max(rates),
            "events/s",
            100_000,
            note=f"{count:,} events of a night of roulette made by the pure table rules and "
            f"written to the org log 5,000 a script call, in {made_s:.0f} s; every checker "
            f"run; best of 2: {', '.join(f'{r:,.0f}' for r in rates)}",
        )
    ]
