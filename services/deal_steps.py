"""The steps of a deal command that reach other streams than its own.

A deal's command is decided by its own stream's actor, pure; but some need another
stream's word first or after, each step a system command (``supervisor.system_submission``)
to that stream's actor, the only writer of it:

- ``register_deal``: the serial number is claimed on the registry ``deal-serials`` for the
  deal (``DealSerialClaimed``), after the registration's other checks passed; the claim's
  holder goes into the command, so a second deal with the serial is refused
  ``duplicate_serial`` by the rules and the refusal is stored with the command. A crash
  after the claim leaves the serial claimed for the deal being registered: the retry
  claims it again (nothing new) and registers it.
- ``put_deal_in_play`` with ``commingle``: each other deal gets ``DealCommingled(lead)``
  first, once all were checked; then the lead's ``DealPutInPlay`` is decided with their
  states. A crash between leaves them marked and the lead not in play: they refuse to go
  into play or be sold on their own (``deal_commingled``), and a retry finishes it.
- ``record_sale`` and ``remove_deal`` on a lead: after the lead closed, each other deal of
  the combination gets its own ``DealClosed`` (:meth:`Steps.finish_combination`), again after a
  retry of the same command (its stored reply), and before a redemption on such a deal.
- ``redeem_ticket`` on a commingled deal: the lead's state goes into the command (its deal
  is in play, or closed, through the lead).

Every stream concerned must run in this process: one no process holds is taken here for the
step (the serial registry's first claim, a deal no one has touched); one another process
holds answers the step ``unavailable`` and nothing of the command is decided (retry the
same id).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from services.actor import Reply
from services.aggregates import DEAL_SERIALS, RuleError, deal_stream
from services.bell_jars import rules
from services.bell_jars.actor import ClaimSerial, SerialRegistry
from services.bell_jars.state import (
    CloseCommingled,
    Commingle,
    DealState,
    PutDealInPlay,
    RecordSale,
    RedeemTicket,
    RegisterDeal,
    RemoveDeal,
)
from services.supervisor import Supervisor, system_submission

Submit = Callable[[Any], Awaitable[Reply]]
"""Submits the deal's own command (as the client sent it, with its idempotency key)."""
Take = Callable[[str], Awaitable[bool]]
"""Runs a stream in this process if no other holds it (``ClusterNode.take_if_free``)."""


