"""How an actor answers a command (services/actor.py, ``answer``): its reply is set, and
the done callback it may run itself runs at once, exactly once; a callback's fault is the
callback's own."""

from __future__ import annotations

import asyncio
from typing import Any

from structlog.testing import capture_logs

from services.actor import Submission, answer


def _submission(hook: Any = None) -> Submission[Any]:
    sub: Submission[Any] = Submission(
        key="player:p-1/c-1",
        fingerprint="f",
        command_id="c-1",
        actor="player:p-1",
        command=None,
        on_answer=hook,
    )
    if hook is not None:
        sub.future.add_done_callback(hook)
    return sub


async def test_the_callback_runs_at_once_and_only_once() -> None:
    seen: list[Any] = []
    sub = _submission(lambda f: seen.append(f.result()))
    answer(sub, {"ok": True, "result": {}})
    assert seen == [{"ok": True, "result": {}}]  # in this turn, not the next
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert len(seen) == 1  # taken off the done callbacks: not run again


async def test_a_future_answered_already_is_left_as_it_was() -> None:
    seen: list[Any] = []
    sub = _submission(lambda f: seen.append(f.result()))
    sub.future.set_result({"ok": False, "error": {"code": "unavailable"}})  # the deadline
    answer(sub, {"ok": True, "result": {}})
    assert sub.future.result()["ok"] is False
    await asyncio.sleep(0)
    assert seen == [{"ok": False, "error": {"code": "unavailable"}}]  # as a done callback


async def test_a_submission_without_a_callback_only_gets_its_result() -> None:
    sub = _submission()
    answer(sub, {"ok": True, "result": {"n": 1}})
    assert sub.future.result() == {"ok": True, "result": {"n": 1}}


async def test_a_failing_callback_is_logged_and_fails_nothing_else() -> None:
    def broken(_f: asyncio.Future[Any]) -> None:
        raise RuntimeError("the socket's writer broke")

    seen: list[Any] = []
    first, second = _submission(broken), _submission(lambda f: seen.append(f.result()))
    with capture_logs() as logs:
        answer(first, {"ok": True, "result": {}})  # does not raise
    answer(second, {"ok": True, "result": {}})
    assert first.future.result() == {"ok": True, "result": {}}
    assert seen == [{"ok": True, "result": {}}]
    assert [(e["event"], e["command_id"]) for e in logs] == [("reply_not_handed_on", "c-1")]
