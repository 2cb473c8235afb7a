"""The actors' rules adapters of a bell jar deal's stream and of the serial registry.

Deal money is cash at the jar or the machine, not chips: no balance moves. Nothing is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from events.base import Event
from events.bell_jars import DealSerialClaimed
from events.envelope import Envelope
from services.aggregates import DEAL_PREFIX, RuleError
from services.bell_jars import rules
from services.bell_jars.limits import DEFAULT_LIMITS, DEFAULT_TIMEZONE, DealLimits
from services.bell_jars.state import DealCommand, DealState, RedeemTicket


class DealRules:
    """What the generic actor needs to run one deal's stream: the rules with the limits
    in force and the organization's timezone (written into a redemption as data)."""

    def __init__(
        self,
        limits: DealLimits = DEFAULT_LIMITS,
        timezone: str = DEFAULT_TIMEZONE,
        licensed: frozenset[str] | None = None,
    ) -> None:
        self.limits = limits
        self.timezone = timezone
        self.licensed = licensed

    def initial(self, stream: str) -> DealState:
        return DealState(deal=stream.removeprefix(DEAL_PREFIX))

    def decide(self, state: DealState, command: DealCommand) -> list[Event]:
        if isinstance(command, RedeemTicket) and command.timezone != self.timezone:
            command = replace(command, timezone=self.timezone)
        return rules.decide(state, command, self.limits, self.licensed)

    def evolve(self, state: DealState, event: Event) -> DealState:
        return rules.evolve(state, event)

    def correlation(self, state: DealState) -> str | None:
        """Events carry the deal they belong to, or the lead of its combination."""
        return state.lead or state.deal if state.registered else None

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return []

    def debtors(self, state: DealState, command: DealCommand) -> Sequence[str]:
        return ()

    def result(self, state: DealState, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        """The reply: the last seq and what the command's events recorded."""
        out: dict[str, Any] = {
            "seq": envelopes[-1].seq if envelopes else state.version,
            "deal": state.deal,
        }
        for env in envelopes:
            data = env.data
            match env.type:
                case "DealPutInPlay":
                    out["deals"] = list(data["deals"])
                case "TicketsSold":
                    out["sold"] = data["count"]
                    out["amount"] = data["amount"]
                case "TicketRedeemed":
                    out["prize"] = data["prize"]
                    out["value"] = data["value"]
                    out["kind"] = data["kind"]
                    out["retain_until"] = data["retain_until"]
                case "DealClosed":
                    out["closed"] = data["reason"]
                    out["unsold"] = data["unsold"]
        return out


@dataclass(frozen=True, slots=True)
class SerialRegistry:
    """The serial numbers of the organization's deals, each with its deal."""

    version: int = 0
    claims: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimSerial:
    """The server claims ``serial`` for ``deal`` before deciding its registration."""

    serial: str
    deal: str
    now_ms: int


class SerialRegistryRules:
    """The actor of ``deal-serials``: one writer, so two registrations of one serial
    number are decided one after the other."""

    def initial(self, stream: str) -> SerialRegistry:
        return SerialRegistry()

    def decide(self, state: SerialRegistry, command: ClaimSerial) -> list[Event]:
        if not isinstance(command, ClaimSerial):  # pragma: no cover - no op reaches it
            raise RuleError("bad_request", "the serial registry takes claims only")
        return rules.claim_serial(state.claims, command.serial, command.deal, command.now_ms)

    def evolve(self, state: SerialRegistry, event: Event) -> SerialRegistry:
        if isinstance(event, DealSerialClaimed):
            claims = MappingProxyType({**state.claims, event.serial: event.deal})
            return SerialRegistry(state.version + 1, claims)
        return SerialRegistry(state.version + 1, state.claims)

    def correlation(self, state: SerialRegistry) -> str | None:
        return None

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return []

    def debtors(self, state: SerialRegistry, command: ClaimSerial) -> Sequence[str]:
        return ()

    def result(self, state: SerialRegistry, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        return {"seq": envelopes[-1].seq if envelopes else state.version}
