"""Figure 4: rebuilding the bankroll projection from the org log.

The org log is filled with a night's realistic events: chips sold to 200 players, then
rounds at 20 tables interleaved (RoundOpened, 8 BetPlaced, NoMoreBets, OutcomeRecorded,
Settled listing its 8 settlements), each a hash-chained envelope in its table's stream,
encoded as ``events.codec.encode`` writes it and added with pipelined XADDs to
``keys.log(org)`` under field ``e``. Then ``ProjectionRunner(store, [Bankrolls()])
.catch_up()`` runs from zero (median of three runs).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import redis.asyncio as aioredis

from bench.common import Result, at_least, own_redis, progress, unique_org
from events.codec import encode
from events.envelope import GENESIS_HASH, Envelope, chain_hash
from projections.bankroll import Bankrolls
from projections.base import Projection
from projections.bell_jars import BellJars
from projections.control_sheets import ControlSheets
from projections.raffles import Raffles
from projections.runner import ProjectionRunner
from services.store import keys
from services.store.redis_store import EventStore

P = TypeVar("P", bound=Projection)

TABLES = 20
PLAYERS = 200
BETS_PER_ROUND = 8
KINDS: list[dict[str, Any]] = [
    {"kind": "red"},
    {"kind": "odd"},
    {"kind": "dozen", "dozen": 2},
    {"kind": "column", "column": 1},
    {"kind": "split", "numbers": ["17", "20"]},
]


class Chains:
    """Seals envelopes, keeping each stream's seq and last hash."""

    def __init__(self) -> None:
        self.heads: dict[str, tuple[int, str]] = {}
        self.ids = 0
        self.ts = int(time.time() * 1000) - 3_600_000

    def seal(
        self, stream: str, type_: str, data: dict[str, Any], actor: str, corr: str | None
    ) -> bytes:
        seq, prev = self.heads.get(stream, (0, GENESIS_HASH))
        seq += 1
        self.ids += 1
        self.ts += 1
        eid = f"{self.ids:032x}"
        fields: dict[str, Any] = dict(
            id=eid, type=type_, version=1, stream=stream, seq=seq, ts=self.ts, actor=actor,
            causation=f"c-{self.ids}", correlation=corr, prev_hash=prev,
        )  # fmt: skip
        digest = chain_hash(**fields, data=data)
        self.heads[stream] = (seq, digest)
        return encode(Envelope(**fields, hash=digest, data=data))


def night_events(total: int, seed: int = 11) -> Iterator[bytes]:
    """About ``total`` encoded envelopes of a night, in commit order."""
    rng = random.Random(seed)
    chains = Chains()
    players = [f"p-{i:03d}" for i in range(PLAYERS)]
    made = 0
    for p in players:
        yield chains.seal("cage", "ChipsIssued", {"player": p, "amount": 50_000}, "cashier:c", None)
        made += 1
    rounds = dict.fromkeys(range(TABLES), 0)
    while made < total:
        t = rng.randrange(TABLES)
        rounds[t] += 1
        r = rounds[t]
        stream = f"table:t-{t:02d}"
        corr = f"t-{t:02d}#{r}"
        dealer = f"dealer:d-{t:02d}"
        yield chains.seal(stream, "RoundOpened", {"round": r}, dealer, corr)
        bets: list[dict[str, Any]] = []
        for _ in range(BETS_PER_ROUND):
            seq = chains.heads[stream][0] + 1
            bet = {
                "round": r,
                "bet_id": f"t-{t:02d}.{r}.{seq}",
                "player": rng.choice(players),
                "bet": rng.choice(KINDS),
                "amount": 5 * rng.randint(1, 40),
            }
            bets.append(bet)
            yield chains.seal(stream, "BetPlaced", bet, f"player:{bet['player']}", corr)
        yield chains.seal(stream, "NoMoreBets", {"round": r}, dealer, corr)
        pocket = str(rng.randrange(37))
        outcome = {"pocket": pocket, "spun_from": None}
        yield chains.seal(
            stream, "OutcomeRecorded", {"round": r, "outcome": outcome, "source": "dealer"},
            dealer, corr,
        )  # fmt: skip
        settlements: list[dict[str, Any]] = []
        for b in bets:
            won = rng.random() < 0.45
            paid = 2 * b["amount"] if won else 0
            settlements.append(
                {"bet_id": b["bet_id"], "player": b["player"], "amount": b["amount"],
                 "result": "won" if won else "lost", "paid": paid}
            )  # fmt: skip
        data: dict[str, Any] = {
            "round": r,
            "outcome": outcome,
            "settlements": settlements,
            "wagered": sum(s["amount"] for s in settlements),
            "paid": sum(s["paid"] for s in settlements),
        }
        yield chains.seal(stream, "Settled", data, dealer, corr)
        made += BETS_PER_ROUND + 4
        if rng.random() < 0.02:
            p = rng.choice(players)
            yield chains.seal(
                "cage", "ChipsIssued", {"player": p, "amount": 10_000}, "cashier:c", None
            )
            made += 1


