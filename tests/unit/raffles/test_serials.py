"""Sold serials as runs (services/raffles/serials.py) behave exactly like a set of serials."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from services.raffles import serials as runs


def test_runs_merge_when_they_touch() -> None:
    r = runs.add((), 1, 3)
    r = runs.add(r, 7, 9)
    assert r == ((1, 3), (7, 9))
    assert runs.add(r, 4, 6) == ((1, 9),)
    assert runs.add(r, 5, 5) == ((1, 3), (5, 5), (7, 9))
    assert runs.add(r, 10, 12) == ((1, 3), (7, 12))
    assert runs.count(r) == 6 and list(runs.each(r)) == [1, 2, 3, 7, 8, 9]
    assert runs.overlaps(r, 3, 6) and runs.overlaps(r, 0, 1) and not runs.overlaps(r, 4, 6)
    assert runs.contains(r, 8) and not runs.contains(r, 10)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 60), st.integers(1, 5)), max_size=40))
def test_runs_are_a_set_of_serials(sales: list[tuple[int, int]]) -> None:
    r: runs.Runs = ()
    model: set[int] = set()
    for first, n in sales:
        last = first + n - 1
        wanted = set(range(first, last + 1))
        assert runs.overlaps(r, first, last) == bool(wanted & model)
        if not wanted & model:
            r = runs.add(r, first, last)
            model |= wanted
        assert list(runs.each(r)) == sorted(model) and runs.count(r) == len(model)
        assert all(a[1] + 1 < b[0] for a, b in itertools.pairwise(r))
