"""Builders for the audit's checker tests: envelopes sealed as the store seals them
(``events.envelope.seal``), one causation per command, from events the real pure rules
decide (the table actor's own adapter with the server's Chance on a seeded generator, the
raffles' and the deals' ``decide``/``evolve``), and tampered copies of them."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from events.base import Event, from_data
from events.envelope import GENESIS_HASH, Envelope, event_id, seal
from services.audit.base import Checker, Discrepancy
from services.chance import ServerChance, seal_key
from services.games.single_outcome import DrawOutcome, RecordOutcome
from services.tables.actor import TableRules
from services.tables.rules import (
    CallNoMoreBets,
    OpenRound,
    OpenTable,
    PlaceBet,
    TableState,
)

SECRET = b"audit test secret, 32 bytes long"
T0 = 1_795_000_000_000


class Log:
    """An org log being written: every stream's envelopes, in the order appended."""

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []
        self.heads: dict[str, tuple[int, str]] = {}
        self.commands = 0

    def append(self, stream: str, events: Sequence[Event], actor: str = "dealer-1") -> None:
        """Seal the events of one command on ``stream`` (one causation), as the store does."""
        self.commands += 1
        causation = f"cmd-{self.commands}"
        seq, prev = self.heads.get(stream, (0, GENESIS_HASH))
        for i, ev in enumerate(events):
            seq += 1
            env = seal(
                ev,
                id=event_id(stream=stream, actor=actor, causation=causation, index=i),
                stream=stream,
                seq=seq,
                ts=T0 + len(self.envelopes),
                actor=actor,
                causation=causation,
                correlation=None,
                prev_hash=prev,
            )
            prev = env.hash
            self.envelopes.append(env)
        self.heads[stream] = (seq, prev)


class Table:
    """A table driven through the table actor's adapter, every command's events sealed."""

    def __init__(
        self,
        log: Log,
        game: str,
        mode: str = "rng",
        *,
        table: str = "t1",
        seed: int = 7,
        **options: Any,
    ) -> None:
        self.log = log
        self.stream = f"table:{table}"
        self.rules = TableRules(ServerChance(seal_key(SECRET), random.Random(seed)))
        self.state: TableState = self.rules.initial(self.stream)
        self.do(OpenTable(game=game, config=options, outcome_mode=mode))  # type: ignore[arg-type]

    def do(self, command: Any) -> list[Event]:
        events = self.rules.decide(self.state, command)
        for ev in events:
            self.state = self.rules.evolve(self.state, ev)
        if events:
            self.log.append(self.stream, events)
        return events

    def round(self, bets: Iterable[tuple[str, dict[str, Any], int]], outcome: Any = None) -> None:
        """A round of one outcome: its bets, no more bets, the outcome (drawn when None)."""
        self.do(OpenRound())
        for player, bet, amount in bets:
            self.do(PlaceBet(player=player, bet=bet, amount=amount))
        self.do(CallNoMoreBets())
        self.do(DrawOutcome() if outcome is None else RecordOutcome(outcome=outcome))


def run(checker: Checker, envelopes: Iterable[Envelope]) -> Checker:
    """Feed the checker what the audit's engine would: each envelope of its types, in
    log order, then the end of the log."""
    for env in envelopes:
        if checker.types is None or env.type in checker.types:
            checker.observe(env)
    checker.finish()
    return checker


def tampered(
    envelopes: Sequence[Envelope], index: int, change: Callable[[dict[str, Any]], None]
) -> list[Envelope]:
    """A copy of the log with the data of ``envelopes[index]`` changed in place by
    ``change`` (its hash left as it was: the chains' check names that; here the rules do)."""
    env = envelopes[index]
    data = from_data(env.type, env.version, env.data)  # a valid body before the change
    assert data is not None
    raw = _copy(env.data)
    change(raw)
    out = list(envelopes)
    out[index] = replace(env, data=raw)
    return out


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value


def index_of(envelopes: Sequence[Envelope], type_: str, nth: int = 0, **match: Any) -> int:
    """The position of the ``nth`` envelope of ``type_`` whose data holds ``match``."""
    found = [
        i
        for i, env in enumerate(envelopes)
        if env.type == type_ and all(env.data.get(k) == v for k, v in match.items())
    ]
    return found[nth]


def named(found: Sequence[Discrepancy], env: Envelope) -> list[Discrepancy]:
    """The discrepancies that name ``env`` (its stream and seq)."""
    return [d for d in found if d.stream == env.stream and d.seq == env.seq]
