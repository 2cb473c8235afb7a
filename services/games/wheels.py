"""Wheel games: NY 9 NYCRR 4620.6-4620.10, 4620.17, 4620.20, 4620.21 on one engine.

Pure rules: no I/O, clock or randomness. A wheel is an ordered list of sections, each showing
one or more symbols (``"shows"``); the outcome is the index of the section where the
indicator rests. A bet is placed on a betting space of the layout (``{"space": "5"}``) and is
paid by what its section shows: by count (Big Six, Big Nine numbers, Fruit, Card wheels), by
the bill's face (Money Wheel), at odds set on the layout (Big Nine symbols, flag and joker,
colours), at the rim sub-section's odds (Horse Race) or, on a merchandise wheel, with an item
of the prize class the section names (never cash). Amounts are integer cents; odds are
integer ``[numerator, denominator]`` "to 1". Every reading of an ambiguous text is written
down in ``docs/RULES.md`` ("Wheel games").

The layout of a table is compiled once (per configuration object, or per configuration
content) into one dictionary per section, betting space -> odds, so ``settle`` is a
dictionary lookup per bet.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd, lcm
from typing import Final

from services.aggregates import RuleError
from services.games.base import (
    JSON,
    OutcomeGame,
    PlacedBet,
    Settlement,
    bad_request,
    check_stake,
    invalid_bet,
    invalid_config,
    invalid_outcome,
    is_whole_number,
)

__all__ = [
    "BIG_NINE",
    "BIG_NINE_MAX_BET_CENTS",
    "BIG_NINE_SYMBOLS",
    "BIG_SIX",
    "BIG_SIX_MAX_BET_CENTS",
    "CARDS",
    "CARD_WHEEL",
    "CARD_WHEEL_MAX_BET_CENTS",
    "COLOR_WHEEL",
    "COLOR_WHEEL_MAX_BET_CENTS",
    "DEFAULT_LAYOUTS",
    "DEFAULT_MIN_BET_CENTS",
    "DEFAULT_ODDS",
    "FRUITS",
    "FRUIT_WHEEL",
    "FRUIT_WHEEL_MAX_BET_CENTS",
    "HORSE_RACE_WHEEL",
    "HORSE_RACE_WHEEL_MAX_BET_CENTS",
    "MERCHANDISE_AGGREGATE_PRIZE_LIMIT_CENTS",
    "MERCHANDISE_MAX_WAGER_CENTS",
    "MERCHANDISE_SINGLE_PRIZE_LIMIT_CENTS",
    "MERCHANDISE_WHEEL",
    "MONEY_WHEEL",
    "MONEY_WHEEL_BILLS",
    "MONEY_WHEEL_MAX_BET_CENTS",
    "MONEY_WHEEL_SYMBOLS",
    "MONEY_WHEEL_SYMBOL_MAX_ODDS",
    "MONEY_WHEEL_SYMBOL_MIN_ODDS",
    "WHEEL_GAMES",
    "Wheel",
    "betting_spaces",
    "parse_inventory",
    "player_return",
    "section_prize",
    "sections_won_by",
]

# --------------------------------------------------------------------------------------------
# Limits (named settings with their cites)
# --------------------------------------------------------------------------------------------

BIG_SIX_MAX_BET_CENTS: Final = 500  # 4620.6(b)(3): "The maximum bet shall be $5"
BIG_NINE_MAX_BET_CENTS: Final = 500  # 4620.7(b)(4): "The maximum bet shall be $5"
MONEY_WHEEL_MAX_BET_CENTS: Final = 500  # 4620.8(b)(3): "The maximum bet shall be $5"
COLOR_WHEEL_MAX_BET_CENTS: Final = 500  # 4620.9(b)(3): "The maximum bet shall be $5"
HORSE_RACE_WHEEL_MAX_BET_CENTS: Final = 500  # 4620.17(c): "The maximum bet shall be $5"
FRUIT_WHEEL_MAX_BET_CENTS: Final = 500  # 4620.20(b)(3): "The maximum bet shall be $5"
CARD_WHEEL_MAX_BET_CENTS: Final = 500  # 4620.21(b)(3): "The maximum bet shall be $5"
MERCHANDISE_MAX_WAGER_CENTS: Final = 200  # 4620.10(c): "The maximum wager is $2"
MERCHANDISE_SINGLE_PRIZE_LIMIT_CENTS: Final = 40_000
"""No single prize above $400: GML 189(5)(a), applied to merchandise wheels by 4620.10(d)."""
MERCHANDISE_AGGREGATE_PRIZE_LIMIT_CENTS: Final = 1_000_000
"""$10,000 in prizes awarded at a merchandise wheel closes it: GML 189(6)(a)(1), 4620.10(e)."""
MONEY_WHEEL_SYMBOL_MIN_ODDS: Final = 25  # 4620.8(b)(2): flag and joker "ranging from 25-to-1
MONEY_WHEEL_SYMBOL_MAX_ODDS: Final = 40  # through 40-to-1"
DEFAULT_MIN_BET_CENTS: Final = 1  # table setting; the regulations set no minimum

# --------------------------------------------------------------------------------------------
# Symbols
# --------------------------------------------------------------------------------------------

DICE: Final[tuple[str, ...]] = ("1", "2", "3", "4", "5", "6")
"""Big Six: each section shows three dice bearing the numbers 1 through 6, 4620.6(a)."""
BIG_NINE_NUMBERS: Final[tuple[str, ...]] = tuple(str(n) for n in range(1, 10))
"""Big Nine: number sections bear combinations of the numbers 1 through 9, 4620.7(a)."""
BIG_NINE_SYMBOLS: Final[tuple[str, ...]] = ("diamond", "star", "eagle")
"""Big Nine: other sections display a diamond, a star and an eagle, 4620.7(a)."""
MONEY_WHEEL_BILLS: Final[Mapping[str, int]] = {"$1": 1, "$2": 2, "$5": 5, "$10": 10, "$20": 20}
"""Bill -> payout "to 1": "The number on the bills indicates the payoff odds", 4620.8(b)(2)."""
MONEY_WHEEL_SYMBOLS: Final[tuple[str, ...]] = ("flag", "joker")
"""The American flag and the joker, paid at odds displayed on the layout, 4620.8(a), (b)(2)."""
FRUITS: Final[tuple[str, ...]] = ("lemon", "orange", "cherry", "apple", "grape", "banana")
"""The six fruits the default fruit wheel shows; 4620.20(b)(2) names exactly these six."""
FRUIT_TYPES: Final = 6  # 4620.20(a): "six different types of fruit or similar objects"
CARDS: Final[tuple[str, ...]] = ("9", "10", "J", "Q", "K", "A")
"""Card wheel: "the cards nine through ace", 4620.21(a)."""

_BIG_NINE_SECTION_NUMBERS: Final = 5  # 4620.7(b)(2): sections such as 1-1-9-9-9
_THREE: Final = 3  # three dice, 4620.6(a); three symbols, 4620.20(a); three cards, 4620.21(a)

# --------------------------------------------------------------------------------------------
# Default layouts (docs/RULES.md, "Wheel games", says where each comes from)
# --------------------------------------------------------------------------------------------


def _combos_54(symbols: Sequence[str]) -> list[str]:
    """The classic 54-section Big Six composition over six symbols (docs/RULES.md).

    Every symbol as a triple four times (24 sections), doubled with each of the next four
    symbols (24 sections: each symbol doubled 4 times and single 4 times), and the six
    "dead even" sections a, a+1, a+3 (each symbol on three). Interleaved round the wheel.
    """
    s = list(symbols)
    triples = [f"{a}-{a}-{a}" for a in s]
    pairs = [[f"{s[i]}-{s[i]}-{s[(i + k) % 6]}" for i in range(6)] for k in (1, 2, 3, 4)]
    distinct = [f"{s[i]}-{s[(i + 1) % 6]}-{s[(i + 3) % 6]}" for i in range(6)]
    out: list[str] = []
    for i in range(6):
        out += [triples[i], pairs[0][i], triples[i], pairs[1][i], distinct[i]]
        out += [pairs[2][i], triples[i], pairs[3][i], triples[i]]
    return out


def _big_nine_standard() -> list[str]:
    """Ours (docs/RULES.md): 21 sections. For i = 0..8, with n(k) = (i + k) mod 9 + 1, a
    section n(0)-n(1)-n(2)-n(3)-n(4) and a section n(0)-n(0)-n(2)-n(2)-n(5); a diamond, a
    star and an eagle section after every third pair."""
    out: list[str] = []
    for i in range(9):
        for pattern in ((0, 1, 2, 3, 4), (0, 0, 2, 2, 5)):
            out.append("-".join(str((i + k) % 9 + 1) for k in pattern))
        if i % 3 == 2:
            out.append(BIG_NINE_SYMBOLS[i // 3])
    return out


_MONEY_WHEEL_ORDER: Final = (
    "flag $1 $2 $1 $5 $2 $1 $10 $1 $2 $1 $5 $1 $2 $1 $20 $2 $1 $5 $1 $2 $1 $10 $2 $1 $1 $2 "
    "joker $1 $5 $1 $2 $1 $10 $2 $1 $5 $1 $2 $1 $20 $1 $2 $5 $1 $2 $1 $10 $1 $2 $1 $5 $2 $1"
)
_COLOR_WHEEL_ORDER: Final = (
    "red yellow red green red yellow blue red yellow red green purple "
    "red yellow red green red yellow blue red yellow red green yellow"
)
_HORSE_ODDS: Final = ((2, 1), (3, 1), (4, 1), (8, 1))

DEFAULT_LAYOUTS: Final[Mapping[str, Mapping[str, tuple[JSON, ...]]]] = {
    "big_six": {"standard": tuple(_combos_54(DICE))},
    "big_nine": {"standard": tuple(_big_nine_standard())},
    "money_wheel": {"standard": tuple(_MONEY_WHEEL_ORDER.split())},
    "color_wheel": {"standard": tuple(_COLOR_WHEEL_ORDER.split())},
    "horse_race_wheel": {
        "standard": tuple(
            {"shows": [str(h)], "odds": list(o)} for h in range(1, 7) for o in _HORSE_ODDS
        )
    },
    "fruit_wheel": {"standard": tuple(_combos_54(FRUITS))},
    "card_wheel": {"standard": tuple(_combos_54(CARDS))},
    "merchandise_wheel": {
        "standard": tuple(
            {"shows": [str(n)], "prize": "small" if n <= 8 else "medium" if n <= 11 else "large"}
            for n in range(1, 13)
        )
    },
}
"""Game -> layout name -> sections (string shorthand or objects), before validation."""

DEFAULT_ODDS: Final[Mapping[str, Mapping[str, Mapping[str, tuple[int, int]]]]] = {
    "big_nine": {"standard": {"diamond": (18, 1), "star": (18, 1), "eagle": (18, 1)}},
    "money_wheel": {"standard": {"flag": (40, 1), "joker": (40, 1)}},
    "color_wheel": {
        "standard": {
            "red": (1, 1),
            "yellow": (2, 1),
            "green": (4, 1),
            "blue": (10, 1),
            "purple": (20, 1),
        }
    },
}
"""Game -> layout -> odds set on the layout (4620.7(b)(3), 4620.8(b)(2), 4620.9(b)(2))."""

# --------------------------------------------------------------------------------------------
# The games' rules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Rules:
    name: str
    title: str
    cite: str
    max_bet: int
    max_bet_cite: str


_RULES: Final[Mapping[str, _Rules]] = {
    r.name: r
    for r in (
        _Rules("big_six", "Big Six", "4620.6", BIG_SIX_MAX_BET_CENTS, "4620.6(b)(3)"),
        _Rules("big_nine", "Big Nine", "4620.7", BIG_NINE_MAX_BET_CENTS, "4620.7(b)(4)"),
        _Rules("money_wheel", "Money Wheel", "4620.8", MONEY_WHEEL_MAX_BET_CENTS, "4620.8(b)(3)"),
        _Rules("color_wheel", "Color Wheel", "4620.9", COLOR_WHEEL_MAX_BET_CENTS, "4620.9(b)(3)"),
        _Rules(
            "horse_race_wheel",
            "Horse Race Wheel",
            "4620.17",
            HORSE_RACE_WHEEL_MAX_BET_CENTS,
            "4620.17(c)",
        ),
        _Rules("fruit_wheel", "Fruit Wheel", "4620.20", FRUIT_WHEEL_MAX_BET_CENTS, "4620.20(b)(3)"),
        _Rules("card_wheel", "Card Wheel", "4620.21", CARD_WHEEL_MAX_BET_CENTS, "4620.21(b)(3)"),
        _Rules(
            "merchandise_wheel",
            "Merchandise Wheel",
            "4620.10",
            MERCHANDISE_MAX_WAGER_CENTS,
            "4620.10(c)",
        ),
    )
}

_COUNT_GAMES: Final = frozenset({"big_six", "big_nine", "fruit_wheel", "card_wheel"})
"""Games whose number / symbol bets pay "to 1" by how many times the space shows."""

_REQUIRED_SPACES: Final[Mapping[str, tuple[str, ...]]] = {
    "big_six": DICE,  # 4620.6(a): the layout bears 1 through 6
    "big_nine": (*BIG_NINE_NUMBERS, *BIG_NINE_SYMBOLS),  # 4620.7(a)
    "money_wheel": (*MONEY_WHEEL_BILLS, *MONEY_WHEEL_SYMBOLS),  # 4620.8(a)
    "card_wheel": CARDS,  # 4620.21(a): nine through ace
}
"""Betting spaces the regulation puts on the layout: each must show on some section."""

_CONFIG_KEYS: Final = frozenset({"layout", "sections", "odds", "min_bet", "max_bet"})
_MERCHANDISE_KEYS: Final = frozenset({"single_prize_limit", "aggregate_prize_limit", "inventory"})
_ITEM_KEYS: Final = frozenset({"item", "prize", "value", "donated"})


def _odds_pair(value: JSON, what: str) -> tuple[int, int]:
    """``[num, den]`` (or a whole number ``n`` for ``[n, 1]``) in lowest terms, both > 0."""
    if is_whole_number(value):
        value = [value, 1]
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(is_whole_number(v) and v > 0 for v in value)
    ):
        raise invalid_config(f"{what}: odds must be [numerator, denominator], both > 0")
    num, den = int(value[0]), int(value[1])
    g = gcd(num, den)
    return num // g, den // g


def _symbol(value: JSON, where: str) -> str:
    if not isinstance(value, str) or not value or value != value.strip():
        raise invalid_config(f"{where}: a section shows non-empty names, got {value!r}")
    return value


def _check_shows(game: str, shows: list[str], where: str) -> None:
    """What one section may show, per game (``invalid_config`` otherwise)."""
    if game in ("big_six", "card_wheel", "fruit_wheel"):
        if len(shows) != _THREE:
            cite = {"big_six": "4620.6(a)", "card_wheel": "4620.21(a)"}.get(game, "4620.20(a)")
            raise invalid_config(f"{where}: shows {len(shows)} symbols, not three, {cite}")
        allowed = {"big_six": DICE, "card_wheel": CARDS}.get(game)
        if allowed is not None:
            bad = [s for s in shows if s not in allowed]
            if bad:
                raise invalid_config(
                    f"{where}: {', '.join(bad)} not one of {', '.join(allowed)}, "
                    f"{'4620.6(a)' if game == 'big_six' else '4620.21(a)'}"
                )
    elif game == "big_nine":
        if len(shows) == 1 and shows[0] in BIG_NINE_SYMBOLS:
            return
        if len(shows) != _BIG_NINE_SECTION_NUMBERS or any(s not in BIG_NINE_NUMBERS for s in shows):
            raise invalid_config(
                f"{where}: a Big Nine section shows five numbers 1-9 or one of diamond, star, "
                "eagle, 4620.7(a), (b)(2)"
            )
    elif game == "money_wheel":
        if len(shows) != 1 or (
            shows[0] not in MONEY_WHEEL_BILLS and shows[0] not in ("flag", "joker")
        ):
            raise invalid_config(
                f"{where}: a Money Wheel section shows one of $1, $2, $5, $10, $20, flag, "
                "joker, 4620.8(a)"
            )
    elif game == "color_wheel":
        if len(shows) != 1:
            raise invalid_config(f"{where}: a Color Wheel section shows one colour, 4620.9(a)")
    elif game == "horse_race_wheel":
        h = shows[0]
        if len(shows) != 1 or not h.isascii() or not h.isdigit() or h != str(int(h)) or h == "0":
            raise invalid_config(
                f"{where}: a Horse Race section shows one horse number (1, 2, …), 4620.17(a)"
            )
    else:  # merchandise_wheel
        if len(set(shows)) != len(shows):
            raise invalid_config(f"{where}: names a number, symbol or colour twice")


def _section(game: str, index: int, raw: JSON) -> dict[str, JSON]:
    """One section in canonical form: ``{"shows": [...]}`` + ``odds`` / ``prize``."""
    where = f"section {index}"
    odds: JSON = None
    prize: JSON = None
    if isinstance(raw, str):
        shows_raw: JSON = [p.strip() for p in raw.split("-")]
    elif isinstance(raw, Mapping):
        extra = sorted(str(k) for k in raw if k not in ("shows", "odds", "prize"))
        if extra:
            raise invalid_config(f"{where}: unknown keys {', '.join(extra)}")
        shows_raw = raw.get("shows")
        odds = raw.get("odds")
        prize = raw.get("prize")
    else:
        raise invalid_config(f"{where}: a section is a string such as '1-1-2' or an object")
    if not isinstance(shows_raw, list | tuple) or not shows_raw:
        raise invalid_config(f"{where}: shows must be a non-empty list of names")
    shows = [_symbol(s, where) for s in shows_raw]
    _check_shows(game, shows, where)
    out: dict[str, JSON] = {"shows": shows}
    if game == "horse_race_wheel":
        if odds is None:
            raise invalid_config(
                f"{where}: a rim sub-section gives the odds paid, 4620.17(a): odds required"
            )
        out["odds"] = list(_odds_pair(odds, where))
    elif odds is not None:
        raise invalid_config(f"{where}: only Horse Race sub-sections carry odds")
    if prize is not None:
        if game != "merchandise_wheel":
            raise invalid_config(f"{where}: only merchandise wheel sections name a prize")
        if not isinstance(prize, str) or not prize or prize != prize.strip():
            raise invalid_config(f"{where}: prize must be a non-empty prize class name")
        out["prize"] = prize
    return out


# --------------------------------------------------------------------------------------------
# Compiled layouts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A validated configuration and its tables."""

    game: str
    config: dict[str, JSON]
    spaces: frozenset[str]
    wins: tuple[Mapping[str, tuple[int, int]], ...]
    """Per section: betting space -> odds "to 1" of a win there (merchandise: (0, 1))."""
    won_by: Mapping[str, tuple[int, ...]]
    """Per space: the sections where a bet on it wins (``sections_won_by``)."""
    steps: Mapping[str, int]
    """Per space: the lcm of the odds' denominators; stakes must be a multiple of it."""
    outcomes: tuple[str, ...]
    cash: bool


