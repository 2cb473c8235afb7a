"""One server process's part in its organization: membership, the leases of the streams
it owns, their placement, and the routing of every command to its stream's owner.

Every ``lease_renew_seconds`` (:meth:`ClusterNode.tick`): say this node is live; renew
every lease held in one script call (and stop the actors of those lost); read every
stream's lease; take a free lease whose preferred node (rendezvous with bounded loads over
the live nodes, ``placement.assign``) is this one, or that no one took for a few ticks;
hand a stream to the live node that now prefers it (drain its actor, release the lease,
send on what was queued); hold or take the projections' lease. A command for a stream
this process does not run goes to the holder's inbox (:mod:`services.cluster.forward`);
for a free stream, this process takes the lease at once and runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog

from services.actor import MOVED, Reply, Submission, error_reply
from services.cluster.forward import Inbox, Message, Routed, message_dict
from services.cluster.leases import PROJECTIONS, Holder, Leases, parse_holder
from services.cluster.placement import assign
from services.gateway.auth import Principal
from services.gateway.metrics import Metrics
from services.settings import Settings
from services.store.redis_store import RedisClient
from services.store.replication import STORE_UNAVAILABLE
from services.supervisor import Supervisor
from services.tasks import cancel_and_wait, raise_if_cancelled

log = structlog.get_logger(__name__)

FREE_TICKS = 3
"""Ticks a free lease waits for its preferred node before any live node takes it (a
preferred node that is live but does not take it, paused say)."""
JOINED_TICKS = 2
"""Ticks a node must have been seen live before streams are handed to it (so a node that
flaps in and out does not pull streams back and forth)."""
HANDOFFS_PER_TICK = 4
"""Streams one tick hands to other nodes at most (a joining node takes its share over a
few ticks, the tables stay responsive meanwhile)."""
STREAMS_EVERY_TICKS = 5
"""How often (in ticks) the store's stream set is read for raffles set up elsewhere."""
OWNER_GONE = (
    "the server process that owns this stream stopped while it had this command; retry the same id"
)
DRAIN_POLL_SECONDS = 0.005
"""How often a hand-off looks whether the stream's actor finished what it had in hand."""
_STORE_ERRORS = STORE_UNAVAILABLE
"""Store faults a tick or a hand-off rides out (failovers included): leases expire by
themselves, the next tick tries again."""


def _unavailable(message: str) -> Reply:
    return error_reply("unavailable", message)


