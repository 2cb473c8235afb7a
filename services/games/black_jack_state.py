"""Black Jack's state (``play``), its fold, and the card arithmetic of 4620.5(d).

Pure. ``services.games.black_jack`` decides the steps; this module says what the state is
after each event (:func:`fold`) and answers what the rules ask of it: a hand's count, whose
turn it is, where the round is (:func:`stage`), which card the dealer must enter next.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
from events.records import fast_init, replace
from events.tables import (
    BetCancelled,
    BetPlaced,
    NoMoreBets,
    PartSettled,
    RoundEnded,
    RoundOpened,
    TableOpened,
    WagerAdded,
)
from services.aggregates import RuleError
from services.games.cards import rank

DEALER: Final = "dealer"
"""The dealer as a holder of cards (``CardDealt.to``, ``CardsDiscarded.holders``)."""
HOLE: Final = "hole"
"""A deal target: the dealer's hole card, dealt face down last, 4620.5(g)."""
DEALER_STANDS_ON: Final = 17
"""4620.5(i)(2)-(3): the dealer draws on 16 or less and stays on every 17, soft ones too."""
BLACKJACK: Final = 21
TEN_VALUES: Final = frozenset({"10", "J", "Q", "K"})
"""4620.5(d)(2)-(3): the ranks that count 10."""

# --------------------------------------------------------------------------------------------
# Card arithmetic (4620.5(d))
# --------------------------------------------------------------------------------------------


def value(card: str) -> int:
    """4620.5(d): an ace counts 1 (11 is decided by the total), J Q K 10, others their face."""
    r = rank(card)
    if r == "A":
        return 1
    return 10 if r in TEN_VALUES else int(r)


def hand_total(cards: Sequence[str]) -> tuple[int, bool]:
    """The best count of ``cards`` and whether it is soft: an ace counts 11 when that does
    not take the count over 21, else 1, 4620.5(d)(1)."""
    hard = sum(value(c) for c in cards)
    if any(rank(c) == "A" for c in cards) and hard + 10 <= BLACKJACK:
        return hard + 10, True
    return hard, False


def is_natural(cards: Sequence[str]) -> bool:
    """A natural 21: a count of 21 with two cards, 4620.5(h)(1) (never on a split hand,
    (k)(5): callers check that)."""
    return len(cards) == 2 and hand_total(cards)[0] == BLACKJACK


def is_pair(cards: Sequence[str]) -> bool:
    """4620.5(k)(1): two cards identical but for suit, or any two cards worth 10."""
    if len(cards) != 2:
        return False
    a, b = rank(cards[0]), rank(cards[1])
    return a == b or (a in TEN_VALUES and b in TEN_VALUES)


def natural_odds(tie_option: int) -> tuple[int, int]:
    """4620.5(h)(2): a player's natural pays 3 to 2 under option 1, 2 to 1 under 2 and 3."""
    return (3, 2) if tie_option == 1 else (2, 1)


def tie_result(tie_option: int, *, both_natural: bool) -> str:
    """A tie under the license's option, 4620.5(h), BJ-4: option 1 ``push``; option 2
    ``push`` for natural against natural only, else ``lost``; option 3 always ``lost``."""
    if tie_option == 1 or (tie_option == 2 and both_natural):
        return "push"
    return "lost"


def against_dealer_natural(tie_option: int, cards: Sequence[str]) -> str:
    """A hand against the dealer's natural, 4620.5(h)(1): a natural ties under the
    license's option (:func:`tie_result`), any other hand loses (only the first bets are
    at risk: nobody has split or doubled)."""
    return tie_result(tie_option, both_natural=True) if is_natural(cards) else "lost"


def showdown(tie_option: int, total: int, dealer: int) -> str:
    """A hand of count ``total`` against the dealer standing on ``dealer``, 4620.5(j): won
    when the dealer busts or the hand is higher, lost when lower, a tie under the
    license's option (:func:`tie_result`, BJ-4)."""
    if dealer > BLACKJACK or total > dealer:
        return "won"
    if total < dealer:
        return "lost"
    return tie_result(tie_option, both_natural=False)


