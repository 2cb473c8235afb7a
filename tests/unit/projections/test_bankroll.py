"""The bankroll projection (projections/bankroll.py): a pure fold over the org log.

Property: money is conserved at every point of any night: the sum of player balances plus
the house win equals chips issued minus chips redeemed; and each player's projected balance
equals the guarded balance the store keeps (the sum of the events' balance moves).
"""

from __future__ import annotations

import copy
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from events.base import Event, to_data
from events.cage import ChipsIssued, ChipsRedeemed
from events.license import OccasionStarted
from events.money import balance_moves
from events.tables import BetCancelled, BetPlaced, Settled
from projections.bankroll import Bankrolls
from services.aggregates import RuleError
from services.games.base import PlacedBet
from services.games.roulette import ROULETTE
from services.games.single_outcome import DrawOutcome
from services.tables.rules import (
    CallNoMoreBets,
    CancelBet,
    OpenRound,
    OpenTable,
    PlaceBet,
    TableState,
    decide,
    fold,
)

BETS: list[dict[str, Any]] = [
    {"kind": "straight", "numbers": ["0"]},
    {"kind": "straight", "numbers": ["00"]},
    {"kind": "split", "numbers": ["17", "20"]},
    {"kind": "street", "numbers": ["1", "2", "3"]},
    {"kind": "five"},
    {"kind": "dozen", "dozen": 3},
    {"kind": "column", "column": 1},
    {"kind": "red"},
    {"kind": "even"},
    {"kind": "low"},
]
PLAYERS = ["p-1", "p-2", "p-3"]


def simulate(seed: int, steps: int) -> tuple[list[tuple[str, str, Event]], dict[str, int]]:
    """A random night at two tables through the pure rules, with the store's balance guard
    applied to each command's moves. Returns the log (type, stream, event) and balances."""
    rng = random.Random(seed)
    balances: dict[str, int] = {}
    log: list[tuple[str, str, Event]] = [
        ("OccasionStarted", "license", OccasionStarted(occasion="n1", name="n"))
    ]
    tables = {}
    for name in ("t1", "t2"):
        state = TableState(table=name)
        evs = decide(state, OpenTable(game="roulette", config={}, outcome_mode="rng"))
        tables[name] = fold(state, evs)

    def commit(stream: str, events: list[Event]) -> bool:
        moves = balance_moves(events)
        trial = dict(balances)
        for player, delta in moves:
            trial[player] = trial.get(player, 0) + delta
            if delta < 0 and trial[player] < 0:
                return False
        balances.update(trial)
        log.extend((ev.NAME, stream, ev) for ev in events)
        return True

    for _ in range(steps):
        action = rng.random()
        player = rng.choice(PLAYERS)
        if action < 0.15:
            commit("cage", [ChipsIssued(player=player, amount=rng.randint(1, 2000))])
            continue
        if action < 0.2:
            commit("cage", [ChipsRedeemed(player=player, amount=rng.randint(1, 1500))])
            continue
        name = rng.choice(list(tables))
        state = tables[name]
        if state.phase == "idle":
            command: Any = OpenRound()
        elif state.phase == "betting" and action < 0.85:
            if state.bets and rng.random() < 0.1:
                command = CancelBet(bet_id=rng.choice(list(state.bets)))
            else:
                command = PlaceBet(player=player, bet=rng.choice(BETS), amount=rng.randint(1, 200))
        elif state.phase == "betting":
            command = CallNoMoreBets()
        else:
            command = DrawOutcome(draw=(rng.randrange(38),))
        try:
            events = decide(state, command)
        except RuleError:
            continue
        if commit(f"table:{name}", events):
            tables[name] = fold(state, events)
    return log, balances


def project(log: list[tuple[str, str, Event]]) -> Bankrolls:
    bankrolls = Bankrolls()
    for type_, stream, ev in log:
        bankrolls.apply(type_, stream, to_data(ev))
    return bankrolls


@settings(derandomize=True, max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(1, 300))
def test_money_is_conserved_at_every_point(seed: int, steps: int) -> None:
    log, balances = simulate(seed, steps)
    bankrolls = Bankrolls()
    for type_, stream, ev in log:
        bankrolls.apply(type_, stream, to_data(ev))
        org = bankrolls.organization
        total = sum(p["balance"] for p in bankrolls.players.values())
        assert total + org["house_win"] == org["issued"] - org["redeemed"] == org["outstanding"]
    for player in set(balances) | set(bankrolls.players):
        projected = bankrolls.players.get(player, {"balance": 0})["balance"]
        assert projected == balances.get(player, 0)
    assert all(b >= 0 for b in balances.values())


