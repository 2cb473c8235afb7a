"""The raffle actor's rules adapter: raffle rules, the CSPRNG draw, and replies.

Raffle money is cash at the door or online, not chips: no balance moves. The drawing's
random indices are drawn here, against the exact state the drawing is decided on (a sale
queued just before the drawing is in the drum), from the server's Chance (a CSPRNG,
unbiased); the pure rules take them as data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from events.base import Event
from events.envelope import Envelope
from services.aggregates import RAFFLE_PREFIX
from services.chance import ServerChance
from services.raffles import rules
from services.raffles.state import HoldDrawing, RaffleCommand, RaffleState


class RaffleRules:
    """What the generic actor needs to run one raffle's stream."""

    def __init__(self, chance: ServerChance) -> None:
        self.chance = chance

    def initial(self, stream: str) -> RaffleState:
        return RaffleState(raffle=stream.removeprefix(RAFFLE_PREFIX))

    def decide(self, state: RaffleState, command: RaffleCommand) -> list[Event]:
        if isinstance(command, HoldDrawing) and command.draws is None and state.method == "rng":
            sizes = rules.draw_sizes(state)
            draws = tuple(self.chance.below(size) for size in sizes)
            command = dataclasses.replace(command, draws=draws)
        return rules.decide(state, command)

    def evolve(self, state: RaffleState, event: Event) -> RaffleState:
        return rules.evolve(state, event)

    def correlation(self, state: RaffleState) -> str | None:
        """Events carry the raffle and the round they belong to (``qoh-1#12``: week 12)."""
        if not state.opened:
            return None
        return f"{state.raffle}#{state.event_round or state.round}"

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return []

    def debtors(self, state: RaffleState, command: RaffleCommand) -> Sequence[str]:
        return ()

    def result(self, state: RaffleState, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        """The reply: the last seq and the round; what the command's events decided."""
        out: dict[str, Any] = {
            "seq": envelopes[-1].seq if envelopes else state.version,
            "round": state.round,
        }
        prizes: list[dict[str, Any]] = []
        for env in envelopes:
            data = env.data
            match env.type:
                case "TicketSold":
                    out["serials"] = data["serials"]
                    out["amount"] = data["amount"]
                    out["round"] = data["round"]
                case "DrawingHeld":
                    out["drawing"] = data["drawing"]
                    out["winners"] = data["winners"]
                case "CardRevealed":
                    out["card"] = data["card"]
                    out["position"] = data["position"]
                    out["queen_of_hearts"] = data["queen_of_hearts"]
                case "KeyTried":
                    out["opened"] = data["opened"]
                case "ChestCarriedOver":
                    out["chest"] = data["chest"]
                case "PrizeAwarded":
                    prizes.append(
                        {"serial": data["serial"], "prize": data["prize"], "amount": data["amount"]}
                    )
                case "RaffleEnded":
                    out["ended"] = True
        if prizes:
            out["prizes"] = prizes
        return out