def _limit(raw: Mapping[str, JSON], key: str, maximum: int, cite: str) -> int:
    value = raw.get(key, maximum)
    if not is_whole_number(value) or value <= 0:
        raise invalid_config(f"{key} must be a positive integer number of cents")
    assert isinstance(value, int)
    if value > maximum:
        raise invalid_config(f"{key} {value} is above the regulatory maximum {maximum}, {cite}")
    return value


def _items(
    classes: frozenset[str], single_limit: int, raw_items: JSON
) -> tuple[dict[str, JSON], ...]:
    if not isinstance(raw_items, list | tuple):
        raise invalid_config("inventory must be a list of items")
    seen: set[str] = set()
    out: list[dict[str, JSON]] = []
    for i, raw in enumerate(raw_items):
        where = f"inventory item {i}"
        if not isinstance(raw, Mapping):
            raise invalid_config(f"{where}: an item is an object {{item, prize, value, donated}}")
        extra = sorted(str(k) for k in raw if k not in _ITEM_KEYS)
        if extra:
            raise invalid_config(f"{where}: unknown keys {', '.join(extra)}")
        item, prize, value = raw.get("item"), raw.get("prize"), raw.get("value")
        donated = raw.get("donated", False)
        if not isinstance(item, str) or not item:
            raise invalid_config(f"{where}: item must be a non-empty id")
        where = f"inventory item {item!r}"
        if item in seen:
            raise RuleError("duplicate_item", f"{where}: the id is used twice")
        seen.add(item)
        if not isinstance(prize, str) or prize not in classes:
            raise invalid_config(
                f"{where}: prize {prize!r} is not a class a section names "
                f"({', '.join(sorted(classes))})"
            )
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise invalid_config(f"{where}: value must be a positive integer number of cents")
        if value > single_limit:
            raise RuleError(
                "prize_over_limit",
                f"{where}: value {value} is over the single-prize limit {single_limit}, "
                "4620.10(d), GML 189(5)(a)",
            )
        if not isinstance(donated, bool):
            raise invalid_config(f"{where}: donated must be true or false")
        out.append({"item": item, "prize": prize, "value": value, "donated": donated})
    return tuple(out)


