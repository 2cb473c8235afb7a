"""A tiny pure driver for Black Jack tests: it plays the table's part (TableOpened,
RoundOpened, BetPlaced, BetCancelled) and runs the game's steps through ``prepare``,
``decide`` and ``evolve`` as the table actor would, folding every event into ``play``."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from events.base import Event
from events.black_jack import CardDealt, HoleCardRevealed
from events.tables import (
    BetCancelled,
    BetPlaced,
    NoMoreBets,
    PartSettled,
    RoundEnded,
    RoundOpened,
    TableOpened,
    WagerAdded,
)
from services.aggregates import RuleError
from services.chance import ServerChance, seal_key
from services.games.base import PlacedBet, Round, RoundPhase
from services.games.black_jack import BLACK_JACK, BlackJackPlay

SECRET = b"black-jack test secret, 32 bytes"


def chance(seed: int, secret: bytes = SECRET) -> ServerChance:
    """The server's Chance with a seeded generator (tests only)."""
    return ServerChance(seal_key(secret), random.Random(seed))


class Table:
    """One Black Jack table: its events, the game's ``play`` and the round the table keeps."""

    def __init__(
        self, mode: str = "rng", *, seed: int = 1, table: str = "bj-1", **options: Any
    ) -> None:
        self.config = BLACK_JACK.parse_config({"tie_option": 1, **options})
        self.mode = mode
        self.table = table
        self.chance = chance(seed)
        self.play: BlackJackPlay = BLACK_JACK.initial(self.config)
        self.events: list[Event] = []
        self.number = 0
        self.phase: RoundPhase = "idle"
        self.bets: dict[str, PlacedBet] = {}
        self._bet_seq = 0
        self.fold(
            TableOpened(table=table, game="black_jack", config=dict(self.config), outcome_mode=mode)
        )

    # --- the table's part ------------------------------------------------------------------

    def fold(self, ev: Event) -> None:
        self.events.append(ev)
        self.play = BLACK_JACK.evolve(self.config, self.play, ev)
        match ev:
            case RoundOpened():
                self.number, self.phase, self.bets = ev.round, "betting", {}
            case BetPlaced():
                self.bets[ev.bet_id] = PlacedBet(
                    bet_id=ev.bet_id, player=ev.player, bet=ev.bet, amount=ev.amount
                )
            case BetCancelled():
                del self.bets[ev.bet_id]
            case NoMoreBets():
                self.phase = "no_more_bets"
            case RoundEnded():
                self.phase = "idle"

    def round(self) -> Round:
        return Round(
            table=self.table,
            number=self.number,
            phase=self.phase,
            outcome_mode=self.mode,  # type: ignore[arg-type]
            bets=tuple(self.bets.values()),
            next_seq=len(self.events) + 1,
        )

    def open_round(self) -> None:
        self.fold(RoundOpened(round=self.number + 1))

    def no_more_bets(self) -> None:
        """The table's own call "no more bets" (the dealer's, before any deal)."""
        self.fold(NoMoreBets(round=self.number))

    def bet(self, player: str, space: int, amount: int) -> str:
        """A bet as the table places it (the game checks it first)."""
        canonical = BLACK_JACK.check_bet(self.config, self.play, {"space": space}, amount)
        self._bet_seq += 1
        bet_id = f"b{self.number}.{self._bet_seq}"
        self.fold(
            BetPlaced(round=self.number, bet_id=bet_id, player=player, bet=canonical, amount=amount)
        )
        return bet_id

    def cancel(self, bet_id: str) -> None:
        b = self.bets[bet_id]
        self.fold(BetCancelled(round=self.number, bet_id=bet_id, player=b.player, amount=b.amount))

    # --- the game's steps ------------------------------------------------------------------

    def step(self, step: Any) -> list[Event]:
        """Prepare, decide, fold: the events of one step."""
        prepared = BLACK_JACK.prepare(self.config, self.play, self.round(), step, self.chance)
        events = BLACK_JACK.decide(self.config, self.play, self.round(), prepared)
        for ev in events:
            self.fold(ev)
        return events

    def refused(self, step: Any) -> RuleError:
        """The step's RuleError; asserts that it changed nothing."""
        before, count = self.play, len(self.events)
        try:
            self.step(step)
        except RuleError as e:
            assert self.play == before and len(self.events) == count
            return e
        raise AssertionError(f"{step!r} was not refused")

    def view(self) -> dict[str, Any]:
        return BLACK_JACK.view(self.config, self.play, self.round())

    def round_events(self) -> list[Event]:
        """The events since the last RoundOpened."""
        last = max(i for i, e in enumerate(self.events) if isinstance(e, RoundOpened))
        return self.events[last:]


def settlements(events: Sequence[Event]) -> dict[str, tuple[str, int]]:
    """Wager id -> (result, paid) over the settled parts of ``events``."""
    return {
        s.bet_id: (s.result, s.paid)
        for ev in events
        if isinstance(ev, PartSettled)
        for s in ev.settlements
    }


def cards_of(events: Sequence[Event]) -> Mapping[str, list[str]]:
    """Holder -> cards dealt face up (and the hole card once revealed) over ``events``."""
    out: dict[str, list[str]] = {}
    for ev in events:
        if isinstance(ev, CardDealt) and ev.card is not None:
            out.setdefault(ev.to, []).append(ev.card)
        elif isinstance(ev, HoleCardRevealed):
            out.setdefault("dealer", []).insert(1, ev.card)
    return out


def debits(events: Sequence[Event]) -> int:
    return sum(e.amount for e in events if isinstance(e, BetPlaced | WagerAdded)) - sum(
        e.amount for e in events if isinstance(e, BetCancelled)
    )


def paid(events: Sequence[Event]) -> int:
    return sum(e.paid for e in events if isinstance(e, PartSettled))
