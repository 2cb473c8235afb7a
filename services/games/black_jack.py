"""Black Jack, NY 9 NYCRR 4620.5, as a game that owns its round (``base.Game``).

Pure rules: no I/O, clock or randomness; randomness and the server's secrets reach the game
only through :meth:`BlackJack.prepare`, which writes them into the step as data. The table
(``services.tables.rules``) keeps the money of the first bet, the limits of the table, the
order of commands and the lifecycle; this module keeps everything else: the shoe across
rounds, the hands, whose turn it is, the dealer's cards and every settlement.

``decide`` plays a step and then everything that follows from it without a decision (the
rest of the deal, the peek with a 10-count up in RNG mode, the naturals paid at once, a
split hand's second card, the dealer's hand, the payoffs), folding each event it emits into
a working copy of the state with :meth:`BlackJack.evolve`, so the state after a step is
exactly the fold of its events. In dealer mode it stops wherever a card is due that the
dealer has not entered yet (``EnterCards``). Every rule and reading is in docs/RULES.md
("Black Jack (4620.5)").
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from events.base import Event
from events.black_jack import (
    CardBurnt,
    CardDealt,
    CardsDiscarded,
    DealerPeeked,
    HandActed,
    HoleCardRevealed,
    ShoeRevealed,
    ShoeShuffled,
)
from events.records import replace
from events.tables import (
    BetSettlement,
    NoMoreBets,
    PartSettled,
    RoundEnded,
    WagerAdded,
)
from services.aggregates import RuleError
from services.games import black_jack_shoe as shoe
from services.games.base import (
    JSON,
    Chance,
    Round,
    bad_request,
    check_stake,
    invalid_bet,
    invalid_config,
    is_whole_number,
)
from services.games.black_jack_state import (
    BLACKJACK,
    DEALER,
    DEALER_STANDS_ON,
    HOLE,
    BlackJackPlay,
    Hand,
    against_dealer_natural,
    awaiting,
    cards_in_play,
    deal_targets,
    double_id,
    find_hand,
    fold,
    hand_state,
    hand_total,
    hole_in_play,
    insurance_id,
    is_natural,
    is_pair,
    natural_odds,
    peek_due,
    round_stage,
    showdown,
    split_id,
    tie_result,
    turn_hand,
    value,
)
from services.games.cards import MAX_CARD_CHARS, decks, parse_card, rank

__all__ = [
    "BLACK_JACK",
    "DEFAULT_DECKS",
    "DEFAULT_MIN_BET_CENTS",
    "DEFAULT_SPACES",
    "MAX_BET_CENTS",
    "MAX_DECKS",
    "MAX_SPACES",
    "Act",
    "BlackJack",
    "BlackJackPlay",
    "BurnCard",
    "Deal",
    "EnterCards",
    "FreshShuffle",
    "Hand",
    "Insure",
    "OpenedShuffle",
    "Peek",
    "ShoeSecrets",
    "Shuffle",
    "hand_total",
    "is_natural",
    "is_pair",
    "natural_odds",
    "tie_result",
]

# --------------------------------------------------------------------------------------------
# Limits and settings (named, with their cites)
# --------------------------------------------------------------------------------------------

MAX_BET_CENTS: Final = 500
"""4620.5(f)(2): "Maximum bet shall be $5"; a table may set less, never more."""
DEFAULT_MIN_BET_CENTS: Final = 2
"""A table setting (the regulation sets none): the smallest even stake, since every stake is
a whole number of 2 cents (a 3 to 2 natural and a half-wager insurance)."""
MAX_SPACES: Final = 7
"""4620.5(a)(1): "up to seven betting spaces"; (c) up to seven players."""
DEFAULT_SPACES: Final = 7
MAX_DECKS: Final = 4
"""4620.5(a)(2): "One to four decks of 52 cards each, shuffled together and used as one"."""
DEFAULT_DECKS: Final = 2
"""The project's default deck count (any of 1-4 is allowed; the license does not fix it)."""
TIE_OPTIONS: Final = (1, 2, 3)
"""4620.5(h): 1 all ties push, 2 push on natural 21 only, 3 the house wins all ties."""
FRESH_SHUFFLES_PER_STEP: Final = 2
"""Fresh seeds ``prepare`` writes into an RNG step, for boxes that run out during it."""
MOST_CARDS_ONE_STEP: Final = 52
"""More cards than one step can take out of the box (a deal at seven spaces takes 16; an
action, split aces' two cards and the dealer's draws, fewer): while the box holds more,
no step can empty it, and ``prepare`` draws no seed for a reshuffle."""
INSURANCE_ODDS: Final = (2, 1)
"""4620.5(m): insurance pays 2 to 1."""

ACTIONS: Final = ("hit", "stand", "double", "split")
_CONFIG_KEYS: Final = frozenset({"tie_option", "decks", "spaces", "max_bet", "min_bet"})