def _compile(game: str, raw: Mapping[str, JSON]) -> _Compiled:
    """Validate ``raw`` options of ``game`` and build its tables (``invalid_config``)."""
    rules = _RULES[game]
    if not isinstance(raw, Mapping):
        raise invalid_config(f"the {rules.title} configuration must be an object")
    known = _CONFIG_KEYS | (_MERCHANDISE_KEYS if game == "merchandise_wheel" else frozenset())
    unknown = sorted(str(k) for k in raw if k not in known)
    if unknown:
        raise invalid_config(f"unknown {rules.title} settings: {', '.join(unknown)}")

    # The layout: a named default (expanded) or custom sections.
    layouts = DEFAULT_LAYOUTS[game]
    layout = raw.get("layout", "custom" if "sections" in raw else "standard")
    if not isinstance(layout, str) or (layout != "custom" and layout not in layouts):
        raise invalid_config(
            f"layout must be one of {', '.join([*layouts, 'custom'])}, got {layout!r}"
        )
    if layout == "custom":
        raw_sections = raw.get("sections")
        if raw_sections is None:
            raise invalid_config("a custom layout needs its sections")
    else:
        raw_sections = list(layouts[layout])
    if not isinstance(raw_sections, list | tuple) or len(raw_sections) < 2:
        raise invalid_config("sections must be a list of at least two sections")
    sections = [_section(game, i, s) for i, s in enumerate(raw_sections)]
    if layout != "custom" and "sections" in raw:
        given = raw["sections"]
        if (
            not isinstance(given, list | tuple)
            or [_section(game, i, s) for i, s in enumerate(given)] != sections
        ):
            raise invalid_config(
                f"sections differ from the {layout} layout: give layout = 'custom' to change them"
            )
    n = len(sections)

    # Betting spaces: everything a section shows.
    seen: dict[str, None] = {}
    for s in sections:
        for sym in s["shows"]:
            seen[sym] = None
    spaces = tuple(seen)
    missing = [s for s in _REQUIRED_SPACES.get(game, ()) if s not in seen]
    if missing:
        raise invalid_config(
            f"betting space(s) {', '.join(missing)} show on no section: they would pay "
            f"nothing, {rules.cite}(a)"
        )
    if game == "fruit_wheel" and len(spaces) != FRUIT_TYPES:
        raise invalid_config(
            f"a Fruit Wheel shows six types of fruit, 4620.20(a); this one shows {len(spaces)}"
        )

    # Odds set on the layout.
    if game == "big_nine":
        settable: tuple[str, ...] = BIG_NINE_SYMBOLS
    elif game == "money_wheel":
        settable = MONEY_WHEEL_SYMBOLS
    elif game == "color_wheel":
        settable = spaces
    else:
        settable = ()
    odds_raw = raw.get("odds", {})
    if not isinstance(odds_raw, Mapping):
        raise invalid_config("odds must be an object: betting space -> [numerator, denominator]")
    for space in odds_raw:
        if space not in settable:
            raise invalid_config(
                f"odds of {space!r} are not set on this layout"
                + ("" if settable else f": {rules.title} odds are fixed, {rules.cite}(b)")
            )
    defaults = DEFAULT_ODDS.get(game, {}).get(layout, {})
    odds: dict[str, tuple[int, int]] = {}
    for space in settable:
        if space in odds_raw:
            odds[space] = _odds_pair(odds_raw[space], f"odds of {space}")
        elif space in defaults:
            odds[space] = defaults[space]
        elif game == "money_wheel":
            odds[space] = (MONEY_WHEEL_SYMBOL_MAX_ODDS, 1)
        else:
            raise invalid_config(
                f"the odds of {space} must be displayed on the layout, "
                f"{'4620.7(b)(3)' if game == 'big_nine' else '4620.9(b)(2)'}: give odds.{space}"
            )
        if game == "money_wheel":
            value = Fraction(*odds[space])
            if not MONEY_WHEEL_SYMBOL_MIN_ODDS <= value <= MONEY_WHEEL_SYMBOL_MAX_ODDS:
                raise invalid_config(
                    f"odds of {space} {odds[space][0]}:{odds[space][1]} are outside 25-to-1 "
                    "through 40-to-1, 4620.8(b)(2)"
                )

    # What each section pays.
    cash = game != "merchandise_wheel"
    wins: list[dict[str, tuple[int, int]]] = []
    for s in sections:
        shows = s["shows"]
        pays: dict[str, tuple[int, int]] = {}
        if game in _COUNT_GAMES and not (game == "big_nine" and shows[0] in BIG_NINE_SYMBOLS):
            for sym in shows:
                pays[sym] = (shows.count(sym), 1)
        elif game == "merchandise_wheel":
            if "prize" in s:
                for sym in shows:
                    pays[sym] = (0, 1)
        elif game == "horse_race_wheel":
            num, den = s["odds"]
            pays[shows[0]] = (num, den)
        elif game == "money_wheel" and shows[0] in MONEY_WHEEL_BILLS:
            pays[shows[0]] = (MONEY_WHEEL_BILLS[shows[0]], 1)
        else:  # big nine symbol, flag or joker, colour
            pays[shows[0]] = odds[shows[0]]
        wins.append(pays)

    if not cash and not any(wins):
        raise invalid_config(
            "no section names a prize class: the wheel would award nothing, 4620.10(a)"
        )
    steps: dict[str, int] = {}
    won_by: dict[str, tuple[int, ...]] = {}
    for space in spaces:
        won_by[space] = tuple(i for i, w in enumerate(wins) if space in w)
        steps[space] = lcm(*(w[space][1] for w in wins if space in w))
        if cash:
            ret = (
                sum(
                    (Fraction(w[space][0] + w[space][1], w[space][1]) for w in wins if space in w),
                    Fraction(0),
                )
                / n
            )
            if ret > 1:
                raise invalid_config(
                    f"betting space {space} would give the player an edge (expected return "
                    f"{ret} of the stake; docs/RULES.md, Wheel games)"
                )

    max_bet = _limit(raw, "max_bet", rules.max_bet, rules.max_bet_cite)
    min_bet = raw.get("min_bet", DEFAULT_MIN_BET_CENTS)
    if not is_whole_number(min_bet) or min_bet <= 0:
        raise invalid_config("min_bet must be a positive integer number of cents")
    assert isinstance(min_bet, int)
    if min_bet > max_bet:
        raise invalid_config(
            f"min_bet {min_bet} is above max_bet {max_bet}: no bet could be placed"
        )

    config: dict[str, JSON] = {
        "layout": layout,
        "sections": sections,
        "odds": {k: list(v) for k, v in odds.items()},
        "min_bet": min_bet,
        "max_bet": max_bet,
    }
    if game == "merchandise_wheel":
        single = _limit(
            raw,
            "single_prize_limit",
            MERCHANDISE_SINGLE_PRIZE_LIMIT_CENTS,
            "4620.10(d), GML 189(5)(a)",
        )
        aggregate = _limit(
            raw,
            "aggregate_prize_limit",
            MERCHANDISE_AGGREGATE_PRIZE_LIMIT_CENTS,
            "4620.10(e), GML 189(6)(a)(1)",
        )
        classes = frozenset(str(s["prize"]) for s in sections if "prize" in s)
        try:
            items = _items(classes, single, raw.get("inventory", []))
        except RuleError as err:  # duplicate_item, prize_over_limit: all invalid_config here
            raise invalid_config(err.message) from err
        config["single_prize_limit"] = single
        config["aggregate_prize_limit"] = aggregate
        config["inventory"] = list(items)
    return _Compiled(
        game=game,
        config=config,
        spaces=frozenset(spaces),
        wins=tuple(wins),
        won_by=won_by,
        steps=steps,
        outcomes=tuple(str(i) for i in range(n)),
        cash=cash,
    )


