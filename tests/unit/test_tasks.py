"""Stopping background tasks: a task that swallowed its cancellation (as the Redis client
can make a retry loop do) is still stopped, one that never stops cannot hang the shutdown,
and a task's own failure does not stop the others from being stopped."""

from __future__ import annotations

import asyncio

import pytest
import structlog

from services.tasks import cancel_and_wait, raise_if_cancelled


async def _swallows_cancellations(times: int, swallowed: list[int]) -> None:
    """A retry loop whose client turned ``times`` cancellations into a handled error."""
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            if len(swallowed) >= times:
                raise
            swallowed.append(1)  # "a ConnectionError": handled, and the loop carries on


async def test_a_task_that_swallowed_its_cancellation_is_cancelled_again_until_it_ends() -> None:
    swallowed: list[int] = []
    task = asyncio.create_task(_swallows_cancellations(3, swallowed))
    await asyncio.sleep(0)
    await asyncio.wait_for(cancel_and_wait([task], within=5), 5)
    assert task.cancelled()
    assert len(swallowed) == 3


async def test_a_task_that_never_ends_is_left_after_the_bound_and_logged() -> None:
    stop = asyncio.Event()

    async def stubborn() -> None:
        while not stop.is_set():
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                continue

    task = asyncio.create_task(stubborn(), name="stubborn")
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    started = loop.time()
    with structlog.testing.capture_logs() as logs:
        await cancel_and_wait([task], within=0.6)
    assert 0.5 <= loop.time() - started < 3
    assert not task.done()
    assert {"event": "tasks_not_stopped", "tasks": ["stubborn"], "log_level": "error"} in logs
    stop.set()
    task.cancel()
    await asyncio.wait([task], timeout=1)
    assert task.done()


async def test_a_failed_task_is_logged_and_the_others_still_stop() -> None:
    async def fails() -> None:
        raise AttributeError("'NoneType' object has no attribute 'writelines'")

    failed = asyncio.create_task(fails(), name="inbox")
    sleeper = asyncio.create_task(asyncio.sleep(3600), name="tail")
    await asyncio.sleep(0)
    with structlog.testing.capture_logs() as logs:
        await cancel_and_wait([failed, sleeper])
    assert sleeper.cancelled()
    [warning] = [e for e in logs if e["event"] == "task_failed_before_stop"]
    assert warning["task"] == "inbox" and "writelines" in warning["error"]


async def test_raise_if_cancelled_raises_only_in_a_task_being_cancelled() -> None:
    raise_if_cancelled()  # not being cancelled: nothing happens
    reached: list[str] = []

    async def loop_that_checks() -> None:
        while True:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                reached.append("handled")  # what the client made of it
            raise_if_cancelled()

    task = asyncio.create_task(loop_that_checks())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert reached == ["handled"]