@settings(derandomize=True, max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_the_fold_is_deterministic_and_snapshots_round_trip(seed: int) -> None:
    log, _ = simulate(seed, 200)
    first, second = project(log), project(log)
    assert first.snapshot() == second.snapshot()
    restored = Bankrolls()
    restored.restore(first.snapshot())
    assert restored.snapshot() == first.snapshot()


def test_a_snapshot_shares_nothing_with_the_state_it_was_taken_from() -> None:
    """The checkpoint's snapshot stays as taken while the fold goes on (it is a copy of
    every row, not a view of them)."""
    log, _ = simulate(5, 200)
    bankrolls = project(log[: len(log) // 2])
    taken = bankrolls.snapshot()
    kept = copy.deepcopy(taken)
    for type_, stream, ev in log[len(log) // 2 :]:
        bankrolls.apply(type_, stream, to_data(ev))
    assert bankrolls.snapshot() != kept  # the fold moved on
    assert taken == kept  # the snapshot did not


def test_table_and_occasion_totals_add_up() -> None:
    log, _ = simulate(7, 400)
    bankrolls = project(log)
    tables = bankrolls.tables.values()
    org = bankrolls.organization
    assert sum(t["handle"] for t in tables) == org["handle"]
    assert sum(t["paid_out"] for t in tables) == org["paid_out"]
    assert sum(t["house_win"] for t in tables) == org["house_win"]
    assert bankrolls.occasions["n1"] == {k: org[k] for k in bankrolls.occasions["n1"]}
    for p in bankrolls.players.values():
        assert p["net"] == p["paid"] - p["wagered"]
        assert p["balance"] == p["bought"] - p["redeemed"] - p["wagered"] + p["paid"]


def test_an_auditor_recomputes_every_payout_from_the_log() -> None:
    """Settlement is a pure function of the round's bets and outcome (docs/ARCHITECTURE.md,
    "Data flow")."""
    log, _ = simulate(11, 400)
    config = ROULETTE.parse_config({})
    bets: dict[tuple[str, int], dict[str, PlacedBet]] = {}
    checked = 0
    for _type, stream, ev in log:
        if isinstance(ev, BetPlaced):
            bets.setdefault((stream, ev.round), {})[ev.bet_id] = PlacedBet(
                bet_id=ev.bet_id, player=ev.player, bet=ev.bet, amount=ev.amount
            )
        elif isinstance(ev, BetCancelled):
            del bets[(stream, ev.round)][ev.bet_id]
        elif isinstance(ev, Settled):
            placed = list(bets.get((stream, ev.round), {}).values())
            again = ROULETTE.settle(config, placed, ev.outcome)
            assert [(s.bet_id, s.result, s.paid) for s in again] == [
                (s.bet_id, s.result, s.paid) for s in ev.settlements
            ]
            assert ev.paid == sum(s.paid for s in ev.settlements)
            checked += 1
    assert checked > 5


def test_added_wagers_and_part_settlements_count_as_money_moves_say() -> None:
    """A double (``WagerAdded``) counts in the player's ``wagered`` and the table's handle, a
    part settlement (``PartSettled``) in ``paid`` and ``paid_out``, as ``money_moves`` says;
    a round of many steps counts in ``rounds`` by its ``RoundEnded``, not by its parts."""
    from events.tables import BetSettlement, PartSettled, RoundEnded, WagerAdded

    b = Bankrolls()
    stream = "table:bj-1"
    events: list[tuple[str, Event]] = [
        ("cage", ChipsIssued(player="p-1", amount=1000)),
        (stream, BetPlaced(round=1, bet_id="b1", player="p-1", bet={"space": 1}, amount=100)),
        (
            stream,
            WagerAdded(round=1, bet_id="b1", wager_id="b1.d", player="p-1", amount=100, kind="x"),
        ),
        (
            stream,
            PartSettled(
                round=1,
                part="hand:1",
                settlements=(
                    BetSettlement(bet_id="b1", player="p-1", amount=100, result="won", paid=200),
                    BetSettlement(bet_id="b1.d", player="p-1", amount=100, result="won", paid=200),
                ),
                wagered=200,
                paid=400,
            ),
        ),
        (stream, RoundEnded(round=1)),
    ]
    for s, ev in events:
        b.apply(ev.NAME, s, to_data(ev))
    player = b.players["p-1"]
    assert (player["wagered"], player["paid"], player["balance"]) == (200, 400, 1200)
    table = b.tables["bj-1"]
    assert (table["handle"], table["paid_out"], table["house_win"]) == (200, 400, -200)
    assert (table["rounds"], table["bets"]) == (1, 1)
    assert b.organization["house_win"] + player["balance"] == b.organization["issued"]


def test_a_voided_round_takes_its_wagers_out_of_the_handle() -> None:
    """docs/RULES.md "Voiding a round": a wager returned is a stake given back, as a
    cancelled bet is: it leaves ``wagered`` and the handle, and is not ``paid_out``."""
    from events.tables import BetSettlement, RoundVoided

    log: list[tuple[str, str, Event]] = [
        ("ChipsIssued", "cage", ChipsIssued(player="p-1", amount=1000)),
        ("BetPlaced", "table:t", BetPlaced(round=1, bet_id="a", player="p-1", bet={}, amount=300)),
        ("RoundVoided", "table:t", RoundVoided(round=1, reason="misdeal")),
        (
            "Settled",
            "table:t",
            Settled(
                round=1,
                outcome={},
                settlements=(BetSettlement("a", "p-1", 300, "returned", 300),),
                wagered=300,
                paid=300,
            ),
        ),
    ]
    books = project(log)
    assert books.players["p-1"]["balance"] == 1000
    assert books.players["p-1"]["wagered"] == 0 and books.players["p-1"]["paid"] == 0
    table = books.tables["t"]
    assert (table["handle"], table["paid_out"], table["house_win"]) == (0, 0, 0)
    assert books.organization["handle"] == 0 and books.organization["house_win"] == 0
