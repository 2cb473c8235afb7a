"""The checkpointed runner: tails the org log and feeds every projection, exactly once.

The projections' states and the id of the last org-log entry folded are saved together in
one value (one SET), so a process that dies between two steps resumes from a state that
has folded exactly the events up to its checkpoint, and folds each later event once.

The value carries an HMAC-SHA256 under a key derived from the server secret, which Redis
never holds: whoever can write to Redis cannot make the server serve a state the events do
not give. A checkpoint whose MAC is missing or wrong is discarded (logged as an error) and
every projection folds the log from the start.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgpack
import structlog

from events.codec import fold_into
from projections.base import Projection
from services.derived_keys import derive_key
from services.store import keys
from services.store.redis_store import EventStore
from services.store.replication import STORE_UNAVAILABLE
from services.tasks import raise_if_cancelled

log = structlog.get_logger(__name__)

CHECKPOINT = "runner"
BATCH = 3000
"""Org-log entries fetched per read (a few thousand beat 10,000 for decode + fold, as
measured; docs/ARCHITECTURE.md "Projections and the checkpoint")."""
TAIL_GATHER_SECONDS = 0.01
"""After folding a page shorter than :data:`BATCH`, the live tail waits this long before
it reads again, so that what is appended meanwhile comes in one read and one fold: a read
and a fold cost nearly the same whether they carry one entry or a hundred, and at a few
thousand events a second, read one page each, they took about 5 % of the server's CPU
(docs/ARCHITECTURE.md, "Projections and the checkpoint"). Views, log subscribers and
other processes' subscribers see an event at most this much later."""
MAC_KEY_INFO = b"casino-night projection checkpoint"
"""HKDF info of the checkpoint MAC key (and the MAC's domain prefix)."""


def checkpoint_key(secret: bytes) -> bytes:
    """The 32-byte key of projection checkpoints' MACs: HKDF-SHA256 of the server secret
    (``services.gateway.auth.load_secret``), info :data:`MAC_KEY_INFO`."""
    return derive_key(secret, MAC_KEY_INFO)


def fold_raw(projections: Sequence[Projection], entries: Sequence[tuple[str, bytes]]) -> None:
    """Fold org-log entries (log id, packed envelope) into each projection."""
    fold_payloads(projections, [raw for _log_id, raw in entries])


def fold_payloads(projections: Sequence[Projection], payloads: Sequence[bytes]) -> None:
    """Decode what the folds need (:func:`events.codec.fold_into`: type, stream, data upcast
    by the event registry, occurred-at) and apply it to each projection that folds that
    event type (its ``types``; all when it has none)."""
    if len(projections) == 1:
        fold_into(payloads, projections[0].apply)
        return
    routes: dict[str, tuple[Callable[[str, str, dict[str, Any], int], None], ...]] = {}

    def route(type_: str, stream: str, data: dict[str, Any], ts: int) -> None:
        applies = routes.get(type_)
        if applies is None:
            applies = routes[type_] = tuple(
                p.apply for p in projections if (t := folds(p)) is None or type_ in t
            )
        for apply in applies:
            apply(type_, stream, data, ts)

    fold_into(payloads, route)


def folds(projection: Projection) -> frozenset[str] | None:
    """The event types a projection folds (its ``types`` attribute), or None for all."""
    types: frozenset[str] | None = getattr(projection, "types", None)
    return types


