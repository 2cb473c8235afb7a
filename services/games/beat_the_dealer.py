"""Beat the Dealer, NY 9 NYCRR 4620.14, as a game that owns its round (``base.Game``).

Two dice, even money, $5 a bet. A round: each player bets in the space in front of them
(one bet per player per round), the dealer calls no more bets and rolls once for the round
(4620.14(b)(2): "The dealer goes first"), then each player with a bet rolls against that
total, in the order the dealer calls them; a higher total wins even money, and the dealer
wins every tie. Each player's roll settles that player's bet (``PartSettled``
``player:<id>``); when every bettor has rolled the round ends (``RoundEnded``). Every rule
and reading is in docs/RULES.md ("Beat the Dealer (4620.14)"). Pure but for
:meth:`BeatTheDealer.prepare`, which takes the server's rolls from the Chance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from events.base import Event
from events.dice import DiceRolled
from events.records import replace
from events.tables import BetCancelled, BetPlaced, PartSettled, RoundEnded, RoundOpened
from services.aggregates import RuleError
from services.games import dice_rounds as rounds
from services.games.base import (
    JSON,
    Chance,
    PlacedBet,
    Round,
    bad_request,
    check_stake,
    invalid_bet,
)
from services.games.dice import DICE_MAX_BET_CENTS, dice_limits
from services.games.dice_rounds import DEALER_TURN, PLAYER_TURN, RollDice

CITE: Final = "4620.14(b)(3)"
"""The section that sets the $5 maximum bet."""
BET_KIND: Final = "beat_the_dealer"
"""The one bet of the layout: ``{"kind": "beat_the_dealer"}``."""
_CONFIG_KEYS: Final = frozenset({"max_bet", "min_bet"})


def player_wins(dealer_total: int, player_total: int) -> bool:
    """4620.14(b)(2): the player wins with a higher total than the dealer's; the dealer wins
    every tie."""
    return player_total > dealer_total


@dataclass(frozen=True, slots=True, kw_only=True)
class Stake:
    """A player's bet of the round; ``settled`` once their roll decided it."""

    bet_id: str
    player: str
    amount: int
    settled: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class BeatTheDealerPlay:
    """The round: its number, the bets, the dealer's roll and the players' rolls."""

    round: int = 0
    bets: tuple[Stake, ...] = ()
    dealer: DiceRolled | None = None
    rolls: tuple[DiceRolled, ...] = ()