_CACHE_SIZE: Final = 256
_BY_ID: dict[tuple[str, int], tuple[Mapping[str, JSON], _Compiled]] = {}
_BY_CONTENT: dict[tuple[str, str], _Compiled] = {}


def _compiled(game: str, config: Mapping[str, JSON]) -> _Compiled:
    """The compiled layout of a canonical ``config``: by identity, else by content, else built.

    The identity cache holds a reference to the configuration, so its id cannot be reused
    while the entry lives. Both caches are cleared when full (a night has a few tables).
    """
    entry = _BY_ID.get((game, id(config)))
    if entry is not None and entry[0] is config:
        return entry[1]
    try:
        content = json.dumps(config, sort_keys=True)
    except (TypeError, ValueError) as err:
        raise invalid_config(f"the configuration is not JSON-like: {err}") from err
    compiled = _BY_CONTENT.get((game, content))
    if compiled is None:
        compiled = _compile(game, config)
        if len(_BY_CONTENT) >= _CACHE_SIZE:
            _BY_CONTENT.clear()
        _BY_CONTENT[(game, content)] = compiled
    if len(_BY_ID) >= _CACHE_SIZE:
        _BY_ID.clear()
    _BY_ID[(game, id(config))] = (config, compiled)
    return compiled


def _game_of(game: str) -> str:
    if game not in _RULES:
        raise KeyError(game)
    return game


