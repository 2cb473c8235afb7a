"""Every command answered within the deadline (services/deadlines.py): one sweeper
answers, in arrival order, the futures nothing answered in time, and leaves the others."""

from __future__ import annotations

import asyncio
import weakref

from services.deadlines import COMPACT_AGES, Deadlines


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


async def test_an_answered_future_is_let_go_long_before_its_deadline() -> None:
    """The queue drops the futures answered meanwhile at each of COMPACT_AGES (they would
    otherwise keep their replies alive for the whole deadline); the others stay watched."""
    now = [0.0]
    deadlines = Deadlines(5.0, lambda s: "late", clock=lambda: now[0])
    loop = asyncio.get_running_loop()
    quick, slow, never = loop.create_future(), loop.create_future(), loop.create_future()
    for future in (quick, slow, never):
        deadlines.watch(future)
    quick_ref, slow_ref = weakref.ref(quick), weakref.ref(slow)
    quick.set_result("ok")
    del quick
    now[0] = COMPACT_AGES[0] - 0.01
    deadlines.sweep()
    assert quick_ref() is not None and len(deadlines) == 3  # too young to look at
    now[0] = COMPACT_AGES[0]
    assert deadlines.sweep() == 0
    assert quick_ref() is None and len(deadlines) == 2
    slow.set_result("ok")
    del slow
    now[0] = COMPACT_AGES[1] - 0.01
    deadlines.sweep()
    assert slow_ref() is not None  # answered after the first look: kept until the second
    now[0] = COMPACT_AGES[1]
    deadlines.sweep()
    assert slow_ref() is None and len(deadlines) == 1
    now[0] = 5.0
    assert deadlines.sweep() == 1 and never.result() == "late" and len(deadlines) == 0


async def test_each_entry_is_let_go_of_at_its_own_age() -> None:
    """An older entry waiting for its second look does not keep a younger one from its
    first."""
    now = [0.0]
    deadlines = Deadlines(5.0, lambda s: "late", clock=lambda: now[0])
    loop = asyncio.get_running_loop()
    old, young = loop.create_future(), loop.create_future()
    deadlines.watch(old)
    now[0] = COMPACT_AGES[0]
    deadlines.sweep()  # the old entry's first look (nothing answered yet)
    deadlines.watch(young)
    young_ref = weakref.ref(young)
    young.set_result("ok")
    del young
    now[0] = 2 * COMPACT_AGES[0]  # the young entry's first age, the old one's second not yet
    assert now[0] < COMPACT_AGES[1]
    deadlines.sweep()
    assert young_ref() is None and len(deadlines) == 1 and not old.done()
