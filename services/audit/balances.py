"""Audit checks beyond the hash chains: the balances the append script guards must be
exactly what the events say (chips issued − redeemed − wagered + paid back, per player)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from events.base import current_version, upcast
from events.envelope import Envelope
from events.money import MONEY_EVENTS, SINGLE_MOVES, MoneyDataError, data_moves, money_fields
from projections.bankroll import Bankrolls
from projections.runner import ProjectionRunner
from services.audit.base import Discrepancy
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


def unfoldable(
    check: str, type_: str, stream: str, seq: int, log_id: str | None, error: Exception
) -> Discrepancy:
    """The discrepancy naming a money event whose data moves no balance as its type says
    (a forged amount, a settlement line without ``paid``): it is left out of the balances
    and the audit goes on."""
    return Discrepancy(
        check=check,
        stream=stream,
        seq=seq,
        what=f"{type_}: its money moves cannot be read, so it moves no balance",
        expected="a player and whole cents (int) per move",
        found=str(error) if isinstance(error, MoneyDataError) else repr(error),
        log_id=log_id,
    )


PLAYER_PREFIX = "player:"
"""The ``stream`` of a discrepancy about a player's balance (a figure of no one event)."""


class BalanceChecker:
    """The audit's balance check: every player's chip balance folded from the log (chips
    issued − redeemed − wagered + paid back, ``events.money``), against the balances the
    store guards when there is a store (``guarded``, read in one transaction with the log
    head the audit stops at: ``services.audit.engine.snapshot``). A balance the log takes
    below zero is a discrepancy too: the append script refuses such a command (docs/
    ARCHITECTURE.md, "The append script"), so only an edited log gives one."""

    name = "balances"
    types: frozenset[str] | None = MONEY_EVENTS

    def __init__(
        self, guarded: Mapping[str, int] | None = None, *, tally_only: bool = False
    ) -> None:
        self.guarded = guarded
        self.tally_only = tally_only
        """A share of a shared pass (``services.audit.shares``): it sums its streams' moves
        and checks nothing at the end; the first share checks the sums (:meth:`absorb`)."""
        self.balances: dict[str, int] = {}
        self.checked: Counter[str] = Counter()
        self.discrepancies: list[Discrepancy] = []
        self._moves = 0
        self._versions: dict[str, int | None] = {}

    def observe(self, envelope: Envelope) -> None:
        """Fold one money event's moves into the players' balances; an event whose data
        moves no balance as its type says (a forged one) is named and moves nothing."""
        try:
            self.fold(envelope.type, envelope.version, envelope.data)
        except Exception as e:  # any fault of a forged event: named, not fatal
            self.discrepancies.append(
                unfoldable(self.name, envelope.type, envelope.stream, envelope.seq,
                           envelope.log_id, e)
            )  # fmt: skip

    def fold(self, type_: str, version: int, data: dict[str, Any]) -> None:
        """:meth:`observe` from the event's type, version and data alone (the engine's
        cheaper call: ``services.audit.engine.DataFolder``). Raises (``events.money.
        MoneyDataError`` or whatever forged data gives) before it moves any balance, for
        the caller to name the event (:func:`unfoldable`)."""
        current = self._versions.get(type_, -1)
        if current == -1:
            current = self._versions[type_] = current_version(type_)
        if current is not None and version != current:
            data = upcast(type_, version, data)
        balances = self.balances
        single = SINGLE_MOVES.get(type_)
        self._moves += 1
        if single is not None:
            try:
                player = data["player"]
                amount = data["amount"]
            except (KeyError, TypeError):
                player = amount = None
            # A bool or a float would fold without a fault: the type is checked here.
            if player.__class__ is not str or amount.__class__ is not int:
                player, amount = money_fields(data)  # raises MoneyDataError, naming it
            balances[player] = balances.get(player, 0) + single[1] * amount
            return
        for player, cents, _kind in data_moves(type_, data):
            balances[player] = balances.get(player, 0) + cents

    def absorb(self, balances: Mapping[str, int]) -> None:
        """Add another share's sums of its streams' moves, before :meth:`finish`."""
        mine = self.balances
        for player, cents in balances.items():
            mine[player] = mine.get(player, 0) + cents

    def finish(self) -> None:
        """Compare each player's folded balance with the guarded one (and with zero)."""
        self.checked["money events"] += self._moves
        if self.tally_only:
            return
        guarded = self.guarded
        players = sorted(set(self.balances) | set(guarded or {}))
        self.checked["players"] += len(players)
        for player in players:
            folded = self.balances.get(player, 0)
            if folded < 0:
                self.discrepancies.append(
                    Discrepancy(
                        check=self.name,
                        stream=PLAYER_PREFIX + player,
                        seq=None,
                        what=f"{player}'s balance as the log gives it is below zero",
                        expected=0,
                        found=folded,
                    )
                )
            if guarded is not None and guarded.get(player, 0) != folded:
                self.discrepancies.append(
                    Discrepancy(
                        check=self.name,
                        stream=PLAYER_PREFIX + player,
                        seq=None,
                        what=f"{player}'s balance: the log gives it, the store guards another",
                        expected=folded,
                        found=guarded.get(player, 0),
                    )
                )