# --------------------------------------------------------------------------------------------
# Helpers (pure)
# --------------------------------------------------------------------------------------------


def parse_inventory(config: Mapping[str, JSON], raw_items: JSON) -> tuple[dict[str, JSON], ...]:
    """Validate merchandise items for a merchandise wheel's ``config``; canonical items.

    An item is ``{"item": id, "prize": class, "value": cents, "donated": bool}``: ``value``
    is the cost to the licensee or, if donated, its current retail price (4620.10(e)),
    ``donated`` defaults to false. Ids are unique within ``raw_items``; the class is one a
    section of the wheel names. Codes: ``prize_over_limit`` (value above the wheel's
    ``single_prize_limit``, 4620.10(d), GML 189(5)(a)), ``duplicate_item`` (an id given
    twice), ``invalid_config`` (anything else). Inside ``parse_config`` every fault is
    ``invalid_config``.
    """
    compiled = _compiled("merchandise_wheel", config)
    cfg = compiled.config
    classes = frozenset(str(s["prize"]) for s in cfg["sections"] if "prize" in s)
    return _items(classes, int(cfg["single_prize_limit"]), raw_items)


def sections_won_by(config: Mapping[str, JSON], space: str, game: str) -> tuple[int, ...]:
    """The indices of the sections on which a bet on ``space`` wins (``invalid_bet`` if none).

    On a merchandise wheel (``game`` ``merchandise_wheel``) that is where the space shows
    and the section names a prize class, 4620.10(a)-(b) (possibly nowhere: a space may show
    only on sections naming no prize, docs/RULES.md); on a cash wheel, where it shows.
    """
    compiled = _compiled(_game_of(game), config)
    if space not in compiled.spaces:
        raise invalid_bet(f"{space!r} is not a betting space of this layout")
    return compiled.won_by[space]