def _accepts(projection: Projection, state: Any) -> bool:
    """Whether ``projection`` can be restored from a checkpoint's ``state``: one that names
    the shape of its snapshot says so (``accepts``); any other takes what it saved."""
    accepts: Callable[[Any], bool] | None = getattr(projection, "accepts", None)
    return True if accepts is None else accepts(state)


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
        mac_key: bytes | None = None,
        on_rejected: Callable[[str], None] | None = None,
        saver: Callable[[str, bytes], Awaitable[bool]] | None = None,
        tail_gather: float = TAIL_GATHER_SECONDS,
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
        self.mac_key = mac_key
        """Authenticates the checkpoint (:func:`checkpoint_key`); without one the runner
        neither loads nor saves a checkpoint."""
        self.on_rejected = on_rejected
        """Called with the reason when a checkpoint is discarded for its MAC."""
        self.loaded = False
        self.saver = saver
        """Writes the checkpoint (key, value) instead of a plain ``SET`` and says whether it
        did: with several server processes, only the holder of the projections' lease
        saves (``services.cluster``); the others fold the same log as a hot standby."""
        self.tail_gather = tail_gather
        """Seconds the live tail waits after a short page (:data:`TAIL_GATHER_SECONDS`)."""

    def _mac(self, body: bytes) -> bytes:
        assert self.mac_key is not None
        # The key name is covered too: a checkpoint holds only where it was saved.
        message = MAC_KEY_INFO + b"\0" + self._key.encode() + b"\0" + body
        return hmac.new(self.mac_key, message, hashlib.sha256).digest()

    def _open(self, raw: bytes) -> dict[str, Any] | None:
        """The checkpoint's content if its MAC checks; else None, logged as an error."""
        reason = ""
        try:
            outer = msgpack.unpackb(raw, raw=False)
        except Exception:  # anything at all may have been written there
            outer, reason = None, "unreadable"
        if not reason:
            body = outer.get("body") if isinstance(outer, dict) else None
            mac = outer.get("mac") if isinstance(outer, dict) else None
            if not isinstance(body, bytes) or not isinstance(mac, bytes):
                reason = "no MAC"
            elif not hmac.compare_digest(mac, self._mac(body)):
                reason = "bad MAC"
            else:
                saved: dict[str, Any] = msgpack.unpackb(body, raw=False)
                return saved
        log.error(
            "projection_checkpoint_rejected",
            reason=reason,
            key=self._key,
            action="every projection folds the log from the start",
        )
        if self.on_rejected is not None:
            self.on_rejected(reason)
        return None

    async def load_checkpoint(self) -> None:
        """Restore the projections from the checkpoint when its MAC checks; otherwise (none,
        a bad or missing MAC, no key) they fold the log from the start."""
        self.loaded = True
        if self.mac_key is None:
            return
        raw: Any = await self.store.redis.get(self._key)
        if raw is None:
            return
        saved = self._open(bytes(raw))
        if saved is None:
            return
        if any(p.name not in saved["states"] for p in self.projections):
            # A projection this checkpoint does not know (new in this version) must see the
            # whole log: start every projection from the beginning.
            log.info("checkpoint_ignored", reason="a projection is missing from it")
            return
        if not all(_accepts(p, saved["states"][p.name]) for p in self.projections):
            # A projection whose snapshot changed shape in this version: the same.
            log.info("checkpoint_ignored", reason="a projection's snapshot is of another shape")
            return
        for p in self.projections:
            p.restore(saved["states"][p.name])
        self.last_id = self.saved_id = saved["last_id"]

    async def save_checkpoint(self) -> None:
        """Save the projections' states and position in one value with its MAC."""
        if self.mac_key is None:
            raise ValueError("a projection checkpoint needs a MAC key (the server secret)")
        value = {
            "last_id": self.last_id,
            "states": {p.name: p.snapshot() for p in self.projections},
        }
        body: bytes = msgpack.packb(value, use_bin_type=True)
        sealed = msgpack.packb({"body": body, "mac": self._mac(body)}, use_bin_type=True)
        if self.saver is not None:
            if not await self.saver(self._key, sealed):
                return
        else:
            await self.store.redis.set(self._key, sealed)
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
                    self.mac_key is not None
                    and self.last_id != self.saved_id
                    and time.monotonic() - last_save >= self.checkpoint_every
                ):
                    await self.save_checkpoint()
                    last_save = time.monotonic()
            except STORE_UNAVAILABLE as e:
                # Redis restarting, or a cluster failing over.
                raise_if_cancelled()
                log.warning("projection_tail_failed", error=str(e))
                await asyncio.sleep(0.2)
            except Exception:
                # The Redis client's own state can break mid-failover; the views must not
                # freeze for the rest of the night because of it.
                raise_if_cancelled()
                log.exception("projection_tail_failed")
                await asyncio.sleep(1.0)

    async def _step(self, block_ms: int) -> None:
        page = await self.store.tail_log_raw(self.last_id, BATCH, block_ms)
        short = len(page) < BATCH
        if page:
            fold_raw(self.projections, page)
            self.last_id = page[-1][0]
            self.folded += len(page)
            if self.on_entries is not None:
                self.on_entries(page)
        del page  # not kept through the wait: its entries are garbage now
        if short and self.tail_gather > 0:
            await asyncio.sleep(self.tail_gather)

    async def caught_up(self) -> bool:
        return self.last_id == await self.store.log_head()
