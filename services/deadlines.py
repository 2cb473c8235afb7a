"""Every command gets its reply within one deadline (docs/OPERATIONS.md, "The outage
deadline"): a reply not given by then is ``unavailable``.

One sweeper for all commands instead of a timer each: every command waits the same time,
so their deadlines fall in the order they came, and a queue kept in that order is swept
from its front a few times a second. The commands that come within one sweep of each
other share an entry of the queue (their deadline is the last one's, at most a sweep
later than their own: the sweeper's own granularity), so a command adds no object of
its own to the queue, only its future to a list.

Nearly every command is answered long before its deadline, and a future kept in the
queue keeps its reply alive with it: at thousands of commands a second that is tens of
thousands of objects held for the whole deadline, which the collector scans again and
again. So the sweeper also drops the answered futures from each entry, once when it is
:data:`COMPACT_AGES` old and again later (each future is looked at a bounded number of
times); only the commands still unanswered stay until their deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any

SWEEP_SECONDS = 0.1
"""How often the sweeper looks, and how far apart the commands sharing a queue entry
come: a late reply comes at most twice this after the command's own deadline."""
COMPACT_AGES = (0.3, 1.5)
"""Ages (seconds since its last command was watched) at which an entry drops its answered
futures: the first frees most replies at a few milliseconds of latency, the second those
of a server that answers slowly under load."""


class _Due:
    """Futures watched within one sweep of each other, and the deadline of the last one."""

    __slots__ = ("compacted", "due", "first_due", "futures")

    def __init__(self, due: float, future: asyncio.Future[Any]) -> None:
        self.first_due = due
        self.due = due
        self.futures = [future]
        self.compacted = 0
        """How many of :data:`COMPACT_AGES` the entry has passed."""


class Deadlines:
    """Futures to answer with ``expired()`` once ``seconds`` have passed, if nothing else
    answered them first."""

    def __init__(
        self,
        seconds: float,
        expired: Callable[[float], Any],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self.expired = expired
        """The reply of a future whose deadline passed (given ``seconds``)."""
        self.clock = clock
        self._queue: deque[_Due] = deque()
        self._watched = 0

    def watch(self, future: asyncio.Future[Any]) -> None:
        """Answer ``future`` by the deadline, unless it is answered before. (An actor
        skips a command answered this way if it has not started on it; one it had sent to
        Redis may still be applied, and its retry with the same id gets the stored reply.)"""
        if future.done():
            return
        due = self.clock() + self.seconds
        queue = self._queue
        self._watched += 1
        if queue and due - queue[-1].first_due < SWEEP_SECONDS:
            last = queue[-1]
            last.due = due
            last.futures.append(future)
        else:
            queue.append(_Due(due, future))

    def sweep(self) -> int:
        """Answer every watched future whose deadline passed; how many were answered."""
        now = self.clock()
        queue = self._queue
        answered = 0
        while queue and queue[0].due <= now:
            entry = queue.popleft()
            self._watched -= len(entry.futures)
            for future in entry.futures:
                if not future.done():
                    future.set_result(self.expired(self.seconds))
                    answered += 1
        self._compact(now)
        return answered

    def _compact(self, now: float) -> None:
        """Drop the answered futures of the entries that have reached their next
        :data:`COMPACT_AGES` (the queue is in deadline order, so the first entry younger
        than the first age ends the look)."""
        last = len(COMPACT_AGES)
        for entry in self._queue:
            age = now - (entry.due - self.seconds)  # since its last command was watched
            if age < COMPACT_AGES[0]:
                break
            if entry.compacted == last or age < COMPACT_AGES[entry.compacted]:
                continue
            while entry.compacted < last and age >= COMPACT_AGES[entry.compacted]:
                entry.compacted += 1
            kept = [future for future in entry.futures if not future.done()]
            self._watched -= len(entry.futures) - len(kept)
            entry.futures = kept

    def __len__(self) -> int:
        return self._watched

    async def run(self) -> None:
        """Sweep every ``SWEEP_SECONDS`` until cancelled."""
        while True:
            await asyncio.sleep(SWEEP_SECONDS)
            self.sweep()
