"""Figure 3: settling one round that holds 10,000 bets of mixed kinds.

Times ``ROULETTE.settle(config, bets, outcome)`` and ``rules.decide(state,
RecordOutcome(...))`` (which validates the outcome, settles and builds the two events), the
median of several runs each. Two related costs the actor pays for such a round are reported
without a target: sealing the ``Settled`` event (hashing 10,000 settlements) and folding one
more ``BetPlaced`` into a round that already holds 10,000 bets.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.common import Result, at_most, progress
from events.envelope import GENESIS_HASH, seal
from events.tables import BetPlaced, Settled
from services.games.base import PlacedBet
from services.games.roulette import ROULETTE
from services.games.single_outcome import OutcomePlay, RecordOutcome
from services.tables import rules
from services.tables.rules import TableState

BETS = 10_000
OPTIONS = {"options": ["basket", "five_adjacent", "seven_numbers"]}


def _chain(bets: list[PlacedBet]) -> rules.BetNode | None:
    """The round's bets as the table state holds them (newest first, linked)."""
    node: rules.BetNode | None = None
    for seq, bet in enumerate(bets, start=1):
        node = rules.placed_on(bet, seq, node)
    return node


def bet_specs() -> list[dict[str, Any]]:
    """One of every kind of bet on the double-zero layout with the table's options."""
    nums = [str(n) for n in range(1, 37)]
    specs: list[dict[str, Any]] = [{"kind": "straight", "numbers": [p]} for p in ["0", "00", *nums]]
    for n in range(1, 37):
        if n % 3:
            specs.append({"kind": "split", "numbers": [str(n), str(n + 1)]})
        if n <= 33:
            specs.append({"kind": "split", "numbers": [str(n), str(n + 3)]})
    for r in range(1, 13):
        row = [str(3 * r - 2), str(3 * r - 1), str(3 * r)]
        specs.append({"kind": "street", "numbers": row})
        if r < 12:
            nxt = [str(3 * r + 1), str(3 * r + 2), str(3 * r + 3)]
            specs.append({"kind": "line", "numbers": row + nxt})
    for n in range(1, 33):
        if n % 3:
            specs.append({"kind": "corner", "numbers": [str(n + d) for d in (0, 1, 3, 4)]})
    specs.append({"kind": "five"})
    specs += [{"kind": "column", "column": c} for c in (1, 2, 3)]
    specs += [{"kind": "dozen", "dozen": d} for d in (1, 2, 3)]
    specs += [{"kind": k} for k in ("low", "high", "red", "black", "odd", "even")]
    specs += [
        {"kind": "basket", "numbers": t}
        for t in (["0", "1", "2"], ["0", "00", "2"], ["00", "2", "3"])
    ]
    specs += [{"kind": "five_adjacent", "center": p} for p in ["0", "00", *nums]]
    specs.append({"kind": "seven_numbers"})
    return specs


def round_of(config: Any, count: int, seed: int = 7) -> list[PlacedBet]:
    """``count`` canonical bets (as check_bet returns them) from 200 players, seeded."""
    rng = random.Random(seed)
    specs = bet_specs()
    bets = []
    for i in range(count):
        spec = rng.choice(specs)
        amount = 5 * rng.randint(1, 20)  # multiples of 5: valid for every kind, <= 100
        canonical = ROULETTE.check_bet(config, spec, amount)
        bets.append(
            PlacedBet(bet_id=f"t.1.{i + 2}", player=f"p-{i % 200}", bet=canonical, amount=amount)
        )
    return bets


def median_ms(fn: Callable[[], object], runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), times


def run(quick: bool) -> list[Result]:
    runs = 5 if quick else 11
    progress(f"settle: {BETS:,} bets, median of {runs} runs")
    config = ROULETTE.parse_config(OPTIONS)
    bets = round_of(config, BETS)
    outcome = {"pocket": "17", "spun_from": "5"}
    settle_ms, _ = median_ms(lambda: ROULETTE.settle(config, bets, outcome), runs)

    state = TableState(
        table="t",
        version=BETS + 2,
        game="roulette",
        config=config,
        outcome_mode="dealer",
        opened=True,
        round=1,
        phase="no_more_bets",
        placed=_chain(bets),
        play=OutcomePlay(last_outcome="5", recent=("5",)),
    )
    command = RecordOutcome(outcome=outcome)
    decide_ms, _ = median_ms(lambda: rules.decide(state, command), runs)
    events = rules.decide(state, command)
    settled = events[-1]
    assert isinstance(settled, Settled)
    won = sum(1 for s in settled.settlements if s.result == "won")

    def seal_settled() -> None:
        seal(
            settled,
            id="x" * 32,
            stream="table:t",
            seq=BETS + 4,
            ts=0,
            actor="dealer:d",
            causation="c",
            correlation="t#1",
            prev_hash=GENESIS_HASH,
        )

    seal_ms, _ = median_ms(seal_settled, runs)

    betting = TableState(**{**_fields(state), "phase": "betting"})
    one_more = BetPlaced(round=1, bet_id="t.1.99999", player="p-1", bet={"kind": "red"}, amount=5)
    evolve_ms, _ = median_ms(lambda: [rules.evolve(betting, one_more) for _ in range(100)], runs)

    return [
        at_most(
            f"3a ROULETTE.settle, {BETS:,} mixed bets",
            settle_ms,
            "ms",
            20,
            note=f"median of {runs}; {won:,} winners on pocket 17; every kind incl. basket,"
            " five_adjacent, seven_numbers",
            digits=2,
        ),
        at_most(
            f"3b rules.decide(RecordOutcome), {BETS:,} bets",
            decide_ms,
            "ms",
            20,
            note=f"median of {runs}; TableState holding {BETS:,} PlacedBets; outcome check +"
            " settle + OutcomeRecorded/Settled",
            digits=2,
        ),
        Result(
            f"3c seal(Settled) of {BETS:,} settlements",
            seal_ms,
            "ms",
            note="not in 3b: the actor then seals (to_data + canonical msgpack + SHA-256)"
            " the Settled event before its append",
            digits=2,
        ),
        Result(
            f"3d evolve(BetPlaced) into a {BETS:,}-bet round",
            evolve_ms * 10,
            "us/bet",
            note="the actor folds each accepted bet; evolve links it in front of the round's bets",
            digits=1,
        ),
    ]


def _fields(state: TableState) -> dict[str, Any]:
    return {name: getattr(state, name) for name in TableState.__dataclass_fields__}
