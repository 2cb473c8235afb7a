"""The house result over time: one point a minute, per occasion, for the ops dashboard's
chart; and when each table closed.

Per occasion (the id of the last ``OccasionStarted`` folded; ``""`` before the first):
``points``, a list of ``[minute, house_win]`` where ``minute`` is the unix ms at the start of
a minute in which money moved at a table and ``house_win`` the occasion's house result
(cents) at the end of that minute, as the bankroll projection counts it (every wager in,
every payout and returned stake out; chips sold and cashed out at the cage move no house
result). The last point's value therefore equals the occasion's ``house_win`` in
``GET /api/bankrolls``.

The series is bounded: at most :data:`MAX_POINTS` points per occasion. When one more
minute would pass it, the oldest half of the points is merged two by two, each pair into
its later point (the result at the end of the pair's later minute), so the older part of
a long series loses resolution and the recent part keeps all of it. At most :data:`OCCASIONS_KEPT`
occasions are kept (the oldest go). Both rules depend only on the events folded: the
series rebuilds identically.

``closings``: each table closed (by ``TableClosed``, or a merchandise wheel by
``PrizeLimitReached``), in log order, with the reason and when (the event's time); the
first closing of a table only.

A minute is read from the event's occurred-at; an event stamped earlier than the last point
(clocks of two server processes a moment apart) counts in the last point, so minutes only
go forward.

A pure fold of the org log: the same events give the same state, live or by replay.
"""

from __future__ import annotations

import copy
from typing import Any

from events.money import MONEY_EVENTS, SINGLE_MOVES, data_moves
from services.aggregates import TABLE_PREFIX

MINUTE_MS = 60_000
"""The width of one point of the series (unix ms)."""
MAX_POINTS = 1440
"""Points kept per occasion: a day of minutes (an occasion lasts at most 14 hours, so a
night's series is merged only if its clock runs far ahead)."""
OCCASIONS_KEPT = 16
"""Occasions whose series are kept (the dashboard shows the current one)."""
NO_OCCASION = ""
"""The series' key before any ``OccasionStarted``."""
CAGE_MOVES = frozenset({"issued", "redeemed"})
"""Kinds of money move that change no house result (chips sold and cashed out)."""
CLOSINGS = {"TableClosed": "closed", "PrizeLimitReached": "prize_limit"}
"""The events that close a table, and the reason each gives."""


def merge_oldest(points: list[list[int]]) -> list[list[int]]:
    """``points`` with their oldest half merged two by two, each pair into its later point
    (an odd point left at the half's end stays as it is): a full series becomes three
    quarters as long, and each merge coarsens only the older part (deterministic)."""
    half = len(points) // 2
    pairs = half // 2
    return [points[2 * i + 1] for i in range(pairs)] + points[2 * pairs :]


class Timeline:
    """The house-result timeline projection (see the module docstring)."""

    name = "house_result"
    types = MONEY_EVENTS | {"OccasionStarted", *CLOSINGS}
    """The event types :meth:`apply` folds (the runner skips the others)."""

    def __init__(self) -> None:
        self.occasion = NO_OCCASION
        self.series: dict[str, list[list[int]]] = {}
        """Occasion id -> its points ``[minute, house_win]``, oldest first."""
        self.house_win: dict[str, int] = {}
        """Occasion id -> its house result so far (cents)."""
        self.closings: list[dict[str, Any]] = []
        self._closed: set[str] = set()

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        single = SINGLE_MOVES.get(type_)
        if single is not None:
            kind, sign = single
            if kind not in CAGE_MOVES:
                self._moved(-sign * data["amount"], ts)
        elif type_ in MONEY_EVENTS:
            moved = -sum(m.cents for m in data_moves(type_, data) if m.kind not in CAGE_MOVES)
            if moved:
                self._moved(moved, ts)
        elif type_ == "OccasionStarted":
            self._start(data["occasion"])
        elif type_ in CLOSINGS and stream.startswith(TABLE_PREFIX):
            table = stream.removeprefix(TABLE_PREFIX)
            if table not in self._closed:
                self._closed.add(table)
                self.closings.append({"table": table, "reason": CLOSINGS[type_], "at": ts})

    def _start(self, occasion: str) -> None:
        self.occasion = occasion
        if occasion not in self.series:
            self.series[occasion] = []
            self.house_win.setdefault(occasion, 0)
            while len(self.series) > OCCASIONS_KEPT:
                oldest = next(iter(self.series))
                del self.series[oldest]
                self.house_win.pop(oldest, None)

    def _moved(self, cents: int, ts: int) -> None:
        """The house result moved by ``cents`` at ``ts``: the current minute's point."""
        occ = self.occasion
        points = self.series.get(occ)
        if points is None:
            self._start(occ)
            points = self.series[occ]
        total = self.house_win[occ] = self.house_win.get(occ, 0) + cents
        minute = ts - ts % MINUTE_MS
        if points and minute <= points[-1][0]:
            points[-1][1] = total
            return
        points.append([minute, total])
        if len(points) > MAX_POINTS:
            self.series[occ] = merge_oldest(points)

    def points(self, occasion: str | None = None) -> list[list[int]]:
        """An occasion's series (the current occasion's by default), as a copy."""
        return [
            list(p) for p in self.series.get(self.occasion if occasion is None else occasion, [])
        ]

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy(
            {
                "occasion": self.occasion,
                "series": self.series,
                "house_win": self.house_win,
                "closings": self.closings,
            }
        )

    def restore(self, data: dict[str, Any]) -> None:
        data = copy.deepcopy(data)
        self.occasion = data["occasion"]
        self.series = data["series"]
        self.house_win = data["house_win"]
        self.closings = data["closings"]
        self._closed = {c["table"] for c in self.closings}