# --------------------------------------------------------------------------------------------
# Steps (the game's own commands)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenedShuffle:
    """A shuffle ``prepare`` opened: its seed (hex) and its box in dealing order."""

    shuffle: int
    seed: str
    order: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FreshShuffle:
    """A seed (hex) drawn for shuffle number ``shuffle`` and its sealed form."""

    shuffle: int
    seed: str
    sealed: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ShoeSecrets:
    """What ``prepare`` writes into an RNG step: every unrevealed shuffle opened (the current
    box's upcoming cards, the hole card's, a retired box to reveal at the round's end) and
    fresh seeds for boxes that run out during the step (BJ-2). ``decide`` checks every card
    it deals against its position's commitment."""

    opened: tuple[OpenedShuffle, ...] = ()
    fresh: tuple[FreshShuffle, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Deal:
    """The dealer deals (4620.5(g)): closes the bets (``NoMoreBets`` first, if the table has
    not), burns the first card of a new box, deals two cards to each hand and an up-card and
    a hole card to the dealer, then peeks or pays naturals as 4620.5(h) says. Needs a bet."""

    secrets: ShoeSecrets | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Act:
    """A decision on the hand whose turn it is: ``hit``, ``stand`` (4620.5(h)(3)), ``double``
    (4620.5(l)) or ``split`` (4620.5(k)). ``player`` is who acts (None: the dealer, for the
    hand's owner)."""

    hand: str
    action: str
    player: str | None = None
    secrets: ShoeSecrets | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Insure:
    """An insurance wager of exactly half the hand's wager, with an ace up and before the
    peek, 4620.5(m), BJ-9; a natural may be insured, BJ-10."""

    hand: str
    amount: int
    player: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Peek:
    """The dealer looks at the hole card (4620.5(h)(1)), closing insurance (4620.5(m)). RNG
    mode: ``natural`` None (the server knows the card). Dealer mode: ``natural`` says whether
    it is a natural, and then ``hole`` is the card, which must make 21 with the up-card."""

    natural: bool | None = None
    hole: str | None = None
    secrets: ShoeSecrets | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EnterCards:
    """Dealer mode: the cards the game waits for, in the order they come out of the box (the
    deal's order; a hit, a double or a split hand's card; the hole card turned up; the
    dealer's draws)."""

    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Shuffle:
    """Dealer mode: the box is empty; the discards (never cards in play) go back in, shuffled,
    and the first card is burnt unseen, 4620.5(g), BJ-2."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BurnCard:
    """Dealer mode: a dead card (dealt uncalled for and refused by the player) is burnt,
    4620.5(i)(4), BJ-11."""

    card: str


MAX_CARDS_ENTERED: Final = 64
"""Most cards one ``enter_cards`` may carry (a deal at seven spaces needs 15)."""
STEPS: Final = (Deal, Act, Insure, Peek, EnterCards, Shuffle, BurnCard)
"""Every step type of the game."""
_DEALING_STEPS: Final = (Deal, Act, Peek)
"""Steps that may take cards from the box in RNG mode (``prepare`` writes ``secrets``)."""


def shoe_context(table: str, shuffle: int) -> str:
    """The context a shuffle's seed is sealed under: ``<table>/shoe/<shuffle>``."""
    return f"{table}/shoe/{shuffle}"


# --------------------------------------------------------------------------------------------
# A step's run: emit an event, fold it, go on
# --------------------------------------------------------------------------------------------


class _Run:
    """One ``decide``: the working state, the events so far and the step's card sources."""

    def __init__(
        self,
        game: BlackJack,
        config: Mapping[str, JSON],
        play: BlackJackPlay,
        round: Round,
        secrets: ShoeSecrets | None,
        entered: Sequence[str] = (),
    ) -> None:
        self.game = game
        self.config = config
        self.play = play
        self.round = round
        self.events: list[Event] = []
        self.orders: dict[int, tuple[bytes, tuple[str, ...]]] = {}
        self.fresh: deque[FreshShuffle] = deque()
        if secrets is not None:
            for o in secrets.opened:
                self.orders[o.shuffle] = (bytes.fromhex(o.seed), o.order)
            self.fresh.extend(secrets.fresh)
        self.entered: deque[str] = deque(entered)
        self.rng = round.outcome_mode == "rng"

    def emit(self, ev: Event) -> None:
        self.events.append(ev)
        self.play = self.game.evolve(self.config, self.play, ev)

    # --- the box ----------------------------------------------------------------------------

    def _order(self, shuffle: int) -> tuple[bytes, tuple[str, ...]]:
        try:
            return self.orders[shuffle]
        except KeyError:
            raise RuleError(
                "shoe_unavailable",
                f"shuffle {shuffle} could not be opened for this step",
                stored=False,
            ) from None

    def _hole_card(self) -> tuple[str, str]:
        """RNG mode: the face-down hole card and its salt, checked against its commitment."""
        p = self.play
        if p.hole is None or p.hole[1] is None:
            raise RuleError("shoe_unavailable", "there is no hole card face down", stored=False)
        shuffle, position = p.hole[0], p.hole[1]
        seed, order = self._order(shuffle)
        card, salt = order[position], shoe.position_salt(seed, position)
        self._check(shuffle, position, card, salt)
        return card, salt

    def _check(self, shuffle: int, position: int, card: str, salt: str) -> None:
        record = next((r for r in self.play.shuffles if r.shuffle == shuffle), None)
        if record is None or not shoe.opens(record.commitments[position], card, salt):
            raise RuleError(
                "shoe_mismatch",
                f"card {position} of shuffle {shuffle} does not open its commitment",
                stored=False,
            )

    def reshuffle(self) -> None:
        """RNG mode: a new box: every deck for a new shoe, else the discards, never the cards
        in play, 4620.5(g), BJ-2; then its first card is burnt unseen."""
        p = self.play
        n = p.shuffle + 1
        fresh = self.fresh.popleft() if self.fresh else None
        if fresh is None or fresh.shuffle != n:
            raise RuleError(
                "shoe_unavailable", f"no seed was prepared for shuffle {n}", stored=False
            )
        out = Counter(cards_in_play(p))
        if hole_in_play(p):
            out[self._hole_card()[0]] += 1
        cards = decks(int(self.config["decks"])) - out
        if cards.total() < 2:
            raise RuleError("shoe_exhausted", "every card is in play: nothing to shuffle")
        seed = bytes.fromhex(fresh.seed)
        order = shoe.shuffle_order(seed, shoe.composition(cards))
        self.orders[n] = (seed, order)
        reason = "new_shoe" if p.shuffle == 0 else "box_empty"
        self.emit(
            ShoeShuffled(
                shuffle=n,
                cards=len(order),
                commitments=shoe.commitments(seed, order),
                sealed=fresh.sealed,
                reason=reason,
            )
        )
        self.emit(CardBurnt(round=p.round, shuffle=n, position=0, card=None, reason="first_card"))

    def draw(self) -> tuple[int, int | None, str | None, str | None] | None:
        """The next card out of the box: (shuffle, position, card, salt); None in dealer mode
        while the dealer has not entered it."""
        if self.rng:
            if self.play.shuffle == 0 or self.play.drawn >= self.play.size:
                self.reshuffle()
            p = self.play
            seed, order = self._order(p.shuffle)
            card = order[p.drawn]
            salt = shoe.position_salt(seed, p.drawn)
            self._check(p.shuffle, p.drawn, card, salt)
            return p.shuffle, p.drawn, card, salt
        if not self.entered:
            return None
        return self.play.shuffle, None, self.take_entered(self.entered.popleft()), None

    def draw_face_down(self) -> tuple[int, int | None]:
        """The hole card out of the box face down: its (shuffle, position)."""
        if self.rng:
            if self.play.shuffle == 0 or self.play.drawn >= self.play.size:
                self.reshuffle()
            return self.play.shuffle, self.play.drawn
        return self.play.shuffle, None

    def take_entered(self, raw: str, *, from_box: bool = True) -> str:
        """Dealer mode: a card entered, which the shoe must still hold (``invalid_card``);
        the hole card is already out of the box (``from_box`` false)."""
        card = parse_card(raw)
        p = self.play
        if from_box and p.drawn >= p.size:
            raise RuleError("invalid_card", "the box is empty: shuffle the discards first")
        if p.seen.get(card, 0) >= int(self.config["decks"]):
            raise RuleError(
                "invalid_card",
                f"{card}: every copy of it in the shoe is already out of the box this cycle",
            )
        return card

    def ensure_dealer_shoe(self) -> None:
        """Dealer mode: the first deal opens a new shoe and burns its first card, 4620.5(g)."""
        if self.play.shuffle == 0:
            self.dealer_shuffle()

    def dealer_shuffle(self) -> None:
        p = self.play
        in_play = len(cards_in_play(p)) + (1 if hole_in_play(p) else 0)
        size = 52 * int(self.config["decks"]) - in_play
        if size < 2:  # a new box must hold the burn card and one to deal
            raise RuleError("shoe_exhausted", "every card but one is in play: none to shuffle")
        reason = "new_shoe" if p.shuffle == 0 else "box_empty"
        self.emit(
            ShoeShuffled(
                shuffle=p.shuffle + 1, cards=size, commitments=(), sealed=None, reason=reason
            )
        )
        self.emit(
            CardBurnt(
                round=p.round, shuffle=p.shuffle + 1, position=None, card=None, reason="first_card"
            )
        )

    # --- what follows without a decision ------------------------------------------------------

    def deal_to(self, target: str) -> bool:
        """One card face up to ``target``; False when the dealer has yet to enter it."""
        got = self.draw()
        if got is None:
            return False
        shuffle, position, card, salt = got
        self.emit(
            CardDealt(
                round=self.play.round,
                to=target,
                shuffle=shuffle,
                position=position,
                card=card,
                salt=salt,
                face_up=True,
            )
        )
        return True

    def peek(self, natural: bool | None = None, hole: str | None = None) -> None:
        """4620.5(h)(1), (m): look at the hole card; on a natural turn it up; settle insurance."""
        p = self.play
        up = p.dealer_cards[0]
        salt: str | None = None
        card: str | None
        if self.rng:
            card, salt = self._hole_card()
            natural = is_natural((up, card))
        else:
            card = hole
        self.emit(DealerPeeked(round=p.round, natural=bool(natural)))
        if natural:
            assert card is not None
            self.emit(HoleCardRevealed(round=p.round, card=card, salt=salt))
        if self.play.insurance:
            settlements = []
            for ins in self.play.insurance:
                won = bool(natural)
                paid = ins.amount + ins.amount * INSURANCE_ODDS[0] // INSURANCE_ODDS[1]
                settlements.append(
                    BetSettlement(
                        ins.wager_id, ins.player, ins.amount, "won" if won else "lost",
                        paid if won else 0,
                    )
                )  # fmt: skip
            self.settle_part("insurance", settlements)

    def settle_part(self, part: str, settlements: list[BetSettlement]) -> None:
        self.emit(
            PartSettled(
                round=self.play.round,
                part=part,
                settlements=tuple(settlements),
                wagered=sum(s.amount for s in settlements),
                paid=sum(s.paid for s in settlements),
            )
        )

    def settle_hand(self, h: Hand, result: str, *, natural_paid: bool = False) -> None:
        """Every wager of ``h`` settled as ``result``: ``won`` pays even money ((j), (k)(5)), or
        the natural's odds of the option when ``natural_paid`` ((h)(2)); ``push`` returns it."""
        num, den = natural_odds(int(self.config["tie_option"])) if natural_paid else (1, 1)
        out = []
        for wager_id, amount in h.wagers():
            paid = {"won": amount + amount * num // den, "push": amount, "returned": amount}.get(
                result, 0
            )
            out.append(BetSettlement(wager_id, h.player, amount, result, paid))
        self.settle_part(f"hand:{h.hand}", out)

    def discard(self, holders: Sequence[str]) -> None:
        p = self.play
        count = 0
        for holder in holders:
            if holder == DEALER:
                count += len(p.dealer_cards) + (1 if p.hole is not None else 0)
            else:
                count += len(find_hand(p, holder).cards)
        self.emit(CardsDiscarded(round=p.round, holders=tuple(holders), cards=count))

    def discard_all(self) -> None:
        """Every card still in play (the hands' and the dealer's) to the discards."""
        p = self.play
        holders = [h.hand for h in p.hands if not h.discarded]
        if not p.dealer_discarded and (p.dealer_cards or p.hole is not None):
            holders.append(DEALER)
        if holders:
            self.discard(holders)

    def end_round(self) -> None:
        """Every card to the discards; retired RNG shuffles revealed; ``RoundEnded``."""
        p = self.play
        self.discard_all()
        if self.rng:
            for record in self.play.shuffles:
                if record.shuffle != self.play.shuffle:
                    seed, order = self._order(record.shuffle)
                    self.emit(ShoeRevealed(shuffle=record.shuffle, seed=seed.hex(), cards=order))
        self.emit(RoundEnded(round=p.round))

    def advance(self) -> None:
        """Play on until a decision (or, in dealer mode, a card not yet entered) is due."""
        option = int(self.config["tie_option"])
        while True:
            p = self.play
            if p.ended or not p.closed or not p.hands:
                return
            targets = deal_targets(p)
            if p.deal_count < len(targets):
                target = targets[p.deal_count]
                if target == HOLE:
                    if not self.rng and p.shuffle != 0 and p.drawn >= p.size:
                        return  # dealer mode: the box is empty; the dealer shuffles first
                    shuffle, position = self.draw_face_down()
                    self.emit(
                        CardDealt(
                            round=p.round, to=DEALER, shuffle=shuffle, position=position,
                            card=None, salt=None, face_up=False,
                        )
                    )  # fmt: skip
                elif not self.deal_to(target):
                    return
                continue
            up = p.dealer_cards[0]
            if not p.peeked and peek_due(up):
                if rank(up) == "A" or not self.rng:
                    return  # insurance first, or the dealer's own peek: a Peek step
                self.peek()
                continue
            if p.dealer_natural:
                # 4620.5(h)(1): only the first bets are at risk (nobody split or doubled).
                for h in reversed(p.hands):
                    if not h.settled:
                        self.settle_hand(h, against_dealer_natural(option, h.cards))
                self.end_round()
                return
            busted = next(
                (h for h in p.hands if not h.settled and hand_total(h.cards)[0] > BLACKJACK),
                None,
            )
            if busted is not None:  # 4620.5(e), (h)(3): lost at once, cards burnt
                self.settle_hand(busted, "lost")
                self.discard([busted.hand])
                continue
            natural = next(
                (h for h in p.hands if not h.settled and not h.split and is_natural(h.cards)),
                None,
            )
            if natural is not None:  # 4620.5(h)(2): paid at once, its two cards burnt
                self.settle_hand(natural, "won", natural_paid=True)
                self.discard([natural.hand])
                continue
            current = turn_hand(p)
            if current is not None:
                if len(current.cards) < 2 or current.waiting:
                    if not self.deal_to(current.hand):
                        return
                    continue
                return  # the player's decision
            if not self.dealer_turn(option):
                return

    def dealer_turn(self, option: int) -> bool:
        """4620.5(i)-(j); False when waiting for a card the dealer must enter."""
        p = self.play
        if all(h.settled for h in p.hands):
            # (i): every hand is over (busted, or a natural paid): discard, hole unseen.
            self.end_round()
            return True
        if p.hole is not None:
            if self.rng:
                card, salt = self._hole_card()
                self.emit(HoleCardRevealed(round=p.round, card=card, salt=salt))
                return True
            if not self.entered:
                return False
            card = self.take_entered(self.entered.popleft(), from_box=False)
            if p.peeked and is_natural((p.dealer_cards[0], card)):
                raise RuleError(
                    "invalid_card",
                    f"{card} makes a natural with {p.dealer_cards[0]}, but the dealer peeked "
                    "and declared none",
                )
            self.emit(HoleCardRevealed(round=p.round, card=card, salt=None))
            return True
        if hand_total(p.dealer_cards)[0] < DEALER_STANDS_ON:
            return self.deal_to(DEALER)
        dealer, _soft = hand_total(p.dealer_cards)
        for h in reversed(p.hands):  # (j): from the dealer's right, counterclockwise
            if h.settled:
                continue
            self.settle_hand(h, showdown(option, hand_total(h.cards)[0], dealer))
        self.end_round()
        return True


# --------------------------------------------------------------------------------------------
# The game
# --------------------------------------------------------------------------------------------


def _whole(raw: Mapping[str, JSON], key: str, default: int | None, low: int, high: int) -> int:
    value = raw.get(key, default)
    if value is None:
        raise invalid_config(f"{key} is required")
    if not is_whole_number(value) or not low <= value <= high:
        raise invalid_config(f"{key} must be a whole number from {low} to {high}, got {value!r}")
    return int(value)


class BlackJack:
    """Black Jack, 4620.5: implements ``base.Game[BlackJackPlay]``."""

    name: str = "black_jack"

    def __repr__(self) -> str:
        return "BlackJack()"

    # --- configuration and bets -------------------------------------------------------------

    def parse_config(self, raw: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """The table's options in canonical form (every key), or ``invalid_config``.

        ``tie_option`` 1, 2 or 3, required: the server copies it from the license, 4620.5(h)
        (the natural's payout follows from it and is never a setting); ``decks`` 1-4
        (default 2), (a)(2); ``spaces`` 1-7 (default 7), (a)(1); ``max_bet`` at most 500 cents
        (default 500), (f)(2); ``min_bet`` (default 2) at most ``max_bet``."""
        if not isinstance(raw, Mapping):
            raise invalid_config("the Black Jack options must be an object")
        extra = sorted(str(k) for k in raw if k not in _CONFIG_KEYS)
        if extra:
            raise invalid_config(f"unknown Black Jack options: {', '.join(extra)}")
        option = raw.get("tie_option")
        if not is_whole_number(option) or option not in TIE_OPTIONS:
            raise invalid_config(
                f"tie_option must be 1, 2 or 3 as the license shows it (4620.5(h)), got {option!r}"
            )
        max_bet = _whole(raw, "max_bet", MAX_BET_CENTS, 1, MAX_BET_CENTS)
        return {
            "tie_option": int(option),
            "decks": _whole(raw, "decks", DEFAULT_DECKS, 1, MAX_DECKS),
            "spaces": _whole(raw, "spaces", DEFAULT_SPACES, 1, MAX_SPACES),
            "max_bet": max_bet,
            "min_bet": _whole(raw, "min_bet", DEFAULT_MIN_BET_CENTS, 1, max_bet),
        }

    def initial(self, config: Mapping[str, JSON]) -> BlackJackPlay:
        """No shoe yet: the first deal shuffles a new one."""
        return BlackJackPlay()

    def opening(self, config: Mapping[str, JSON]) -> list[Event]:
        """None: the shoe is shuffled at the first deal."""
        return []

    def check_bet(
        self, config: Mapping[str, JSON], play: BlackJackPlay, bet: JSON, amount: int
    ) -> Mapping[str, JSON]:
        """``{"space": n}`` for ``amount`` cents, or RuleError.

        ``bad_request``: not an object, unknown fields, a space that is not a whole number,
        an amount that is not a positive whole number; ``invalid_bet``: a space off the
        layout (1..spaces, 4620.5(a)(1)), or an odd stake (a 3 to 2 natural and a half-wager
        insurance need whole cents); ``space_taken``: one bet per space per round
        (4620.5(f)(1): the bet goes in the space before the player; a player may hold
        several spaces, (c)); ``under_minimum``; ``over_limit`` (4620.5(f)(2), BJ-12)."""
        if not isinstance(bet, Mapping):
            raise bad_request('bet must be an object {"space": n}')
        extra = sorted(str(k) for k in bet if k != "space")
        if extra:
            raise bad_request(f"unknown bet fields: {', '.join(extra)}")
        raw_space: Any = bet.get("space")
        if not is_whole_number(raw_space):
            raise bad_request("bet.space must be a whole number")
        space = int(raw_space)
        spaces = int(config["spaces"])
        if not 1 <= space <= spaces:
            raise invalid_bet(f"space {space} is not on this layout (1..{spaces})")
        check_stake(config, amount, MAX_BET_CENTS, "4620.5(f)(2)")
        if amount % 2:
            raise invalid_bet(
                f"{amount} is odd: a 3 to 2 natural and a half-wager insurance pay whole cents "
                "only on an even stake"
            )
        if any(b.space == space for b in play.bets):
            raise RuleError("space_taken", f"space {space} already has a bet this round")
        return {"space": space}

    # --- steps -----------------------------------------------------------------------------

    def prepare(
        self,
        config: Mapping[str, JSON],
        play: BlackJackPlay,
        round: Round,
        step: Any,
        chance: Chance,
    ) -> Any:
        """RNG mode, a step that may take cards (Deal, Act, Peek): every unrevealed shuffle
        unsealed and its order recomputed, plus fresh seeds (``below(256)`` 32 times each)
        sealed for the next shuffles. Never refuses: what it cannot open is left out, and
        ``decide`` refuses with ``shoe_unavailable`` if it needs it."""
        if round.outcome_mode != "rng" or not isinstance(step, _DEALING_STEPS):
            return step
        opened: dict[int, OpenedShuffle] = {}
        for record in play.shuffles:
            try:
                seed = chance.unseal(shoe_context(round.table, record.shuffle), record.sealed)
            except ValueError:
                continue
            out = Counter(record.excluded)
            if record.excluded_hole is not None:
                j, pos = record.excluded_hole
                if j not in opened:
                    continue
                out[opened[j].order[pos]] += 1
            cards = decks(int(config["decks"])) - out
            opened[record.shuffle] = OpenedShuffle(
                shuffle=record.shuffle,
                seed=seed.hex(),
                order=shoe.shuffle_order(seed, shoe.composition(cards)),
            )
        fresh = []
        if play.shuffle != 0 and play.size - play.drawn > MOST_CARDS_ONE_STEP:
            return replace(step, secrets=ShoeSecrets(opened=tuple(opened.values()), fresh=()))
        for k in range(1, FRESH_SHUFFLES_PER_STEP + 1):
            n = play.shuffle + k
            seed = bytes(chance.below(256) for _ in range(shoe.SEED_BYTES))
            sealed = chance.seal(shoe_context(round.table, n), seed)
            fresh.append(FreshShuffle(shuffle=n, seed=seed.hex(), sealed=sealed))
        return replace(step, secrets=ShoeSecrets(opened=tuple(opened.values()), fresh=tuple(fresh)))

    def decide(
        self, config: Mapping[str, JSON], play: BlackJackPlay, round: Round, step: Any
    ) -> list[Event]:
        """The events of one step and of everything that follows it without a decision, or
        RuleError (the state is then unchanged). Codes: ``wrong_game``, ``wrong_mode``,
        ``no_round``, ``no_bets``, ``already_dealt``, ``unknown_hand``, ``not_your_turn``,
        ``action_not_allowed``, ``insurance_not_offered``, ``already_insured``,
        ``invalid_insurance``, ``peek_not_due``, ``invalid_card``, ``no_card_due``,
        ``bad_request``; ``shoe_unavailable``, ``shoe_mismatch``, ``shoe_exhausted`` (a
        server fault: the step was not prepared against this state, or every card is in
        play)."""
        if not isinstance(step, STEPS):
            raise RuleError("wrong_game", f"{type(step).__name__} is not a Black Jack step")
        rng = round.outcome_mode == "rng"
        if isinstance(step, (EnterCards, Shuffle, BurnCard)) and rng:
            raise RuleError("wrong_mode", "the server deals from its own shoe at an RNG table")
        secrets = getattr(step, "secrets", None)
        run = _Run(self, config, play, round, secrets)
        match step:
            case Deal():
                self._deal(run)
            case Act():
                self._act(run, step)
            case Insure():
                self._insure(run, step)
            case Peek():
                self._peek(run, step)
            case EnterCards():
                self._enter(run, step)
            case Shuffle():
                if play.shuffle != 0 and play.drawn < play.size:
                    raise RuleError(
                        "box_not_empty",
                        f"{play.size - play.drawn} cards are still in the box: discards go "
                        "back only once it is empty, 4620.5(g)",
                    )
                run.dealer_shuffle()
                run.advance()  # a hole card waiting for the new box is dealt now
            case BurnCard():
                if round_stage(play) in ("idle", "betting", "over"):
                    raise RuleError("no_round", "a dead card is burnt only during a deal")
                run.ensure_dealer_shoe()
                card = run.take_entered(step.card)
                run.emit(
                    CardBurnt(
                        round=play.round, shuffle=run.play.shuffle, position=None, card=card,
                        reason="dead_card",
                    )
                )  # fmt: skip
        return run.events

    def _deal(self, run: _Run) -> None:
        play, round = run.play, run.round
        if round.phase == "idle" or play.ended:
            raise RuleError("no_round", "no round is open")
        if play.closed and play.deal_count > 0:
            raise RuleError("already_dealt", "this round's cards are dealt")
        if not play.bets:
            if round.phase == "no_more_bets":
                # The bets closed with none on the layout: nothing to deal, the round ends.
                run.emit(RoundEnded(round=play.round))
                return
            raise RuleError("no_bets", "there is no bet on the layout to deal to")
        if round.phase == "betting":
            run.emit(NoMoreBets(round=play.round))
        if run.rng:
            run.advance()
        else:
            # Dealer mode: the dealer deals from the physical shoe and enters the cards; a
            # deal after the dealer's own "no more bets" has nothing more to record.
            run.ensure_dealer_shoe()

    def _act(self, run: _Run, step: Act) -> None:
        play = run.play
        if step.action not in ACTIONS:
            raise bad_request(f"action must be one of {', '.join(ACTIONS)}")
        if not isinstance(step.hand, str):
            raise bad_request("hand must be a hand id such as 3.0")
        hand = find_hand(play, step.hand)
        if step.player is not None and step.player != hand.player:
            raise RuleError("not_your_turn", f"hand {hand.hand} is not {step.player}'s")
        if hand.split_aces and step.action != "stand" and not hand.settled:
            raise RuleError(
                "action_not_allowed",
                "split aces get one card each and no more, 4620.5(k)(4); they are not split "
                "again, BJ-5",
            )
        current = turn_hand(play)
        if (
            round_stage(play) != "players"
            or current is None
            or current.hand != hand.hand
            or current.waiting
            or len(current.cards) < 2
        ):
            raise RuleError("not_your_turn", f"it is not hand {hand.hand}'s turn")
        if step.action == "double":
            if len(hand.cards) != 2 or hand.split:
                raise RuleError(
                    "action_not_allowed",
                    "a double is on the first two cards of a hand that was not split, "
                    "4620.5(l)(1), (k)(6)",
                )
            hard = sum(value(c) for c in hand.cards)
            if hard not in (10, 11):
                raise RuleError(
                    "action_not_allowed",
                    f"a double needs a first-two-card total of 10 or 11 (aces as 1), not {hard}, "
                    "4620.5(l)(1), BJ-7",
                )
        if step.action == "split" and (len(hand.cards) != 2 or not is_pair(hand.cards)):
            raise RuleError(
                "action_not_allowed",
                "only two cards alike but for suit, or two 10-counts, are split, 4620.5(k)(1)",
            )
        new_hand = None
        if step.action == "split":
            n = sum(1 for h in play.hands if h.space == hand.space)
            new_hand = f"{hand.space}.{n}"
        run.emit(
            HandActed(
                round=play.round, hand=hand.hand, action=step.action, player=step.player,
                new_hand=new_hand,
            )
        )  # fmt: skip
        if step.action in ("double", "split"):
            kind = step.action
            wager_id = (
                double_id(hand.bet_id, hand.hand)
                if kind == "double"
                else split_id(hand.bet_id, str(new_hand))
            )
            run.emit(
                WagerAdded(
                    round=play.round, bet_id=hand.bet_id, wager_id=wager_id, player=hand.player,
                    amount=hand.wager, kind=kind,
                )
            )  # fmt: skip
        run.advance()

    def _insure(self, run: _Run, step: Insure) -> None:
        play = run.play
        if not isinstance(step.hand, str):
            raise bad_request("hand must be a hand id such as 3.0")
        if not is_whole_number(step.amount):
            raise bad_request("amount must be a whole number of cents")
        if round_stage(play) != "insurance":
            raise RuleError(
                "insurance_not_offered",
                "insurance is offered only with an ace up, before the dealer peeks, 4620.5(m)",
            )
        hand = find_hand(play, step.hand)
        if step.player is not None and step.player != hand.player:
            raise RuleError("not_your_turn", f"hand {hand.hand} is not {step.player}'s")
        if any(i.bet_id == hand.bet_id for i in play.insurance):
            raise RuleError("already_insured", f"hand {hand.hand} is already insured")
        if step.amount * 2 != hand.wager:
            raise RuleError(
                "invalid_insurance",
                f"insurance is exactly half the wager: {hand.wager // 2}, 4620.5(m), BJ-9",
            )
        run.emit(
            WagerAdded(
                round=play.round, bet_id=hand.bet_id, wager_id=insurance_id(hand.bet_id),
                player=hand.player, amount=step.amount, kind="insurance",
            )
        )  # fmt: skip

    def _peek(self, run: _Run, step: Peek) -> None:
        play = run.play
        if round_stage(play) not in ("insurance", "peek"):
            raise RuleError(
                "peek_not_due", "the dealer peeks once, with an ace or a 10-count up, 4620.5(h)(1)"
            )
        if run.rng:
            if step.natural is not None or step.hole is not None:
                raise bad_request("at an RNG table the server knows the hole card: send no card")
            run.peek()
        else:
            if not isinstance(step.natural, bool):
                raise bad_request("natural must be true or false")
            hole: str | None = None
            if step.natural:
                if step.hole is None:
                    raise bad_request("a natural is faced: enter the hole card")
                hole = run.take_entered(step.hole, from_box=False)
                if not is_natural((play.dealer_cards[0], hole)):
                    raise RuleError(
                        "invalid_card",
                        f"{hole} with {play.dealer_cards[0]} is not a natural 21",
                    )
            elif step.hole is not None:
                raise bad_request("without a natural the hole card stays face down")
            run.peek(step.natural, hole)
        run.advance()

    def _enter(self, run: _Run, step: EnterCards) -> None:
        if not isinstance(step.cards, (list, tuple)) or not step.cards:
            raise bad_request("cards must be a non-empty list of cards")
        if round_stage(run.play) in ("idle", "betting", "over"):
            raise RuleError("no_card_due", "no card is due: the round is not being dealt")
        run.ensure_dealer_shoe()
        run.entered.extend(step.cards)
        run.advance()
        if run.entered:
            raise RuleError(
                "no_card_due",
                f"{len(run.entered)} card(s) more than the game waits for: "
                f"{', '.join(str(c)[:MAX_CARD_CHARS] for c in list(run.entered)[:8])}",
            )

    # --- the fold --------------------------------------------------------------------------

    def evolve(
        self, config: Mapping[str, JSON], play: BlackJackPlay, event: Event
    ) -> BlackJackPlay:
        """Fold one event of the table's stream into the game's state."""
        return fold(play, event)

    # --- the rest of the port -----------------------------------------------------------------

    def closed(self, play: BlackJackPlay) -> bool:
        """A Black Jack table never closes by itself."""
        return False

    def debtors(self, play: BlackJackPlay, round: Round, step: Any) -> Sequence[str]:
        """The hand's owner for a double, a split or an insurance (they add a wager)."""
        if isinstance(step, Insure) or (
            isinstance(step, Act) and step.action in ("double", "split")
        ):
            try:
                return [find_hand(play, step.hand).player]
            except (RuleError, TypeError):
                return []
        return []

    def void(self, config: Mapping[str, JSON], play: BlackJackPlay, round: Round) -> list[Event]:
        """A voided round: every wager not yet settled returned (each hand's, in payoff
        order, then the insurances), every card to the discards, the round ended. The shoe
        goes on: the cards dealt stay out of the box until it is emptied (4620.5(g))."""
        run = _Run(self, config, play, round, None)
        for h in reversed(play.hands):
            if not h.settled:
                run.settle_hand(h, "returned")
        insured = [
            BetSettlement(i.wager_id, i.player, i.amount, "returned", i.amount)
            for i in play.insurance
            if not i.settled
        ]
        if insured:
            run.settle_part("insurance", insured)
        run.discard_all()
        run.emit(RoundEnded(round=run.play.round))
        return run.events

    def view(
        self, config: Mapping[str, JSON], play: BlackJackPlay, round: Round
    ) -> dict[str, JSON]:
        """What every reader may see: the options, the stage, whose turn, every hand with its
        cards, count, wagers and state, the dealer's up-card and revealed cards, the hole card
        only as ``"face down"`` with its commitment, the insurance offer, the cards left in
        the box, and in dealer mode the card the game waits for. Never a seed, an order or a
        face-down card."""
        stage = round_stage(play)
        current = turn_hand(play) if stage == "players" else None
        num, den = natural_odds(int(config["tie_option"]))
        hole_commitment = None
        if play.hole is not None and play.hole[1] is not None:
            record = next((r for r in play.shuffles if r.shuffle == play.hole[0]), None)
            if record is not None:
                hole_commitment = record.commitments[play.hole[1]]
        insured = {i.bet_id: i.amount for i in play.insurance}
        hands = []
        for h in play.hands:
            total, soft = hand_total(h.cards) if h.cards else (0, False)
            hands.append(
                {
                    "hand": h.hand,
                    "space": h.space,
                    "player": h.player,
                    "cards": list(h.cards),
                    "total": total,
                    "soft": soft,
                    "wagers": [{"wager": w, "amount": a} for w, a in h.wagers()],
                    "insurance": insured.get(h.bet_id) if h.hand.endswith(".0") else None,
                    "state": hand_state(h),
                }
            )
        dealer_total = hand_total(play.dealer_cards)[0] if play.dealer_cards else None
        return {
            "tie_option": int(config["tie_option"]),
            "natural_pays": [num, den],
            "decks": int(config["decks"]),
            "stage": stage,
            "turn": current.hand if current is not None else None,
            "hands": hands,
            "dealer": {
                "cards": list(play.dealer_cards),
                "up": play.dealer_cards[0] if play.dealer_cards else None,
                "hole": "face down" if play.hole is not None else None,
                "hole_commitment": hole_commitment,
                "total": dealer_total if play.hole is None else None,
            },
            "insurance_offered": stage == "insurance",
            "shuffle": play.shuffle,
            "box": play.size - play.drawn,
            "awaiting": awaiting(play) if play.mode == "dealer" else None,
        }

    def result(self, events: Sequence[Event]) -> dict[str, JSON]:
        """The reply's game part: the cards dealt face up (with their salts), the hole card
        when revealed, the actions, the parts settled and whether the round ended."""
        cards: list[dict[str, JSON]] = []
        actions: list[dict[str, JSON]] = []
        parts: list[dict[str, JSON]] = []
        ended = False
        for ev in events:
            if isinstance(ev, CardDealt):
                cards.append({"to": ev.to, "card": ev.card, "salt": ev.salt, "face_up": ev.face_up})
            elif isinstance(ev, HoleCardRevealed):
                cards.append({"to": DEALER, "card": ev.card, "salt": ev.salt, "face_up": True})
            elif isinstance(ev, HandActed):
                actions.append({"hand": ev.hand, "action": ev.action, "new_hand": ev.new_hand})
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
        return {"cards": cards, "actions": actions, "settled": parts, "round_ended": ended}


BLACK_JACK: Final = BlackJack()
"""The game as the license lists it: ``black_jack``."""
