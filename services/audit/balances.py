"""Audit checks beyond the hash chains: the balances the append script guards must be
exactly what the events say (chips issued − redeemed − wagered + paid back, per player)."""

from __future__ import annotations

from dataclasses import dataclass

from projections.bankroll import Bankrolls
from projections.runner import ProjectionRunner
from services.store.redis_store import EventStore

ATTEMPTS = 5
"""On a live store the log may move while it is read: try this often for a still moment."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BalanceReport:
    players: int
    mismatches: tuple[tuple[str, int, int], ...]
    """(player, balance the events give, balance the store guards)."""
    settled: bool
    """False when the log kept moving on every attempt (nothing proven either way)."""

    @property
    def ok(self) -> bool:
        return self.settled and not self.mismatches


async def verify_balances(store: EventStore) -> BalanceReport:
    """Fold the whole org log into bankrolls and compare each player's balance with the
    guarded balance, at a moment when no event was appended between the two reads."""
    for _ in range(ATTEMPTS):
        before = await store.log_head()
        guarded = await store.balances()
        bankrolls = Bankrolls()
        runner = ProjectionRunner(store, [bankrolls], checkpoint="audit")
        await runner.catch_up()
        if runner.last_id != before or await store.log_head() != before:
            continue
        folded = {p: v["balance"] for p, v in bankrolls.players.items()}
        players = sorted(set(folded) | set(guarded))
        mismatches = tuple(
            (p, folded.get(p, 0), guarded.get(p, 0))
            for p in players
            if folded.get(p, 0) != guarded.get(p, 0)
        )
        return BalanceReport(players=len(players), mismatches=mismatches, settled=True)
    return BalanceReport(players=0, mismatches=(), settled=False)
