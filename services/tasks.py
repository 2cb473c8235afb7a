"""Stopping the server's background tasks, bounded in time.

The Redis client can turn a cancellation that lands inside one of its calls into a
``ConnectionError`` (or swallow it). A loop that retries on ``ConnectionError`` would then
carry on after it was told to stop, and a shutdown that waits for it would wait forever.
Two defences: the loops check :func:`raise_if_cancelled` where they handle a store error,
and :func:`cancel_and_wait` cancels again until each task has ended, within a bound.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence
from typing import Any

import structlog

log = structlog.get_logger()

CALLBACK_CONTEXT = contextvars.Context()
"""The one context the per-command callbacks run in (``add_done_callback`` and
``call_soon`` with ``context=``): given none, asyncio copies the current context for each
one, a new object per command for the garbage collector to scan. They set no context
variable, and the loop runs one callback at a time, so sharing one is safe."""

RECANCEL_SECONDS = 0.25
"""How long a cancelled task has to end before it is cancelled again."""
STOP_WITHIN_SECONDS = 15.0
"""The longest a shutdown waits for its tasks; one still running then is logged and left."""


def raise_if_cancelled() -> None:
    """Raise ``CancelledError`` if the running task is being cancelled (for a loop that
    just handled an error the Redis client may have made out of its cancellation)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(
    tasks: Sequence[asyncio.Task[Any]], *, within: float = STOP_WITHIN_SECONDS
) -> None:
    """Cancel ``tasks`` and wait until each has ended, cancelling again every
    ``RECANCEL_SECONDS`` a task that carried on. A task's own failure is logged, not
    raised: the caller is stopping, and the other tasks still have to stop."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    pending = {t for t in tasks if not t.done()}
    while pending:
        for task in pending:
            task.cancel()
        remaining = deadline - loop.time()
        if remaining <= 0:
            log.error("tasks_not_stopped", tasks=sorted(t.get_name() for t in pending))
            break
        _, pending = await asyncio.wait(pending, timeout=min(RECANCEL_SECONDS, remaining))
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            log.warning(
                "task_failed_before_stop",
                task=task.get_name(),
                error=repr(task.exception()),
            )