class BeatTheDealer:
    """Beat the Dealer, 4620.14: implements ``base.Game[BeatTheDealerPlay]``."""

    name: str = "beat_the_dealer"

    def __repr__(self) -> str:
        return "BeatTheDealer()"

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """``max_bet`` at most 500 cents (the default, 4620.14(b)(3)) and ``min_bet``
        (default 1) at most ``max_bet``; ``invalid_config`` otherwise."""
        rounds.known_options(raw, _CONFIG_KEYS, "Beat the Dealer")
        min_bet, max_bet = dice_limits(raw, DICE_MAX_BET_CENTS, CITE)
        return {"max_bet": max_bet, "min_bet": min_bet}

    def initial(self, config: Mapping[str, JSON]) -> BeatTheDealerPlay:
        return BeatTheDealerPlay()

    def opening(self, config: Mapping[str, JSON]) -> list[Event]:
        return []

    def check_bet(
        self, config: Mapping[str, JSON], play: BeatTheDealerPlay, bet: JSON, amount: int
    ) -> Mapping[str, JSON]:
        """``{"kind": "beat_the_dealer"}`` for ``amount`` cents: ``bad_request`` (not an
        object, another field), ``invalid_bet`` (another kind), ``under_minimum``,
        ``over_limit`` (4620.14(b)(3))."""
        if not isinstance(bet, Mapping):
            raise bad_request('bet must be an object {"kind": "beat_the_dealer"}')
        extra = sorted(str(k) for k in bet if k != "kind")
        if extra:
            raise bad_request(f"unknown bet fields: {', '.join(extra)}")
        if bet.get("kind") != BET_KIND:
            raise invalid_bet(f"the one bet of Beat the Dealer is {BET_KIND!r}")
        check_stake(config, amount, DICE_MAX_BET_CENTS, CITE)
        return {"kind": BET_KIND}

    def check_player_bet(
        self,
        config: Mapping[str, JSON],
        play: BeatTheDealerPlay,
        player: str,
        bet: Mapping[str, JSON],
        placed: Iterable[PlacedBet],
    ) -> None:
        """One bet per player per round (4620.14(b)(1): the wager goes in the space in front
        of the player): ``already_bet`` for a second (take the first back to change it)."""
        if any(b.player == player for b in play.bets):
            raise RuleError(
                "already_bet",
                f"{player} has a bet this round: one bet per player, in the space in front "
                "of them (4620.14(b)(1))",
            )

    def prepare(
        self,
        config: Mapping[str, JSON],
        play: BeatTheDealerPlay,
        round: Round,
        step: Any,
        chance: Chance,
    ) -> Any:
        """RNG mode: a roll gets the server's two dice (``rounds.prepare_roll``)."""
        return rounds.prepare_roll(step, round, chance)

    def decide(
        self, config: Mapping[str, JSON], play: BeatTheDealerPlay, round: Round, step: Any
    ) -> list[Event]:
        """A roll: the dealer's (``player`` None), once per round, after no more bets; then
        a bettor's, once each, settling their bet against the dealer's total. Codes:
        ``wrong_game``, ``round_not_open``, ``bets_open``, ``already_rolled`` (the dealer's
        roll twice, a player's twice), ``dealer_rolls_first`` (a player's roll before the
        dealer's), ``no_bet`` (a player without a bet this round), ``wrong_mode`` and the
        roll's own codes (``wrong_number_of_dice``, ``invalid_die_face``,
        ``invalid_thrower``, ``bad_request``)."""
        if not isinstance(step, RollDice):
            raise RuleError("wrong_game", f"{type(step).__name__} is not a Beat the Dealer step")
        rounds.check_rolling(round)
        player = rounds.roller(step)
        n = play.round
        if player is None:
            if play.dealer is not None:
                raise RuleError("already_rolled", "the dealer rolls once for the round")
            roll = rounds.roll_of(step, round, DEALER_TURN)
            out: list[Event] = [rounds.rolled(n, DEALER_TURN, None, roll)]
            if not play.bets:
                out.append(RoundEnded(round=n))  # nobody bet: nothing to roll against
            return out
        if play.dealer is None:
            raise RuleError(
                "dealer_rolls_first", "the dealer rolls first, 4620.14(b)(2): roll for the dealer"
            )
        stake = next((b for b in play.bets if b.player == player), None)
        if stake is None:
            raise RuleError("no_bet", f"{player} has no bet this round")
        if stake.settled:
            raise RuleError("already_rolled", f"{player} has rolled this round")
        roll = rounds.roll_of(step, round, PLAYER_TURN)
        won = player_wins(play.dealer.total, roll.total)
        out = [
            rounds.rolled(n, PLAYER_TURN, player, roll),
            rounds.part(
                n,
                f"player:{player}",
                [rounds.even_money(stake.bet_id, player, stake.amount, won)],
            ),
        ]
        if all(b.settled or b.player == player for b in play.bets):
            out.append(RoundEnded(round=n))
        return out

    def evolve(
        self, config: Mapping[str, JSON], play: BeatTheDealerPlay, event: Event
    ) -> BeatTheDealerPlay:
        match event:
            case RoundOpened():
                return BeatTheDealerPlay(round=event.round)
            case BetPlaced():
                stake = Stake(bet_id=event.bet_id, player=event.player, amount=event.amount)
                return replace(play, bets=(*play.bets, stake))
            case BetCancelled():
                return replace(play, bets=tuple(b for b in play.bets if b.bet_id != event.bet_id))
            case DiceRolled():
                if event.turn == DEALER_TURN:
                    return replace(play, dealer=event)
                return replace(play, rolls=(*play.rolls, event))
            case PartSettled():
                done = {s.bet_id for s in event.settlements}
                bets = tuple(replace(b, settled=True) if b.bet_id in done else b for b in play.bets)
                return replace(play, bets=bets)
        return play

    def void(
        self, config: Mapping[str, JSON], play: BeatTheDealerPlay, round: Round
    ) -> list[Event]:
        """Every bet whose player has not rolled is returned; what was settled stands."""
        open_bets = [
            rounds.returned(b.bet_id, b.player, b.amount) for b in play.bets if not b.settled
        ]
        out: list[Event] = [rounds.part(play.round, "void", open_bets)] if open_bets else []
        return [*out, RoundEnded(round=play.round)]

    def closed(self, play: BeatTheDealerPlay) -> bool:
        return False

    def debtors(self, play: BeatTheDealerPlay, round: Round, step: Any) -> Sequence[str]:
        return []

    def view(
        self, config: Mapping[str, JSON], play: BeatTheDealerPlay, round: Round
    ) -> dict[str, JSON]:
        """The dealer's roll (or null), each bet with its player's roll and result, and who
        is still to roll."""
        rolls = {r.player: r for r in play.rolls}
        bets = []
        for b in play.bets:
            r = rolls.get(b.player)
            result = None
            if r is not None and play.dealer is not None:
                result = "won" if player_wins(play.dealer.total, r.total) else "lost"
            bets.append(
                {
                    "bet_id": b.bet_id,
                    "player": b.player,
                    "amount": b.amount,
                    "roll": rounds.roll_json(r) if r is not None else None,
                    "result": result,
                }
            )
        return {
            "dealer": rounds.roll_json(play.dealer) if play.dealer is not None else None,
            "stakes": bets,
            "to_roll": [b.player for b in play.bets if not b.settled]
            if play.dealer is not None
            else [],
        }

    def result(self, events: Sequence[Event]) -> dict[str, JSON]:
        """The rolls, the parts settled and whether the round ended."""
        return rounds.reply(events)


BEAT_THE_DEALER: Final = BeatTheDealer()
"""The game as the license lists it: ``beat_the_dealer``."""
