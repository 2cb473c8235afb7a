"""Sets of serial numbers as sorted runs of consecutive serials. Pure.

Tickets are mostly sold in serial order, so a raffle's sold serials are a few runs however
many tickets it sells: a sale adds to the last run, and a raffle of 100,000 tickets costs
no copying of 100,000 numbers per sale (a frozenset or a tuple would, each sale)."""

from __future__ import annotations

import bisect
from collections.abc import Iterator

Runs = tuple[tuple[int, int], ...]
"""Disjoint runs ``(first, last)``, both included, ascending, never touching (merged)."""


def _first(run: tuple[int, int]) -> int:
    return run[0]


def overlaps(runs: Runs, first: int, last: int) -> bool:
    """Whether any serial of ``first..last`` is in ``runs``."""
    i = bisect.bisect_right(runs, last, key=_first)  # runs starting at or before ``last``
    return i > 0 and runs[i - 1][1] >= first


def contains(runs: Runs, serial: int) -> bool:
    return overlaps(runs, serial, serial)


def add(runs: Runs, first: int, last: int) -> Runs:
    """``runs`` with ``first..last`` added (it must not overlap them)."""
    assert first <= last and not overlaps(runs, first, last)
    i = bisect.bisect_left(runs, first, key=_first)
    lo, hi = i, i
    if i > 0 and runs[i - 1][1] + 1 == first:
        lo, first = i - 1, runs[i - 1][0]
    if i < len(runs) and runs[i][0] == last + 1:
        hi, last = i + 1, runs[i][1]
    return (*runs[:lo], (first, last), *runs[hi:])


def count(runs: Runs) -> int:
    return sum(last - first + 1 for first, last in runs)


def each(runs: Runs) -> Iterator[int]:
    """Every serial, ascending."""
    for first, last in runs:
        yield from range(first, last + 1)
