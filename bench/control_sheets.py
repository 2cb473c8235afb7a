"""Figure 4b: rebuilding the merchandise wheels' control sheets from the org log.

The org log is filled with a night at 10 merchandise wheels: each opened (TableOpened with
its layout) and stocked with 500 items, then rounds interleaved (RoundOpened, 8 BetPlaced,
NoMoreBets, OutcomeRecorded, Settled paying 0, and a MerchandiseAwarded per winner, about
1.5 a round), with a restock of 50 items now and then; each a hash-chained envelope as
``events.codec.encode`` writes it, added with pipelined XADDs. Then
``ProjectionRunner(store, [ControlSheets()]).catch_up()`` runs from zero (median of three).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator
from typing import Any

import redis.asyncio as aioredis

from bench.common import Result, at_least, own_redis, progress, unique_org
from bench.rebuild import Chains, fill, rebuild_rates
from projections.control_sheets import ControlSheets
from services.games.wheels import MERCHANDISE_WHEEL
from services.store.redis_store import EventStore

WHEELS = 10
BETS_PER_ROUND = 8
OPENING_STOCK = 500
RESTOCK = 50
LIMIT = 1_000_000_000  # far away: the bench measures folding, not closing


def _items(rng: random.Random, wheel: int, first: int, count: int) -> list[dict[str, Any]]:
    return [
        {
            "item": f"w{wheel}-{n}",
            "prize": rng.choice(["small", "medium", "large"]),
            "value": rng.randrange(100, 40_000),
            "donated": rng.random() < 0.2,
        }
        for n in range(first, first + count)
    ]


def night_events(total: int, seed: int = 12) -> Iterator[bytes]:
    """About ``total`` encoded envelopes of a merchandise-wheel night, in commit order."""
    rng = random.Random(seed)
    chains = Chains()
    config = dict(MERCHANDISE_WHEEL.parse_config({"aggregate_prize_limit": 1_000_000}))
    config["aggregate_prize_limit"] = LIMIT
    shelves: dict[int, list[dict[str, Any]]] = {}
    stocked = dict.fromkeys(range(WHEELS), 0)
    made = 0
    for w in range(WHEELS):
        stream = f"table:w-{w}"
        opened = {"table": f"w-{w}", "game": "merchandise_wheel", "config": config,
                  "outcome_mode": "rng"}  # fmt: skip
        yield chains.seal(stream, "TableOpened", opened, "system", None)
        shelves[w] = _items(rng, w, 0, OPENING_STOCK)
        stocked[w] = OPENING_STOCK
        stock = {"items": shelves[w], "source": "opening"}
        yield chains.seal(stream, "MerchandiseStocked", stock, "system", None)
        made += 2
    rounds = dict.fromkeys(range(WHEELS), 0)
    aggregate = dict.fromkeys(range(WHEELS), 0)
    while made < total:
        w = rng.randrange(WHEELS)
        rounds[w] += 1
        r = rounds[w]
        stream = f"table:w-{w}"
        corr = f"w-{w}#{r}"
        dealer = f"dealer:d-{w}"
        if len(shelves[w]) < 20:
            fresh = _items(rng, w, stocked[w], RESTOCK)
            stocked[w] += RESTOCK
            shelves[w] += fresh
            restock = {"items": fresh, "source": "restock"}
            yield chains.seal(stream, "MerchandiseStocked", restock, "member_in_charge:m", None)
            made += 1
        yield chains.seal(stream, "RoundOpened", {"round": r}, dealer, corr)
        bets = []
        for _ in range(BETS_PER_ROUND):
            seq = chains.heads[stream][0] + 1
            bet = {"round": r, "bet_id": f"w-{w}.{r}.{seq}", "player": f"p-{rng.randrange(200)}",
                   "bet": {"space": str(rng.randrange(1, 13))}, "amount": 100}  # fmt: skip
            bets.append(bet)
            yield chains.seal(stream, "BetPlaced", bet, f"player:{bet['player']}", corr)
        yield chains.seal(stream, "NoMoreBets", {"round": r}, dealer, corr)
        outcome = {"section": rng.randrange(12)}
        recorded = {"round": r, "outcome": outcome, "source": "rng"}
        yield chains.seal(stream, "OutcomeRecorded", recorded, dealer, corr)
        winners = [b for b in bets if rng.random() < 0.19]
        settled = {
            "round": r, "outcome": outcome, "wagered": 100 * len(bets), "paid": 0,
            "settlements": [
                {"bet_id": b["bet_id"], "player": b["player"], "amount": 100,
                 "result": "won" if b in winners else "lost", "paid": 0}
                for b in bets
            ],
        }  # fmt: skip
        yield chains.seal(stream, "Settled", settled, dealer, corr)
        made += BETS_PER_ROUND + 4
        for b in winners:
            item = shelves[w].pop(0)
            aggregate[w] += item["value"]
            award = {"round": r, "bet_id": b["bet_id"], "player": b["player"],
                     "item": item["item"], "prize": item["prize"], "value": item["value"],
                     "donated": item["donated"], "aggregate": aggregate[w]}  # fmt: skip
            yield chains.seal(stream, "MerchandiseAwarded", award, dealer, corr)
            made += 1


async def run(quick: bool) -> list[Result]:
    total = 100_000 if quick else 300_000
    with own_redis() as redis:
        client = aioredis.Redis.from_url(redis.url, decode_responses=False)
        try:
            org = unique_org("sheets")
            progress(f"control sheets: filling the org log with ~{total:,} events")
            events = list(night_events(total))
            awards = sum(b"MerchandiseAwarded" in raw for raw in events)
            count = await fill(client, org, events)
            store = EventStore(client, org)
            runs = 3
            rates, sheets = await rebuild_rates(store, ControlSheets, count, runs, "control sheets")
            listed = sum(len(s["awarded"]) for s in sheets.all_sheets())
            if listed != awards:
                raise RuntimeError(f"the sheets list {listed} awards of {awards}")
            for s in sheets.all_sheets():
                if s["stocked_value"] != s["aggregate"] + s["inventory_value"]:
                    raise RuntimeError(f"{s['table']}: merchandise is not conserved")
        finally:
            await client.aclose()
    return [
        at_least(
            "4b control-sheet rebuild (ControlSheets) from the org log",
            statistics.median(rates),
            "events/s",
            250_000,
            note=f"{count:,} events of {WHEELS} merchandise wheels ({awards:,} awards); median"
            f" of {runs} catch_up() runs: {', '.join(f'{r:,.0f}' for r in rates)}",
        )
    ]
