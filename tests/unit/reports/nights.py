"""Nights of events as the org log holds them (type, stream, data, occurred-at), made from
a seeded generator, to fold into the projections the forms are built from."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from projections.bankroll import Bankrolls
from projections.cash_control import CashControl
from projections.control_sheets import ControlSheets
from projections.expenses import Expenses

Entry = tuple[str, str, dict[str, Any], int]
DAY_MS = 86_400_000
NOV_29_2026_NOON_UTC = 1_795_953_600_000
"""2026-11-29T12:00:00Z: 07:00 in New York."""


def license_recorded(start: str = "2026-11-01", end: str = "2026-12-31") -> Entry:
    data = {
        "organization": "st-marys",
        "license_number": "GC-2026-0042",
        "games": ["roulette", "black_jack"],
        "period_start": start,
        "period_end": end,
        "tie_option": None,
    }
    return ("LicenseRecorded", "license", data, 0)


def occasion_started(occasion: str, ts: int) -> Entry:
    data = {"occasion": occasion, "name": f"Night {occasion}", "starts_at": None, "ends_at": None}
    return ("OccasionStarted", "license", data, ts)


def table_opened(table: str, game: str, ts: int) -> Entry:
    data = {"table": table, "game": game, "config": {}, "outcome_mode": "rng"}
    return ("TableOpened", f"table:{table}", data, ts)


def random_occasion(
    rng: random.Random, tables: list[str], ts: int, rounds: int = 30
) -> Iterator[Entry]:
    """Chips sold, rounds of bets at random tables settled (won, lost, pushed, some bets
    taken back), chips cashed out: every kind of money move the bankrolls fold."""
    players = [f"p-{i}" for i in range(1, 6)]
    for p in players:
        ts += 1000
        yield ("ChipsIssued", "cage", {"player": p, "amount": rng.randrange(5_000, 50_000)}, ts)
    for n in range(1, rounds + 1):
        table = rng.choice(tables)
        bets = []
        for k, p in enumerate(rng.sample(players, rng.randrange(1, 4))):
            amount = rng.randrange(1, 20) * 25
            bet_id = f"{table}.{n}.{k}"
            ts += 500
            yield (
                "BetPlaced",
                f"table:{table}",
                {"round": n, "bet_id": bet_id, "player": p, "bet": {}, "amount": amount},
                ts,
            )
            if rng.random() < 0.1:
                ts += 100
                data = {"round": n, "bet_id": bet_id, "player": p, "amount": amount}
                yield ("BetCancelled", f"table:{table}", data, ts)
            else:
                bets.append((bet_id, p, amount))
        settlements = []
        for bet_id, p, amount in bets:
            result = rng.choice(("won", "lost", "lost", "push"))
            paid = {"won": amount * rng.choice((2, 3, 36)), "lost": 0, "push": amount}[result]
            settlements.append({"bet_id": bet_id, "player": p, "result": result, "paid": paid})
        ts += 1000
        yield (
            "Settled",
            f"table:{table}",
            {
                "round": n,
                "outcome": {},
                "settlements": settlements,
                "wagered": sum(b[2] for b in bets),
                "paid": sum(s["paid"] for s in settlements),
            },
            ts,
        )
    for p in players[:3]:
        ts += 1000
        yield ("ChipsRedeemed", "cage", {"player": p, "amount": rng.randrange(1, 4_000)}, ts)


def two_nights(seed: int) -> list[Entry]:
    """One license period, two occasions a week apart, three tables of two games."""
    rng = random.Random(seed)
    tables = ["roulette-1", "roulette-2", "bj-1"]
    day1, day2 = NOV_29_2026_NOON_UTC, NOV_29_2026_NOON_UTC + 7 * DAY_MS
    return [
        license_recorded(),
        occasion_started("2026-11-29", day1),
        table_opened("roulette-1", "roulette", day1),
        table_opened("roulette-2", "roulette", day1),
        table_opened("bj-1", "black_jack", day1),
        *random_occasion(rng, tables, day1),
        occasion_started("2026-12-06", day2),
        *random_occasion(rng, tables, day2),
    ]


def expense(number: int, category: str, amount: int, **over: Any) -> Entry:
    data = {
        "number": number,
        "payee": f"Payee {number}",
        "address": f"{number} Main St, Albany NY",
        "description": f"Item {number}",
        "amount": amount,
        "category": category,
        "covers": "occasion",
        "occasion": "2026-11-29",
        "period_start": "2026-11-01",
        "period_end": "2026-12-31",
        "recorded_by": "mic-1",
        "recorded_at": 0,
    }
    data.update(over)
    return ("ExpenseRecorded", "expenses", data, 0)


def fold(
    entries: list[Entry],
) -> tuple[Bankrolls, CashControl, Expenses, ControlSheets]:
    """Each projection folds the entries of the types it folds, in order (as the runner)."""
    projections = (Bankrolls(), CashControl(), Expenses(), ControlSheets())
    for type_, stream, data, ts in entries:
        for p in projections:
            if type_ in p.types:
                p.apply(type_, stream, data, ts)
    return projections
