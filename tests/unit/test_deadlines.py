"""Every command answered within the deadline (services/deadlines.py): one sweeper
answers, in arrival order, the futures nothing answered in time, and leaves the others."""

from __future__ import annotations

import asyncio

from services.deadlines import Deadlines


async def test_a_future_not_answered_in_time_gets_the_expired_reply() -> None:
    now = [0.0]
    deadlines = Deadlines(5.0, lambda s: {"late": s}, clock=lambda: now[0])
    loop = asyncio.get_running_loop()
    late, answered, later = loop.create_future(), loop.create_future(), loop.create_future()
    deadlines.watch(late)
    deadlines.watch(answered)
    now[0] = 1.0
    deadlines.watch(later)
    answered.set_result("ok")
    now[0] = 4.9
    assert deadlines.sweep() == 0 and not late.done()
    now[0] = 5.0
    assert deadlines.sweep() == 1
    assert late.result() == {"late": 5.0}
    assert answered.result() == "ok"  # answered in time: left as it was
    assert not later.done() and len(deadlines) == 1
    now[0] = 6.0
    assert deadlines.sweep() == 1 and later.result() == {"late": 5.0}
    assert len(deadlines) == 0


async def test_an_answered_future_is_not_even_queued() -> None:
    deadlines = Deadlines(5.0, lambda s: None)
    done = asyncio.get_running_loop().create_future()
    done.set_result(1)
    deadlines.watch(done)
    assert len(deadlines) == 0


async def test_futures_watched_within_one_sweep_expire_together_never_before_their_own() -> None:
    now = [0.0]
    deadlines = Deadlines(5.0, lambda s: "late", clock=lambda: now[0])
    loop = asyncio.get_running_loop()
    first, second, apart = loop.create_future(), loop.create_future(), loop.create_future()
    deadlines.watch(first)
    now[0] = 0.05  # within one sweep of the first: they share its entry
    deadlines.watch(second)
    now[0] = 0.3  # a sweep and more later: an entry of its own
    deadlines.watch(apart)
    now[0] = 5.0
    assert deadlines.sweep() == 0  # the first's deadline, but not yet the second's
    assert not first.done() and not second.done()
    now[0] = 5.05
    assert deadlines.sweep() == 2 and first.result() == second.result() == "late"
    assert not apart.done() and len(deadlines) == 1
    now[0] = 5.3
    assert deadlines.sweep() == 1 and len(deadlines) == 0
