"""The cage's pure rules: chips sold to and cashed out from players' balances.

The balance itself is guarded inside the append (a cash-out or a bet can never take a
balance below zero, docs/ARCHITECTURE.md "The append script"): ``decide`` checks the
request, the store checks the money.
"""

from __future__ import annotations

from dataclasses import dataclass

from events.base import Event
from events.cage import ChipsIssued, ChipsRedeemed
from events.records import replace
from services.aggregates import RuleError


@dataclass(frozen=True, slots=True, kw_only=True)
class CageState:
    """The cage's stream position and what it has moved in total."""

    version: int = 0
    issued: int = 0
    redeemed: int = 0
    max_transaction: int = 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class BuyChips:
    player: str
    amount: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CashOut:
    player: str
    amount: int


CageCommand = BuyChips | CashOut


def decide(state: CageState, command: CageCommand) -> list[Event]:
    """Chips in or out for ``amount`` cents, at most the cage's transaction limit."""
    if command.amount > state.max_transaction:
        raise RuleError(
            "over_limit",
            f"{command.amount} cents is over the cage's transaction limit of "
            f"{state.max_transaction} cents",
        )
    if isinstance(command, BuyChips):
        return [ChipsIssued(player=command.player, amount=command.amount)]
    return [ChipsRedeemed(player=command.player, amount=command.amount)]


def evolve(state: CageState, event: Event) -> CageState:
    if isinstance(event, ChipsIssued):
        return replace(state, version=state.version + 1, issued=state.issued + event.amount)
    if isinstance(event, ChipsRedeemed):
        return replace(state, version=state.version + 1, redeemed=state.redeemed + event.amount)
    return replace(state, version=state.version + 1)