class ClusterNode:
    """Leases, placement and forwarding for one process (node) of an organization."""

    def __init__(
        self,
        *,
        redis: RedisClient,
        org: str,
        node: str,
        incarnation: str,
        settings: Settings,
        supervisor: Supervisor,
        metrics: Metrics,
        mac_key: bytes,
    ) -> None:
        self.node = node
        self.incarnation = incarnation
        self.settings = settings
        self.supervisor = supervisor
        self.metrics = metrics
        self.leases = Leases(redis, org, node, incarnation)
        self.inbox = Inbox(
            redis,
            org,
            node,
            max_len=settings.inbox_max_len,
            mac_key=mac_key,
            on_forwarded=metrics.forwarded.inc,
        )
        self.active: dict[str, str] = {}
        """Stream -> lease value, for every stream whose actor runs here."""
        self.direct_from: dict[str, int] = {}
        """Stream -> its version when this process took it: the actor publishes every
        later event itself, so the log's tail skips those (the tail sends the others)."""
        self.owners: dict[str, Holder | None] = {}
        """Who holds each stream's lease, as last read (refreshed every tick and on a miss)."""
        self.live: list[str] = [node]
        self.projections: str | None = None
        """The projections' lease value while this process holds it."""
        self._activating: dict[str, asyncio.Future[bool]] = {}
        self._releasing: dict[str, asyncio.Future[bool]] = {}
        self._loops: list[asyncio.Task[Any]] = []
        self._free: dict[str, int] = {}
        self._seen: dict[str, int] = {}
        self._ticks = 0
        self._placed_for: tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]] = (
            (),
            (),
            (),
        )
        self._placement: dict[str, str] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        supervisor.on_drop = self._dropped

    @property
    def lease_ms(self) -> int:
        return int(self.settings.lease_seconds * 1000)

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # Start and stop.

    async def start(self) -> None:
        """Join, then take every stream this node prefers among the live nodes (all of
        them when it is alone) before the site listens, each with its opening commands
        (a refused opening, such as a table's other configuration, fails the start)."""
        await self.inbox.open()
        self.live = await self.leases.heartbeat(self.lease_ms)
        holders = await self.leases.holders(self.supervisor.streams())
        self.owners.update(holders)
        for stream, holder in holders.items():
            if self._takeable(holder) and self._want(stream) == self.node:
                await self._take(stream, strict=True)
        await self._take_projections()

    def run_tasks(self) -> list[asyncio.Task[Any]]:
        """The node's loops (the caller cancels them at shutdown)."""
        loop = asyncio.get_running_loop()
        self._loops = [
            loop.create_task(self._ticker(), name="cluster-ticker"),
            loop.create_task(self.inbox.run(), name="cluster-inbox"),
        ]
        return list(self._loops)

    async def halt(self) -> None:
        """Stop placing and taking streams (the first step of a shutdown): the ticker,
        the inbox and whatever they started."""
        await cancel_and_wait([*self._loops, *self._tasks])
        self._loops = []

    async def leave(self) -> None:
        """A clean shutdown, once the actors stopped: release every lease still held and
        leave the members, so the others take the streams at once."""
        held = [(s, v) for s, v in self.active.items()]
        if self.projections is not None:
            held.append((PROJECTIONS, self.projections))
        self.active.clear()
        self.projections = None
        await self.inbox.stop()
        await cancel_and_wait(list(self._tasks))
        try:
            await self.leases.release(held)
            await self.leases.leave()
        except _STORE_ERRORS as e:  # they expire by themselves
            log.warning("leases_not_released", error=str(e))
        self.metrics.leases.set(0)

    # What runs where.

    def owns(self, stream: str) -> bool:
        return stream in self.active

    async def take_if_free(self, stream: str) -> bool:
        """Run ``stream`` here if no live process holds it (a stream a command taken here
        needs a step on: a bell jar combination's other deal, the serial registry);
        whether it runs here now. The placement may hand it over at a later tick."""
        if stream in self.active:
            return True
        pending = self._activating.get(stream)
        if pending is None:
            holder = await self.leases.holder(stream)
            self.owners[stream] = holder
            if self._takeable(holder):
                return await self._take(stream)
            pending = self._activating.get(stream)  # taken here meanwhile, maybe
        if pending is not None:
            return await asyncio.shield(pending)
        return stream in self.active

    def _want(self, stream: str) -> str | None:
        """The live node that should run ``stream`` (:func:`placement.assign` over the live
        nodes, every stream known and their holders as last read), recomputed when any of
        them changes."""
        holders = tuple(
            (name, holder.node) for name, holder in self.owners.items() if holder is not None
        )
        key = (tuple(self.live), tuple(self.supervisor.streams()), holders)
        if key != self._placed_for:
            self._placed_for = key
            self._placement = assign(key[0], key[1], dict(holders))
        return self._placement.get(stream)

    def _takeable(self, holder: Holder | None) -> bool:
        """Free, or held by an earlier life of this node (taken over at once)."""
        return holder is None or (
            holder.node == self.node and holder.incarnation != self.incarnation
        )

    async def _take(self, stream: str, *, strict: bool = False) -> bool:
        """Take the stream's lease if it can be taken and run its actor, then submit its
        opening commands; whether it runs here now. With ``strict`` (at start), a failure
        or a refused opening command raises."""
        releasing = self._releasing.get(stream)
        if releasing is not None:
            # Its actor here is still stopping (a lease lost, a handoff): it stops first,
            # or its deactivation would stop the actor this take starts.
            await asyncio.shield(releasing)
        if stream in self.active:
            return True
        pending = self._activating.get(stream)
        if pending is not None:
            return await asyncio.shield(pending)
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._activating[stream] = done
        taken = False
        try:
            taken = await self._acquire_and_run(stream)
        except Exception as e:
            if strict:
                raise
            log.warning("stream_not_taken", stream=stream, error=str(e))
        finally:
            self._activating.pop(stream, None)
            if not done.done():
                done.set_result(taken)
        if taken:
            try:
                await self.supervisor.open_stream(stream)
            except Exception as e:
                if strict:
                    raise
                log.error("stream_opening_refused", stream=stream, error=str(e))
        return taken

    async def _acquire_and_run(self, stream: str) -> bool:
        taken, value = await self.leases.acquire(stream, self.lease_ms)
        self.owners[stream] = parse_holder(value)
        if not taken:
            return False
        actor = await self.supervisor.activate(
            stream, value, on_fenced=lambda subs: self._fenced(stream, subs)
        )
        self.active[stream] = value
        self.direct_from[stream] = actor.head.version
        self._free.pop(stream, None)
        self.metrics.leases.set(len(self.active))
        log.info("stream_taken", stream=stream, lease=value, seq=actor.head.version)
        return True

    async def _release(self, stream: str, *, release: bool) -> None:
        """Stop running a stream here: let its actor finish the batch in hand and what is
        queued (up to the command deadline), stop it, release the lease (``release``; not
        when it was lost), and send on whatever is still queued."""
        value = self.active.pop(stream, None)
        if value is None:
            return
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._releasing[stream] = done
        try:
            await self._drain(stream, value, release=release)
        finally:
            self._releasing.pop(stream, None)
            done.set_result(True)

    async def _drain(self, stream: str, value: str, *, release: bool) -> None:
        self.direct_from.pop(stream, None)
        self.metrics.leases.set(len(self.active))
        actor = self.supervisor.actors.get(stream)
        if actor is not None:
            task = self.supervisor.running.get(stream)
            for _ in range(int(self.settings.command_deadline_seconds / DRAIN_POLL_SECONDS)):
                if task is None or task.done() or (actor.idle and actor.mailbox.empty()):
                    break
                await asyncio.sleep(DRAIN_POLL_SECONDS)
            queued = actor.mailbox.take(actor.mailbox.qsize())
        else:
            queued = []
        await self.supervisor.deactivate(stream)
        if release:
            with contextlib.suppress(*_STORE_ERRORS):
                await self.leases.release([(stream, value)])
        self.owners.pop(stream, None)
        log.info("stream_released", stream=stream, handed_off=release, queued=len(queued))
        for sub in queued:
            self._reroute(stream, sub)

    def _fenced(self, stream: str, subs: list[Submission[Any]]) -> None:
        """The actor's append was fenced: another process holds the stream now. The actor
        has stopped; its unanswered commands go to the new owner."""
        self.metrics.fenced.inc()
        if self.active.pop(stream, None) is not None:
            self.direct_from.pop(stream, None)
            self.metrics.leases.set(len(self.active))
            self._spawn(self.supervisor.deactivate(stream))
        self.owners.pop(stream, None)
        for sub in subs:
            self._reroute(stream, sub)

    def _dropped(self, stream: str) -> None:
        """A raffle actor dropped after its setup was refused: its lease goes too."""
        value = self.active.pop(stream, None)
        self.direct_from.pop(stream, None)
        self.owners.pop(stream, None)
        if value is not None:
            self.metrics.leases.set(len(self.active))
            self._spawn(self.leases.release([(stream, value)]))

    def _reroute(self, stream: str, sub: Submission[Any]) -> None:
        """A command queued here whose stream moved before it was applied: run it where the
        stream is now (the same id, so it is applied once), or answer ``unavailable``."""
        if sub.future.done():
            return
        if not isinstance(sub, Routed) or sub.who is None or sub.msg is None:
            sub.future.set_result(_unavailable(MOVED))
            return
        again = self.route(stream, sub.who, sub.msg, sub.hops)
        if again is None:  # it runs here again meanwhile
            again = self.supervisor.submit_nowait(stream, sub)
            if again is sub.future:
                return

        def answered(f: asyncio.Future[Reply]) -> None:
            if not sub.future.done():
                sub.future.set_result(f.result())

        again.add_done_callback(answered)

    # Routing a command.

    def route(
        self, stream: str, who: Principal, msg: Message, hops: int
    ) -> asyncio.Future[Reply] | None:
        """None when the stream's actor runs here (queue it locally); else the future of
        its one reply from where it runs (forwarded to the owner, or run here once this
        process took a free lease)."""
        if stream in self.active:
            return None
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._spawn(self._remote(stream, who, msg, hops, future))
        return future

    async def _remote(
        self,
        stream: str,
        who: Principal,
        msg: Message,
        hops: int,
        future: asyncio.Future[Reply],
    ) -> None:
        try:
            reply = await self._run_where_owned(stream, who, msg, hops)
        except asyncio.CancelledError:
            if not future.done():
                future.set_result(_unavailable("the server is shutting down; retry the same id"))
            raise
        except _STORE_ERRORS:
            reply = _unavailable("the event store is unreachable; retry the same command id")
        except Exception:
            log.exception("route_failed", stream=stream)
            reply = error_reply("internal", "internal error; retry the same command id")
        if not future.done():
            future.set_result(reply)

    async def _run_where_owned(self, stream: str, who: Principal, msg: Message, hops: int) -> Reply:
        # Within the command's deadline: a lease held by a node that is no longer live
        # expires within ``lease_seconds``; then this node (or its new owner) takes it.
        tries = 3 + int(2 * self.settings.lease_seconds / self.settings.lease_renew_seconds)
        for attempt in range(tries):
            if stream in self.active:
                return await self._local(who, msg, hops)
            holder = self.owners.get(stream) if attempt == 0 else None
            if holder is None or attempt > 0:
                holder = await self.leases.holder(stream)
                self.owners[stream] = holder
            if self._takeable(holder):
                want = self._want(stream)
                if want in (None, self.node) or hops + 1 >= self.settings.forward_hops:
                    if await self._take(stream):
                        return await self._local(who, msg, hops)
                    continue
                # A free stream another live node prefers: it takes it on this command
                # (were this node to take it, the next tick would hand it over again).
                return await self.inbox.forward(want, who, msg, hops + 1)
            assert holder is not None
            if holder.node == self.node:
                # This incarnation holds it: it is being taken, or handed over, right now.
                busy = self._activating.get(stream) or self._releasing.get(stream)
                if busy is not None:
                    await asyncio.shield(busy)
                elif stream not in self.active:
                    await asyncio.sleep(0.01)
                continue
            if holder.node not in self.live:
                # Its holder died: wait for the lease to expire and be taken.
                await asyncio.sleep(self.settings.lease_renew_seconds / 2)
                continue
            if hops >= self.settings.forward_hops:
                return _unavailable(MOVED)
            return await self.inbox.forward(holder.node, who, msg, hops + 1)
        return _unavailable(MOVED)

    async def _local(self, who: Principal, msg: Message, hops: int) -> Reply:
        submit = self.inbox.submit
        if submit is None:
            return _unavailable("this server process is starting; retry the same command id")
        return await submit(who, message_dict(msg), hops)

    # The tick.

    async def _ticker(self) -> None:
        while True:
            await asyncio.sleep(self.settings.lease_renew_seconds)
            try:
                await self.tick()
            except _STORE_ERRORS as e:
                raise_if_cancelled()
                log.warning("cluster_tick_failed", error=str(e))
            except Exception:
                raise_if_cancelled()
                log.exception("cluster_tick_failed")

    async def tick(self) -> None:
        """One round of membership, renewal and placement (see the module's docstring)."""
        self._ticks += 1
        self.live = await self.leases.heartbeat(self.lease_ms)
        self._seen = {n: self._seen.get(n, 0) + 1 for n in self.live}
        # A request sent to a node that died will not be answered: say so now rather than
        # at the deadline (the client retries the same id, which finds the new owner).
        self.inbox.abandon(set(self.live), _unavailable(OWNER_GONE))
        held = list(self.active.items())
        if self.projections is not None:
            held.append((PROJECTIONS, self.projections))
        for name in await self.leases.renew(held, self.lease_ms):
            if name == PROJECTIONS:
                log.warning("projections_lease_lost")
                self.projections = None
            else:
                log.warning("lease_lost", stream=name)
                self._spawn(self._release(name, release=False))
        if self._ticks % STREAMS_EVERY_TICKS == 0:
            for name in await self.supervisor.store.stream_names():
                self.supervisor.follow(name)
        streams = self.supervisor.streams()
        holders = await self.leases.holders(streams)
        self.owners.update(holders)
        handoffs = 0
        for stream, holder in holders.items():
            if stream in self._activating:
                continue
            want = self._want(stream)
            if self._takeable(holder):
                waited = self._free[stream] = self._free.get(stream, 0) + 1
                if want == self.node or waited > FREE_TICKS:
                    self._spawn(self._take(stream))
                continue
            self._free.pop(stream, None)
            if (
                stream in self.active
                and want is not None
                and want != self.node
                and self._seen.get(want, 0) >= JOINED_TICKS
                and handoffs < HANDOFFS_PER_TICK
            ):
                handoffs += 1
                self._spawn(self._release(stream, release=True))
        await self._take_projections()

    async def _take_projections(self) -> None:
        if self.projections is not None:
            return
        taken, value = await self.leases.acquire(PROJECTIONS, self.lease_ms)
        if taken:
            self.projections = value
            log.info("projections_lease_taken", lease=value)

    async def save_projections(self, key: str, value: bytes) -> bool:
        """Write the projections' checkpoint, only while this process holds their lease
        (checked by the script: a paused former holder cannot overwrite it)."""
        lease = self.projections
        if lease is None:
            return False
        return await self.leases.guarded_set(PROJECTIONS, lease, key, value)


def tail_skips(node: ClusterNode, stream: str, seq: int) -> bool:
    """Whether the log's tail skips this event for the stream's subscribers here: the
    stream's actor runs here and published it itself."""
    since = node.direct_from.get(stream)
    return since is not None and seq > since