def section_prize(config: Mapping[str, JSON], index: int) -> str | None:
    """The prize class section ``index`` names, or None (``invalid_outcome`` off the wheel)."""
    sections = config["sections"]
    if not is_whole_number(index) or not 0 <= index < len(sections):
        raise invalid_outcome(f"section {index!r} is not on this wheel (0..{len(sections) - 1})")
    prize = sections[index].get("prize")
    return None if prize is None else str(prize)


def betting_spaces(config: Mapping[str, JSON], game: str) -> tuple[str, ...]:
    """The layout's betting spaces, in the order they first show round the wheel."""
    compiled = _compiled(_game_of(game), config)
    seen: dict[str, None] = {}
    for s in compiled.config["sections"]:
        for sym in s["shows"]:
            seen[sym] = None
    return tuple(seen)


def player_return(config: Mapping[str, JSON], space: str, game: str) -> Fraction:
    """Expected cash back per unit staked on ``space`` (house edge = 1 - this).

    Sum over the sections where the space wins of (num + den) / den, divided by the number
    of sections (each equally likely). A merchandise wheel returns no cash: 0, 4620.10(d).
    """
    compiled = _compiled(_game_of(game), config)
    if space not in compiled.spaces:
        raise invalid_bet(f"{space!r} is not a betting space of this layout")
    if not compiled.cash:
        return Fraction(0)
    total = sum(
        (Fraction(w[space][0] + w[space][1], w[space][1]) for w in compiled.wins if space in w),
        Fraction(0),
    )
    return total / len(compiled.wins)


