"""The cyclic garbage collector of a long-running server (docs/OPERATIONS.md, "Garbage
collection").

CPython frees almost everything this server makes by reference counting the moment it is
no longer used; the cyclic collector only finds garbage that refers to itself. Its passes
stop the whole process for as long as they scan, about a microsecond per tracked object
here, and by default it scans what lives on (the bets of open rounds, the commands in
flight) again and again as it moves them from the young to the middle and old generations:
middle passes of 100-150 ms in the closed-loop bench, which landed in every percentile
past the 99th.

So only young passes run while serving: each scans at most what was allocated since the
one before (:data:`YOUNG_OBJECTS`), collects the cycles that died young (nearly all of
them), and what survived is frozen at once (``gc.freeze``: never scanned again, still freed
by reference counting when dropped). A frozen object that later becomes part of a garbage
cycle is not reclaimed until a full pass, which runs only when the frozen heap has grown
by :data:`FULL_PASS_GROWTH` since the last one (amortized: each object is scanned a
bounded number of times), from a task between two turns of the event loop.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import structlog

log = structlog.get_logger(__name__)

YOUNG_OBJECTS = 5_000
"""Tracked allocations (less deallocations) that start a young pass; the pass scans about
that many objects (measured: a few milliseconds)."""
FULL_PASS_GROWTH = 2.0
"""A full pass (unfreeze, collect every generation, freeze again) runs once the frozen heap
is this many times what it was after the last one."""
FULL_PASS_FLOOR = 500_000
"""The frozen heap a full pass waits for at least (a small heap is not worth a pass)."""
FULL_PASS_CHECK_SECONDS = 5.0
"""How often the server looks whether a full pass is due."""
QUIET_YOUNG_PASSES = 2
"""A full pass that is due waits for a quiet moment: a check interval in which at most this
many young passes ran (few allocations: few commands)."""
FULL_PASS_MAX_WAIT_SECONDS = 600.0
"""Longest the server goes without looking whether a full pass is due (and running it)
when no quiet moment comes."""
UNREACHABLE = 1 << 30
"""Thresholds of the middle and old generations: never reached (their passes would find
the generations empty anyway, every young survivor being frozen)."""


class YoungPassesOnly:
    """Installs the plan above: young passes at :data:`YOUNG_OBJECTS`, survivors frozen
    after each, a full pass when the frozen heap has doubled (:meth:`run`)."""

    def __init__(
        self,
        young_objects: int = YOUNG_OBJECTS,
        full_pass_growth: float = FULL_PASS_GROWTH,
        full_pass_floor: int = FULL_PASS_FLOOR,
    ) -> None:
        self.young_objects = young_objects
        self.full_pass_floor = full_pass_floor
        self.full_pass_growth = full_pass_growth
        self.full_passes = 0
        self._full_at = 0
        self._previous: tuple[int, int, int] | None = None

    def install(self) -> None:
        """Collect and freeze what start-up left, then serve with young passes only."""
        gc.collect()
        gc.freeze()
        self._full_at = int(
            max(gc.get_freeze_count(), self.full_pass_floor) * self.full_pass_growth
        )
        self._previous = gc.get_threshold()
        gc.callbacks.append(self._after_pass)
        gc.set_threshold(self.young_objects, UNREACHABLE, UNREACHABLE)

    def uninstall(self) -> None:
        """Back to the thresholds before :meth:`install` (what is frozen stays frozen)."""
        if self._after_pass in gc.callbacks:
            gc.callbacks.remove(self._after_pass)
        if self._previous is not None:
            gc.set_threshold(*self._previous)
            self._previous = None

    def _after_pass(self, phase: str, info: dict[str, Any]) -> None:
        # The pass is over (its lists are settled): freeze whatever survived it. freeze()
        # only moves lists; it collects nothing, so it is safe inside the callback.
        if phase == "stop" and info["generation"] == 0:
            gc.freeze()

    def _next_full_pass(self) -> int:
        return int(max(gc.get_freeze_count(), self.full_pass_floor) * self.full_pass_growth)

    def full_pass_due(self) -> bool:
        return gc.get_freeze_count() >= self._full_at

    def full_pass(self) -> int:
        """Scan everything once: unfreeze, collect every generation, freeze again. Returns
        the objects collected."""
        gc.unfreeze()
        collected = gc.collect()
        gc.freeze()
        self.full_passes += 1
        self._full_at = int(
            max(gc.get_freeze_count(), self.full_pass_floor) * self.full_pass_growth
        )
        return collected

    async def run(self) -> None:
        """Every :data:`FULL_PASS_CHECK_SECONDS`, at a quiet moment (:data:`QUIET_YOUNG_PASSES`)
        or once :data:`FULL_PASS_MAX_WAIT_SECONDS` have passed without one, look whether a
        full pass is due and run it. Looking walks the frozen heap (``gc.get_freeze_count``
        counts it object by object: tens of milliseconds for a large heap), so it too waits
        for a quiet moment; so does the pass, about a microsecond per object of the heap."""
        loop = asyncio.get_running_loop()
        young = gc.get_stats()[0]["collections"]
        looked = loop.time()
        while True:
            await asyncio.sleep(FULL_PASS_CHECK_SECONDS)
            now_young = gc.get_stats()[0]["collections"]
            quiet = now_young - young <= QUIET_YOUNG_PASSES
            young = now_young
            if not quiet and loop.time() - looked < FULL_PASS_MAX_WAIT_SECONDS:
                continue
            looked = loop.time()
            if self.full_pass_due():
                collected = self.full_pass()
                young = gc.get_stats()[0]["collections"]
                log.info("gc_full_pass", collected=collected, frozen=gc.get_freeze_count())