def peek_due(up: str) -> bool:
    """4620.5(h)(1): with a 10-count or an ace up the dealer must look at the hole card."""
    r = rank(up)
    return r == "A" or r in TEN_VALUES


# --------------------------------------------------------------------------------------------
# The game's state (``play``)
# --------------------------------------------------------------------------------------------


@fast_init  # these records are rebuilt with every card and action a round folds
@dataclass(frozen=True, slots=True, kw_only=True)
class SeatBet:
    """A bet of the round on a betting space (folded from ``BetPlaced`` / ``BetCancelled``)."""

    bet_id: str
    player: str
    space: int
    amount: int


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Hand:
    """One hand: the bet's first hand ``<space>.0`` or a hand a split opened ``<space>.<n>``.

    ``wager`` is the original wager (BJ-6: a split or a double adds exactly this); the
    hand's own wager is ``wager_id`` (the bet itself for ``.0``, the split's WagerAdded
    otherwise), plus ``<bet>:double:<hand>`` when doubled."""

    hand: str
    space: int
    player: str
    bet_id: str
    wager: int
    wager_id: str
    cards: tuple[str, ...] = ()
    split: bool = False
    split_aces: bool = False
    doubled: bool = False
    stood: bool = False
    waiting: bool = False
    settled: bool = False
    discarded: bool = False

    def wagers(self) -> tuple[tuple[str, int], ...]:
        """The hand's wagers (id, cents): its own and, if doubled, the double."""
        own = ((self.wager_id, self.wager),)
        return (*own, (double_id(self.bet_id, self.hand), self.wager)) if self.doubled else own


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Insurance:
    """An insurance wager on a bet's hand (4620.5(m)), from ``WagerAdded(kind="insurance")``."""

    bet_id: str
    wager_id: str
    player: str
    amount: int
    settled: bool = False


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ShuffleRecord:
    """A shuffle not yet revealed (RNG mode): its box size, commitments and sealed seed, and
    what was out of the box when it was made (its composition is every deck minus the cards
    then in play: ``excluded`` face up, and the hole card ``excluded_hole`` = (shuffle,
    position) while still face down; filled in when it is turned up or its shuffle revealed)."""

    shuffle: int
    size: int
    commitments: tuple[str, ...]
    sealed: str
    excluded: tuple[str, ...] = ()
    excluded_hole: tuple[int, int] | None = None


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class BlackJackPlay:
    """The game's state at a table, folded from every event of its stream.

    Across rounds: the mode, the current box (``shuffle``, ``size``, ``drawn``: cards out of
    it, burns included), RNG shuffles not yet revealed, dealer mode's cards seen this
    cycle. Per round: the bets, the hands in order of play, insurance, the dealer's cards."""

    table: str = ""
    mode: str = "rng"
    round: int = 0
    bets: tuple[SeatBet, ...] = ()
    closed: bool = False
    """No more bets was called: the hands exist and the deal is due."""
    seats: int = 0
    """How many hands the deal gives cards to (the bets at no more bets)."""
    deal_count: int = 0
    hands: tuple[Hand, ...] = ()
    insurance: tuple[Insurance, ...] = ()
    dealer_cards: tuple[str, ...] = ()
    """The dealer's cards face up: the up-card, then the hole card once revealed, then draws."""
    hole_dealt: bool = False
    hole: tuple[int, int | None] | None = None
    """The face-down hole card's (shuffle, position); None once revealed (or not dealt)."""
    dealer_discarded: bool = False
    peeked: bool = False
    dealer_natural: bool = False
    ended: bool = False
    shuffle: int = 0
    size: int = 0
    drawn: int = 0
    shuffles: tuple[ShuffleRecord, ...] = ()
    seen: Mapping[str, int] = field(default_factory=dict)
    """Dealer mode: the cards seen out of the box this cycle (the entered cards and the cards
    in play when the dealer shuffled), so a card the shoe can no longer hold is refused."""