class StepRefused(Exception):
    """A step on another stream could not be taken now (its reply is the answer)."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply)
        self.reply = reply


@dataclass(frozen=True, slots=True)
class Steps:
    """The steps of deal commands, through this process's supervisor; ``take`` runs a
    stream here first when no other process holds it."""

    supervisor: Supervisor
    take: Take | None = None

    async def current(self, deal_id: str) -> DealState | None:
        """Another deal's state as its stream holds it now: folded afresh when another
        process runs that stream (a copy in memory may be behind), as is when it runs here."""
        await self.supervisor.refresh(deal_stream(deal_id))
        return self.supervisor.deal_state(deal_id)

    async def system(self, stream: str, command: Any) -> Reply:
        if stream not in self.supervisor.running and self.take is not None:
            await self.take(stream)
        return await self.supervisor.submit(stream, system_submission(command))

    async def run(self, deal: str, command: Any, submit: Submit) -> Reply:
        """Take the steps ``command`` needs on other streams, submit it to its deal's
        actor, and take the steps after; the reply is the command's (or a step's
        ``unavailable``)."""
        try:
            command = await self._before(deal, command)
        except StepRefused as e:
            return e.reply
        reply = await submit(command)
        if isinstance(command, (RecordSale, RemoveDeal)):
            await self.finish_combination(deal)
        return reply

    async def _before(self, deal: str, command: Any) -> Any:
        supervisor = self.supervisor
        state = supervisor.deal_state(deal) or DealState(deal=deal)
        if isinstance(command, RegisterDeal):
            return await self._claim(state, command)
        if isinstance(command, PutDealInPlay):
            command = dataclasses.replace(command, column_forms=await self._column_forms(command))
            if command.commingle:
                return await self._commingle(state, command)
            return command
        if isinstance(command, RemoveDeal):
            members = tuple([await self.current(d) for d in state.deals[1:]])
            return dataclasses.replace(command, members=members)
        if isinstance(command, RedeemTicket) and state.lead is not None:
            await self.finish_combination(state.lead)
            return dataclasses.replace(command, lead=await self.current(state.lead))
        return command

    async def _column_forms(self, command: PutDealInPlay) -> tuple[str, ...]:
        """The form numbers of the deals in play, not closed, from the vending machine
        column the command names."""
        if command.container != "vending_machine":
            return ()
        forms = set()
        for deal_id in sorted(self.supervisor.deals):
            other = await self.current(deal_id)
            if (
                other is not None
                and other.in_play
                and not other.closed
                and other.container == "vending_machine"
                and other.column == command.column
            ):
                forms.add(other.form_number)
        return tuple(sorted(forms))

    async def _claim(self, state: DealState, command: RegisterDeal) -> Any:
        """Claim the serial only for a registration the rules would otherwise take (a
        refused one claims nothing: the rules refuse it with its own code)."""
        deal_rules = self.supervisor.deal_rules()
        try:
            rules.check_registration(state, command, deal_rules.limits, deal_rules.licensed)
        except RuleError:
            return command
        claim = ClaimSerial(serial=command.serial_number, deal=state.deal, now_ms=command.now_ms)
        self.supervisor.ensure_serial_registry()
        reply = await self.system(DEAL_SERIALS, claim)
        if reply["ok"]:
            return dataclasses.replace(command, serial_holder=state.deal)
        if reply["error"]["code"] != "duplicate_serial":
            raise StepRefused(reply)
        registry = self.supervisor.actors[DEAL_SERIALS].state
        holder = None
        if isinstance(registry, SerialRegistry):
            holder = registry.claims.get(command.serial_number)
        return dataclasses.replace(command, serial_holder=holder or "")

    async def _commingle(self, lead: DealState, command: PutDealInPlay) -> Any:
        """Mark the other deals only once the lead and every one of them passed the
        checks; the lead's rules then decide with their states as read after the marks."""
        members = [await self.current(d) for d in command.commingle]
        try:
            rules.check_put_in_play(lead, command)
            for deal_id, member in zip(command.commingle, members, strict=True):
                rules.check_commingle(lead, member, deal_id)
        except RuleError:
            return dataclasses.replace(command, members=tuple(members))
        for deal_id in command.commingle:
            step = Commingle(lead=lead, now_ms=command.now_ms)
            reply = await self.system(deal_stream(deal_id), step)
            if not reply["ok"] and reply["error"]["code"] in TRANSIENT:
                raise StepRefused(reply)
            if not reply["ok"]:
                break  # a deal changed since it was checked: the lead's rules say why
        return dataclasses.replace(
            command, members=tuple([await self.current(d) for d in command.commingle])
        )

    async def finish_combination(self, lead_id: str) -> None:
        """A closed lead's other deals each get their ``DealClosed`` (once; at the lead's
        time). A step that cannot be taken now is left for the next command that looks."""
        lead = await self.current(lead_id)
        if lead is None or not lead.closed or len(lead.deals) < 2:
            return
        steps = []
        for deal_id in lead.deals[1:]:
            member = await self.current(deal_id)
            if member is not None and not member.closed:
                close = CloseCommingled(lead=lead_id, reason=lead.closed_reason, at=lead.closed_at)
                steps.append(self.system(deal_stream(deal_id), close))
        if steps:
            await asyncio.gather(*steps)


TRANSIENT = frozenset({"unavailable", "busy", "internal"})
"""Refusals of a step that say it could not be taken now (retry), not why it may not."""


async def forget_unregistered(supervisor: Supervisor, deal: str, tries: int = 100) -> bool:
    """Drop the actor of a deal whose registration was refused, once it is back to
    waiting (see :meth:`Supervisor.drop_unregistered_deal`)."""
    for _ in range(tries):
        if supervisor.drop_unregistered_deal(deal):
            return True
        state = supervisor.deal_state(deal)
        if state is None or state.registered:
            return False
        await asyncio.sleep(0.01)
    return False
