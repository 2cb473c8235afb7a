"""The table actor's rules adapter: table rules, balance moves and replies for the actor."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from events.base import Event
from events.envelope import Envelope
from events.money import balance_moves
from services.aggregates import TABLE_PREFIX
from services.tables import rules
from services.tables.rules import PlaceBet, TableCommand, TableState


class TableRules:
    """What the generic actor needs to run one table's stream."""

    def initial(self, stream: str) -> TableState:
        return TableState(table=stream.removeprefix(TABLE_PREFIX))

    def decide(self, state: TableState, command: TableCommand) -> list[Event]:
        return rules.decide(state, command)

    def evolve(self, state: TableState, event: Event) -> TableState:
        return rules.evolve(state, event)

    def correlation(self, state: TableState) -> str | None:
        """Events of a round carry the round as correlation id (``roulette-1#12``)."""
        return f"{state.table}#{state.round}" if state.round else None

    def moves(self, events: Sequence[Event]) -> list[tuple[str, int]]:
        return balance_moves(events)

    def debtors(self, command: TableCommand) -> Sequence[str]:
        return (command.player,) if isinstance(command, PlaceBet) else ()

    def result(self, state: TableState, envelopes: Sequence[Envelope]) -> dict[str, Any]:
        """The reply: the last seq and round; the bet id of a bet; the outcome and payouts;
        at a merchandise wheel the items awarded, the items stocked and a closing."""
        out: dict[str, Any] = {"seq": envelopes[-1].seq if envelopes else state.version}
        if state.round:
            out["round"] = state.round
        for env in envelopes:
            if env.type == "BetPlaced":
                out["bet_id"] = env.data["bet_id"]
            elif env.type == "Settled":
                out["outcome"] = env.data["outcome"]
                out["paid"] = env.data["paid"]
                out["wagered"] = env.data["wagered"]
            elif env.type == "MerchandiseAwarded":
                d = env.data
                award = {k: d[k] for k in ("bet_id", "player", "item", "prize", "value")}
                out.setdefault("awards", []).append(award)
            elif env.type == "MerchandiseStocked":
                out["stocked"] = len(env.data["items"])
            elif env.type == "PrizeLimitReached":
                out["closed"] = "prize_limit"
        return out
