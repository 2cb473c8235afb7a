"""The supervisor: owns every actor task of the organization (license, cage, tables).

Shutdown cancels and awaits them. Commands reach an actor only through :meth:`submit`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import structlog

from events.license import LicenseRecorded
from services.actor import Actor, MailboxFull, Reply, Submission, cancel_and_wait, error_reply
from services.broker import Broker
from services.cage.actor import CageRules
from services.license import LicenseRules, RecordLicense, StartOccasion
from services.night import Night
from services.store.redis_store import EventStore
from services.tables.actor import TableRules
from services.tables.rules import OpenTable

log = structlog.get_logger(__name__)

CAGE = "cage"
LICENSE = "license"
SYSTEM_ACTOR = "system"


def table_stream(table_id: str) -> str:
    return f"table:{table_id}"


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
    ) -> None:
        self.store = store
        self.broker = broker
        self.night = night
        self.actors: dict[str, Actor[Any, Any]] = {}
        self.tasks: list[asyncio.Task[None]] = []

        def make(stream: str, rules: Any) -> None:
            self.actors[stream] = Actor(
                store,
                stream,
                rules,
                publish=broker.publish,
                mailbox_size=mailbox_size,
                on_batch=on_batch,
            )

        make(LICENSE, LicenseRules())
        make(CAGE, CageRules(night.max_transaction))
        for spec in night.tables:
            make(table_stream(spec.id), TableRules())

    async def start(self) -> None:
        """Fold every stream, start the actors, record the license and open the tables."""
        for actor in self.actors.values():
            await actor.load()
            self.tasks.append(asyncio.create_task(actor.run(), name=f"actor:{actor.stream}"))
        night = self.night
        license_event = LicenseRecorded(
            organization=night.organization,
            license_number=night.license_number,
            games=night.games,
            period_start=night.period_start,
            period_end=night.period_end,
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

    async def _system(self, stream: str, command: Any) -> None:
        reply = await self.submit(
            stream,
            Submission(
                key="",
                fingerprint="",
                command_id=f"system-{time.time_ns()}",
                actor=SYSTEM_ACTOR,
                command=command,
            ),
        )
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

    def table_state(self, table_id: str) -> Any:
        actor = self.actors.get(table_stream(table_id))
        return None if actor is None else actor.state

    async def stop(self) -> None:
        await cancel_and_wait(self.tasks)
        self.tasks.clear()
