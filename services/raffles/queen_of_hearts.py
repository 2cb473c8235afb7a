"""Search for the Queen of Hearts (9 NYCRR 4620.23). Pure: no I/O, clock or randomness.

A board of 54 positions holds a shuffled deck of 52 cards and two jokers. Each week's
ticket money joins the grand prize pool; each week one ticket (three in weeks 1 and 26 when
the raffle says so) is drawn and its holder picks a position not yet revealed. The queen of
hearts wins 60 % of the pool and ends the raffle; any other card pays a consolation prize.

The board is either the physical one (the member in charge enters the card turned up) or
dealt by the server and committed when the raffle opens: position ``i`` holding ``card``
with the secret ``salt`` is committed as ``sha256(f"{salt}:{i}:{card}")``; the 54
commitments and their combined hash are in ``RaffleOpened``, and each ``CardRevealed``
carries card and salt, so anyone can check every reveal (docs/RULES.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from events.base import Event
from events.raffles import CardRevealed, DrawingHeld, PrizeAwarded, ProfitKept, RaffleEnded, Winner
from services.aggregates import RuleError
from services.raffles import serials as runs
from services.raffles import tickets
from services.raffles.state import RaffleState, RevealCard

SUITS: Final = ("C", "D", "H", "S")
RANKS: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
JOKERS: Final = ("JK1", "JK2")
DECK: Final = tuple(f"{r}{s}" for s in SUITS for r in RANKS) + JOKERS
"""A standard deck of 52 playing cards plus two jokers, 4620.23(a)."""
QUEEN_OF_HEARTS: Final = "QH"
POSITIONS: Final = 54
"""The game board holds 54 cards face down, 4620.23(a); positions are numbered 1-54."""

GRAND_PRIZE_PERCENT: Final = 60
"""The queen of hearts wins 60 percent of the grand prize pool, 4620.23(b)(7), (b)(10)."""
PROFIT_PERCENT: Final = 40
"""The licensee keeps the remaining 40 percent as raffle profit, 4620.23(b)(11)."""

CONSOLATION_ODDS: Final[Mapping[str, int]] = {
    "two_to_five": 4,
    "six_to_nine": 6,
    "ten_jack_king": 8,
    "ace": 10,
    "joker": 15,
    "other_queen": 20,
}
"""The least consolation prize for a card that is not the queen of hearts, as "to 1" odds
on the price of one ticket, 4620.23(b)(8): 2-5 4:1, 6-9 6:1, 10/J/K 8:1, ace 10:1,
joker 15:1, any other queen 20:1 (docs/RULES.md: what the odds apply to)."""

WEEK_DAYS: Final = 7
"""One drawing each week, 4620.23(b)(3)."""
TRIPLE_DRAW_WEEKS: Final = (1, 26)
"""Weeks in which three drawings may be held, 4620.23(b)(3)."""
TRIPLE_DRAWS: Final = 3

UNDEALT: Final = ("0" * 64,) * POSITIONS
"""Placeholder commitments standing for a server board not dealt: a configuration that asks
for one can be checked (the night file) or compared (a setup of a raffle already open)
without dealing."""

KEYS: Final = tickets.COMMON_KEYS | {"board", "triple_draws", "consolations"}
_HEX64: Final = re.compile(r"[0-9a-f]{64}")


def card_class(card: str) -> str:
    """The (b)(8) class of a card that is not the queen of hearts."""
    if card in JOKERS:
        return "joker"
    rank = card[:-1]
    if rank == "A":
        return "ace"
    if rank == "Q":
        return "other_queen"
    if rank in ("10", "J", "K"):
        return "ten_jack_king"
    return "two_to_five" if int(rank) <= 5 else "six_to_nine"


def commitment(salt: str, position: int, card: str) -> str:
    """The commitment of one board position: SHA-256 (hex) of ``salt:position:card``."""
    return hashlib.sha256(f"{salt}:{position}:{card}".encode()).hexdigest()


def commit(cards: Sequence[str], salts: Sequence[str]) -> tuple[str, ...]:
    """The 54 commitments of a dealt board (``cards[i]`` at position ``i + 1``)."""
    if sorted(cards) != sorted(DECK) or len(salts) != POSITIONS:
        raise RuleError("invalid_config", "a board holds the 54 cards once each")
    pairs = enumerate(zip(cards, salts, strict=True))
    return tuple(commitment(salt, i + 1, card) for i, (card, salt) in pairs)


def board_root(commitments: Sequence[str]) -> str:
    """The combined hash of the board: SHA-256 (hex) of the 54 commitments concatenated."""
    return hashlib.sha256("".join(commitments).encode()).hexdigest()


def parse_config(raw: Mapping[str, Any], board_commitments: Sequence[str] = ()) -> dict[str, Any]:
    """A Queen of Hearts raffle: the common settings plus ``board`` (``physical``: the
    member in charge enters each card from the locked board; ``server``: the server deals
    and commits, ``board_commitments`` given), ``triple_draws`` (three drawings in weeks
    1 and 26, default false) and ``consolations`` (cents by card class, each at least the
    (b)(8) odds on the ticket price; default exactly those)."""
    tickets.check_keys(raw, KEYS)
    config = tickets.parse_common(raw, "queen_of_hearts")
    if config["bundles"]:
        raise tickets.fail(
            "a Queen of Hearts ticket is sold at one price set by the licensee (4620.23(b)(1))"
        )
    board = raw.get("board", "physical")
    if isinstance(board, Mapping):
        mode = board.get("mode")
        commitments = tuple(board.get("commitments", ()))
    else:
        mode = board
        commitments = tuple(board_commitments)
    if mode == "physical":
        config["board"] = {"mode": "physical"}
    elif mode == "server":
        if len(commitments) != POSITIONS or not all(
            isinstance(c, str) and _HEX64.fullmatch(c) for c in commitments
        ):
            raise tickets.fail("a server-dealt board needs 54 commitments (SHA-256 hex)")
        config["board"] = {
            "mode": "server",
            "commitments": list(commitments),
            "root": board_root(commitments),
        }
    else:
        raise tickets.fail("board must be 'physical' or 'server'")
    config["triple_draws"] = tickets._bool(raw, "triple_draws", False)
    least = {k: odds * config["price"] for k, odds in CONSOLATION_ODDS.items()}
    given = raw.get("consolations", {})
    if not isinstance(given, Mapping) or set(given) - set(least):
        raise tickets.fail(f"consolations are cents by card class: {', '.join(least)}")
    consolations = dict(least)
    for k in given:
        value = tickets._int(given, k, low=least[k], high=tickets.MAX_SERIES_LIMIT)
        consolations[k] = value
    config["consolations"] = consolations
    return config


def grand_prize(pool: int) -> int:
    """60 % of the grand prize pool, rounded down; the odd cent is the licensee's."""
    return pool * GRAND_PRIZE_PERCENT // 100


