"""Roulette: NY 9 NYCRR 4620.4, with New Jersey's roulette wagers as table options.

Pure rules: no I/O, clock or randomness. Numbers are strings (``"0"``, ``"00"``, ``"1"`` …
``"36"``); amounts are integer cents; payout odds are integer ``[numerator, denominator]``
"to 1". Citations: ``4620.4(x)(n)`` is the NY regulation (seed 000); ``NJ (e)n`` / ``NJ (f)``
/ ``NJ (g)`` are the paragraphs of the NJ roulette wagers text (seed 001). Every reading of an
ambiguous text is written down in ``docs/RULES.md``.

Every canonical bet a table can take is known in advance (a few hundred per wheel), so the
pockets each one covers are computed once at import; ``check_bet`` validates a bet by looking
its canonical key up in that table and ``settle`` is a dictionary lookup per bet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from math import gcd
from typing import Final

from services.aggregates import RuleError
from services.games.base import (
    JSON,
    OutcomeGame,
    PlacedBet,
    Settlement,
    bad_request,
    invalid_bet,
    invalid_config,
    invalid_outcome,
    is_whole_number,
)

__all__ = [
    "AMERICAN_WHEEL_ORDER",
    "COLOURS",
    "DEFAULT_MIN_BET_CENTS",
    "DEFAULT_OPTION_ODDS",
    "EUROPEAN_WHEEL_ORDER",
    "FIVE_ADJACENT_ODDS",
    "INSIDE_KINDS",
    "MAX_INSIDE_BET_CENTS",
    "MAX_OUTSIDE_BET_CENTS",
    "OPTION_KINDS",
    "OUTSIDE_KINDS",
    "RED_NUMBERS",
    "ROULETTE",
    "SEVEN_NUMBERS",
    "STANDARD_KINDS",
    "STANDARD_ODDS",
    "WHEELS",
    "Roulette",
    "basket_trios",
    "colour_sections",
    "covered",
    "five_adjacent_numbers",
    "payout_odds",
    "player_return",
]

# --------------------------------------------------------------------------------------------
# Limits (named settings with their cites)
# --------------------------------------------------------------------------------------------

MAX_INSIDE_BET_CENTS: Final = 200  # 4620.4(d): "The maximum bet shall be $2"
MAX_OUTSIDE_BET_CENTS: Final = 500  # 4620.4(e): "The maximum bet shall be $5"
DEFAULT_MIN_BET_CENTS: Final = 1  # table setting; the regulation sets no minimum

# --------------------------------------------------------------------------------------------
# The wheel
# --------------------------------------------------------------------------------------------


def _pockets(spec: str) -> tuple[str, ...]:
    return tuple(spec.split())


AMERICAN_WHEEL_ORDER: Final[tuple[str, ...]] = _pockets(
    "0 28 9 26 30 11 7 20 32 17 5 22 34 15 3 24 36 13 1 00 "
    "27 10 25 29 12 8 19 31 18 6 21 33 16 4 23 35 14 2"
)
"""The double-zero wheel, clockwise from ``"0"``: 36 numbers, 0 and 00, 4620.4(a)(3)(ii)."""

EUROPEAN_WHEEL_ORDER: Final[tuple[str, ...]] = _pockets(
    "0 32 15 19 4 21 2 25 17 34 6 27 13 36 11 30 8 23 10 5 24 16 33 1 20 14 31 9 22 18 "
    "29 7 28 12 35 3 26"
)
"""The single-zero wheel (a table option, NJ (e)7), clockwise from ``"0"``."""

WHEELS: Final[Mapping[str, tuple[str, ...]]] = {
    "double_zero": AMERICAN_WHEEL_ORDER,
    "single_zero": EUROPEAN_WHEEL_ORDER,
}
"""Wheel name -> pockets in wheel order. ``double_zero`` is the default, 4620.4(a)(3)."""

RED_NUMBERS: Final[frozenset[str]] = frozenset(
    str(n) for n in (1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36)
)
"""The red numbers; the other 18 of 1..36 are black, 0 and 00 green, 4620.4(a)(3)(ii)."""

_NUMBERS: Final[tuple[str, ...]] = tuple(str(n) for n in range(1, 37))
_LAYOUT_ORDER: Final[tuple[str, ...]] = ("0", "00", *_NUMBERS)
_LAYOUT_RANK: Final[Mapping[str, int]] = {p: i for i, p in enumerate(_LAYOUT_ORDER)}
_POCKETS: Final[Mapping[str, frozenset[str]]] = {w: frozenset(o) for w, o in WHEELS.items()}

# --------------------------------------------------------------------------------------------
# Bet kinds and odds
# --------------------------------------------------------------------------------------------

STANDARD_KINDS: Final[tuple[str, ...]] = (
    "straight",
    "split",
    "street",
    "corner",
    "five",
    "line",
    "column",
    "dozen",
    "low",
    "high",
    "red",
    "black",
    "odd",
    "even",
)
"""The wagers of 4620.4(d) and (e); ``five`` exists on the double-zero wheel only."""

OPTION_KINDS: Final[tuple[str, ...]] = (
    "basket",
    "color_eight",
    "color_seven",
    "color_six",
    "five_adjacent",
    "seven_numbers",
)
"""NJ wagers a table may enable in its ``options``: NJ (e)1i, (e)3i, (e)6ii, (e)7, (e)8, (f)."""

INSIDE_KINDS: Final[frozenset[str]] = frozenset(
    {"straight", "split", "street", "corner", "five", "line", *OPTION_KINDS}
)
"""Wagers limited to ``max_inside``, 4620.4(d); NJ options (at most 8 numbers) count as inside."""

OUTSIDE_KINDS: Final[frozenset[str]] = frozenset(
    {"column", "dozen", "low", "high", "red", "black", "odd", "even"}
)
"""Wagers limited to ``max_outside``, 4620.4(e)."""

STANDARD_ODDS: Final[Mapping[str, tuple[int, int]]] = {
    "straight": (35, 1),  # 4620.4(d)(1), (d)(2)
    "split": (17, 1),  # 4620.4(d)(3)
    "street": (11, 1),  # 4620.4(d)(4)
    "corner": (8, 1),  # 4620.4(d)(5)
    "five": (6, 1),  # 4620.4(d)(6)
    "line": (5, 1),  # 4620.4(d)(7)
    "column": (2, 1),  # 4620.4(e)(1)
    "dozen": (2, 1),  # 4620.4(e)(2)
    "low": (1, 1),  # 4620.4(e)(3)
    "high": (1, 1),  # 4620.4(e)(4)
    "black": (1, 1),  # 4620.4(e)(5)
    "red": (1, 1),  # 4620.4(e)(6)
    "odd": (1, 1),  # 4620.4(e)(7)
    "even": (1, 1),  # 4620.4(e)(8)
}
"""Payouts fixed by 4620.4(d)-(e), "to 1"; not configurable."""

FIVE_ADJACENT_ODDS: Final = (35, 1)
"""Each of the five parts of a five-adjacent wager is a straight at 35 to 1, NJ (e)1i(2)."""

DEFAULT_OPTION_ODDS: Final[Mapping[str, tuple[int, int]]] = {
    "basket": (11, 1),  # a "three numbers" wager, NJ (e)3i; street odds, 4620.4(d)(4)
    "color_six": (5, 1),  # a "six numbers" wager, NJ (e)6ii; line odds, 4620.4(d)(7)
    "color_seven": (4, 1),  # NJ (e)7 gives no odds: table setting
    "color_eight": (7, 2),  # NJ (e)8 gives no odds: table setting
    "seven_numbers": (4, 1),  # NJ (f) gives no odds: table setting
}
"""Default odds of the options whose odds the texts do not fix; a table may set its own."""

COLOURS: Final[tuple[str, ...]] = ("black", "blue", "gold", "red", "purple", "green")
"""The six colour sections of NJ (e)6ii, (e)7, (e)8, in wheel order (see colour_sections)."""

SEVEN_NUMBERS: Final[tuple[str, ...]] = ("10", "11", "12", "13", "14", "15", "33")
"""The "seven numbers" wager covers 10, 11, 12, 13, 14, 15 and 33, NJ (f)."""

_ZEROS: Final = frozenset({"0", "00"})

# The one field that tells two bets of a kind apart (None: the kind alone is the bet).
_FIELD: Final[Mapping[str, str | None]] = {
    "straight": "numbers",
    "split": "numbers",
    "street": "numbers",
    "corner": "numbers",
    "line": "numbers",
    "basket": "numbers",
    "five": None,
    "seven_numbers": None,
    "column": "column",
    "dozen": "dozen",
    "five_adjacent": "center",
    "color_six": "color",
    "color_seven": "color",
    "color_eight": "color",
    "low": None,
    "high": None,
    "red": None,
    "black": None,
    "odd": None,
    "even": None,
}
_COUNT: Final[Mapping[str, int]] = {
    "straight": 1,
    "split": 2,
    "street": 3,
    "corner": 4,
    "line": 6,
    "basket": 3,
}
_ALL_KINDS: Final[frozenset[str]] = frozenset(_FIELD)
_ALLOWED: Final[Mapping[str, frozenset[str]]] = {
    kind: frozenset(
        {"kind"}
        | ({field} if field is not None else set())
        # five and seven numbers may name their numbers; they must be exactly the wager's
        | ({"numbers"} if kind in ("five", "seven_numbers") else set())
    )
    for kind, field in _FIELD.items()
}
"""The fields a bet of each kind may have."""

_Key = tuple[str, tuple[str, ...] | int | str | None]
"""A canonical bet as a hashable key: (kind, numbers | column | dozen | center | color)."""


# --------------------------------------------------------------------------------------------
# Layout geometry: every bet there is, per wheel
# --------------------------------------------------------------------------------------------


def _sorted(numbers: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(numbers, key=_LAYOUT_RANK.__getitem__))


def _row(r: int) -> tuple[str, ...]:
    """Row ``r`` (1..12) of the 3-column layout: 3r-2, 3r-1, 3r."""
    return (str(3 * r - 2), str(3 * r - 1), str(3 * r))


def basket_trios(wheel: str) -> tuple[tuple[str, ...], ...]:
    """The basket ("three numbers" with zero) trios, in layout order, NJ (e)3i.

    Double zero: 0-1-2, 0-2-00 and 00-2-3 as the text lists them. Single zero (a reading,
    docs/RULES.md): 0-1-2 and 0-2-3, the two trios at the zero's corners.
    """
    trios: tuple[tuple[str, ...], ...]
    if wheel == "double_zero":
        trios = (("0", "1", "2"), ("0", "2", "00"), ("00", "2", "3"))
    else:
        trios = (("0", "1", "2"), ("0", "2", "3"))
    return tuple(_sorted(t) for t in trios)


def colour_sections(wheel: str) -> Mapping[str, tuple[str, ...]]:
    """The six-number colour sections of NJ (e)6ii, (e)7 and (e)8 (a reading, docs/RULES.md).

    Starting at the first number clockwise after ``"0"`` and going round in wheel order,
    skipping 0 and 00, each colour in the order black, blue, gold, red, purple, green takes
    the next six numbers: consecutive sections of the wheel, 36 numbers in all.
    """
    numbers = [p for p in WHEELS[wheel] if p not in _ZEROS]
    return {c: tuple(numbers[6 * i : 6 * i + 6]) for i, c in enumerate(COLOURS)}


def five_adjacent_numbers(wheel: str, center: str) -> tuple[str, ...]:
    """The five pockets of a five-adjacent wager: the centre and two neighbours each side.

    Neighbours are taken in wheel order, wrapping round both ends of it, NJ (e)1i. Returned
    in wheel order, centre in the middle.
    """
    order = WHEELS[wheel]
    i = order.index(center)
    n = len(order)
    return tuple(order[(i + d) % n] for d in (-2, -1, 0, 1, 2))


def _coverage_table(wheel: str) -> dict[_Key, frozenset[str]]:
    """Every canonical bet on ``wheel`` (standard and optional) -> the pockets it covers."""
    pockets = _POCKETS[wheel]
    table: dict[_Key, frozenset[str]] = {}

    def add(kind: str, detail: tuple[str, ...] | int | str | None, covers: Sequence[str]) -> None:
        cover = frozenset(covers)
        assert cover <= pockets, (kind, detail)
        table[(kind, detail)] = cover

    def add_numbers(kind: str, numbers: Sequence[str]) -> None:
        nums = _sorted(numbers)
        add(kind, nums, nums)

    # 4620.4(d)(1), (d)(2): straight on any number, 0 and 00 included.
    for p in pockets:
        add_numbers("straight", (p,))
    # 4620.4(d)(3): split, two numbers sharing a line of the 3-column grid.
    for n in range(1, 37):
        if n % 3 != 0:
            add_numbers("split", (str(n), str(n + 1)))
        if n <= 33:
            add_numbers("split", (str(n), str(n + 3)))
    zero_splits = (
        (("0", "1"), ("0", "2"), ("00", "2"), ("00", "3"), ("0", "00"))
        if wheel == "double_zero"
        else (("0", "1"), ("0", "2"), ("0", "3"))
    )
    for pair in zero_splits:
        add_numbers("split", pair)
    # 4620.4(d)(4): street, one row.  (d)(7): line, two adjacent rows.
    for r in range(1, 13):
        add_numbers("street", _row(r))
        if r < 12:
            add_numbers("line", _row(r) + _row(r + 1))
    # 4620.4(d)(5): corner, four numbers meeting at one intersection (a 2x2 square).
    for n in range(1, 33):
        if n % 3 != 0:
            add_numbers("corner", tuple(str(n + d) for d in (0, 1, 3, 4)))
    # 4620.4(d)(6): five numbers 0, 00, 1, 2, 3 (double zero only).
    if wheel == "double_zero":
        add("five", None, ("0", "00", "1", "2", "3"))
    # 4620.4(e)(1): column c holds the 12 numbers n with n = c (mod 3).
    for c in (1, 2, 3):
        add("column", c, [str(n) for n in range(c, 37, 3)])
    # 4620.4(e)(2): dozens 1-12, 13-24, 25-36.
    for d in (1, 2, 3):
        add("dozen", d, [str(n) for n in range(12 * d - 11, 12 * d + 1)])
    # 4620.4(e)(3)-(8): even-money bets; 0 and 00 are none of them, 4620.4(c)(2).
    add("low", None, _NUMBERS[:18])
    add("high", None, _NUMBERS[18:])
    add("red", None, sorted(RED_NUMBERS))
    add("black", None, [n for n in _NUMBERS if n not in RED_NUMBERS])
    add("odd", None, [n for n in _NUMBERS if int(n) % 2 == 1])
    add("even", None, [n for n in _NUMBERS if int(n) % 2 == 0])
    # NJ options.
    for trio in basket_trios(wheel):
        add_numbers("basket", trio)
    for p in pockets:
        add("five_adjacent", p, five_adjacent_numbers(wheel, p))
    for colour, section in colour_sections(wheel).items():
        add("color_six", colour, section)
        if wheel == "single_zero":
            add("color_seven", colour, (*section, "0"))
        else:
            add("color_eight", colour, (*section, "0", "00"))
    add("seven_numbers", None, SEVEN_NUMBERS)
    return table


_COVERAGE: Final[Mapping[str, Mapping[_Key, frozenset[str]]]] = {
    w: _coverage_table(w) for w in WHEELS
}

# --------------------------------------------------------------------------------------------
# Table configuration
# --------------------------------------------------------------------------------------------

_CONFIG_KEYS: Final = frozenset(
    {
        "wheel",
        "options",
        "exclude",
        "require",
        "offered",
        "max_inside",
        "max_outside",
        "min_bet",
        "odds",
    }
)
_COLOUR_OPTIONS: Final = frozenset({"color_six", "color_seven", "color_eight"})


def _string_list(raw: Mapping[str, JSON], key: str, allowed: Sequence[str]) -> list[str]:
    value = raw.get(key, [])
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise invalid_config(f"{key} must be a list of wager names")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise invalid_config(f"{key}: unknown or not allowed here: {', '.join(unknown)}")
    if len(set(value)) != len(value):
        raise invalid_config(f"{key} names a wager twice")
    return sorted(value)


def _limit(raw: Mapping[str, JSON], key: str, maximum: int, cite: str) -> int:
    value = raw.get(key, maximum)
    if not is_whole_number(value) or value <= 0:
        raise invalid_config(f"{key} must be a positive integer number of cents")
    if value > maximum:
        raise invalid_config(f"{key} {value} is above the regulatory maximum {maximum}, {cite}")
    assert isinstance(value, int)
    return value


def _option_pocket_count(kind: str) -> int:
    return {"basket": 3, "color_six": 6, "color_seven": 7, "color_eight": 8, "seven_numbers": 7}[
        kind
    ]


def player_return(wheel: str, covers: int, odds: tuple[int, int]) -> Fraction:
    """Expected amount back per unit staked on a bet covering ``covers`` pockets at ``odds``."""
    num, den = odds
    return Fraction(num + den, den) * Fraction(covers, len(WHEELS[wheel]))


def _wager_exclusions(options: Sequence[str]) -> dict[str, str]:
    """Standard wagers a table may not offer given its colour options, NJ (g)."""
    out: dict[str, str] = {}
    colours = [o for o in options if o in _COLOUR_OPTIONS]
    if colours:
        for kind in ("red", "black"):
            out[kind] = f"NJ (g): not offered at a table offering {colours[0]}"
    for o in ("color_seven", "color_eight"):
        if o in options:
            out["dozen"] = f"NJ (g): not offered at a table offering {o}"
    return out


def _parse_config(raw: Mapping[str, JSON]) -> dict[str, JSON]:
    if not isinstance(raw, Mapping):
        raise invalid_config("the roulette configuration must be an object")
    unknown = sorted(str(k) for k in raw if k not in _CONFIG_KEYS)
    if unknown:
        raise invalid_config(f"unknown roulette settings: {', '.join(unknown)}")

    wheel = raw.get("wheel", "double_zero")
    if not isinstance(wheel, str) or wheel not in WHEELS:
        raise invalid_config("wheel must be 'double_zero' (4620.4(a)(3)) or 'single_zero'")

    options = _string_list(raw, "options", OPTION_KINDS)
    if wheel == "double_zero" and "color_seven" in options:
        raise invalid_config("color_seven is a single-zero wheel wager, NJ (e)7")
    if wheel == "single_zero" and "color_eight" in options:
        raise invalid_config("color_eight is a double-zero wheel wager, NJ (e)8")

    exclude = _string_list(raw, "exclude", STANDARD_KINDS)
    require = _string_list(raw, "require", STANDARD_KINDS)

    forbidden = _wager_exclusions(options)
    if wheel == "single_zero":
        forbidden["five"] = "4620.4(d)(6): the five-number bet needs 0 and 00"
    for kind in require:
        if kind in forbidden:
            raise invalid_config(f"{kind} is required but cannot be offered: {forbidden[kind]}")
        if kind in exclude:
            raise invalid_config(f"{kind} is both required and excluded")
    offered = sorted(
        [k for k in STANDARD_KINDS if k not in forbidden and k not in exclude] + options
    )
    given = raw.get("offered", offered)
    if not isinstance(given, list | tuple) or list(given) != offered:
        raise invalid_config(
            f"offered is derived from the other settings and must be {offered} (or left out)"
        )

    max_inside = _limit(raw, "max_inside", MAX_INSIDE_BET_CENTS, "4620.4(d)")
    max_outside = _limit(raw, "max_outside", MAX_OUTSIDE_BET_CENTS, "4620.4(e)")
    min_bet = raw.get("min_bet", DEFAULT_MIN_BET_CENTS)
    if not is_whole_number(min_bet) or min_bet <= 0:
        raise invalid_config("min_bet must be a positive integer number of cents")
    if min_bet > min(max_inside, max_outside):
        raise invalid_config("min_bet is above a table maximum: no bet could be placed")

    odds_raw = raw.get("odds", {})
    if not isinstance(odds_raw, Mapping):
        raise invalid_config("odds must be an object: wager -> [numerator, denominator]")
    odds: dict[str, JSON] = {}
    for kind in odds_raw:
        if not isinstance(kind, str) or kind not in DEFAULT_OPTION_ODDS:
            raise invalid_config(
                f"odds of {kind!r} are not a table setting (4620.4 fixes the standard payouts)"
            )
        if kind not in options:
            raise invalid_config(f"odds given for {kind}, which is not enabled at this table")
    for kind in options:
        if kind not in DEFAULT_OPTION_ODDS:
            continue
        value = odds_raw.get(kind, list(DEFAULT_OPTION_ODDS[kind]))
        if (
            not isinstance(value, list | tuple)
            or len(value) != 2
            or not all(is_whole_number(v) and v > 0 for v in value)
        ):
            raise invalid_config(f"odds of {kind} must be [numerator, denominator], both > 0")
        num, den = int(value[0]), int(value[1])
        g = gcd(num, den)
        num, den = num // g, den // g
        ret = player_return(wheel, _option_pocket_count(kind), (num, den))
        if ret > 1:
            raise invalid_config(
                f"odds {num}:{den} on {kind} would give the player an edge "
                f"(expected return {ret} of the stake)"
            )
        odds[kind] = [num, den]

    return {
        "wheel": wheel,
        "options": options,
        "exclude": exclude,
        "require": require,
        "offered": offered,
        "max_inside": max_inside,
        "max_outside": max_outside,
        "min_bet": min_bet,
        "odds": odds,
    }


def payout_odds(config: Mapping[str, JSON], kind: str) -> tuple[int, int]:
    """The odds "to 1" a winning ``kind`` pays at this table, as (numerator, denominator).

    Standard wagers: fixed by 4620.4(d)-(e) (STANDARD_ODDS). Five adjacent: 35 to 1 per part,
    NJ (e)1i(2). Basket, colour wagers and seven numbers: the table's ``odds`` setting.
    """
    if kind in STANDARD_ODDS:
        return STANDARD_ODDS[kind]
    if kind == "five_adjacent":
        return FIVE_ADJACENT_ODDS
    num, den = config["odds"][kind]
    return int(num), int(den)


# --------------------------------------------------------------------------------------------
# Bets
# --------------------------------------------------------------------------------------------


def _kind(bet: JSON) -> str:
    if not isinstance(bet, Mapping):
        raise bad_request("bet must be an object with a 'kind'")
    kind = bet.get("kind")
    if not isinstance(kind, str):
        raise bad_request("bet.kind must be a string")
    if kind not in _ALL_KINDS:
        raise invalid_bet(f"{kind!r} is not a roulette wager")
    return kind


def _pocket_name(wheel: str, value: JSON, what: str) -> str:
    if not isinstance(value, str):
        raise bad_request(f'{what} must be a number string such as "17", "0" or "00"')
    if value not in _LAYOUT_RANK:
        raise bad_request(f"{what}: {value!r} is not a roulette number")
    if value not in _POCKETS[wheel]:
        raise invalid_bet(f"{what}: {value} is not on a {wheel.replace('_', '-')} wheel")
    return value


def _numbers(wheel: str, raw: JSON) -> tuple[str, ...]:
    if not isinstance(raw, list | tuple):
        raise bad_request("numbers must be a list of number strings")
    if len(raw) == 1:  # a straight: the most frequent bet there is
        only = raw[0]
        if type(only) is str and only in _POCKETS[wheel]:
            return (only,)
    nums = [_pocket_name(wheel, v, "numbers") for v in raw]
    if len(set(nums)) != len(nums):
        raise invalid_bet("numbers names a number twice")
    return _sorted(nums)


def _canonical(wheel: str, kind: str, bet: Mapping[str, JSON]) -> tuple[_Key, dict[str, JSON]]:
    """The canonical key and spec of a bet of a known ``kind``, or RuleError."""
    field = _FIELD[kind]
    allowed = _ALLOWED[kind]
    if not allowed.issuperset(bet):
        extra = sorted(str(k) for k in bet if k not in allowed)
        raise bad_request(f"unknown fields for a {kind} bet: {', '.join(extra)}")
    table = _COVERAGE[wheel]
    if field is None:
        key: _Key = (kind, None)
        if key not in table:  # five on a single-zero wheel (checked as not offered before)
            raise invalid_bet(f"{kind} is not a bet on this wheel")
        if "numbers" in bet and frozenset(_numbers(wheel, bet["numbers"])) != table[key]:
            raise invalid_bet(f"a {kind} bet covers exactly {' '.join(_sorted(list(table[key])))}")
        return key, {"kind": kind}
    if field not in bet:
        raise bad_request(f"a {kind} bet needs {field!r}")
    value = bet[field]
    if field == "numbers":
        nums = _numbers(wheel, value)
        if len(nums) != _COUNT[kind]:
            raise invalid_bet(f"a {kind} bet names {_COUNT[kind]} number(s), not {len(nums)}")
        key = (kind, nums)
        if key not in table:
            raise invalid_bet(f"{'-'.join(nums)} is not a {kind} on this layout")
        return key, {"kind": kind, "numbers": list(nums)}
    if field in ("column", "dozen"):
        if not is_whole_number(value):
            raise bad_request(f"{field} must be an integer 1..3")
        assert isinstance(value, int)
        if value not in (1, 2, 3):
            raise invalid_bet(f"{field} {value} is not on the layout (1..3)")
        return (kind, value), {"kind": kind, field: value}
    if field == "center":
        center = _pocket_name(wheel, value, "center")
        return (kind, center), {"kind": kind, "center": center}
    # field == "color"
    if not isinstance(value, str):
        raise bad_request("color must be a string")
    if value not in COLOURS:
        raise invalid_bet(f"color {value!r} is not one of {', '.join(COLOURS)}")
    return (kind, value), {"kind": kind, "color": value}


def covered(config: Mapping[str, JSON], bet: Mapping[str, JSON]) -> frozenset[str]:
    """The pockets a bet covers on this table's wheel (the bet is validated, not just looked up).

    The bet wins when the ball rests in one of them, 4620.4(c)(2); "the symbols 0 and 00 win
    for the house all bets except those placed on 0 and 00" follows, as no column, dozen or
    even-money bet covers 0 or 00. Raises RuleError as ``check_bet`` does for a bad spec.
    """
    wheel = config["wheel"]
    key, _ = _canonical(wheel, _kind(bet), bet)
    return _COVERAGE[wheel][key]


# --------------------------------------------------------------------------------------------
# The game
# --------------------------------------------------------------------------------------------


class Roulette:
    """Roulette under 4620.4, NJ wagers as table options; implements ``base.OutcomeGame``."""

    name: str = "roulette"

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """Validate a table's roulette settings and return them in canonical form.

        Keys (all optional): ``wheel`` ``double_zero`` (default, 4620.4(a)(3)) or
        ``single_zero``; ``options`` (NJ wagers to enable); ``exclude`` (standard wagers not
        offered); ``require`` (standard wagers that must be offered); ``max_inside`` (<= 200,
        4620.4(d)); ``max_outside`` (<= 500, 4620.4(e)); ``min_bet``; ``odds`` of enabled
        basket / colour / seven-numbers wagers (never a player edge). The result adds
        ``offered``: every wager kind the table takes, with red, black and dozen dropped as
        NJ (g) demands. Raises ``invalid_config``.
        """
        return _parse_config(raw)

    def check_bet(self, config: Mapping[str, JSON], bet: JSON, amount: int) -> Mapping[str, JSON]:
        """Return the canonical bet for ``amount`` cents or raise RuleError.

        ``bad_request``: malformed spec or amount (non-positive, under ``min_bet``);
        ``invalid_bet``: not a bet on this layout; ``wager_not_offered``: off at this table
        (an option not enabled, red/black/dozen under NJ (g), five on a single-zero wheel);
        ``over_limit``: inside bets above ``max_inside`` (4620.4(d)), outside bets above
        ``max_outside`` (4620.4(e)), five-adjacent above five times ``max_inside`` (each of
        its five straights is an inside bet, NJ (e)1i(2)).
        """
        wheel = config["wheel"]
        kind = _kind(bet)
        if kind not in config["offered"]:
            raise RuleError("wager_not_offered", f"{kind} is not offered at this table")
        assert isinstance(bet, Mapping)
        _, spec = _canonical(wheel, kind, bet)
        if not is_whole_number(amount) or amount <= 0:
            raise bad_request("amount must be a positive integer number of cents")
        min_bet = int(config["min_bet"])
        if kind == "five_adjacent":
            if amount % 5:
                raise invalid_bet("a five-adjacent wager is a multiple of five chips, NJ (e)1i(2)")
            part = amount // 5
            if part < min_bet:
                raise bad_request(f"each of the five straights is under the minimum {min_bet}")
            limit = int(config["max_inside"])
            if part > limit:
                raise RuleError(
                    "over_limit",
                    f"{amount} is {part} on each of five straights, over the inside limit "
                    f"{limit}, 4620.4(d)",
                )
            return spec
        if amount < min_bet:
            raise bad_request(f"amount {amount} is under the table minimum {min_bet}")
        _, den = payout_odds(config, kind)
        if amount % den:
            raise invalid_bet(
                f"{kind} pays in steps of {den}; the amount must be a multiple of {den}"
            )
        if kind in INSIDE_KINDS:
            limit, cite = int(config["max_inside"]), "4620.4(d)"
        else:
            limit, cite = int(config["max_outside"]), "4620.4(e)"
        if amount > limit:
            raise RuleError("over_limit", f"{amount} is over the {kind} limit {limit}, {cite}")
        return spec

    def outcomes(self, config: Mapping[str, JSON]) -> Sequence[str]:
        """The pockets in wheel order: 38 on the double-zero wheel (4620.4(a)(3)), 37 else."""
        return WHEELS[config["wheel"]]

    def check_outcome(
        self, config: Mapping[str, JSON], raw: JSON, previous: str | None
    ) -> Mapping[str, JSON]:
        """Validate a dealer-entered ``{"pocket": ..., "spun_from": ...}``, 4620.4(c)(2)-(3).

        The pocket must be on this wheel. "On the first spin the dealer has no fixed point
        from which to spin": with no ``previous`` outcome, ``spun_from`` may be absent, null
        or any pocket. "Thereafter the dealer must spin the wheel and ball from the winning
        pocket into which the ball previously dropped": ``spun_from`` is required and must
        equal ``previous``, 4620.4(c)(3). Raises ``invalid_outcome``.
        """
        wheel = config["wheel"]
        pockets = _POCKETS[wheel]
        if not isinstance(raw, Mapping):
            raise invalid_outcome('the outcome must be an object {"pocket": ..., "spun_from": ...}')
        extra = sorted(str(k) for k in raw if k not in ("pocket", "spun_from"))
        if extra:
            raise invalid_outcome(f"unknown outcome fields: {', '.join(extra)}")
        pocket = raw.get("pocket")
        if not isinstance(pocket, str) or pocket not in pockets:
            raise invalid_outcome(f"pocket {pocket!r} is not a pocket of this {wheel} wheel")
        spun_from = raw.get("spun_from")
        if spun_from is not None and (not isinstance(spun_from, str) or spun_from not in pockets):
            raise invalid_outcome(f"spun_from {spun_from!r} is not a pocket of this wheel")
        if previous is not None:
            if spun_from is None:
                raise invalid_outcome(
                    f"spun_from is required after the first spin: the wheel is spun from the "
                    f"previous winning pocket {previous}, 4620.4(c)(3)"
                )
            if spun_from != previous:
                raise invalid_outcome(
                    f"spun from {spun_from}, but the ball previously dropped into {previous}: "
                    f"the dealer must spin from the previous winning pocket, 4620.4(c)(3)"
                )
        return {"pocket": pocket, "spun_from": spun_from}

    def draw_bounds(self, config: Mapping[str, JSON]) -> tuple[int, ...]:
        """One uniform pocket index: every pocket equally likely, 4620.4(c)(3)."""
        return (len(WHEELS[config["wheel"]]),)

    def drawn_outcome(
        self, config: Mapping[str, JSON], draw: Sequence[int], previous: str | None
    ) -> Mapping[str, JSON]:
        """The outcome for pocket ``outcomes(config)[draw[0]]``, spun from ``previous``."""
        order = WHEELS[config["wheel"]]
        index = draw[0] if len(draw) == 1 else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(order):
            raise invalid_outcome(f"outcome draw {draw!r} is not one index in 0..{len(order) - 1}")
        return {"pocket": order[index], "spun_from": previous}

    def settle(
        self, config: Mapping[str, JSON], bets: Sequence[PlacedBet], outcome: Mapping[str, JSON]
    ) -> tuple[Settlement, ...]:
        """Settle each bet, in order: won pays back stake + stake * num // den, lost pays 0.

        ``bets`` hold canonical bets as ``check_bet`` returned them (anything else is
        re-validated, and refused with ``invalid_bet``). A bet wins when the pocket is one it
        covers, 4620.4(c)(2); odds as ``payout_odds``.
        A five-adjacent wager of ``a`` is five straights of ``a // 5`` (NJ (e)1i(2)): one hits
        and pays ``(a // 5) * 36``, the other four lose. Integer cents; winnings are floored
        (check_bet only accepts stakes the odds divide, so nothing is ever lost to flooring).
        """
        wheel = config["wheel"]
        table = _COVERAGE[wheel]
        pocket = outcome["pocket"]
        if not isinstance(pocket, str) or pocket not in _POCKETS[wheel]:
            raise invalid_outcome(f"pocket {pocket!r} is not on this {wheel} wheel")
        odds: dict[str, tuple[int, int]] = dict(STANDARD_ODDS)
        for kind, (num, den) in config["odds"].items():
            odds[kind] = (int(num), int(den))
        odds["five_adjacent"] = FIVE_ADJACENT_ODDS
        field_of = _FIELD
        make = Settlement
        out: list[Settlement] = []
        append = out.append
        for placed in bets:
            bet = placed.bet
            cover: frozenset[str] | None
            try:
                kind = bet["kind"]
                field = field_of[kind]
                if field is None:
                    cover = table.get((kind, None))
                elif field == "numbers":
                    cover = table.get((kind, tuple(bet["numbers"])))
                else:
                    cover = table.get((kind, bet[field]))
            except (KeyError, TypeError):
                cover = None
            if cover is None:
                try:
                    key, _ = _canonical(wheel, _kind(bet), bet)
                except RuleError as err:
                    raise invalid_bet(f"bet {placed.bet_id} cannot be settled: {err}") from err
                kind = key[0]
                cover = table[key]
            amount = placed.amount
            if pocket in cover:
                if kind == "five_adjacent":
                    paid = (amount // 5) * 36
                else:
                    try:
                        num, den = odds[kind]
                    except KeyError:
                        raise RuleError(
                            "wager_not_offered", f"bet {placed.bet_id}: {kind} is off at this table"
                        ) from None
                    paid = amount + amount * num // den
                append(make(placed.bet_id, placed.player, amount, "won", paid))
            else:
                append(make(placed.bet_id, placed.player, amount, "lost", 0))
        return tuple(out)

    def winning_key(self, outcome: Mapping[str, JSON]) -> str:
        """The winning pocket, kept as the table's last result (the next spin's spun_from)."""
        return str(outcome["pocket"])

    def entered_source(self, outcome: Mapping[str, JSON]) -> str:
        """``dealer``: The dealer spun the wheel and entered the pocket."""
        return "dealer"


ROULETTE: Final[OutcomeGame] = Roulette()
"""The roulette game, as the table rules use it (``base.OutcomeGame``)."""
