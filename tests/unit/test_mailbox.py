"""The actor's mailbox (services/mailbox.py): bounded, per-sender FIFO, taken round-robin
so that one flooding sender delays another by one turn at most."""

from __future__ import annotations

import asyncio

import pytest

from services.mailbox import FairMailbox, MailboxFull


async def test_senders_are_served_in_turn() -> None:
    box: FairMailbox[str] = FairMailbox(100)
    for i in range(5):
        box.put_nowait("flood", f"f{i}")
    box.put_nowait("good", "g0")
    box.put_nowait("other", "o0")
    box.put_nowait("good", "g1")
    assert box.take(4) == ["f0", "g0", "o0", "f1"]
    assert box.take(10) == ["g1", "f2", "f3", "f4"]
    assert box.empty()


async def test_each_senders_order_is_kept() -> None:
    box: FairMailbox[int] = FairMailbox(1000)
    for i in range(300):
        box.put_nowait(f"s{i % 3}", i)
    taken = box.take(1000)
    for s in range(3):
        mine = [i for i in taken if i % 3 == s]
        assert mine == sorted(mine)


async def test_the_mailbox_is_bounded() -> None:
    box: FairMailbox[int] = FairMailbox(3)
    for i in range(3):
        box.put_nowait("a", i)
    with pytest.raises(MailboxFull):
        box.put_nowait("b", 9)
    assert box.qsize() == 3
    box.take(1)
    box.put_nowait("b", 9)
    assert box.take(5) == [1, 9, 2]


async def test_get_waits_for_a_command() -> None:
    box: FairMailbox[str] = FairMailbox(10)
    waiter = asyncio.ensure_future(box.get(5))
    await asyncio.sleep(0)
    assert not waiter.done()
    box.put_nowait("a", "x")
    assert await asyncio.wait_for(waiter, 1) == ["x"]
    assert box.empty()
