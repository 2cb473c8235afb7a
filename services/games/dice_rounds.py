"""What the dice games of several rolls per round share (Beat the Dealer, 4620.14; Bang,
4620.15): the ``roll`` step, a roll as data, and the parts of a reply.

A round of these games is bets, no more bets, the dealer's roll, then one or more players'
rolls, each settling the bets it decides (``PartSettled``), until ``RoundEnded``. The
dealer enters each roll from the physical dice (dealer mode), or the server rolls it (RNG
mode): :func:`prepare_roll` takes one integer below 6 per die from the Chance and writes
them into the step, and :func:`roll_of` checks and reads the roll. Pure but for
:func:`prepare_roll`, which is only ever handed the Chance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from events.base import Event
from events.dice import DiceRolled
from events.records import replace
from events.tables import BetSettlement, BetsReopened, PartSettled, RoundEnded
from services.aggregates import RuleError
from services.games.base import JSON, Chance, Round, bad_request, invalid_config
from services.games.dice import Roll, Thrower, drawn_roll, entered_roll, roll_bounds

DICE: Final = 2
"""Beat the Dealer and Bang roll two dice, 4620.14(a)(2), 4620.15(a)(2)."""
DEALER_TURN: Final = "dealer"
PLAYER_TURN: Final = "player"


@dataclass(frozen=True, slots=True, kw_only=True)
class RollDice:
    """A roll of the round (the ``roll`` op). ``player`` None: the dealer's roll; else the
    roll of that player (Beat the Dealer: a bettor against the dealer's total; Bang: the
    shooter). Dealer mode: ``dice`` (one face 1-6 per die) and ``thrown_by`` (the dealer's
    roll ``dealer`` or ``cage``, a player's ``player`` or ``cage``; by default the one
    whose roll it is) as the dealer entered them. RNG mode: neither; ``draw`` is written by
    :func:`prepare_roll` (one CSPRNG integer below 6 per die)."""

    player: Any = None
    dice: Any = None
    thrown_by: Any = None
    draw: tuple[int, ...] | None = None


def prepare_roll(step: Any, round: Round, chance: Chance) -> Any:
    """RNG mode: a roll sent without dice gets the server's draw, one ``below(6)`` per die
    (unbiased). Any other step, or a roll that carries dice (refused by :func:`roll_of`),
    is left as it is."""
    if (
        isinstance(step, RollDice)
        and round.outcome_mode == "rng"
        and step.draw is None
        and step.dice is None
        and step.thrown_by is None
    ):
        return replace(step, draw=tuple(chance.below(b) for b in roll_bounds(DICE)))
    return step


def roller(step: RollDice) -> str | None:
    """Whose roll the step is (None: the dealer's); ``bad_request`` for a player that is
    not an id."""
    if step.player is not None and (not isinstance(step.player, str) or not step.player):
        raise bad_request("player must be a player id")
    return step.player


def check_rolling(round: Round) -> None:
    """A roll comes after no more bets: ``round_not_open`` when no round is open,
    ``bets_open`` while bets are open (bets close before every roll, 4620.15(d)(1))."""
    if round.phase == "idle":
        raise RuleError("round_not_open", f"no round of {round.table} is in play")
    if round.phase == "betting":
        raise RuleError(
            "bets_open",
            "bets close before every roll: call no more bets first (4620.14(b), 4620.15(d)(1))",
        )


def roll_of(step: RollDice, round: Round, default_thrower: Thrower) -> Roll:
    """The roll the step carries: entered (dealer mode) or drawn (RNG mode). The dealer's
    roll is thrown by the dealer or the cage, a player's by the player or the cage
    (``default_thrower`` names whose turn it is). Codes: ``wrong_mode`` (dice at an RNG
    table, none at a dealer table), ``bad_request``, ``wrong_number_of_dice``,
    ``invalid_die_face``, ``invalid_thrower`` (dice.py's; or the other one's hand), and
    ``roll_unavailable`` (a server fault: the step was not prepared; not stored)."""
    if round.outcome_mode == "rng":
        if step.dice is not None or step.thrown_by is not None:
            raise RuleError("wrong_mode", "the server rolls the dice at an RNG table: send none")
        if step.draw is None:
            raise RuleError("roll_unavailable", "no draw was prepared for this roll", stored=False)
        return drawn_roll(step.draw, DICE)
    if step.dice is None:
        raise RuleError("wrong_mode", "a dealer table enters the dice as they lie: send dice")
    raw: dict[str, JSON] = {"dice": step.dice}
    if step.thrown_by is not None:
        raw["thrown_by"] = step.thrown_by
    roll = entered_roll(raw, DICE, default_thrower=default_thrower)
    if roll.thrown_by not in (default_thrower, "cage"):
        # 4620.14(b)(2), 4620.15(c)(5): each throws their own roll, by hand or in the cage
        raise RuleError(
            "invalid_thrower",
            f"the {default_thrower}'s roll is thrown by the {default_thrower} or tumbled in "
            f"the cage, not by the {roll.thrown_by}",
        )
    return roll


def rolled(round: int, turn: str, player: str | None, roll: Roll) -> DiceRolled:
    """The event of one roll."""
    return DiceRolled(
        round=round,
        turn=turn,
        player=player,
        dice=roll.faces,
        total=roll.total,
        thrown_by=roll.thrown_by,
    )


def even_money(bet_id: str, player: str, amount: int, won: bool) -> BetSettlement:
    """An even-money bet decided: ``won`` pays back twice the stake, else nothing."""
    return BetSettlement(bet_id, player, amount, "won" if won else "lost", 2 * amount if won else 0)


def part(round: int, name: str, settlements: Sequence[BetSettlement]) -> PartSettled:
    """Some wagers settled by one roll (or returned): ``PartSettled`` ``name``."""
    return PartSettled(
        round=round,
        part=name,
        settlements=tuple(settlements),
        wagered=sum(s.amount for s in settlements),
        paid=sum(s.paid for s in settlements),
    )


def returned(bet_id: str, player: str, amount: int) -> BetSettlement:
    """A wager given back unplayed (a voided round, a closed table)."""
    return BetSettlement(bet_id, player, amount, "returned", amount)


def roll_json(ev: DiceRolled) -> dict[str, JSON]:
    """A roll as replies and views show it."""
    return {
        "turn": ev.turn,
        "player": ev.player,
        "dice": list(ev.dice),
        "total": ev.total,
        "thrown_by": ev.thrown_by,
    }


def reply(events: Sequence[Event]) -> dict[str, JSON]:
    """The game's part of a reply: the rolls, the parts settled, whether bets reopened and
    whether the round ended."""
    rolls: list[dict[str, JSON]] = []
    parts: list[dict[str, JSON]] = []
    reopened = ended = False
    for ev in events:
        if isinstance(ev, DiceRolled):
            rolls.append(roll_json(ev))
        elif isinstance(ev, PartSettled):
            parts.append(
                {
                    "part": ev.part,
                    "paid": ev.paid,
                    "settlements": [s._asdict() for s in ev.settlements],
                }
            )
        elif isinstance(ev, RoundEnded):
            ended = True
        elif isinstance(ev, BetsReopened):
            reopened = True
    return {"rolls": rolls, "settled": parts, "bets_reopened": reopened, "round_ended": ended}


def known_options(raw: Mapping[str, JSON], allowed: frozenset[str], game: str) -> None:
    """``invalid_config`` for an option the game does not have."""
    if not isinstance(raw, Mapping):
        raise invalid_config(f"the {game} options must be an object")
    extra = sorted(str(k) for k in raw if k not in allowed)
    if extra:
        raise invalid_config(f"unknown {game} options: {', '.join(extra)}")
