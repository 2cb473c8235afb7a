"""Figure 4d: rebuilding the bell jar projection from the org log.

The org log is filled with a license period of bell jar deals: deals of 2,400 to 4,000
tickets at $0.50 to $2 (a flare of five cash lines, about one ticket in six a winner; one
deal in ten a merchandise board with two merchandise lines), each registered, put in play
(one in five commingled with an identical second deal into one receptacle) and then sold
from, six jars at once, in sales of 1 to 10 tickets with the redemptions of the winners among
them, until sold out, or removed once most of its prizes are gone; as each closes, the next
is registered. Every event is a hash-chained envelope of its deal's stream, its body as
``events.base.to_data`` stores it, encoded as ``events.codec.encode`` writes it and added
with pipelined XADDs. Then ``ProjectionRunner(store, [BellJars()]).catch_up()`` runs from
zero (median of three), as the runner and ``casino-night replay`` fold it.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis

from bench.common import Result, at_least, own_redis, progress, unique_org
from bench.rebuild import Chains, fill, rebuild_rates
from events.base import Event, to_data
from events.bell_jars import (
    DealClosed,
    DealCommingled,
    DealPutInPlay,
    DealRegistered,
    FlarePrize,
    TicketRedeemed,
    TicketsSold,
)
from projections.bell_jars import BellJars
from services.aggregates import deal_stream
from services.store.redis_store import EventStore

JARS = 6
"""Receptacles in play at once."""
DAY_MS = 86_400_000
START_MS = 1_767_243_600_000  # 2026-01-01 00:00 in New York
MEMBER = "member_in_charge:m"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class Jar:
    """A receptacle in play: its deals (lead first), the tickets left, the winners left."""

    deals: list[str]
    price: int
    tickets: int
    winners: list[tuple[str, int, FlarePrize]] = field(default_factory=list)
    sold: int = 0


def _flare(rng: random.Random, tickets: int, price: int, merchandise: bool) -> list[FlarePrize]:
    lines = []
    budget = tickets * price * 7 // 10  # about 70 % paid back
    shares = [(40, 0.5), (20, 2), (10, 5), (4, 20), (1, 100)]
    for count_per_1000, times in shares:
        count = max(1, tickets * count_per_1000 // 1000)
        value = max(price, int(price * times))
        if count * value > budget // 2:
            count = max(1, budget // 2 // value)
        lines.append(FlarePrize(value=value, count=count, kind="cash", description="",
                                value_basis="cash"))  # fmt: skip
    if merchandise:
        for name, value in (("radio", 2_500), ("cooler", 4_000)):
            lines.append(FlarePrize(value=value, count=2, kind="merchandise", description=name,
                                    value_basis="cost"))  # fmt: skip
    return lines


def season_events(total: int, seed: int = 13) -> Iterator[bytes]:
    """About ``total`` encoded envelopes of bell jar deals, in commit order."""
    rng = random.Random(seed)
    chains = Chains()
    made = 0
    at = START_MS
    number = 0
    jars: list[Jar] = []

    def seal(deal: str, body: Event, actor: str = MEMBER) -> bytes:
        return chains.seal(deal_stream(deal), body.NAME, to_data(body), actor, None)

    def open_jar() -> Iterator[bytes]:
        nonlocal number
        tickets = rng.choice([2_400, 3_000, 4_000])
        price = rng.choice([50, 100, 200])
        merchandise = rng.random() < 0.1
        flare = _flare(rng, tickets, price, merchandise)
        kind = "merchandise_board" if merchandise else "bell_jar"
        pair = 2 if rng.random() < 0.2 else 1
        deals = []
        for _ in range(pair):
            number += 1
            deal = f"d-{number:05d}"
            deals.append(deal)
            invoice = (EPOCH + timedelta(milliseconds=at - 3 * DAY_MS)).date().isoformat()
            yield seal(deal, DealRegistered(
                deal=deal, kind=kind, supplier="Acme Gaming", supplier_license="S-1",
                invoice_number=f"I-{number}", invoice_date=invoice,
                serial_number=f"SN{number:07d}", form_number="F-77", ticket_count=tickets,
                ticket_price=price, cost=tickets * price // 8, prizes=tuple(flare), at=at,
            ))  # fmt: skip
        for member in deals[1:]:
            yield seal(member, DealCommingled(lead=deals[0], at=at))
        yield seal(deals[0], DealPutInPlay(deals=tuple(deals), container="jar", column="",
                                           at=at))  # fmt: skip
        jar = Jar(deals=deals, price=price, tickets=tickets * pair)
        for deal in deals:
            for line, prize in enumerate(flare):
                jar.winners += [(deal, line, prize)] * prize.count
        rng.shuffle(jar.winners)
        jars.append(jar)

    while made < total:
        while len(jars) < JARS:
            for raw in open_jar():
                made += 1
                yield raw
        jar = rng.choice(jars)
        at += rng.randrange(1_000, 240_000)
        count = min(rng.randint(1, 10), jar.tickets - jar.sold)
        jar.sold += count
        yield seal(jar.deals[0], TicketsSold(count=count, amount=count * jar.price,
                                             seller="seller:s", at=at), "seller:s")  # fmt: skip
        made += 1
        # The winners among the tickets just sold, in proportion to the winners left.
        left = jar.tickets - jar.sold + count
        wins = sum(rng.random() * left < len(jar.winners) for _ in range(count))
        for _ in range(min(wins, len(jar.winners))):
            deal, line, prize = jar.winners.pop()
            yield seal(deal, TicketRedeemed(
                prize=line, value=prize.value, kind=prize.kind, ticket=f"{deal}/{made}",
                defaced=True, retain_until="2027-12-31", redeemed_by="seller:s", at=at,
            ), "seller:s")  # fmt: skip
            made += 1
        removed = rng.random() < 0.002 and jar.sold > jar.tickets * 0.8
        if jar.sold == jar.tickets or removed:
            reason = "sold_out" if jar.sold == jar.tickets else "removed"
            for deal in jar.deals:
                unsold = jar.tickets - jar.sold if deal == jar.deals[0] else 0
                yield seal(deal, DealClosed(reason=reason, unsold=unsold, at=at))
                made += 1
            jars.remove(jar)


def quarters_add_up(projection: BellJars) -> None:
    """The quarters' figures add up to the cent (raises RuntimeError if not)."""
    for name, q in projection.report()["quarters"].items():
        lines = q["schedule_1"]
        if (
            q["A6"] != q["A3"] + q["A4"] + q["A5"]
            or q["A7"] != q["A2"] - q["A6"]
            or q["B9"] != q["A7"] - q["B8"]
            or q["A1"] != len(lines)
            or q["A2"] != sum(x["ideal_handle"] for x in lines)
            or q["A3"] != sum(x["cash_prizes"] for x in lines)
            or q["A4"] != sum(x["unsold_value"] for x in lines)
            or q["A5"] != sum(p["cost"] for p in q["purchases"])
        ):
            raise RuntimeError(f"{name}: the GC-7Q figures do not add up")