def double_id(bet_id: str, hand: str) -> str:
    """The id of a double's wager on ``hand``."""
    return f"{bet_id}:double:{hand}"


def split_id(bet_id: str, hand: str) -> str:
    """The id of the wager a split puts on the new ``hand``."""
    return f"{bet_id}:split:{hand}"


def insurance_id(bet_id: str) -> str:
    """The id of a bet's insurance wager."""
    return f"{bet_id}:insurance"


def deal_targets(play: BlackJackPlay) -> list[str]:
    """4620.5(g): from the dealer's left (space 1 up) one card to each hand, one up to the
    dealer, a second to each hand, then the hole card face down."""
    first = [h.hand for h in play.hands[: play.seats]]
    return [*first, DEALER, *first, HOLE]


def hand_done(h: Hand) -> bool:
    """A hand needs no more decision: settled, stood, doubled (one card only, (l)(1)),
    split aces with their one card ((k)(4)), or a count of 21 or more."""
    if h.settled or h.discarded:
        return True
    if h.waiting or len(h.cards) < 2:
        return False
    return h.stood or h.doubled or h.split_aces or hand_total(h.cards)[0] >= BLACKJACK


def turn_hand(play: BlackJackPlay) -> Hand | None:
    """Whose turn: the first hand in order of play that is not done (4620.5(f)(1), (h)(2),
    (h)(3), (k)(3)): spaces from the dealer's left, a split's right hand first."""
    return next((h for h in play.hands if not hand_done(h)), None)


def round_stage(play: BlackJackPlay) -> str:
    """Where the round is: ``idle`` (no round), ``betting``, ``dealing``, ``insurance`` (an
    ace up, before the peek), ``peek`` (dealer mode, a 10-count up), ``players``, ``dealer``,
    ``over``."""
    if play.round == 0:
        return "idle"
    if play.ended:
        return "over"
    if not play.closed:
        return "betting"
    if play.deal_count < len(deal_targets(play)):
        return "dealing"
    if not play.peeked and peek_due(play.dealer_cards[0]):
        return "insurance" if rank(play.dealer_cards[0]) == "A" else "peek"
    return "players" if turn_hand(play) is not None else "dealer"


def cards_in_play(play: BlackJackPlay) -> list[str]:
    """The cards face up on the table (not yet discarded)."""
    out = [c for h in play.hands if not h.discarded for c in h.cards]
    if not play.dealer_discarded:
        out += play.dealer_cards
    return out


def hole_in_play(play: BlackJackPlay) -> bool:
    return play.hole is not None and not play.dealer_discarded


def find_hand(play: BlackJackPlay, hand_id: str) -> Hand:
    for h in play.hands:
        if h.hand == hand_id:
            return h
    raise RuleError("unknown_hand", f"no hand {hand_id!r} in this round")


def replace_hand(play: BlackJackPlay, hand_id: str, **changes: Any) -> BlackJackPlay:
    return replace(
        play, hands=tuple(replace(h, **changes) if h.hand == hand_id else h for h in play.hands)
    )