def scheduled_ms(state: RaffleState) -> int:
    """When the drawing the tickets now sold are for is due: the first drawing, then a
    week after the last drawing held, 4620.23(b)(3)."""
    if state.last_drawing_ms is None:
        first: int = state.config["first_drawing_at"]
        return first
    return state.last_drawing_ms + WEEK_DAYS * tickets.DAY_MS


def check_sale(state: RaffleState, amount: int) -> None:
    """A sale joins the pool: 60 % of it may not exceed the prize limits, 4620.22(b)(1)."""
    prize = grand_prize(state.pool + amount)
    tickets.check_prize_limits(state.config, prize, state.awarded)


def winners_needed(state: RaffleState) -> int:
    """One drawing a week, three in weeks 1 and 26 when the raffle says so, 4620.23(b)(3)."""
    if state.config["triple_draws"] and state.round in TRIPLE_DRAW_WEEKS:
        return TRIPLE_DRAWS
    return 1


def check_can_draw(state: RaffleState) -> None:
    if state.searchers:
        raise RuleError(
            "search_pending",
            f"ticket {state.searchers[0][1]} has not searched yet; reveal its card first",
        )


def eligible(state: RaffleState) -> tuple[int, ...]:
    """The tickets sold for this week's drawing, ascending, 4620.23(b)(3)."""
    return tuple(runs.each(state.round_serials))