async def run(quick: bool) -> list[Result]:
    total = 100_000 if quick else 300_000
    with own_redis() as redis:
        client = aioredis.Redis.from_url(redis.url, decode_responses=False)
        try:
            org = unique_org("belljars")
            progress(f"bell jars: filling the org log with ~{total:,} events")
            events = list(season_events(total))
            sales = sum(b"TicketsSold" in raw for raw in events)
            redemptions = sum(b"TicketRedeemed" in raw for raw in events)
            count = await fill(client, org, events)
            store = EventStore(client, org)
            runs = 3
            rates, projection = await rebuild_rates(store, BellJars, count, runs, "bell jars")
            quarters_add_up(projection)
            deals = len(projection.deals)
            anomalies = sum(len(v["anomalies"]) for v in projection.views())
            if anomalies:
                raise RuntimeError(f"the bench's deals show {anomalies} anomalies")
        finally:
            await client.aclose()
    return [
        at_least(
            "4d bell jar rebuild (BellJars) from the org log",
            statistics.median(rates),
            "events/s",
            250_000,
            note=f"{count:,} events of {deals:,} deals ({sales:,} sales, {redemptions:,}"
            f" redemptions); median of {runs} catch_up() runs:"
            f" {', '.join(f'{r:,.0f}' for r in rates)}",
        )
    ]
