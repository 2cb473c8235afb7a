"""An actor's mailbox, served fairly across the principals that send to it.

Each principal (a token's role and sub; the server itself is ``system``) has its own FIFO
queue; the actor takes commands from the principals in turn, one each, round-robin. So a
client with hundreds of commands queued at a table delays another client's command by at
most one turn of the ring, not by its whole backlog: a flooder slows down only itself.
The commands of one principal keep their order.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class MailboxFull(Exception):
    """The mailbox holds its ``maxsize`` commands: the table is overloaded, try again."""


class FairMailbox(Generic[T]):
    """A bounded mailbox of per-principal FIFO queues, taken from round-robin."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._queues: dict[str, deque[T]] = {}
        self._turns: deque[str] = deque()
        """The principals with commands queued, in the order of their next turn."""
        self._size = 0
        self._ready = asyncio.Event()

    def qsize(self) -> int:
        return self._size

    def empty(self) -> bool:
        return self._size == 0

    def put_nowait(self, principal: str, item: T) -> None:
        """Queue ``item`` at the end of ``principal``'s queue (MailboxFull when full)."""
        if self._size >= self.maxsize:
            raise MailboxFull
        queue = self._queues.get(principal)
        if queue is None:
            queue = self._queues[principal] = deque()
            self._turns.append(principal)
        queue.append(item)
        self._size += 1
        self._ready.set()

    def take(self, limit: int) -> list[T]:
        """Up to ``limit`` queued items, one per principal per turn, round-robin."""
        taken: list[T] = []
        while len(taken) < limit and self._turns:
            principal = self._turns.popleft()
            queue = self._queues[principal]
            taken.append(queue.popleft())
            if queue:
                self._turns.append(principal)
            else:
                del self._queues[principal]
        self._size -= len(taken)
        if not self._size:
            self._ready.clear()
        return taken

    async def get(self, limit: int) -> list[T]:
        """Wait until something is queued, then :meth:`take` up to ``limit``."""
        while not self._size:
            await self._ready.wait()
        return self.take(limit)
