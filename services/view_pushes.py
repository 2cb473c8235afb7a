"""Coalesced pushes of the views that change with every event (a table's, a bankroll's):
at most one push per view every :data:`VIEW_PUSH_SECONDS`, with the newest data, and only
when the data changed. A busy table then costs its watchers a few pushes a second, however
many bets it takes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

log = structlog.get_logger(__name__)

VIEW_PUSH_SECONDS = 0.1
"""The longest a coalesced view waits before its change is pushed (and the most often it
is pushed): a tenth of a second is live to a reader and bounds what a flood of events
costs the server."""

Key = tuple[str, str]


class CoalescedPushes:
    """Marks views as changed and pushes each one once per interval.

    ``compute(kind, key)`` gives a view's data (awaited: a view read from another process's
    stream folds it first); ``listeners(kind, key)`` the callables to push it to."""

    def __init__(
        self,
        compute: Callable[[str, str], Awaitable[dict[str, Any] | None]],
        listeners: Callable[[str, str], tuple[Callable[[dict[str, Any] | None], None], ...]],
        interval: float = VIEW_PUSH_SECONDS,
    ) -> None:
        self._compute = compute
        self._listeners = listeners
        self.interval = interval
        self._due: set[Key] = set()
        self._last: dict[Key, dict[str, Any] | None] = {}
        self._task: asyncio.Task[None] | None = None

    def changed(self, kind: str, key: str) -> None:
        """The view may have changed: push it within the interval."""
        self._due.add((kind, key))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush(), name="view-pushes")

    def forget(self, kind: str, key: str) -> None:
        """Nobody watches the view any more."""
        self._last.pop((kind, key), None)
        self._due.discard((kind, key))

    async def _flush(self) -> None:
        await asyncio.sleep(self.interval)
        due, self._due = self._due, set()
        for kind, key in due:
            try:
                data = await self._compute(kind, key)
            except Exception:  # one view that cannot be read must not stop the others
                log.exception("view_not_pushed", view=kind, key=key)
                continue
            listeners = self._listeners(kind, key)
            if not listeners or self._last.get((kind, key), ...) == data:
                continue
            self._last[(kind, key)] = data
            for listener in listeners:
                listener(data)
        if self._due:  # changes that came while this flush awaited: the next interval
            self._task = asyncio.get_running_loop().create_task(self._flush(), name="view-pushes")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