def drawing_events(
    state: RaffleState, serials: Sequence[int], method: str, eligible_count: int, now_ms: int
) -> list[Event]:
    """The week's winners, in draw order; the rest of the week's tickets are defaced and
    discarded (nothing carries over, 4620.23(b)(5)) and sales go on for the next week."""
    return [
        DrawingHeld(
            round=state.round,
            drawing=state.drawings + 1,
            method=method,
            eligible=eligible_count,
            winners=tuple(Winner(s, None) for s in serials),
            at=now_ms,
        )
    ]


def reveal(state: RaffleState, command: RevealCard) -> list[Event]:
    """The next winner in draw order picks a position not yet revealed, 4620.23(b)(3),
    (b)(7); the card turned up is entered (physical board) or taken from the committed
    board and checked against its commitment. The queen of hearts wins 60 % of the pool,
    the licensee keeps 40 % and the raffle ends, (b)(10)-(11); any other card is defaced,
    left face up and pays its consolation prize, (b)(8)."""
    if not state.searchers:
        raise RuleError("no_search_pending", "no winner is waiting to search; hold a drawing")
    position = command.position
    if not 1 <= position <= POSITIONS:
        raise RuleError("invalid_position", f"positions are 1 to {POSITIONS}")
    if position in state.revealed:
        raise RuleError(
            "position_revealed",
            f"position {position} was revealed ({state.revealed[position]}); pick another",
        )
    board = state.config["board"]
    card = command.card
    salt: str | None = None
    if board["mode"] == "server":
        if card is None or command.salt is None:
            raise RuleError("bad_request", "the server board's card was not supplied")
        if commitment(command.salt, position, card) != board["commitments"][position - 1]:
            raise RuleError("board_mismatch", "the card does not match the board's commitment")
        salt = command.salt
    else:
        if card is None or card not in DECK:
            raise RuleError(
                "invalid_card", "card must be a card of the deck (e.g. QH, 10S, AD, JK1)"
            )
        if card in state.revealed.values():
            raise RuleError("card_revealed", f"{card} is already face up on the board")
    week, serial = state.searchers[0]
    queen = card == QUEEN_OF_HEARTS
    events: list[Event] = [
        CardRevealed(
            round=week,
            serial=serial,
            position=position,
            card=card,
            salt=salt,
            queen_of_hearts=queen,
        )
    ]
    if queen:
        grand = grand_prize(state.pool)
        events += [
            PrizeAwarded(
                round=week,
                serial=serial,
                prize="grand",
                amount=grand,
                cash=True,
                description="60% of the grand prize pool (4620.23(b)(10))",
            ),
            ProfitKept(
                round=week,
                amount=state.pool - grand,
                reason="40% of the grand prize pool (4620.23(b)(11))",
            ),
            RaffleEnded(reason="the queen of hearts was found"),
        ]
        return events
    kind = card_class(card)
    amount: int = state.config["consolations"][kind]
    events += [
        PrizeAwarded(
            round=week,
            serial=serial,
            prize="consolation",
            amount=amount,
            cash=True,
            description=f"{card}: {CONSOLATION_ODDS[kind]}:1 on the ticket price (4620.23(b)(8))",
        ),
        ProfitKept(
            round=week,
            amount=-amount,
            reason="a consolation prize is paid from the licensee's share (docs/RULES.md)",
        ),
    ]
    return events