async def fill(client: aioredis.Redis, org: str, events: Iterable[bytes]) -> int:
    """Append encoded envelopes to the org log with pipelined XADDs; how many."""
    log_key = keys.log(org)
    count = 0
    pipe = client.pipeline(transaction=False)
    for raw in events:
        pipe.xadd(log_key, {"e": raw})
        count += 1
        if count % 2000 == 0:
            await pipe.execute()
            pipe = client.pipeline(transaction=False)
    await pipe.execute()
    return count


async def rebuild_rates(
    store: EventStore,
    make: Callable[[], P],
    count: int,
    runs: int,
    label: str,
    *others: Callable[[], Projection],
) -> tuple[list[float], P]:
    """Events/s of ``runs`` rebuilds from zero of a fresh ``make()`` projection (and fresh
    ``others``, folded beside it) over the ``count`` events of the store's org log; the
    last rebuilt ``make()`` projection."""
    rates = []
    projection = make()
    for i in range(runs):
        progress(f"{label}: catch_up from zero, run {i + 1}/{runs}")
        projection = make()
        runner = ProjectionRunner(store, [projection, *(other() for other in others)])
        started = time.perf_counter()
        folded = await runner.catch_up()
        elapsed = time.perf_counter() - started
        if folded != count:
            raise RuntimeError(f"folded {folded} of {count} events")
        rates.append(folded / elapsed)
    return rates, projection


async def run(quick: bool) -> list[Result]:
    total = 100_000 if quick else 300_000
    with own_redis() as redis:
        client = aioredis.Redis.from_url(redis.url, decode_responses=False)
        try:
            org = unique_org("rebuild")
            progress(f"rebuild: filling the org log with ~{total:,} events")
            started = time.perf_counter()
            count = await fill(client, org, night_events(total))
            fill_s = time.perf_counter() - started
            store = EventStore(client, org)
            runs = 3
            rates, bankrolls = await rebuild_rates(store, Bankrolls, count, runs, "rebuild")
            every, _ = await rebuild_rates(
                store, Bankrolls, count, runs, "replay", ControlSheets, Raffles, BellJars
            )
            org_totals = bankrolls.organization
            balances = sum(p["balance"] for p in bankrolls.players.values())
            if balances + org_totals["house_win"] != org_totals["issued"] - org_totals["redeemed"]:
                raise RuntimeError("the rebuilt bankrolls do not conserve money")
        finally:
            await client.aclose()
    return [
        at_least(
            "4  projection rebuild (Bankrolls) from the org log",
            statistics.median(rates),
            "events/s",
            250_000,
            note=f"{count:,} events (filled in {fill_s:.1f} s by pipelined XADD); median of"
            f" {runs} catch_up() runs: {', '.join(f'{r:,.0f}' for r in rates)}",
        ),
        at_least(
            "4c replay of every projection (Bankrolls, ControlSheets, Raffles, BellJars)",
            statistics.median(every),
            "events/s",
            250_000,
            note=f"the same log folded into the four projections `serve` and `replay` run;"
            f" median of {runs}: {', '.join(f'{r:,.0f}' for r in every)}",
        ),
    ]
