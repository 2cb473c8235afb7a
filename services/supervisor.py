"""The supervisor: holds every actor of the organization (license, cage, tables, raffles,
bell jar deals and their serial registry) and runs the tasks of those whose stream this
process owns (``services.cluster``).

Shutdown cancels and awaits them. Commands reach an actor only through :meth:`submit`.
Raffles outlive a night: besides the raffles the night file declares, every raffle stream
in the store (one a member in charge set up with ``setup_raffle`` on an earlier night) gets
its actor at start; a new one gets its actor when it is set up. Bell jar deals likewise:
every ``deal:<id>`` in the store, and a new one at its ``register_deal``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import structlog

from events.license import LicenseRecorded
from services.actor import MOVED, Actor, Reply, Submission, error_reply
from services.aggregates import (
    CAGE,
    DEAL_SERIALS,
    EXPENSES,
    LICENSE,
    deal_of,
    deal_stream,
    raffle_of,
    raffle_stream,
    table_stream,
)
from services.bell_jars.actor import DealRules, SerialRegistryRules
from services.bell_jars.state import DealState
from services.broker import Broker
from services.cage.actor import CageRules
from services.chance import ServerChance
from services.expenses.actor import ExpenseRules, calendar_of
from services.expenses.rules import Calendar
from services.license import LicenseRules, RecordLicense, StartOccasion
from services.mailbox import MailboxFull
from services.night import Night
from services.raffles.actor import RaffleRules
from services.raffles.state import RaffleState, RaiseDueAnnouncements, SetupRaffle
from services.store.redis_store import EventStore
from services.tables.actor import TableRules
from services.tables.rules import OpenTable
from services.tasks import cancel_and_wait

log = structlog.get_logger(__name__)

SYSTEM_ACTOR = "system"


def system_submission(command: Any) -> Submission[Any]:
    """A command the server itself sends (actor ``system``): no idempotency key, since it
    is decided afresh each time (opening what the night file declares, the raffle clock)."""
    return Submission(
        key="",
        fingerprint="",
        command_id=f"system-{time.time_ns()}",
        actor=SYSTEM_ACTOR,
        command=command,
    )


class Supervisor:
    """Holds the actors of one night's organization and runs those this process owns.

    Every aggregate stream of the organization has an actor here: the night file's, every
    raffle stream found in the store, every raffle set up since. An actor runs (its task
    takes its mailbox) only while this process holds the stream's lease
    (``services.cluster``: :meth:`activate`, :meth:`deactivate`); the others are
    followers, folded from the store when read (:meth:`refresh`)."""

    def __init__(
        self,
        store: EventStore,
        broker: Broker,
        night: Night,
        *,
        mailbox_size: int = 1024,
        on_batch: Callable[[int, float], None] | None = None,
        chance: ServerChance,
    ) -> None:
        self.store = store
        self.broker = broker
        self.night = night
        self.actors: dict[str, Actor[Any, Any]] = {}
        self.running: dict[str, asyncio.Task[None]] = {}
        """The actor tasks of the streams this process owns, by stream."""
        self.chance = chance
        """Where randomness enters: every actor's rules adapter draws from it (the
        supervisor itself draws nothing)."""
        self.raffles: set[str] = set()
        """Every raffle with an actor: declared tonight, found in the store, or set up."""
        self.deals: set[str] = set()
        """Every bell jar deal with an actor: found in the store or being registered."""
        self.started = False
        self.on_drop: Callable[[str], None] | None = None
        """Told the stream of a raffle actor dropped after a refused setup."""
        self.expense_calendar: Callable[[], Calendar] = lambda: calendar_of(
            {}, (), occasion=night.occasion, period=(night.period_start, night.period_end)
        )
        """What the log started, for the expense rules (the runtime gives its cash
        control's; until then the night's own occasion and period)."""
        self._locks: dict[str, asyncio.Lock] = {}

        def make(stream: str, rules: Any) -> Actor[Any, Any]:
            actor: Actor[Any, Any] = Actor(
                store,
                stream,
                rules,
                publish=broker.publish,
                mailbox_size=mailbox_size,
                on_batch=on_batch,
            )
            self.actors[stream] = actor
            raffle = raffle_of(stream)
            if raffle is not None:
                self.raffles.add(raffle)
            deal_id = deal_of(stream)
            if deal_id is not None:
                self.deals.add(deal_id)
            return actor

        self._make = make
        self._by_command: set[str] = set()
        """Raffle streams whose actor a ``setup_raffle`` command created (see
        :meth:`drop_unopened_raffle`)."""
        make(LICENSE, LicenseRules())
        make(CAGE, CageRules(night.max_transaction))
        for spec in night.tables:
            make(table_stream(spec.id), TableRules(self.chance))
        for raffle in night.raffles:
            make(raffle_stream(raffle.id), RaffleRules(self.chance, store.org))

    def streams(self) -> list[str]:
        """Every aggregate stream known: the night file's first (license, cage, tables,
        raffles, in that order), then the other raffles."""
        return list(self.actors)

    def follow(self, stream: str) -> bool:
        """Give a raffle or deal stream seen in the store (set up by another process), the
        serial registry or the expense stream its actor; whether it was new. Other streams
        are the night file's."""
        if stream in self.actors:
            return False
        if raffle_of(stream) is not None:
            self._make(stream, RaffleRules(self.chance, self.store.org))
            return True
        if deal_of(stream) is not None:
            self._make(stream, self.deal_rules())
            return True
        if stream == DEAL_SERIALS:
            self._make(stream, SerialRegistryRules())
            return True
        if stream == EXPENSES:  # made at the first expense: a night without any has none
            self._make(stream, ExpenseRules(lambda: self.expense_calendar()))
            return True
        return False

    def ensure_serial_registry(self) -> None:
        """Give the serial registry its actor when the first deal is registered (a night
        without bell jars has no such stream)."""
        self.follow(DEAL_SERIALS)

    def deal_rules(self) -> DealRules:
        """A deal stream's rules as the night sets them: its limits, the organization's
        timezone and the games on the license (a deal's type must be one, 4620.2)."""
        return DealRules(self.night.deal_limits, self.night.timezone, frozenset(self.night.games))

    def ensure_deal(self, deal_id: str) -> None:
        """Give a deal being registered by command its actor (it folds its stream first)."""
        stream = deal_stream(deal_id)
        if stream in self.actors:
            return
        self._make(stream, self.deal_rules())
        self._by_command.add(stream)

    def drop_unregistered_deal(self, deal_id: str) -> bool:
        """Forget the actor of a deal whose registration was refused (never registered,
        nothing queued, idle), so a refused ``register_deal`` leaves nothing behind."""
        return self._drop_unstarted(
            deal_stream(deal_id),
            lambda state: isinstance(state, DealState) and not state.registered,
            lambda: self.deals.discard(deal_id),
        )

    def deal_state(self, deal_id: str) -> DealState | None:
        """A deal's state as this process's actor holds it (None: no such deal)."""
        actor = self.actors.get(deal_stream(deal_id))
        state = None if actor is None else actor.state
        return state if isinstance(state, DealState) else None

    def ensure_raffle(self, raffle_id: str) -> None:
        """Give a raffle being set up by command its actor (it folds its stream first)."""
        stream = raffle_stream(raffle_id)
        if stream in self.actors:
            return
        self._make(stream, RaffleRules(self.chance, self.store.org))
        self._by_command.add(stream)

    def drop_unopened_raffle(self, raffle_id: str) -> bool:
        """Forget the actor of a raffle whose setup was refused: one that was never set up,
        has nothing queued and waits idle (so a refused ``setup_raffle`` leaves nothing
        behind). Returns whether it was dropped."""
        return self._drop_unstarted(
            raffle_stream(raffle_id),
            lambda state: isinstance(state, RaffleState) and not state.opened,
            lambda: self.raffles.discard(raffle_id),
        )

    def _drop_unstarted(
        self, stream: str, unstarted: Callable[[Any], bool], forget: Callable[[], None]
    ) -> bool:
        """Drop the actor of a stream created by a command that was refused: only one made
        by a command, whose state is still ``unstarted``, with nothing queued and idle."""
        actor = self.actors.get(stream)
        task = self.running.get(stream)
        if (
            actor is None
            or stream not in self._by_command
            or not unstarted(actor.state)
            or (task is not None and (not actor.idle or not actor.mailbox.empty()))
        ):
            return False
        if task is not None:
            task.cancel()
            del self.running[stream]
        del self.actors[stream]
        self._by_command.discard(stream)
        forget()
        if self.on_drop is not None:
            self.on_drop(stream)
        return True

    async def forget_unopened_raffle(self, raffle_id: str, tries: int = 100) -> bool:
        """:meth:`drop_unopened_raffle` once the actor is back to waiting (it answers a
        batch before it is idle); gives up when the raffle opens meanwhile."""
        for _ in range(tries):
            if self.drop_unopened_raffle(raffle_id):
                return True
            actor = self.actors.get(raffle_stream(raffle_id))
            state = None if actor is None else actor.state
            if actor is None or (isinstance(state, RaffleState) and state.opened):
                return False
            await asyncio.sleep(0.01)
        return False

    async def start(self) -> None:
        """Know every stream: the night file's and every raffle stream in the store. No
        actor runs yet: each starts when this process takes its stream's lease."""
        for stream in await self.store.stream_names():
            self.follow(stream)
        self.started = True

    def _lock(self, stream: str) -> asyncio.Lock:
        lock = self._locks.get(stream)
        if lock is None:
            lock = self._locks[stream] = asyncio.Lock()
        return lock

    async def refresh(self, stream: str) -> None:
        """Fold what another process appended to a stream this one does not run (a reader
        wants its state); nothing for a stream whose actor runs here."""
        actor = self.actors.get(stream)
        if actor is None or stream in self.running:
            return
        async with self._lock(stream):
            if stream not in self.running:
                await actor.load()

    async def activate(
        self,
        stream: str,
        lease: str,
        on_fenced: Callable[[list[Submission[Any]]], None] | None = None,
    ) -> Actor[Any, Any]:
        """This process holds the stream's lease ``lease``: fold what the actor has not
        folded yet and start it (its appends carry the lease)."""
        self.follow(stream)
        actor = self.actors[stream]
        async with self._lock(stream):
            await actor.load()
            actor.lease = lease
            actor.fenced = False
            actor.on_fenced = on_fenced
            old = self.running.get(stream)
            if old is None or old.done():
                self.running[stream] = asyncio.create_task(actor.run(), name=f"actor:{stream}")
        return actor

    async def deactivate(self, stream: str) -> None:
        """Stop the stream's actor (another process owns it now); it becomes a follower."""
        task = self.running.pop(stream, None)
        actor = self.actors.get(stream)
        if task is not None:
            await cancel_and_wait([task])
        if actor is not None:
            actor.lease = ""
            actor.stale = True

    def opening(self, stream: str) -> list[Any]:
        """The system commands the night file gives a stream, submitted each time this
        process takes it (each is a no-op when applied already): the license's record and
        the occasion's start; a table's opening; a declared raffle's setup."""
        night = self.night
        if stream == LICENSE:
            license_event = LicenseRecorded(
                organization=night.organization,
                license_number=night.license_number,
                games=night.games,
                period_start=night.period_start,
                period_end=night.period_end,
                tie_option=night.tie_option,
            )
            return [
                RecordLicense(license=license_event),
                StartOccasion(
                    occasion=night.occasion,
                    name=night.occasion_name,
                    starts_at=night.occasion_starts_at,
                    ends_at=night.occasion_ends_at,
                ),
            ]
        for spec in night.tables:
            if table_stream(spec.id) == stream:
                return [
                    OpenTable(game=spec.game, config=spec.config, outcome_mode=spec.outcome_mode)  # type: ignore[arg-type]
                ]
        for raffle in night.raffles:
            if raffle_stream(raffle.id) == stream:
                # A server board is dealt by the raffle's actor when this opens the raffle.
                return [SetupRaffle(kind=raffle.kind, config=raffle.options)]
        return []

    async def open_stream(self, stream: str) -> None:
        """Submit the stream's :meth:`opening` commands; RuntimeError when one is refused."""
        for command in self.opening(stream):
            await self._system(stream, command)

    async def raise_due_announcements(self, now_ms: int) -> list[str]:
        """Look in on every Treasure Chest raffle still running whose 170-day announcement
        is not out, so the raffle raises it by itself when it is due (4620.24(b)(12)) even
        if no one sends it a command. Returns the raffles that raised one. Only the raffles
        this process owns: each raffle is looked in on by its owner."""
        raised = []
        for stream, actor in list(self.actors.items()):
            state = actor.state
            if (
                stream not in self.running
                or not isinstance(state, RaffleState)
                or state.kind != "treasure_chest"
                or not state.opened
                or state.ended
                or state.announced_round is not None
            ):
                continue
            reply = await self.submit(
                stream, system_submission(RaiseDueAnnouncements(now_ms=now_ms))
            )
            after = actor.state
            if reply["ok"] and isinstance(after, RaffleState) and after.announced_round is not None:
                raised.append(state.raffle)
        return raised

    async def _system(self, stream: str, command: Any) -> None:
        reply = await self.submit(stream, system_submission(command))
        if not reply["ok"]:
            raise RuntimeError(f"{stream}: {reply['error']['message']}")

    def submit_nowait(self, stream: str, submission: Submission[Any]) -> asyncio.Future[Reply]:
        """Queue a command for its stream's actor; the future is its one reply.

        Every submission is answered: the actor replies to each command of a batch, also
        when the store fails (Redis calls time out) or the actor is stopped; a stream
        whose actor does not run here answers ``unavailable`` (its owner moved)."""
        actor = self.actors.get(stream)
        if actor is None:
            submission.future.set_result(error_reply("unknown_table", f"no stream {stream}"))
            return submission.future
        if stream not in self.running:
            submission.future.set_result(error_reply("unavailable", MOVED))
            return submission.future
        try:
            return actor.submit_nowait(submission)
        except MailboxFull:
            busy = error_reply("busy", f"{stream} is overloaded; retry the same command id")
            submission.future.set_result(busy)
            return submission.future

    async def submit(self, stream: str, submission: Submission[Any]) -> Reply:
        """Queue a command for its stream's actor and await its one reply."""
        return await self.submit_nowait(stream, submission)

    def raffle_state(self, raffle_id: str) -> Any:
        actor = self.actors.get(raffle_stream(raffle_id))
        return None if actor is None else actor.state

    def table_state(self, table_id: str) -> Any:
        actor = self.actors.get(table_stream(table_id))
        return None if actor is None else actor.state

    async def stop(self) -> None:
        tasks = list(self.running.values())
        self.running.clear()
        await cancel_and_wait(tasks)
