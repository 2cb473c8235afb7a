"""Joker Seven: NY 9 NYCRR 4620.16, a game of one outcome (seven cards dealt face up).

Pure rules: no I/O, clock or randomness. The deck is the 52 cards of ``services.games.cards``
and two jokers, which are alike (4620.16(a)). A hand is the seven cards dealt face up
(4620.16(c)); the outcome is ``{"cards": [...]}``, the seven cards in canonical order. Bets
go on one of 28 betting squares, ``{"square": "<name>"}`` (:data:`SQUARES`), at odds the text
fixes, "to 1" (4620.16(d), (e)). Amounts are integer cents. Every reading of the text is
written down in ``docs/RULES.md`` ("Joker Seven (4620.16)"), J-1 to J-8.

The exact house edge of every square comes from :func:`square_win_counts`, which counts the
hands of every composition of ranks, colours and jokers (exact integers), never hand by hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import cache
from math import comb
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
from services.games.cards import DECK, JOKER, RANKS, SUITS, colour, parse_card, rank

__all__ = [
    "COLOURS",
    "DEFAULT_MIN_BET_CENTS",
    "DRAW_BOUNDS",
    "HAND_SIZE",
    "JOKERS_IN_DECK",
    "JOKER_SEVEN",
    "JOKER_SEVEN_DECK",
    "MAX_BET_CENTS",
    "PAYOUT_ODDS",
    "SQUARES",
    "JokerSeven",
    "canonical_hand",
    "deal_positions",
    "draw_of_positions",
    "hands_counted",
    "house_edges",
    "pair_count",
    "square_win_counts",
    "winning_squares",
]

# --------------------------------------------------------------------------------------------
# The deck, the deal and the limits (named settings with their cites)
# --------------------------------------------------------------------------------------------

HAND_SIZE: Final = 7  # 4620.16(c): "Seven cards are dealt face up"
JOKERS_IN_DECK: Final = 2  # 4620.16(a): "One deck of 52 cards and 2 jokers"
MAX_BET_CENTS: Final = 500  # 4620.16(f): the maximum bet is $5
DEFAULT_MIN_BET_CENTS: Final = 1  # table setting; the regulation sets no minimum

JOKER_SEVEN_DECK: Final[tuple[str, ...]] = (*DECK, *([JOKER] * JOKERS_IN_DECK))
"""The 54 cards by position: the 52 of ``cards.DECK`` in its order, then the two jokers
(positions 52 and 53). A server draw deals positions; the jokers are alike, so two deals
that differ only by which joker went where show the same cards."""

DRAW_BOUNDS: Final[tuple[int, ...]] = tuple(len(JOKER_SEVEN_DECK) - i for i in range(HAND_SIZE))
"""The bounds of one server draw, ``(54, 53, 52, 51, 50, 49, 48)``: a partial Fisher-Yates
deal of seven of the 54 cards (:func:`deal_positions`), a fresh shuffle every hand
(4620.16(c), reading J-7)."""

# --------------------------------------------------------------------------------------------
# The layout: 28 squares and their odds, fixed by 4620.16(d)-(e)
# --------------------------------------------------------------------------------------------

COLOURS: Final[tuple[str, ...]] = ("red", "black")
"""The colour bets are placed on one colour each (reading J-1)."""

_COLOUR_EXACT: Final[Mapping[int, int]] = {4: 2, 5: 5, 6: 15, 7: 25}
"""Exactly n cards of the colour -> odds "to 1", 4620.16(d)."""
_COLOUR_AT_LEAST: Final = 4  # 4620.16(d): "4 or more red or 4 or more black cards"
_PRIAL: Final = 3  # three of a kind, 4620.16(e)
_PAIR: Final = 2


def _odds_table() -> dict[str, int]:
    odds: dict[str, int] = {}
    for c in COLOURS:
        odds[f"{c}_4_or_more"] = 1  # 4620.16(d): even money
        for n, to_one in _COLOUR_EXACT.items():
            odds[f"{c}_exactly_{n}"] = to_one  # 4620.16(d)
    odds["no_pairs"] = 3  # 4620.16(e): "No pairs or two pairs: 3-to-1" (J-2)
    odds["two_pairs"] = 3
    odds["one_joker"] = 3  # 4620.16(e): "1 joker: 3-to-1"
    odds["two_jokers"] = 20  # 4620.16(e): "2 jokers: 20-to-1"
    for r in RANKS:
        odds[f"pair_{r}"] = 9  # 4620.16(e): "Any specific pair, aces to kings: 9-to-1"
    odds["prial"] = 12  # 4620.16(e): "Prial (three of a kind): 12-to-1"
    return odds


PAYOUT_ODDS: Final[Mapping[str, int]] = _odds_table()
"""Square -> payout "to 1", fixed by 4620.16(d)-(e) (not table settings). Every payout is a
whole multiple of the stake, so a payout in whole cents needs no rounding rule."""

SQUARES: Final[tuple[str, ...]] = tuple(PAYOUT_ODDS)
"""The 28 betting squares in layout order (reading J-8): per colour ``<c>_4_or_more`` and
``<c>_exactly_4`` … ``<c>_exactly_7``; ``no_pairs``, ``two_pairs``, ``one_joker``,
``two_jokers``; ``pair_A``, ``pair_2`` … ``pair_10``, ``pair_J``, ``pair_Q``, ``pair_K``;
``prial``."""

_CONFIG_KEYS: Final = frozenset({"min_bet", "max_bet"})
_RANK_ORDER: Final[Mapping[str, int]] = {r: i for i, r in enumerate(RANKS)}
_SUIT_ORDER: Final[Mapping[str, int]] = {s: i for i, s in enumerate(SUITS)}

# --------------------------------------------------------------------------------------------
# Hands
# --------------------------------------------------------------------------------------------


def _card_order(card: str) -> tuple[int, int]:
    if card == JOKER:
        return (len(RANKS), 0)
    return (_RANK_ORDER[card[:-1]], _SUIT_ORDER[card[-1]])


def canonical_hand(cards: Sequence[str]) -> tuple[str, ...]:
    """The canonical order of a hand of canonical cards: by rank ace to king, then suit
    clubs, diamonds, hearts, spades, jokers last. The order of the deal pays nothing."""
    return tuple(sorted(cards, key=_card_order))


def pair_count(cards: Sequence[str]) -> int:
    """The number of pairs in a hand: over every rank, its count halved and rounded down (a
    prial holds one pair, four of a kind two, 4620.16(e)(1)-(2)), plus one when both jokers
    are dealt ("Two jokers are considered one pair", 4620.16(e)(1)). A single joker pairs
    with nothing: jokers are not wild."""
    counts = Counter(rank(c) for c in cards)
    jokers = counts.pop(JOKER, 0)
    return sum(n // _PAIR for n in counts.values()) + jokers // _PAIR


def winning_squares(cards: Sequence[str]) -> frozenset[str]:
    """The squares a hand of canonical cards wins, each at most once.

    - ``<c>_4_or_more``: at least four cards of colour ``c``; ``<c>_exactly_n``: exactly
      ``n`` (4620.16(d)). Jokers have no colour (4620.16(e)(1), J-6); each colour is its
      own bet (J-1).
    - ``no_pairs``: no pair at all (:func:`pair_count` 0); ``two_pairs``: at least two
      pairs, paid once (J-2, J-3; two jokers and another pair are two pairs,
      4620.16(e)(1); four of a kind is two pairs, 4620.16(e)(2)).
    - ``one_joker``: exactly one joker (it loses when two are dealt, 4620.16(e)(1));
      ``two_jokers``: both.
    - ``pair_R``: at least two cards of rank ``R``, paid once (the pair within a prial or
      four of a kind, 4620.16(e)(1)-(2), J-5); two jokers are not a rank.
    - ``prial``: some rank dealt three or more times, paid once (four of a kind wins it,
      4620.16(e)(2); two prials pay once, J-4).
    """
    counts = Counter(rank(c) for c in cards)
    jokers = counts.pop(JOKER, 0)
    colours: Counter[str | None] = Counter(colour(c) for c in cards if c != JOKER)
    won: set[str] = set()
    for c in COLOURS:
        n = colours[c]
        if n >= _COLOUR_AT_LEAST:
            won.add(f"{c}_4_or_more")
        if n in _COLOUR_EXACT:
            won.add(f"{c}_exactly_{n}")
    pairs = sum(n // _PAIR for n in counts.values()) + jokers // _PAIR
    if pairs == 0:
        won.add("no_pairs")
    if pairs >= _PAIR:
        won.add("two_pairs")
    if jokers == 1:
        won.add("one_joker")
    if jokers == _PAIR:
        won.add("two_jokers")
    for r, n in counts.items():
        if n >= _PAIR:
            won.add(f"pair_{r}")
        if n >= _PRIAL:
            won.add("prial")
    return frozenset(won)


# --------------------------------------------------------------------------------------------
# The server's deal
# --------------------------------------------------------------------------------------------


def deal_positions(draw: Sequence[int]) -> tuple[int, ...]:
    """The deck positions (0..53, :data:`JOKER_SEVEN_DECK`) a draw deals, in deal order.

    A partial Fisher-Yates shuffle: start from the positions in order; for ``i`` = 0 … 6
    swap entry ``i`` with entry ``i + draw[i]``; the first seven entries are the deal. With
    ``0 <= draw[i] < DRAW_BOUNDS[i]`` this maps the 54 × 53 × … × 48 draws one to one onto
    the ordered deals of seven distinct positions, so a uniform draw is a uniform deal.
    Anything else is RuleError ``invalid_outcome``."""
    if isinstance(draw, str | bytes) or not isinstance(draw, Sequence):
        raise invalid_outcome(f"a draw is a sequence of {HAND_SIZE} integers")
    if len(draw) != len(DRAW_BOUNDS):
        raise invalid_outcome(f"a draw is {len(DRAW_BOUNDS)} integers, not {len(draw)}")
    deck = list(range(len(JOKER_SEVEN_DECK)))
    for i, (d, bound) in enumerate(zip(draw, DRAW_BOUNDS, strict=True)):
        if not is_whole_number(d) or not 0 <= d < bound:
            raise invalid_outcome(f"draw {i} is {d!r}, not an integer in 0..{bound - 1}")
        j = i + d
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck[:HAND_SIZE])


def draw_of_positions(positions: Sequence[int]) -> tuple[int, ...]:
    """The one draw :func:`deal_positions` maps to these seven distinct positions (the
    inverse of the deal; an auditor's check that a recorded deal came from its draw).
    RuleError ``invalid_outcome`` for anything that is not such a deal."""
    size = len(JOKER_SEVEN_DECK)
    if not all(is_whole_number(p) and 0 <= p < size for p in positions):
        raise invalid_outcome(f"a deal's positions are integers in 0..{size - 1}")
    if len(positions) != HAND_SIZE or len(set(positions)) != HAND_SIZE:
        raise invalid_outcome(f"a deal is {HAND_SIZE} distinct positions")
    deck = list(range(size))
    where = list(range(size))
    out: list[int] = []
    for i, p in enumerate(positions):
        j = where[p]
        out.append(j - i)
        deck[i], deck[j] = deck[j], deck[i]
        where[deck[i]], where[deck[j]] = i, j
    return tuple(out)


# --------------------------------------------------------------------------------------------
# Exact counts and house edges
# --------------------------------------------------------------------------------------------


def _check_deck(ranks: Sequence[str], suits: Sequence[str]) -> None:
    if len(set(ranks)) != len(ranks) or not set(ranks) <= set(RANKS):
        raise ValueError(f"ranks must be distinct ranks of {' '.join(RANKS)}")
    if len(set(suits)) != len(suits) or not set(suits) <= set(SUITS):
        raise ValueError(f"suits must be distinct suits of {' '.join(SUITS)}")


def hands_counted(ranks: Sequence[str] = RANKS, suits: Sequence[str] = SUITS) -> int:
    """How many seven-card hands a deck of ``ranks`` in ``suits`` and two jokers holds:
    C(54, 7) = 177,100,560 for the full deck."""
    _check_deck(ranks, suits)
    return comb(len(suits) * len(ranks) + JOKERS_IN_DECK, HAND_SIZE)


@cache
def _square_win_counts(
    ranks: tuple[str, ...], suits: tuple[str, ...]
) -> tuple[tuple[str, int], ...]:
    red_suits = sum(colour("A" + s) == "red" for s in suits)
    black_suits = len(suits) - red_suits
    # Rank by rank, every way to take r of its red and b of its black cards
    # (C(red_suits, r) C(black_suits, b) ways): the hands of the cards without jokers by
    # (cards, red cards, pairs, prial), pairs capped at two (no square asks for more).
    states: Counter[tuple[int, int, int, bool]] = Counter({(0, 0, 0, False): 1})
    for _ in ranks:
        nxt: Counter[tuple[int, int, int, bool]] = Counter()
        for (n, reds, pairs, prial), ways in states.items():
            for r in range(red_suits + 1):
                for b in range(black_suits + 1):
                    c = r + b
                    if n + c > HAND_SIZE:
                        continue
                    key = (n + c, reds + r, min(pairs + c // _PAIR, _PAIR), prial or c >= _PRIAL)
                    nxt[key] += ways * comb(red_suits, r) * comb(black_suits, b)
        states = nxt
    wins = dict.fromkeys(SQUARES, 0)
    for (n, reds, pairs, prial), ways in states.items():
        jokers = HAND_SIZE - n
        if jokers > JOKERS_IN_DECK:
            continue
        hands = ways * comb(JOKERS_IN_DECK, jokers)
        for col, k in (("red", reds), ("black", n - reds)):
            if k >= _COLOUR_AT_LEAST:
                wins[f"{col}_4_or_more"] += hands
            if k in _COLOUR_EXACT:
                wins[f"{col}_exactly_{k}"] += hands
        total_pairs = pairs + jokers // _PAIR
        if total_pairs == 0:
            wins["no_pairs"] += hands
        if total_pairs >= _PAIR:
            wins["two_pairs"] += hands
        if jokers == 1:
            wins["one_joker"] += hands
        if jokers == _PAIR:
            wins["two_jokers"] += hands
        if prial:
            wins["prial"] += hands
    # A specific pair: rank R dealt at least twice, whatever the colours; every other rank
    # any number of times; the jokers fill the hand.
    for target in ranks:
        dealt: Counter[int] = Counter({0: 1})  # cards dealt -> ways
        for rk in ranks:
            low = _PAIR if rk == target else 0
            step: Counter[int] = Counter()
            for n, ways in dealt.items():
                for c in range(low, len(suits) + 1):
                    if n + c <= HAND_SIZE:
                        step[n + c] += ways * comb(len(suits), c)
            dealt = step
        wins[f"pair_{target}"] = sum(
            ways * comb(JOKERS_IN_DECK, HAND_SIZE - n)
            for n, ways in dealt.items()
            if HAND_SIZE - n <= JOKERS_IN_DECK
        )
    return tuple(wins.items())


def square_win_counts(ranks: Sequence[str] = RANKS, suits: Sequence[str] = SUITS) -> dict[str, int]:
    """For every square, how many of the :func:`hands_counted` hands it wins, exactly.

    Counted by composition, not hand by hand: for each rank how many of its red and of its
    black cards are dealt, how many jokers, and in how many ways each composition can be
    dealt (the jokers are two cards, so a hand with one joker can be dealt two ways).
    ``ranks`` and ``suits`` give a smaller deck (those ranks in those suits, and two
    jokers; a square on a missing rank wins nothing), so a test can compare the count with
    every hand of that deck dealt one by one. ValueError for ranks or suits not of the
    deck, or named twice."""
    _check_deck(ranks, suits)
    return dict(_square_win_counts(tuple(ranks), tuple(suits)))


def house_edges(ranks: Sequence[str] = RANKS, suits: Sequence[str] = SUITS) -> dict[str, Fraction]:
    """The exact house edge of every square: one minus the expected amount paid back per
    unit staked, ``1 - (odds + 1) * wins / hands`` (a negative edge would favour the
    player)."""
    total = hands_counted(ranks, suits)
    wins = square_win_counts(ranks, suits)
    return {sq: 1 - Fraction((PAYOUT_ODDS[sq] + 1) * wins[sq], total) for sq in SQUARES}


# --------------------------------------------------------------------------------------------
# The game
# --------------------------------------------------------------------------------------------


def _limit(raw: Mapping[str, JSON], key: str, default: int) -> int:
    value = raw.get(key, default)
    if not is_whole_number(value) or value <= 0:
        raise invalid_config(f"{key} must be a positive integer number of cents")
    assert isinstance(value, int)
    return value


def _hand(raw: JSON) -> tuple[str, ...]:
    """The canonical hand of an entered ``{"cards": [...]}``, or ``invalid_outcome``."""
    if not isinstance(raw, Mapping):
        raise invalid_outcome('the outcome must be an object {"cards": [seven cards]}')
    extra = sorted(str(k) for k in raw if k != "cards")
    if extra:
        raise invalid_outcome(f"unknown outcome fields: {', '.join(extra)}")
    entered = raw.get("cards")
    if not isinstance(entered, list | tuple):
        raise invalid_outcome('"cards" must be a list of the seven cards dealt')
    if len(entered) != HAND_SIZE:
        raise invalid_outcome(
            f"{len(entered)} cards entered: a hand is exactly {HAND_SIZE} cards, 4620.16(c)"
        )
    cards: list[str] = []
    for i, text in enumerate(entered):
        try:
            cards.append(parse_card(text, jokers=True))
        except RuleError as err:
            raise invalid_outcome(f"card {i + 1}: {err.message}") from None
    counts = Counter(cards)
    jokers = counts.pop(JOKER, 0)
    twice = sorted((c for c, n in counts.items() if n > 1), key=_card_order)
    if twice:
        raise invalid_outcome(
            f"{', '.join(twice)} entered more than once: the deck holds one of each card, "
            "4620.16(a)"
        )
    if jokers > JOKERS_IN_DECK:
        raise invalid_outcome(
            f"{jokers} jokers entered: the deck holds {JOKERS_IN_DECK}, 4620.16(a)"
        )
    return canonical_hand(cards)


class JokerSeven:
    """Joker Seven under 4620.16; implements ``base.OutcomeGame``."""

    name: str = "joker_seven"

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """Validate a table's Joker Seven settings and return them in canonical form.

        Keys (both optional): ``max_bet`` (cents per wager, at most and by default 500, the
        $5 of 4620.16(f)); ``min_bet`` (cents, default 1, at most ``max_bet``). The odds
        are fixed by the text and are no setting. Raises ``invalid_config``.
        """
        if not isinstance(raw, Mapping):
            raise invalid_config("the joker_seven configuration must be an object")
        unknown = sorted(str(k) for k in raw if k not in _CONFIG_KEYS)
        if unknown:
            raise invalid_config(
                f"unknown joker_seven settings: {', '.join(unknown)} "
                "(the odds are fixed by 4620.16(d)-(e))"
            )
        max_bet = _limit(raw, "max_bet", MAX_BET_CENTS)
        if max_bet > MAX_BET_CENTS:
            raise invalid_config(
                f"max_bet {max_bet} is above the regulatory maximum {MAX_BET_CENTS}, 4620.16(f)"
            )
        min_bet = _limit(raw, "min_bet", DEFAULT_MIN_BET_CENTS)
        if min_bet > max_bet:
            raise invalid_config(
                f"min_bet {min_bet} is above max_bet {max_bet}: no bet could be placed"
            )
        return {"min_bet": min_bet, "max_bet": max_bet}

    def check_bet(self, config: Mapping[str, JSON], bet: JSON, amount: int) -> Mapping[str, JSON]:
        """Return the canonical bet ``{"square": name}`` for ``amount`` cents, or raise.

        ``bad_request``: the bet is not an object, ``square`` is missing or not a string,
        another field, an amount that is not a positive whole number of cents;
        ``invalid_bet``: not one of the 28 :data:`SQUARES`; ``under_minimum``: under
        ``min_bet``; ``over_limit``: over ``max_bet`` (at most $5 per wager, 4620.16(f)).
        """
        if not isinstance(bet, Mapping):
            raise bad_request('a Joker Seven bet is an object {"square": name}')
        extra = sorted(str(k) for k in bet if k != "square")
        if extra:
            raise bad_request(f"unknown fields for a Joker Seven bet: {', '.join(extra)}")
        if "square" not in bet:
            raise bad_request('a Joker Seven bet needs "square"')
        square = bet["square"]
        if not isinstance(square, str):
            raise bad_request("square must be a string")
        if square not in PAYOUT_ODDS:
            raise invalid_bet(f"{square!r} is not a Joker Seven betting square")
        check_stake(config, amount, MAX_BET_CENTS, "4620.16(f)")
        return {"square": square}

    def outcomes(self, config: Mapping[str, JSON]) -> Sequence[str]:
        """Not a list: the hands are C(54, 7) sets of cards, dealt by a draw within
        :meth:`draw_bounds` and read by :meth:`drawn_outcome`. Always RuleError
        ``invalid_outcome``."""
        raise invalid_outcome("a Joker Seven hand is drawn within draw_bounds, not listed")

    def draw_bounds(self, config: Mapping[str, JSON]) -> tuple[int, ...]:
        """``(54, 53, 52, 51, 50, 49, 48)``: a fresh partial shuffle of all 54 cards for every
        hand (4620.16(c), J-7); see :func:`deal_positions`."""
        return DRAW_BOUNDS

    def check_outcome(
        self, config: Mapping[str, JSON], raw: JSON, previous: str | None
    ) -> Mapping[str, JSON]:
        """Validate the seven cards the dealer entered, ``{"cards": ["AS", "10H", …]}``.

        Cards are read as ``cards.parse_card`` reads them (any case, ``JOKER`` for a joker).
        Exactly seven cards (4620.16(c)), none of the 52 twice and at most two jokers (one
        deck and two jokers, 4620.16(a)); the previous hand plays no part (a fresh shuffle
        every hand). Returns ``{"cards": [...]}`` in :func:`canonical_hand` order; raises
        ``invalid_outcome`` saying what is wrong.
        """
        return {"cards": list(_hand(raw))}

    def drawn_outcome(
        self, config: Mapping[str, JSON], draw: Sequence[int], previous: str | None
    ) -> Mapping[str, JSON]:
        """The hand a server draw deals (:func:`deal_positions`), in canonical order."""
        dealt = (JOKER_SEVEN_DECK[p] for p in deal_positions(draw))
        return {"cards": list(canonical_hand(list(dealt)))}

    def settle(
        self, config: Mapping[str, JSON], bets: Sequence[PlacedBet], outcome: Mapping[str, JSON]
    ) -> tuple[Settlement, ...]:
        """Settle each bet, in order: a square the hand wins (:func:`winning_squares`) pays
        back ``amount * (odds + 1)``, once; any other pays 0.

        Odds are whole numbers "to 1" (:data:`PAYOUT_ODDS`), so every payout is a whole
        number of cents. The outcome is checked as :meth:`check_outcome` checks it
        (``invalid_outcome``); a bet that is not on a square is ``invalid_bet``.
        """
        won = winning_squares(_hand(outcome))
        out: list[Settlement] = []
        for placed in bets:
            try:
                square = placed.bet["square"]
                odds = PAYOUT_ODDS[square]
            except (KeyError, TypeError):
                raise invalid_bet(f"bet {placed.bet_id} is not on a Joker Seven square") from None
            amount = placed.amount
            if square in won:
                out.append(
                    Settlement(placed.bet_id, placed.player, amount, "won", amount * (odds + 1))
                )
            else:
                out.append(Settlement(placed.bet_id, placed.player, amount, "lost", 0))
        return tuple(out)

    def winning_key(self, outcome: Mapping[str, JSON]) -> str:
        """The seven cards, space separated, in canonical order (``"AS 10H … JOKER"``)."""
        return " ".join(str(c) for c in outcome["cards"])

    def entered_source(self, outcome: Mapping[str, JSON]) -> str:
        """``dealer``: The dealer dealt the hand and entered its cards."""
        return "dealer"


JOKER_SEVEN: Final[OutcomeGame] = JokerSeven()
"""The Joker Seven game, as the table rules use it (``base.OutcomeGame``)."""
