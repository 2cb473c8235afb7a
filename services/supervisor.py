"""The supervisor: owns every actor task of the organization (license, cage, tables,
raffles).

Shutdown cancels and awaits them. Commands reach an actor only through :meth:`submit`.
Raffles outlive a night: besides the raffles the night file declares, every raffle stream
in the store (one a member in charge set up with ``setup_raffle`` on an earlier night) gets
its actor at start; a new one gets its actor when it is set up.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import structlog

from events.license import LicenseRecorded
from services.actor import Actor, Reply, Submission, cancel_and_wait, error_reply
from services.aggregates import CAGE, LICENSE, raffle_of, raffle_stream, table_stream
from services.broker import Broker
from services.cage.actor import CageRules
from services.chance import ServerChance
from services.license import LicenseRules, RecordLicense, StartOccasion
from services.mailbox import MailboxFull
from services.night import Night
from services.raffles.actor import RaffleRules
from services.raffles.state import RaffleState, RaiseDueAnnouncements, SetupRaffle
from services.store.redis_store import EventStore
from services.tables.actor import TableRules
from services.tables.rules import OpenTable

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
    """Starts, runs and stops the actors of one night's organization."""

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
        self.tasks: list[asyncio.Task[None]] = []
        self.chance = chance
        """Where randomness enters: every actor's rules adapter draws from it (the
        supervisor itself draws nothing)."""
        self.raffles: set[str] = set()
        """Every raffle with an actor: declared tonight, found in the store, or set up."""
        self.started = False

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
            return actor

        self._make = make
        self._raffle_tasks: dict[str, asyncio.Task[None]] = {}
        """Tasks of raffle actors created by a ``setup_raffle`` command (see
        :meth:`drop_unopened_raffle`)."""
        make(LICENSE, LicenseRules())
        make(CAGE, CageRules(night.max_transaction))
        for spec in night.tables:
            make(table_stream(spec.id), TableRules(self.chance))
        for raffle in night.raffles:
            make(raffle_stream(raffle.id), RaffleRules(self.chance, store.org))

    def ensure_raffle(self, raffle_id: str) -> None:
        """Give a raffle being set up by command its actor (it folds its stream first)."""
        stream = raffle_stream(raffle_id)
        if stream in self.actors:
            return
        actor = self._make(stream, RaffleRules(self.chance, self.store.org))
        if self.started:
            task = asyncio.create_task(actor.run(), name=f"actor:{stream}")
            self.tasks.append(task)
            self._raffle_tasks[stream] = task

    def drop_unopened_raffle(self, raffle_id: str) -> bool:
        """Forget the actor of a raffle whose setup was refused: one that was never set up,
        has nothing queued and waits idle (so a refused ``setup_raffle`` leaves nothing
        behind). Returns whether it was dropped."""
        stream = raffle_stream(raffle_id)
        actor = self.actors.get(stream)
        task = self._raffle_tasks.get(stream)
        state = None if actor is None else actor.state
        if (
            actor is None
            or task is None
            or not isinstance(state, RaffleState)
            or state.opened
            or not actor.idle
            or not actor.mailbox.empty()
        ):
            return False
        task.cancel()
        del self.actors[stream]
        del self._raffle_tasks[stream]
        self.tasks.remove(task)
        self.raffles.discard(raffle_id)
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
        """Fold every stream, start the actors, record the license, open the tables and set
        up the night file's raffles."""
        for stream in await self.store.stream_names():
            if raffle_of(stream) is not None and stream not in self.actors:
                self._make(stream, RaffleRules(self.chance, self.store.org))
        for actor in self.actors.values():
            await actor.load()
            self.tasks.append(asyncio.create_task(actor.run(), name=f"actor:{actor.stream}"))
        self.started = True
        night = self.night
        license_event = LicenseRecorded(
            organization=night.organization,
            license_number=night.license_number,
            games=night.games,
            period_start=night.period_start,
            period_end=night.period_end,
            tie_option=night.tie_option,
        )
        await self._system(LICENSE, RecordLicense(license=license_event))
        await self._system(
            LICENSE,
            StartOccasion(
                occasion=night.occasion,
                name=night.occasion_name,
                starts_at=night.occasion_starts_at,
                ends_at=night.occasion_ends_at,
            ),
        )
        for spec in night.tables:
            await self._system(
                table_stream(spec.id),
                OpenTable(game=spec.game, config=spec.config, outcome_mode=spec.outcome_mode),  # type: ignore[arg-type]
            )
        for raffle in night.raffles:
            # A server board is dealt by the raffle's actor when this opens the raffle.
            await self._system(
                raffle_stream(raffle.id), SetupRaffle(kind=raffle.kind, config=raffle.options)
            )

    async def raise_due_announcements(self, now_ms: int) -> list[str]:
        """Look in on every Treasure Chest raffle still running whose 170-day announcement
        is not out, so the raffle raises it by itself when it is due (4620.24(b)(12)) even
        if no one sends it a command. Returns the raffles that raised one."""
        raised = []
        for stream, actor in list(self.actors.items()):
            state = actor.state
            if (
                not isinstance(state, RaffleState)
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
        when the store fails (Redis calls time out) or the actor is stopped."""
        actor = self.actors.get(stream)
        if actor is None:
            submission.future.set_result(error_reply("unknown_table", f"no stream {stream}"))
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
        await cancel_and_wait(self.tasks)
        self.tasks.clear()
