"""The dice of Part 4620's dice games (4620.11-4620.15): a roll as data, entered from the
physical dice or drawn by the server, and what every dice game shares (its limits).

A roll is a face from 1 to 6 per die and who threw: ``dealer``, ``player`` (the shooter, or
a Beat the Dealer player), ``cage`` (tumbled in the cage or chute) or ``rng`` (the server's
CSPRNG, RNG mode). The dealer enters the faces they read off the dice (``entered_roll``);
in RNG mode the table actor's adapter draws one integer below 6 per die through its Chance
and :func:`drawn_roll` turns them into faces. Pure: no I/O, clock or randomness.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from services.aggregates import RuleError
from services.games.base import JSON, bad_request, invalid_config, is_whole_number

FACES = 6
"""A die shows 1 to 6."""

Thrower = Literal["dealer", "player", "cage", "rng"]
THROWERS: tuple[Thrower, ...] = ("dealer", "player", "cage", "rng")
"""Who threw a roll, as its event records it."""
ENTERED_THROWERS: tuple[Thrower, ...] = ("dealer", "player", "cage")
"""Who may have thrown a roll the dealer enters (``rng`` is the server's alone)."""

DICE_MAX_BET_CENTS = 500
"""$5, the maximum single wager in every dice game: 4620.11(b)(2), 4620.12(c)(7)(ii),
4620.13(b)(2), 4620.14(b)(3), 4620.15(e). A table may set less, never more."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Roll:
    """One throw of the dice: the faces as they lie and who threw them."""

    faces: tuple[int, ...]
    thrown_by: Thrower

    @property
    def total(self) -> int:
        return sum(self.faces)

    def to_json(self) -> dict[str, JSON]:
        """The roll as an event and a reply carry it."""
        return {"dice": list(self.faces), "total": self.total, "thrown_by": self.thrown_by}


def roll_bounds(dice: int) -> tuple[int, ...]:
    """The bounds of a server draw of ``dice`` dice: one integer below 6 per die."""
    return (FACES,) * dice


def drawn_roll(draw: Sequence[int], dice: int) -> Roll:
    """The roll for a server draw (each integer below 6 is a face less one); RuleError
    ``invalid_outcome`` for a draw of another shape."""
    if len(draw) != dice or not all(is_whole_number(d) and 0 <= d < FACES for d in draw):
        raise RuleError("invalid_outcome", f"a draw of {dice} dice needs {dice} integers below 6")
    return Roll(faces=tuple(d + 1 for d in draw), thrown_by="rng")


def entered_roll(raw: JSON, dice: int, *, default_thrower: Thrower = "dealer") -> Roll:
    """The roll the dealer entered: ``{"dice": [faces], "thrown_by": who}`` (``thrown_by``
    optional, ``default_thrower`` when absent).

    Codes: ``bad_request`` (not an object, ``dice`` not a list), ``wrong_number_of_dice``
    (not ``dice`` faces), ``invalid_die_face`` (a face that is not a whole number from 1 to
    6), ``invalid_thrower`` (not one of :data:`ENTERED_THROWERS`)."""
    if not isinstance(raw, Mapping):
        raise bad_request('a roll is an object: {"dice": [faces], "thrown_by": who}')
    faces = raw.get("dice")
    if not isinstance(faces, list):
        raise bad_request("a roll's dice must be a list of faces")
    if len(faces) != dice:
        raise RuleError(
            "wrong_number_of_dice", f"this game rolls {dice} dice; {len(faces)} were entered"
        )
    for face in faces:
        if not is_whole_number(face) or not 1 <= face <= FACES:
            raise RuleError("invalid_die_face", f"a die shows 1 to 6, not {face!r}")
    thrown_by = raw.get("thrown_by", default_thrower)
    if thrown_by not in ENTERED_THROWERS:
        raise RuleError(
            "invalid_thrower",
            f"thrown_by must be one of {', '.join(ENTERED_THROWERS)}, not {thrown_by!r}",
        )
    unknown = set(raw) - {"dice", "thrown_by"}
    if unknown:
        raise bad_request(f"a roll has no field {sorted(unknown)[0]!r}")
    return Roll(faces=tuple(faces), thrown_by=thrown_by)


def roll_from_json(data: Mapping[str, Any]) -> Roll:
    """A roll as :meth:`Roll.to_json` wrote it (in an event: trusted, already checked)."""
    return Roll(faces=tuple(int(f) for f in data["dice"]), thrown_by=data["thrown_by"])


def dice_limits(
    raw: Mapping[str, JSON], regulatory_max: int = DICE_MAX_BET_CENTS, cite: str = "4620.11-15"
) -> tuple[int, int]:
    """A dice table's ``min_bet`` (default 1 cent) and ``max_bet`` (default and ceiling
    ``regulatory_max``, the section ``cite`` gives): lower only; ``invalid_config``."""
    max_bet = raw.get("max_bet", regulatory_max)
    min_bet = raw.get("min_bet", 1)
    if not is_whole_number(max_bet) or max_bet <= 0:
        raise invalid_config("max_bet must be a positive whole number of cents")
    if max_bet > regulatory_max:
        raise invalid_config(
            f"max_bet {max_bet} is over the regulatory maximum {regulatory_max} ({cite})"
        )
    if not is_whole_number(min_bet) or not 0 < min_bet <= max_bet:
        raise invalid_config("min_bet must be a whole number of cents from 1 to max_bet")
    return int(min_bet), int(max_bet)
