"""The house-result timeline (projections/timeline.py): one point a minute per occasion,
agreeing with the bankroll projection, bounded, and rebuilt identically."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from events.base import to_data
from projections.timeline import MAX_POINTS, MINUTE_MS, OCCASIONS_KEPT, Timeline, merge_oldest
from tests.unit.projections.test_bankroll import project, simulate

T0 = 1_795_000_020_000  # a whole minute
T = "table:roulette-1"


def bet(amount: int, player: str = "p-1") -> dict[str, Any]:
    return {"round": 1, "bet_id": "b", "player": player, "bet": {}, "amount": amount}


def settled(*payouts: tuple[str, int, str]) -> dict[str, Any]:
    return {
        "round": 1,
        "outcome": {},
        "settlements": [
            {"bet_id": f"b{i}", "player": p, "amount": 0, "result": r, "paid": paid}
            for i, (p, paid, r) in enumerate(payouts)
        ],
        "wagered": 0,
        "paid": sum(p for _pl, p, _r in payouts),
    }


def test_one_point_a_minute_with_the_house_result_at_its_end() -> None:
    t = Timeline()
    t.apply("OccasionStarted", "license", {"occasion": "n1", "name": "N"}, T0)
    t.apply("ChipsIssued", "cage", {"player": "p-1", "amount": 10_000}, T0 + 1)
    assert t.points() == []  # the cage moves no house result
    t.apply("BetPlaced", T, bet(500), T0 + 1_000)
    t.apply("BetPlaced", T, bet(200), T0 + 59_999)
    assert t.points() == [[T0, 700]]
    t.apply("Settled", T, settled(("p-1", 1_000, "won"), ("p-2", 0, "lost")), T0 + MINUTE_MS)
    t.apply("BetCancelled", T, bet(100), T0 + MINUTE_MS + 5)
    t.apply("BetPlaced", T, bet(300), T0 + 5 * MINUTE_MS + 1)
    t.apply("Settled", T, settled(("p-1", 300, "returned")), T0 + 5 * MINUTE_MS + 2)
    # A quiet minute has no point; a payout and a returned stake take the house result down.
    assert t.points() == [[T0, 700], [T0 + MINUTE_MS, -400], [T0 + 5 * MINUTE_MS, -400]]
    assert t.house_win == {"n1": -400}


def test_an_event_stamped_before_the_last_point_counts_in_it() -> None:
    t = Timeline()
    t.apply("BetPlaced", T, bet(100), T0 + 2 * MINUTE_MS)
    t.apply("BetPlaced", T, bet(100), T0)  # another process's clock, a moment behind
    assert t.points() == [[T0 + 2 * MINUTE_MS, 200]]


def test_each_occasion_has_its_own_series_and_closings_are_kept_once() -> None:
    t = Timeline()
    t.apply("BetPlaced", T, bet(100), T0)  # before any occasion started
    t.apply("OccasionStarted", "license", {"occasion": "n1", "name": "N"}, T0 + 1)
    t.apply("BetPlaced", T, bet(50), T0 + 2)
    t.apply("PrizeLimitReached", "table:prizes", {"round": 1}, T0 + 3)
    t.apply("TableClosed", "table:prizes", {"reason": "x"}, T0 + 4)
    t.apply("TableClosed", T, {"reason": "x"}, T0 + 5)
    assert t.points("") == [[T0, 100]]
    assert t.points() == t.points("n1") == [[T0, 50]]
    assert t.closings == [
        {"table": "prizes", "reason": "prize_limit", "at": T0 + 3},
        {"table": "roulette-1", "reason": "closed", "at": T0 + 5},
    ]
    for i in range(OCCASIONS_KEPT + 3):
        t.apply("OccasionStarted", "license", {"occasion": f"o{i}", "name": "N"}, T0)
    assert len(t.series) == OCCASIONS_KEPT and "n1" not in t.series


def test_the_series_is_bounded_by_merging_its_oldest_pairs() -> None:
    t = Timeline()
    for minute in range(3 * MAX_POINTS):
        t.apply("BetPlaced", T, bet(1), T0 + minute * MINUTE_MS)
        assert len(t.points()) <= MAX_POINTS
    points = t.points()
    # The newest minutes are all there; the last point is the whole result.
    assert points[-1] == [T0 + (3 * MAX_POINTS - 1) * MINUTE_MS, 3 * MAX_POINTS]
    assert [p[0] for p in points[-100:]] == [
        T0 + m * MINUTE_MS for m in range(3 * MAX_POINTS - 100, 3 * MAX_POINTS)
    ]
    # Each merged point keeps its value: the cumulative result at the end of its minute.
    assert all(v == (m - T0) // MINUTE_MS + 1 for m, v in points)
    assert [p[0] for p in points] == sorted({p[0] for p in points})


def test_merging_keeps_the_later_point_of_each_pair() -> None:
    points = [[i, i * 10] for i in range(9)]
    assert merge_oldest(points) == [[1, 10], [3, 30], [4, 40], [5, 50], [6, 60], [7, 70], [8, 80]]


@settings(derandomize=True, max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), steps=st.integers(1, 300))
def test_it_agrees_with_the_bankrolls_and_rebuilds_identically(seed: int, steps: int) -> None:
    log, _ = simulate(seed, steps)
    first, second = Timeline(), Timeline()
    for i, (type_, stream, ev) in enumerate(log):
        ts = T0 + i * 7_000  # a few events a minute
        first.apply(type_, stream, to_data(ev), ts)
        second.apply(type_, stream, to_data(ev), ts)
    assert first.snapshot() == second.snapshot()
    bankrolls = project(log)
    occasion_result = bankrolls.occasions["n1"]["house_win"]
    assert first.house_win["n1"] == occasion_result
    points = first.points("n1")
    assert (points[-1][1] if points else 0) == occasion_result
    restored = Timeline()
    restored.restore(first.snapshot())
    assert restored.snapshot() == first.snapshot()
    restored.apply("TableClosed", "table:t1", {"reason": "x"}, T0)
    restored.apply("TableClosed", "table:t1", {"reason": "x"}, T0)
    assert len(restored.closings) == len(first.closings) + 1