def fold(play: BlackJackPlay, event: Event) -> BlackJackPlay:
    """Fold one event of a Black Jack table's stream into the game's state."""
    match event:
        case TableOpened():
            return replace(play, table=event.table, mode=event.outcome_mode)
        case RoundOpened():
            return replace(
                play,
                round=event.round,
                bets=(),
                closed=False,
                seats=0,
                deal_count=0,
                hands=(),
                insurance=(),
                dealer_cards=(),
                hole_dealt=False,
                hole=None,
                dealer_discarded=False,
                peeked=False,
                dealer_natural=False,
                ended=False,
            )
        case BetPlaced():
            bet = SeatBet(
                bet_id=event.bet_id,
                player=event.player,
                space=int(event.bet["space"]),
                amount=event.amount,
            )
            return replace(play, bets=tuple(sorted((*play.bets, bet), key=lambda b: b.space)))
        case BetCancelled():
            return replace(play, bets=tuple(b for b in play.bets if b.bet_id != event.bet_id))
        case NoMoreBets():
            hands = tuple(
                Hand(
                    hand=f"{b.space}.0",
                    space=b.space,
                    player=b.player,
                    bet_id=b.bet_id,
                    wager=b.amount,
                    wager_id=b.bet_id,
                )
                for b in play.bets
            )
            return replace(play, closed=True, hands=hands, seats=len(hands))
        case ShoeShuffled():
            return _fold_shuffle(play, event)
        case CardBurnt():
            seen = dict(play.seen)
            if event.card is not None:
                seen[event.card] = seen.get(event.card, 0) + 1
            return replace(play, drawn=play.drawn + 1, seen=seen)
        case CardDealt():
            return _fold_dealt(play, event)
        case DealerPeeked():
            return replace(play, peeked=True, dealer_natural=event.natural)
        case HoleCardRevealed():
            return _fold_hole(play, event.card)
        case HandActed():
            return _fold_acted(play, event)
        case WagerAdded() if event.kind == "insurance":
            ins = Insurance(
                bet_id=event.bet_id,
                wager_id=event.wager_id,
                player=event.player,
                amount=event.amount,
            )
            return replace(play, insurance=(*play.insurance, ins))
        case PartSettled():
            if event.part == "insurance":
                return replace(
                    play, insurance=tuple(replace(i, settled=True) for i in play.insurance)
                )
            if event.part.startswith("hand:"):
                return replace_hand(play, event.part[len("hand:") :], settled=True)
            return play
        case CardsDiscarded():
            for holder in event.holders:
                if holder == DEALER:
                    play = replace(play, dealer_discarded=True)
                else:
                    play = replace_hand(play, holder, discarded=True)
            return play
        case ShoeRevealed():
            return _fold_revealed(play, event)
        case RoundEnded():
            return replace(play, ended=True)
    return play


def _fold_shuffle(play: BlackJackPlay, event: ShoeShuffled) -> BlackJackPlay:
    public = tuple(cards_in_play(play))
    hole = play.hole if hole_in_play(play) else None
    shuffles = play.shuffles
    if event.sealed is not None:
        record = ShuffleRecord(
            shuffle=event.shuffle,
            size=event.cards,
            commitments=event.commitments,
            sealed=event.sealed,
            excluded=public,
            excluded_hole=(hole[0], hole[1]) if hole and hole[1] is not None else None,
        )
        shuffles = (*shuffles, record)
    return replace(
        play,
        shuffle=event.shuffle,
        size=event.cards,
        drawn=0,
        shuffles=shuffles,
        seen=dict(Counter(public)),
    )


def _fold_dealt(play: BlackJackPlay, event: CardDealt) -> BlackJackPlay:
    # One copy of the round per card (the fold runs for every card of every round: in the
    # actor and again in the audit), whatever the card changes.
    in_deal = play.deal_count < 2 * len(play.hands[: play.seats]) + 2  # len(deal_targets)
    drawn = play.drawn + 1
    deal_count = play.deal_count + (1 if in_deal else 0)
    seen = play.seen
    if event.card is not None:
        seen = dict(seen)
        seen[event.card] = seen.get(event.card, 0) + 1
    if event.to == DEALER:
        if not event.face_up:
            return replace(
                play,
                drawn=drawn,
                deal_count=deal_count,
                seen=seen,
                hole_dealt=True,
                hole=(event.shuffle, event.position),
            )
        return replace(
            play,
            drawn=drawn,
            deal_count=deal_count,
            seen=seen,
            dealer_cards=(*play.dealer_cards, str(event.card)),
        )
    hand = find_hand(play, event.to)
    dealt = replace(hand, cards=(*hand.cards, str(event.card)), waiting=False)
    return replace(
        play,
        drawn=drawn,
        deal_count=deal_count,
        seen=seen,
        hands=tuple(dealt if h.hand == event.to else h for h in play.hands),
    )


