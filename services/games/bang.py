"""Bang, NY 9 NYCRR 4620.15, as a game that owns its round (``base.Game``).

A game of Bang is one round of the table, as 4620.15(c) gives it:

1. all bets, inside and outside (``open_round``, ``place_bet``);
2. "No more bets" (``no_more_bets``);
3. the dealer's roll: its total is the dealer's point (the marker), and it settles the
   inside bets (the one-roll bets on the layout; a big six or big eight on a 6, an 8 or a
   7), never a Beat the Dealer Hi Dice bet; then "Place inside bets only": the game opens
   the bets again (``BetsReopened``) for inside bets only (a Hi Dice bet is refused,
   ``hi_dice_closed``);
4. "No more bets" again (bets close before every roll, 4620.15(d)(1));
5. the shooter's roll, for every inside bet and every Hi Dice bet (against the point): the
   game is over (``RoundEnded``) and the dice pass clockwise.

The shooter is a seated player (``SeatPlayer``; seats are numbered clockwise from the
dealer's left): in the table's first game the first bettor on the dealer's left, then the
next seated player clockwise from the last shooter, game after game; when the offered
player declines, the dealer passes the dice on (``PassDice``). Big six and big eight ride
from roll to roll and game to game until a 6 (8) or a 7 decides them; once a roll has
applied to one it cannot be taken down (``bet_in_action``). Every rule and reading is in
docs/RULES.md ("Bang (4620.15)"). Pure but for :meth:`Bang.prepare`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from events.base import Event
from events.dice import DicePassed, DiceRolled, PlayerSeated, PlayerUnseated
from events.records import replace
from events.tables import (
    BetCancelled,
    BetPlaced,
    BetSettlement,
    BetsReopened,
    PartSettled,
    RoundEnded,
    RoundOpened,
)
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
    invalid_config,
    is_whole_number,
)
from services.games.dice import DICE_MAX_BET_CENTS, dice_limits
from services.games.dice_rounds import DEALER_TURN, PLAYER_TURN, RollDice

CITE: Final = "4620.15(e)"
"""The section that sets the $5 maximum bet."""
MAX_SEATS: Final = 20
"""Most seats a Bang table may set (4620.15(b): any number, "provided there is space at
the table"; a table setting, this its ceiling)."""
DEFAULT_SEATS: Final = 12
"""Seats at a Bang table unless its options say otherwise."""

ONE_ROLL: Final[Mapping[str, frozenset[int]]] = {
    "field": frozenset({2, 3, 4, 9, 10, 11, 12}),  # (d)(2); 2 and 12 pay even money too
    "under_seven": frozenset({2, 3, 4, 5, 6}),  # (d)(3)
    "any_seven": frozenset({7}),  # (d)(4)
    "over_seven": frozenset({8, 9, 10, 11, 12}),  # (d)(5)
}
"""The one-roll inside bets and the totals each wins on (it loses on every other)."""
BIG: Final[Mapping[str, int]] = {"big_six": 6, "big_eight": 8}
"""(d)(6), (d)(7): the total that wins before a 7 (a 7 loses; any other total: no decision)."""
SEVEN: Final = 7
HI_DICE: Final = "hi_dice"
"""(d)(8) Beat the Dealer Hi Dice, the outside bet: the shooter's total against the point."""
ODDS: Final[Mapping[str, int]] = {
    "field": 1,
    "under_seven": 1,
    "any_seven": 4,
    "over_seven": 1,
    "big_six": 1,
    "big_eight": 1,
    HI_DICE: 1,
}
"""What each bet pays "to 1" (4620.15(d)(2)-(8))."""
INSIDE: Final = ("field", "under_seven", "any_seven", "over_seven", "big_six", "big_eight")
KINDS: Final = (*INSIDE, HI_DICE)
_CONFIG_KEYS: Final = frozenset({"max_bet", "min_bet", "seats"})


def decision(kind: str, total: int, point: int | None) -> bool | None:
    """Whether a roll of ``total`` wins (True) or loses (False) a ``kind`` bet, or None when
    it does not decide it. ``point`` is the dealer's point when the shooter rolls, None at
    the dealer's roll (which never decides a Hi Dice bet, 4620.15(c)(4), D-12)."""
    if kind in ONE_ROLL:
        return total in ONE_ROLL[kind]
    if kind in BIG:
        return True if total == BIG[kind] else False if total == SEVEN else None
    if kind == HI_DICE:
        return None if point is None else total > point  # the house wins ties, (d)(8)
    raise ValueError(f"no Bang bet {kind!r}")


def payout(kind: str, amount: int, won: bool) -> int:
    """What a decided bet pays back: the stake and ``ODDS`` to 1 when it won, else 0."""
    return amount * (ODDS[kind] + 1) if won else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class BangBet:
    """A bet on the layout not yet settled: ``round`` is the game it was placed in,
    ``in_action`` whether a roll has applied to it (then it stays up, D-11)."""

    bet_id: str
    player: str
    kind: str
    amount: int
    round: int
    in_action: bool = False


def settle_roll(
    bets: Sequence[BangBet], total: int, point: int | None
) -> tuple[BetSettlement, ...]:
    """Every bet a roll of ``total`` decides, in the order placed (:func:`decision`)."""
    out = []
    for b in bets:
        won = decision(b.kind, total, point)
        if won is not None:
            result = "won" if won else "lost"
            out.append(
                BetSettlement(b.bet_id, b.player, b.amount, result, payout(b.kind, b.amount, won))
            )
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatPlayer:
    """The dealer seats ``player`` at ``seat`` (1 to the table's ``seats``, clockwise from
    the dealer's left)."""

    seat: Any
    player: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class UnseatPlayer:
    """The player at ``seat`` leaves it."""

    seat: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class PassDice:
    """The player offered the dice declines: they pass clockwise to the next seated player."""


STEPS: Final = (RollDice, SeatPlayer, UnseatPlayer, PassDice)


@dataclass(frozen=True, slots=True, kw_only=True)
class BangPlay:
    """The table's game: the bets on the layout (riding ones too), the game's point, the
    seats and where the dice are."""

    round: int = 0
    bets: tuple[BangBet, ...] = ()
    """Every bet not yet settled, in the order placed (big six and eight of earlier games
    first)."""
    game_bets: tuple[tuple[str, str], ...] = ()
    """(bet id, player) of each bet placed in this game and not taken back."""
    point: int | None = None
    """The dealer's point of this game (None before the dealer's roll)."""
    seats: tuple[tuple[int, str], ...] = ()
    """(seat, player), by seat."""
    last_shooter_seat: int | None = None
    """The seat of the last game's shooter (None before the table's first shooter)."""
    passed_to: int | None = None
    """The seat the dealer passed the dice to this game, when the offered player declined."""


def _seated_from(play: BangPlay, seat: int, *, include: bool) -> tuple[int, str] | None:
    """The first seated player clockwise from ``seat`` (that seat itself when ``include``)."""
    if not play.seats:
        return None
    after = [s for s in play.seats if s[0] > seat or (include and s[0] == seat)]
    return after[0] if after else play.seats[0]


def shooter(play: BangPlay) -> tuple[int, str] | None:
    """The (seat, player) who rolls for the game (D-9): the player the dice were passed
    to; else the next seated player clockwise from the last game's shooter; in the table's
    first game the first bettor on the dealer's left (the lowest seat whose player has a bet
    on the layout). None when no one qualifies."""
    if play.passed_to is not None:
        return _seated_from(play, play.passed_to, include=True)
    if play.last_shooter_seat is not None:
        return _seated_from(play, play.last_shooter_seat, include=False)
    bettors = {p for _, p in play.game_bets} | {b.player for b in play.bets}
    return next((s for s in play.seats if s[1] in bettors), None)


def _seat_number(config: Mapping[str, JSON], raw: Any) -> int:
    if not is_whole_number(raw):
        raise bad_request("seat must be a whole number")
    seats = int(config["seats"])
    if not 1 <= raw <= seats:
        raise RuleError("invalid_seat", f"seats are 1 to {seats} at this table")
    return int(raw)


class Bang:
    """Bang, 4620.15: implements ``base.Game[BangPlay]`` and ``base.TableHooks``."""

    name: str = "bang"

    def __repr__(self) -> str:
        return "Bang()"

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """``max_bet`` at most 500 cents (the default, 4620.15(e)), ``min_bet`` (default 1)
        at most ``max_bet``, ``seats`` 1 to 20 (default 12); ``invalid_config``."""
        rounds.known_options(raw, _CONFIG_KEYS, "Bang")
        min_bet, max_bet = dice_limits(raw, DICE_MAX_BET_CENTS, CITE)
        seats = raw.get("seats", DEFAULT_SEATS)
        if not is_whole_number(seats) or not 1 <= seats <= MAX_SEATS:
            raise invalid_config(f"seats must be a whole number from 1 to {MAX_SEATS}")
        return {"max_bet": max_bet, "min_bet": min_bet, "seats": int(seats)}

    def initial(self, config: Mapping[str, JSON]) -> BangPlay:
        return BangPlay()

    def opening(self, config: Mapping[str, JSON]) -> list[Event]:
        return []

    # --- bets ----------------------------------------------------------------------------

    def check_bet(
        self, config: Mapping[str, JSON], play: BangPlay, bet: JSON, amount: int
    ) -> Mapping[str, JSON]:
        """``{"kind": k}``, k one of ``field``, ``under_seven``, ``any_seven``,
        ``over_seven``, ``big_six``, ``big_eight`` (inside) or ``hi_dice`` (outside).
        Codes: ``bad_request``, ``invalid_bet``, ``hi_dice_closed`` (a Hi Dice bet after the
        dealer's roll, 4620.15(c)(4)), ``under_minimum``, ``over_limit`` (4620.15(e))."""
        if not isinstance(bet, Mapping):
            raise bad_request('bet must be an object {"kind": k}')
        extra = sorted(str(k) for k in bet if k != "kind")
        if extra:
            raise bad_request(f"unknown bet fields: {', '.join(extra)}")
        kind = bet.get("kind")
        if kind not in KINDS:
            raise invalid_bet(f"a Bang bet is one of {', '.join(KINDS)}")
        if kind == HI_DICE and play.point is not None:
            raise RuleError(
                "hi_dice_closed",
                "place inside bets only: no Beat the Dealer Hi Dice bet after the dealer's "
                "roll, 4620.15(c)(4)",
            )
        check_stake(config, amount, DICE_MAX_BET_CENTS, CITE)
        return {"kind": str(kind)}

    def check_player_bet(
        self,
        config: Mapping[str, JSON],
        play: BangPlay,
        player: str,
        bet: Mapping[str, JSON],
        placed: Iterable[PlacedBet],
    ) -> None:
        """One bet of each kind per player on the layout at a time, so no one stakes more
        than the maximum on one space (a big six riding counts until it is decided):
        ``already_bet``."""
        kind = bet["kind"]
        if any(b.player == player and b.kind == kind for b in play.bets):
            raise RuleError("already_bet", f"{player} already has a {kind} bet on the layout")

    def check_cancel(
        self, config: Mapping[str, JSON], play: BangPlay, bet_id: str, player: str | None
    ) -> None:
        """Only a bet no roll has applied to may be taken back (D-11): ``bet_in_action`` for
        a big six or eight the dealer's or a shooter's roll left up, or a Hi Dice bet once
        the point is set; ``unknown_bet`` for a bet not on the layout (settled)."""
        bet = next((b for b in play.bets if b.bet_id == bet_id), None)
        if bet is None or (player is not None and bet.player != player):
            raise RuleError("unknown_bet", f"no bet {bet_id} on the layout")
        if bet.in_action:
            raise RuleError(
                "bet_in_action",
                f"bet {bet_id} ({bet.kind}) has been in action for a roll: it stays up until "
                "decided",
            )

    # --- steps ---------------------------------------------------------------------------

    def prepare(
        self, config: Mapping[str, JSON], play: BangPlay, round: Round, step: Any, chance: Chance
    ) -> Any:
        """RNG mode: a roll gets the server's two dice (``rounds.prepare_roll``)."""
        return rounds.prepare_roll(step, round, chance)

    def decide(
        self, config: Mapping[str, JSON], play: BangPlay, round: Round, step: Any
    ) -> list[Event]:
        """A roll (the dealer's, then the shooter's), a seat taken or left, the dice passed.
        Codes: ``wrong_game``, ``round_not_open``, ``bets_open``, ``already_rolled`` (the
        dealer's roll twice), ``dealer_rolls_first``, ``no_shooter``, ``not_the_shooter``,
        ``wrong_mode`` and the roll's codes; ``invalid_seat``, ``seat_taken``,
        ``already_seated``, ``seat_empty``, ``no_other_player``, ``bad_request``."""
        match step:
            case RollDice():
                return self._roll(play, round, step)
            case SeatPlayer():
                seat = _seat_number(config, step.seat)
                if not isinstance(step.player, str) or not step.player:
                    raise bad_request("player must be a player id")
                taken = dict(play.seats)
                if seat in taken:
                    raise RuleError("seat_taken", f"seat {seat} is {taken[seat]}'s")
                held = next((s for s, p in play.seats if p == step.player), None)
                if held is not None:
                    raise RuleError("already_seated", f"{step.player} sits at seat {held}")
                return [PlayerSeated(seat=seat, player=step.player)]
            case UnseatPlayer():
                seat = _seat_number(config, step.seat)
                taken = dict(play.seats)
                if seat not in taken:
                    raise RuleError("seat_empty", f"no one sits at seat {seat}")
                return [PlayerUnseated(seat=seat, player=taken[seat])]
            case PassDice():
                if round.phase == "idle":
                    raise RuleError("round_not_open", "the dice pass during a game")
                offered = shooter(play)
                if offered is None:
                    raise RuleError("no_shooter", "no seated player holds the dice")
                nxt = _seated_from(play, offered[0], include=False)
                if nxt is None or nxt == offered:
                    raise RuleError("no_other_player", "no other seated player to pass to")
                return [
                    DicePassed(round=play.round, from_seat=offered[0], seat=nxt[0], player=nxt[1])
                ]
        raise RuleError("wrong_game", f"{type(step).__name__} is not a Bang step")

    def _roll(self, play: BangPlay, round: Round, step: RollDice) -> list[Event]:
        rounds.check_rolling(round)
        player = rounds.roller(step)
        n = play.round
        if player is None:
            if play.point is not None:
                raise RuleError(
                    "already_rolled", "the dealer rolls once a game; the shooter rolls next"
                )
            roll = rounds.roll_of(step, round, DEALER_TURN)
            out: list[Event] = [rounds.rolled(n, DEALER_TURN, None, roll)]
            settled = settle_roll(play.bets, roll.total, None)
            if settled:
                out.append(rounds.part(n, "dealer_roll", settled))
            out.append(BetsReopened(round=n))  # "Place inside bets only", (c)(4)
            return out
        if play.point is None:
            raise RuleError(
                "dealer_rolls_first",
                "the dealer rolls first and sets the point, 4620.15(c)(3)",
            )
        offered = shooter(play)
        if offered is None:
            raise RuleError("no_shooter", "no seated player holds the dice: seat one")
        if offered[1] != player:
            raise RuleError(
                "not_the_shooter",
                f"{player} is not the shooter: the dice are with {offered[1]} (seat {offered[0]})",
            )
        roll = rounds.roll_of(step, round, PLAYER_TURN)
        out = [rounds.rolled(n, PLAYER_TURN, player, roll)]
        settled = settle_roll(play.bets, roll.total, play.point)
        if settled:
            out.append(rounds.part(n, "shooter_roll", settled))
        out.append(RoundEnded(round=n))
        return out

    # --- the fold ------------------------------------------------------------------------

    def evolve(self, config: Mapping[str, JSON], play: BangPlay, event: Event) -> BangPlay:
        match event:
            case RoundOpened():
                return replace(play, round=event.round, game_bets=(), point=None, passed_to=None)
            case BetPlaced():
                bet = BangBet(
                    bet_id=event.bet_id,
                    player=event.player,
                    kind=str(event.bet["kind"]),
                    amount=event.amount,
                    round=event.round,
                )
                return replace(
                    play,
                    bets=(*play.bets, bet),
                    game_bets=(*play.game_bets, (event.bet_id, event.player)),
                )
            case BetCancelled():
                return replace(
                    play,
                    bets=tuple(b for b in play.bets if b.bet_id != event.bet_id),
                    game_bets=tuple(g for g in play.game_bets if g[0] != event.bet_id),
                )
            case DiceRolled():
                # Every bet on the layout was in action for this roll (D-11).
                play = replace(play, bets=tuple(replace(b, in_action=True) for b in play.bets))
                if event.turn == DEALER_TURN:
                    return replace(play, point=event.total)
                seat = next((s for s, p in play.seats if p == event.player), None)
                return replace(play, last_shooter_seat=seat, passed_to=None)
            case PartSettled():
                done = {s.bet_id for s in event.settlements}
                return replace(play, bets=tuple(b for b in play.bets if b.bet_id not in done))
            case PlayerSeated():
                return replace(play, seats=tuple(sorted((*play.seats, (event.seat, event.player)))))
            case PlayerUnseated():
                return replace(play, seats=tuple(s for s in play.seats if s[0] != event.seat))
            case DicePassed():
                return replace(play, passed_to=event.seat)
        return play

    # --- the rest of the port ------------------------------------------------------------

    def void(self, config: Mapping[str, JSON], play: BangPlay, round: Round) -> list[Event]:
        """Every bet placed in the voided game and not yet settled is returned; a big six or
        eight of an earlier game rides on (the void is of this game's rolls, not of that
        bet); what was settled stands. The dice stay with the game's shooter."""
        back = [
            rounds.returned(b.bet_id, b.player, b.amount)
            for b in play.bets
            if b.round == play.round
        ]
        out: list[Event] = [rounds.part(play.round, "void", back)] if back else []
        return [*out, RoundEnded(round=play.round)]

    def closing(self, config: Mapping[str, JSON], play: BangPlay, round: Round) -> list[Event]:
        """The table closes between games: every big six and big eight still riding is
        returned to its player (``PartSettled`` ``closing``, result ``returned``)."""
        back = [rounds.returned(b.bet_id, b.player, b.amount) for b in play.bets]
        return [rounds.part(play.round, "closing", back)] if back else []

    def closed(self, play: BangPlay) -> bool:
        return False

    def debtors(self, play: BangPlay, round: Round, step: Any) -> Sequence[str]:
        return []

    def view(self, config: Mapping[str, JSON], play: BangPlay, round: Round) -> dict[str, JSON]:
        """The stage, the point (the marker), whether Hi Dice bets are taken, the seats, the
        shooter, and every bet on the layout (``layout``: those not yet settled, big bets of
        earlier games too, ``riding``)."""
        if round.phase == "idle":
            stage = "idle"
        elif play.point is None:
            stage = "betting" if round.phase == "betting" else "dealer_roll"
        else:
            stage = "inside_bets" if round.phase == "betting" else "shooter_roll"
        offered = shooter(play)
        return {
            "stage": stage,
            "point": play.point,
            "hi_dice_open": round.phase == "betting" and play.point is None,
            "seats": [{"seat": s, "player": p} for s, p in play.seats],
            "shooter": {"seat": offered[0], "player": offered[1]} if offered else None,
            "layout": [
                {
                    "bet_id": b.bet_id,
                    "player": b.player,
                    "kind": b.kind,
                    "amount": b.amount,
                    "in_action": b.in_action,
                    "riding": b.round < play.round,
                }
                for b in play.bets
            ],
        }

    def result(self, events: Sequence[Event]) -> dict[str, JSON]:
        """The rolls, the parts settled, whether bets reopened and whether the game ended."""
        return rounds.reply(events)


BANG: Final = Bang()
"""The game as the license lists it: ``bang``."""
