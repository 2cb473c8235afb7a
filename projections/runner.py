"""The checkpointed runner: tails the org log and feeds every projection, exactly once.

The projections' states and the id of the last org-log entry folded are saved together in
one value (one SET), so a process that dies between two steps resumes from a state that
has folded exactly the events up to its checkpoint, and folds each later event once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgpack
import redis.exceptions
import structlog

from projections.base import Projection
from services.store import keys
from services.store.redis_store import EventStore

log = structlog.get_logger(__name__)

CHECKPOINT = "runner"
BATCH = 3000
"""Org-log entries fetched per read (1,000 beats 10,000 for decode + fold, DESIGN.md)."""


def fold_raw(projections: Sequence[Projection], entries: Sequence[tuple[str, bytes]]) -> None:
    """Fold org-log entries (log id, packed envelope) into each projection."""
    fold_payloads(projections, [raw for _log_id, raw in entries])


def fold_payloads(projections: Sequence[Projection], payloads: Sequence[bytes]) -> None:
    """Decode only what the folds need (type, stream, data, occurred-at) and apply it to
    each projection that folds that event type (its ``types``; all when it has none)."""
    unpackb = msgpack.unpackb
    if len(projections) == 1:
        only = projections[0].apply
        for raw in payloads:
            f = unpackb(raw, raw=False)
            only(f[1], f[3], f[11], f[5])
        return
    routes: dict[str, tuple[Callable[[str, str, dict[str, Any], int], None], ...]] = {}
    for raw in payloads:
        f = unpackb(raw, raw=False)
        type_ = f[1]
        applies = routes.get(type_)
        if applies is None:
            applies = routes[type_] = tuple(
                p.apply for p in projections if (t := folds(p)) is None or type_ in t
            )
        for apply in applies:
            apply(type_, f[3], f[11], f[5])


def folds(projection: Projection) -> frozenset[str] | None:
    """The event types a projection folds (its ``types`` attribute), or None for all."""
    types: frozenset[str] | None = getattr(projection, "types", None)
    return types


class ProjectionRunner:
    """Runs projections over the org log with an atomic checkpoint."""

    def __init__(
        self,
        store: EventStore,
        projections: Sequence[Projection],
        *,
        checkpoint_every: float = 0.5,
        checkpoint: str = CHECKPOINT,
        on_entries: Callable[[Sequence[tuple[str, bytes]]], None] | None = None,
    ) -> None:
        self.store = store
        self.projections = list(projections)
        self.checkpoint_every = checkpoint_every
        self.last_id = "0"
        self.saved_id = "0"
        self.folded = 0
        self._key = keys.projection(store.org, checkpoint)
        self.on_entries = on_entries
        """Called with each page the live tail folds, in log order (feeds log subscribers)."""
        self.loaded = False

    async def load_checkpoint(self) -> None:
        self.loaded = True
        raw = await self.store.redis.get(self._key)
        if raw is None:
            return
        saved: dict[str, Any] = msgpack.unpackb(raw, raw=False)
        if any(p.name not in saved["states"] for p in self.projections):
            # A projection this checkpoint does not know (new in this version) must see the
            # whole log: start every projection from the beginning.
            log.info("checkpoint_ignored", reason="a projection is missing from it")
            return
        for p in self.projections:
            p.restore(saved["states"][p.name])
        self.last_id = self.saved_id = saved["last_id"]

    async def save_checkpoint(self) -> None:
        value = {
            "last_id": self.last_id,
            "states": {p.name: p.snapshot() for p in self.projections},
        }
        await self.store.redis.set(self._key, msgpack.packb(value, use_bin_type=True))
        self.saved_id = self.last_id

    async def catch_up(self) -> int:
        """Fold everything in the log now; the next page is fetched while this one folds."""
        count = 0
        fetch = asyncio.ensure_future(self.store.log_payloads(self.last_id, BATCH))
        while True:
            payloads, last_id = await fetch
            if not payloads:
                break
            self.last_id = last_id
            fetch = asyncio.ensure_future(self.store.log_payloads(self.last_id, BATCH))
            fold_payloads(self.projections, payloads)
            count += len(payloads)
        self.folded += count
        return count

    async def run(self, block_ms: int = 200) -> None:
        """Fold forever: catch up, then tail; checkpoint at most every ``checkpoint_every`` s."""
        if not self.loaded:
            await self.load_checkpoint()
        await self.catch_up()
        last_save = time.monotonic()
        while True:
            try:
                await self._step(block_ms)
                if (
                    self.last_id != self.saved_id
                    and time.monotonic() - last_save >= self.checkpoint_every
                ):
                    await self.save_checkpoint()
                    last_save = time.monotonic()
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as e:
                log.warning("projection_tail_failed", error=str(e))  # Redis restarting
                await asyncio.sleep(0.2)

    async def _step(self, block_ms: int) -> None:
        page = await self.store.tail_log_raw(self.last_id, BATCH, block_ms)
        if page:
            fold_raw(self.projections, page)
            self.last_id = page[-1][0]
            self.folded += len(page)
            if self.on_entries is not None:
                self.on_entries(page)

    async def caught_up(self) -> bool:
        return self.last_id == await self.store.log_head()
