"""The three-dice games of one roll: Chuck-A-Luck (NY 9 NYCRR 4620.11) and Hazard (4620.12).

Three dice are tumbled in the cage or chute once a round, after the bets close (reading
D-1); the dealer enters the faces (``thrown_by`` ``cage``, the default, or ``dealer``: the
dealer tumbles the cage, 4620.12(b)) or the server draws them. Every payout is a whole
number "to 1"; the one "for 1" schedule of the text, Hazard's numbers bet, is converted
once by ``services.games.base.for_one`` (reading D-2). Readings and the exact house edge
of every bet: docs/RULES.md "Chuck-A-Luck and Hazard". Pure: no I/O, clock or randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from services.aggregates import RuleError
from services.games.base import (
    JSON,
    bad_request,
    check_stake,
    for_one,
    invalid_bet,
    is_whole_number,
)
from services.games.dice import DICE_MAX_BET_CENTS, FACES, Thrower
from services.games.one_roll import OneRollDice

__all__ = [
    "ANY_TRIPLE_ODDS",
    "CHUCK_A_LUCK",
    "EVEN_MONEY",
    "HAZARD",
    "HAZARD_KINDS",
    "HAZARD_LABELS",
    "HIGH_MIN_TOTAL",
    "LOW_MAX_TOTAL",
    "NUMBERS_FOR_ONE",
    "NUMBERS_ODDS",
    "SPECIFIC_TRIPLE_MAX_BET_CENTS",
    "SPECIFIC_TRIPLE_ODDS",
    "ChuckALuck",
    "Hazard",
]

THREE_DICE: Final = 3  # 4620.11(a)(2), 4620.12(a)(2): three dice
CAGE_THROWERS: Final[tuple[Thrower, ...]] = ("cage", "dealer")
"""Three dice are tumbled in the cage or chute (4620.11(b)(1)), by the dealer
(4620.12(b)); a player never throws them."""

SPECIFIC_TRIPLE_ODDS: Final = 180  # 4620.12(c)(1): "paid off at odds of 180-to-1"
ANY_TRIPLE_ODDS: Final = 30  # 4620.12(c)(2): "paid off at odds of 30-to-1"
EVEN_MONEY: Final = 1  # 4620.12(c)(3)-(5): "even or 1-to-1"
LOW_MAX_TOTAL: Final = 10  # 4620.12(c)(3): "10 or below"
HIGH_MIN_TOTAL: Final = 11  # 4620.12(c)(4): "11 or more"

SPECIFIC_TRIPLE_MAX_BET_CENTS: Final = 150
"""$1.50, the maximum wager on one specific triple (the text's "raffles"): 4620.12(c)(1)
and (c)(7)(ii). Every other Hazard wager is at most $5 (reading D-4)."""

NUMBERS_FOR_ONE: Final[Mapping[int, int]] = {
    4: 60,
    5: 30,
    6: 18,
    7: 12,
    8: 8,
    9: 6,
    10: 6,
    11: 6,
    12: 6,
    13: 8,
    14: 12,
    15: 18,
    16: 30,
    17: 60,
}
"""The numbers bet's schedule as 4620.12(c)(6) states it, "N for 1" (the stake included)."""

NUMBERS_ODDS: Final[Mapping[int, int]] = {t: for_one(n) for t, n in NUMBERS_FOR_ONE.items()}
"""The same schedule "to 1" (reading D-2: 60 for 1 is 59 to 1), converted in one place."""

HAZARD_KINDS: Final[Mapping[str, str | None]] = {
    "specific_triple": "face",  # (c)(1) "Raffles": three of the face 1-6
    "any_triple": None,  # (c)(2) "Any raffle"
    "low": None,  # (c)(3)
    "high": None,  # (c)(4)
    "odd": None,  # (c)(5)
    "even": None,  # (c)(5)
    "number": "total",  # (c)(6): a total 4-17
    "chuck": "number",  # (c)(7): a number 1-6
}
"""Every Hazard bet kind of 4620.12(c)(1)-(7) and the one field it takes besides ``kind``
(None: none)."""

HAZARD_LABELS: Final[Mapping[str, str]] = {
    "specific_triple": "Raffle",
    "any_triple": "Any raffle",
    "low": "Low",
    "high": "High",
    "odd": "Odd",
    "even": "Even",
    "number": "Numbers",
    "chuck": "Chuck numbers",
}
"""How the layout names each kind. The bet the text calls "raffles" is ``specific_triple``
in the protocol (reading D-5: not the game Raffles, 4620.1(t))."""

_FIELD_RANGES: Final[Mapping[str, range]] = {
    "face": range(1, FACES + 1),
    "total": range(min(NUMBERS_FOR_ONE), max(NUMBERS_FOR_ONE) + 1),
    "number": range(1, FACES + 1),
}


def _number_bet(bet: JSON, game: str) -> int:
    """The layout number 1-6 of a ``{"number": n}`` bet; ``bad_request``, ``invalid_bet``."""
    if not isinstance(bet, Mapping):
        raise bad_request(f'a {game} bet is an object {{"number": n}}')
    extra = sorted(str(k) for k in bet if k != "number")
    if extra:
        raise bad_request(f"unknown fields for a {game} bet: {', '.join(extra)}")
    number = bet.get("number")
    if not is_whole_number(number):
        raise bad_request(f'a {game} bet needs "number", a whole number 1-6')
    assert isinstance(number, int)
    if not 1 <= number <= FACES:
        raise invalid_bet(f"{number} is not a number of the layout (1-6)")
    return number


def _chuck_odds(faces: tuple[int, ...]) -> dict[int, int]:
    """A number pays 1, 2 or 3 to 1 by how many dice show it (4620.11(b)(1),
    4620.12(c)(7)(i)); a number no die shows is not in the map."""
    return {n: faces.count(n) for n in set(faces)}


class ChuckALuck(OneRollDice):
    """Chuck-A-Luck under 4620.11; implements ``base.OutcomeGame``."""

    name = "chuck_a_luck"
    dice = THREE_DICE
    throwers = CAGE_THROWERS
    default_thrower: Thrower = "cage"
    cite = "4620.11(b)(2)"

    def every_bet(self) -> list[dict[str, JSON]]:
        """Every bet of the layout, in layout order: the numbers 1 to 6."""
        return [{"number": n} for n in range(1, FACES + 1)]

    def check_bet(self, config: Mapping[str, JSON], bet: JSON, amount: int) -> Mapping[str, JSON]:
        """``{"number": n}``, n from 1 to 6 (4620.11(a)(3)); a player may bet on one or
        more numbers (4620.11(b)(1)), each a bet of its own. ``bad_request`` (not an
        object, another field, ``number`` not a whole number, a bad amount),
        ``invalid_bet`` (not 1-6), ``under_minimum``, ``over_limit`` ($5, 4620.11(b)(2))."""
        number = _number_bet(bet, "Chuck-A-Luck")
        check_stake(config, amount, DICE_MAX_BET_CENTS, self.cite)
        return {"number": number}

    def winning_odds(self, faces: tuple[int, ...]) -> Callable[[Mapping[str, JSON]], int | None]:
        """A number shown by 1, 2 or 3 dice pays 1, 2 or 3 to 1."""
        won = _chuck_odds(faces)
        return lambda bet: won.get(bet["number"])


class Hazard(OneRollDice):
    """Hazard under 4620.12; implements ``base.OutcomeGame``."""

    name = "hazard"
    dice = THREE_DICE
    throwers = CAGE_THROWERS
    default_thrower: Thrower = "cage"
    cite = "4620.12(c)(7)(ii)"

    def every_bet(self) -> list[dict[str, JSON]]:
        """Every bet of the layout, in the order of 4620.12(c)(1)-(7)."""
        bets: list[dict[str, JSON]] = [
            {"kind": "specific_triple", "face": f} for f in range(1, FACES + 1)
        ]
        bets += [{"kind": k} for k in ("any_triple", "low", "high", "odd", "even")]
        bets += [{"kind": "number", "total": t} for t in NUMBERS_FOR_ONE]
        bets += [{"kind": "chuck", "number": n} for n in range(1, FACES + 1)]
        return bets

    def check_bet(self, config: Mapping[str, JSON], bet: JSON, amount: int) -> Mapping[str, JSON]:
        """``{"kind": k}`` for ``any_triple``, ``low``, ``high``, ``odd``, ``even``;
        ``{"kind": "specific_triple", "face": 1-6}``; ``{"kind": "number", "total":
        4-17}``; ``{"kind": "chuck", "number": 1-6}``.

        ``bad_request``: not an object, ``kind`` missing or not a string, a missing,
        mistyped or extra field, a bad amount; ``invalid_bet``: an unknown kind, a face,
        total or number off the layout; ``under_minimum``; ``over_limit``: over the
        table's ``max_bet`` ($5 at most, (c)(7)(ii)), or a specific triple over $1.50
        ((c)(1), (c)(7)(ii))."""
        if not isinstance(bet, Mapping):
            raise bad_request('a Hazard bet is an object {"kind": ...}')
        kind = bet.get("kind")
        if not isinstance(kind, str):
            raise bad_request('a Hazard bet needs "kind", a string')
        if kind not in HAZARD_KINDS:
            raise invalid_bet(f"{kind!r} is not a Hazard bet ({', '.join(HAZARD_KINDS)})")
        field = HAZARD_KINDS[kind]
        allowed = {"kind"} if field is None else {"kind", field}
        extra = sorted(str(k) for k in bet if k not in allowed)
        if extra:
            raise bad_request(f"unknown fields for a Hazard {kind} bet: {', '.join(extra)}")
        canonical: dict[str, JSON] = {"kind": kind}
        if field is not None:
            value = bet.get(field)
            if not is_whole_number(value):
                raise bad_request(f'a Hazard {kind} bet needs "{field}", a whole number')
            valid = _FIELD_RANGES[field]
            if value not in valid:
                raise invalid_bet(
                    f"{field} {value} is not on the layout ({valid.start}-{valid.stop - 1})"
                )
            canonical[field] = value
        if (
            kind == "specific_triple"
            and is_whole_number(amount)
            and amount > SPECIFIC_TRIPLE_MAX_BET_CENTS
        ):
            raise RuleError(
                "over_limit",
                f"{amount} is over {SPECIFIC_TRIPLE_MAX_BET_CENTS}, the maximum wager on a "
                "specific triple (4620.12(c)(1), (c)(7)(ii))",
            )
        check_stake(config, amount, DICE_MAX_BET_CENTS, self.cite)
        return canonical

    def winning_odds(self, faces: tuple[int, ...]) -> Callable[[Mapping[str, JSON]], int | None]:
        """The bets a roll wins and their odds "to 1":

        - a triple wins ``specific_triple`` on its face (180) and ``any_triple`` (30);
          ``low``, ``high``, ``odd`` and ``even`` lose on any triple ((c)(3)-(5));
        - otherwise ``low`` (total <= 10) or ``high`` (>= 11), and ``odd`` or ``even``,
          at even money;
        - ``number`` on the total, a triple included (reading D-3), at
          :data:`NUMBERS_ODDS`;
        - ``chuck`` on each face shown, 1, 2 or 3 to 1 by how many dice show it."""
        total = sum(faces)
        plain: dict[str, int] = {}
        specific: dict[int, int] = {}
        if len(set(faces)) == 1:
            specific[faces[0]] = SPECIFIC_TRIPLE_ODDS
            plain["any_triple"] = ANY_TRIPLE_ODDS
        else:
            plain["low" if total <= LOW_MAX_TOTAL else "high"] = EVEN_MONEY
            plain["odd" if total % 2 else "even"] = EVEN_MONEY
        valued: dict[str, dict[int, int]] = {
            "specific_triple": specific,
            "number": {total: NUMBERS_ODDS[total]} if total in NUMBERS_ODDS else {},
            "chuck": _chuck_odds(faces),
        }
        fields = HAZARD_KINDS

        def odds(bet: Mapping[str, JSON]) -> int | None:
            kind = bet["kind"]
            field = fields[kind]
            if field is None:
                return plain.get(kind)
            return valued[kind].get(bet[field])

        return odds


CHUCK_A_LUCK: Final = ChuckALuck()
"""The Chuck-A-Luck game, as the table rules use it (a ``base.OutcomeGame``)."""
HAZARD: Final = Hazard()
"""The Hazard game, as the table rules use it (a ``base.OutcomeGame``)."""
