"""A round of one outcome (roulette, the wheels, Joker Seven): the adapter from
:class:`~services.games.base.OutcomeGame` to a game that owns its round.

After no more bets the dealer enters the device's result (``RecordOutcome``, dealer mode)
or the server draws it (``DrawOutcome``, RNG mode); the outcome and the settlement of every
bet of the round end the round (``OutcomeRecorded`` then ``Settled``). The game's state is
the table's recent outcomes (roulette checks a spin against the previous pocket,
4620.4(c)(3)). Pure except :meth:`SingleOutcome.prepare`, which takes the draw from the
Chance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from events.base import Event
from events.records import replace
from events.tables import OutcomeRecorded, Settled
from services.aggregates import RuleError
from services.games.base import (
    JSON,
    Chance,
    OutcomeGame,
    PlacedBet,
    PlayerBetRule,
    Round,
    Settlement,
)

RECENT_OUTCOMES = 20
"""How many past outcomes a table keeps for tablets (a display setting)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordOutcome:
    """The dealer enters the physical device's result (dealer mode)."""

    outcome: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class DrawOutcome:
    """The server draws the outcome (RNG mode); ``draw`` is written by ``prepare``: the
    CSPRNG's integers, one below each of the game's ``draw_bounds``."""

    draw: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OutcomePlay:
    """The state a round of one outcome keeps: the last winning key and the recent ones."""

    last_outcome: str | None = None
    recent: tuple[str, ...] = ()


class SingleOutcome:
    """Runs an :class:`OutcomeGame` as a :class:`~services.games.base.Game`."""

    def __init__(self, game: OutcomeGame) -> None:
        self.game = game
        self.name = game.name
        if isinstance(game, PlayerBetRule):
            # The table's hook, for this game only: roulette's bets never pay for it.
            rule = game

            def check_player_bet(
                config: Mapping[str, JSON],
                play: Any,
                player: str,
                bet: Mapping[str, JSON],
                placed: Iterable[PlacedBet],
            ) -> None:
                rule.check_player_bet(config, bet, player, placed)

            self.check_player_bet = check_player_bet

    def __repr__(self) -> str:
        return f"SingleOutcome({self.name!r})"

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        return self.game.parse_config(raw)

    def initial(self, config: Mapping[str, JSON]) -> OutcomePlay:
        return OutcomePlay()

    def opening(self, config: Mapping[str, JSON]) -> list[Event]:
        return []

    def check_bet(
        self, config: Mapping[str, JSON], play: Any, bet: JSON, amount: int
    ) -> Mapping[str, JSON]:
        return self.game.check_bet(config, bet, amount)

    def prepare(
        self, config: Mapping[str, JSON], play: Any, round: Round, step: Any, chance: Chance
    ) -> Any:
        """A server draw takes one CSPRNG integer below each bound, against the state the
        step is decided on."""
        if isinstance(step, DrawOutcome) and step.draw is None and round.outcome_mode == "rng":
            return DrawOutcome(draw=tuple(chance.below(b) for b in self.game.draw_bounds(config)))
        return step

    def decide(self, config: Mapping[str, JSON], play: Any, round: Round, step: Any) -> list[Event]:
        """The outcome, entered or drawn after no more bets, and the round's settlement.
        The ``OutcomeRecorded.source`` of an entered outcome is the game's
        :meth:`~services.games.base.OutcomeGame.entered_source` (at a dice game, who
        threw); of a drawn one ``rng``."""
        if isinstance(step, RecordOutcome):
            if round.outcome_mode != "dealer":
                raise RuleError("wrong_mode", f"{round.table} draws its outcomes: use draw_outcome")
            _require_closed_round(round)
            outcome = self.game.check_outcome(config, step.outcome, play.last_outcome)
            source = self.game.entered_source(outcome)
            return self.outcome_and_settlement(config, play, round, outcome, source)
        if isinstance(step, DrawOutcome):
            if round.outcome_mode != "rng":
                raise RuleError(
                    "wrong_mode", f"{round.table} has a physical device: use record_outcome"
                )
            _require_closed_round(round)
            if step.draw is None:
                raise RuleError("bad_request", "a server draw needs its integers")
            outcome = self.game.drawn_outcome(config, step.draw, play.last_outcome)
            return self.outcome_and_settlement(config, play, round, outcome, "rng")
        raise RuleError(
            "wrong_game",
            f"{round.table} plays {self.name}: {type(step).__name__} is not one of its steps",
        )

    def outcome_and_settlement(
        self,
        config: Mapping[str, JSON],
        play: Any,
        round: Round,
        outcome: Mapping[str, JSON],
        source: str,
    ) -> list[Event]:
        """``OutcomeRecorded`` and the ``Settled`` of every bet, in the order placed."""
        settlements = self.settle(config, round.bets, outcome)
        return [
            OutcomeRecorded(round=round.number, outcome=outcome, source=source),
            Settled(
                round=round.number,
                outcome=outcome,
                settlements=settlements,
                wagered=sum([s.amount for s in settlements]),
                paid=sum([s.paid for s in settlements]),
            ),
        ]

    def settle(
        self, config: Mapping[str, JSON], bets: Sequence[PlacedBet], outcome: Mapping[str, JSON]
    ) -> tuple[Settlement, ...]:
        """Every bet of the round, in the order placed, settled by the game's payout table."""
        return self.game.settle(config, bets, outcome)

    def evolve(self, config: Mapping[str, JSON], play: Any, event: Event) -> Any:
        if isinstance(event, OutcomeRecorded):
            key = self.game.winning_key(event.outcome)
            return replace(play, last_outcome=key, recent=(key, *play.recent)[:RECENT_OUTCOMES])
        return play

    def void(self, config: Mapping[str, JSON], play: Any, round: Round) -> list[Event]:
        """A voided round: every bet returned, in the order placed, as its ``Settled``
        (with an empty outcome)."""
        settlements = tuple(
            Settlement(b.bet_id, b.player, b.amount, "returned", b.amount) for b in round.bets
        )
        amount = sum([s.amount for s in settlements])
        return [
            Settled(
                round=round.number, outcome={}, settlements=settlements, wagered=amount, paid=amount
            )
        ]

    def closed(self, play: Any) -> bool:
        return False

    def debtors(self, play: Any, round: Round, step: Any) -> Sequence[str]:
        return ()

    def view(self, config: Mapping[str, JSON], play: Any, round: Round) -> dict[str, JSON]:
        return {"last_outcome": play.last_outcome, "recent_outcomes": list(play.recent)}

    def result(self, events: Sequence[Event]) -> dict[str, JSON]:
        """The outcome and what the round paid, from its ``Settled``."""
        out: dict[str, JSON] = {}
        for ev in events:
            if isinstance(ev, Settled):
                out["outcome"] = ev.outcome
                out["paid"] = ev.paid
                out["wagered"] = ev.wagered
        return out


def _require_closed_round(round: Round) -> None:
    if round.phase == "idle":
        raise RuleError("round_not_open", f"no round of {round.table} is in play")
    if round.phase == "betting":
        raise RuleError(
            "bets_open",
            f"round {round.number} of {round.table}: call no more bets before the outcome",
        )