def _fold_hole(play: BlackJackPlay, card: str) -> BlackJackPlay:
    ref = play.hole
    seen = dict(play.seen)
    if play.mode == "dealer":
        seen[card] = seen.get(card, 0) + 1
    cards = (*play.dealer_cards[:1], card, *play.dealer_cards[1:])
    play = replace(play, dealer_cards=cards, hole=None, seen=seen)
    return fill_hole(play, ref, card)


def _fold_acted(play: BlackJackPlay, event: HandActed) -> BlackJackPlay:
    hand = find_hand(play, event.hand)
    if event.action == "stand":
        return replace_hand(play, hand.hand, stood=True)
    if event.action == "hit":
        return replace_hand(play, hand.hand, waiting=True)
    if event.action == "double":
        return replace_hand(play, hand.hand, doubled=True, waiting=True)
    # split, 4620.5(k)(2)-(4): the right card keeps the wager, the left one gets its own.
    aces = rank(hand.cards[0]) == "A"
    right = replace(hand, cards=hand.cards[:1], split=True, split_aces=aces)
    left = replace(
        hand,
        hand=str(event.new_hand),
        wager_id=split_id(hand.bet_id, str(event.new_hand)),
        cards=hand.cards[1:],
        split=True,
        split_aces=aces,
    )
    hands: list[Hand] = []
    for h in play.hands:
        hands += [right, left] if h.hand == hand.hand else [h]
    return replace(play, hands=tuple(hands))


def _fold_revealed(play: BlackJackPlay, event: ShoeRevealed) -> BlackJackPlay:
    shuffles = tuple(r for r in play.shuffles if r.shuffle != event.shuffle)
    play = replace(play, shuffles=shuffles)
    for r in shuffles:
        if r.excluded_hole is not None and r.excluded_hole[0] == event.shuffle:
            play = fill_hole(play, r.excluded_hole, event.cards[r.excluded_hole[1]])
    return play


def fill_hole(play: BlackJackPlay, ref: tuple[int, int | None] | None, card: str) -> BlackJackPlay:
    """A hole card became public: shuffles made while it was face down now know it."""
    if ref is None or ref[1] is None:
        return play
    shuffles = tuple(
        replace(r, excluded=(*r.excluded, card), excluded_hole=None)
        if r.excluded_hole == (ref[0], ref[1])
        else r
        for r in play.shuffles
    )
    return replace(play, shuffles=shuffles)


def hand_state(h: Hand) -> str:
    total = hand_total(h.cards)[0] if h.cards else 0
    if total > BLACKJACK:
        return "busted"
    if h.settled:
        return "settled"
    if not h.split and is_natural(h.cards):
        return "natural"
    if h.doubled:
        return "doubled"
    if h.stood:
        return "stood"
    return "done" if hand_done(h) else "playing"


def awaiting(play: BlackJackPlay) -> str | None:
    """Dealer mode: who the next card entered goes to (a hand, ``dealer``, ``hole``), or
    ``shuffle`` when the next card must come out of an empty box (4620.5(g))."""
    stage = round_stage(play)
    box_empty = play.shuffle != 0 and play.drawn >= play.size
    if stage == "dealing":
        if not play.hands:
            return None
        target = deal_targets(play)[play.deal_count]
        if box_empty:
            return "shuffle"
        return None if target == HOLE else target
    if stage == "players":
        current = turn_hand(play)
        if current is not None and (current.waiting or len(current.cards) < 2):
            return "shuffle" if box_empty else current.hand
        return None
    if stage == "dealer" and not all(h.settled for h in play.hands):
        if play.hole is not None:
            return HOLE
        if hand_total(play.dealer_cards)[0] < DEALER_STANDS_ON:
            return "shuffle" if box_empty else DEALER
    return None