# --------------------------------------------------------------------------------------------
# The game
# --------------------------------------------------------------------------------------------


class Wheel:
    """One wheel game of Part 4620 on the shared engine; implements ``base.OutcomeGame``."""

    def __init__(self, name: str) -> None:
        self.name: str = name
        self._rules = _RULES[name]

    def __repr__(self) -> str:
        return f"Wheel({self.name!r})"

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """Validate a table's wheel options and return the complete canonical configuration.

        Keys: ``layout`` (``standard``, the default, or ``custom``), ``sections`` (a custom
        layout: strings such as ``"1-1-2"`` or objects ``{"shows", "odds", "prize"}``),
        ``odds`` (spaces whose odds the layout sets: Big Nine symbols 4620.7(b)(3), flag and
        joker within 25-40 to 1 4620.8(b)(2), colours 4620.9(b)(2)), ``max_bet`` (at most the
        regulatory maximum), ``min_bet``; on a merchandise wheel also ``single_prize_limit``,
        ``aggregate_prize_limit`` and ``inventory``. Every betting space must pay something and
        no space may give the player an edge. Raises ``invalid_config``.
        """
        compiled = _compile(self.name, raw)
        config = compiled.config
        _BY_ID[(self.name, id(config))] = (config, compiled)
        return config

    def check_bet(self, config: Mapping[str, JSON], bet: JSON, amount: int) -> Mapping[str, JSON]:
        """Return ``{"space": ...}`` for ``amount`` cents, or raise RuleError.

        ``merchandise_wager``: on a merchandise wheel, anything besides the space offered
        with the wager (4620.10(c): merchandise shall not be wagered); ``bad_request``:
        malformed spec or amount; ``invalid_bet``: a space the layout does not have, or a stake
        the odds' denominator does not divide; ``under_minimum``: under ``min_bet``;
        ``over_limit``: over ``max_bet`` ($5, or $2 on a merchandise wheel, 4620.10(c)).
        """
        compiled = _compiled(self.name, config)
        if not isinstance(bet, Mapping):
            raise bad_request('bet must be an object {"space": ...}')
        extra = sorted(str(k) for k in bet if k != "space")
        if extra:
            if self.name == "merchandise_wheel":
                raise RuleError(
                    "merchandise_wager",
                    f"a wager is money only: {', '.join(extra)} offered with it; merchandise "
                    "shall not be wagered, 4620.10(c)",
                )
            raise bad_request(f"unknown bet fields: {', '.join(extra)}")
        space = bet.get("space")
        if not isinstance(space, str):
            raise bad_request("bet.space must be a string")
        if space not in compiled.spaces:
            raise invalid_bet(f"{space!r} is not a betting space of this {self._rules.title}")
        check_stake(compiled.config, amount, self._rules.max_bet, self._rules.max_bet_cite)
        step = compiled.steps[space]
        if amount % step:
            raise invalid_bet(f"{space} pays in steps of {step}; the amount must be a multiple")
        return {"space": space}

    def outcomes(self, config: Mapping[str, JSON]) -> Sequence[str]:
        """The section indices ``"0"`` … ``"n-1"``, each equally likely on a fair wheel."""
        return _compiled(self.name, config).outcomes

    def check_outcome(
        self, config: Mapping[str, JSON], raw: JSON, previous: str | None
    ) -> Mapping[str, JSON]:
        """Validate ``{"section": i}``: the section where the indicator rests (``invalid_outcome``).

        ``previous`` plays no part: the texts set no spinning point for wheels.
        """
        n = len(_compiled(self.name, config).outcomes)
        if not isinstance(raw, Mapping):
            raise invalid_outcome('the outcome must be an object {"section": index}')
        extra = sorted(str(k) for k in raw if k != "section")
        if extra:
            raise invalid_outcome(f"unknown outcome fields: {', '.join(extra)}")
        section = raw.get("section")
        if not isinstance(section, int) or isinstance(section, bool) or not 0 <= section < n:
            raise invalid_outcome(f"section {section!r} is not on this wheel (0..{n - 1})")
        return {"section": section}

    def draw_bounds(self, config: Mapping[str, JSON]) -> tuple[int, ...]:
        """One uniform section index: every section equally likely on a fair wheel."""
        return (len(_compiled(self.name, config).outcomes),)

    def drawn_outcome(
        self, config: Mapping[str, JSON], draw: Sequence[int], previous: str | None
    ) -> Mapping[str, JSON]:
        """The outcome for ``outcomes(config)[draw[0]]``: ``{"section": draw[0]}``."""
        n = len(_compiled(self.name, config).outcomes)
        index = draw[0] if len(draw) == 1 else None
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < n:
            raise invalid_outcome(f"outcome index {index!r} is not in 0..{n - 1}")
        return {"section": index}

    def settle(
        self, config: Mapping[str, JSON], bets: Sequence[PlacedBet], outcome: Mapping[str, JSON]
    ) -> tuple[Settlement, ...]:
        """Settle each bet, in order, against the section where the indicator rests.

        A bet on a space the section pays wins: on a cash wheel it pays back
        ``amount + amount * num // den`` (check_bet accepts only stakes the denominator
        divides, so nothing is floored); on a merchandise wheel it is ``won`` with ``paid`` 0,
        the prize being an item, never cash (4620.10(d)). Any other bet is ``lost``, paid 0.
        A bet whose space is not on the layout is refused with ``invalid_bet``.
        """
        compiled = _compiled(self.name, config)
        section = outcome["section"]
        if not is_whole_number(section) or not 0 <= section < len(compiled.wins):
            raise invalid_outcome(f"section {section!r} is not on this wheel")
        wins = compiled.wins[section]
        spaces = compiled.spaces
        cash = compiled.cash
        make = Settlement
        out: list[Settlement] = []
        append = out.append
        for placed in bets:
            try:
                space = placed.bet["space"]
                w = wins.get(space)
            except (KeyError, TypeError):
                raise invalid_bet(f"bet {placed.bet_id} cannot be settled: no space") from None
            amount = placed.amount
            if w is None:
                if space not in spaces:
                    raise invalid_bet(f"bet {placed.bet_id}: {space!r} is not on this layout")
                append(make(placed.bet_id, placed.player, amount, "lost", 0))
            elif cash:
                append(
                    make(
                        placed.bet_id, placed.player, amount, "won", amount + amount * w[0] // w[1]
                    )
                )
            else:
                append(make(placed.bet_id, placed.player, amount, "won", 0))
        return tuple(out)

    def winning_key(self, outcome: Mapping[str, JSON]) -> str:
        """The section index as a string, kept as the table's last result."""
        return str(outcome["section"])

    def entered_source(self, outcome: Mapping[str, JSON]) -> str:
        """``dealer``: The dealer spun the wheel and entered the section."""
        return "dealer"


BIG_SIX: Final[OutcomeGame] = Wheel("big_six")
BIG_NINE: Final[OutcomeGame] = Wheel("big_nine")
MONEY_WHEEL: Final[OutcomeGame] = Wheel("money_wheel")
COLOR_WHEEL: Final[OutcomeGame] = Wheel("color_wheel")
HORSE_RACE_WHEEL: Final[OutcomeGame] = Wheel("horse_race_wheel")
FRUIT_WHEEL: Final[OutcomeGame] = Wheel("fruit_wheel")
CARD_WHEEL: Final[OutcomeGame] = Wheel("card_wheel")
MERCHANDISE_WHEEL: Final[OutcomeGame] = Wheel("merchandise_wheel")

WHEEL_GAMES: Final[Mapping[str, OutcomeGame]] = {
    g.name: g
    for g in (
        BIG_SIX,
        BIG_NINE,
        MONEY_WHEEL,
        COLOR_WHEEL,
        HORSE_RACE_WHEEL,
        FRUIT_WHEEL,
        CARD_WHEEL,
        MERCHANDISE_WHEEL,
    )
}
"""Every wheel game by its license name (``services/license.py``)."""
