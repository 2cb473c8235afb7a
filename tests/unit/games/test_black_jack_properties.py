"""Black Jack in RNG mode over many seeded rounds (docs/RULES.md "Black Jack (4620.5)"):
money is conserved, every settlement is recomputed from the events alone, no card leaves a
shuffle twice, every revealed card opens its commitment, a retired shuffle's seed recomputes
its box, the sealed seed opens only with the key, and the game continues after a restart
from its events alone."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import pytest

from events.base import Event
from events.black_jack import (
    CardBurnt,
    CardDealt,
    DealerPeeked,
    HandActed,
    HoleCardRevealed,
    ShoeRevealed,
    ShoeShuffled,
)
from events.tables import BetPlaced, NoMoreBets, PartSettled, RoundEnded, RoundOpened, WagerAdded
from services.aggregates import RuleError
from services.games import black_jack_shoe as shoe
from services.games.black_jack import BLACK_JACK, Act, Deal, Insure, Peek, shoe_context
from services.games.cards import decks
from tests.unit.games.bj_support import Table, chance, debits, paid, settlements

# --- an independent recompute of a round's settlement from its events -----------------------

TENS = {"10", "J", "Q", "K"}


def count(cards: Sequence[str]) -> int:
    hard = sum(1 if c[:-1] == "A" else 10 if c[:-1] in TENS else int(c[:-1]) for c in cards)
    return hard + 10 if any(c[:-1] == "A" for c in cards) and hard <= 11 else hard


def natural(cards: Sequence[str]) -> bool:
    return len(cards) == 2 and count(cards) == 21


def recompute(events: Sequence[Event], option: int) -> dict[str, tuple[str, int]]:
    """Wager id -> (result, paid), from the cards and wagers of one round's events."""
    hands: dict[str, list[str]] = {}
    wagers: dict[str, list[tuple[str, int]]] = {}
    split: set[str] = set()
    insurance: dict[str, int] = {}
    dealer: list[str] = []
    acted: HandActed | None = None
    for ev in events:
        if isinstance(ev, BetPlaced):
            hid = f"{ev.bet['space']}.0"
            hands[hid], wagers[hid] = [], [(ev.bet_id, ev.amount)]
        elif isinstance(ev, CardDealt) and ev.card is not None:
            (dealer if ev.to == "dealer" else hands[ev.to]).append(ev.card)
        elif isinstance(ev, HoleCardRevealed):
            dealer.insert(1, ev.card)
        elif isinstance(ev, HandActed):
            acted = ev
            if ev.action == "split" and ev.new_hand is not None:
                hands[ev.new_hand], wagers[ev.new_hand] = [hands[ev.hand].pop()], []
                split |= {ev.hand, ev.new_hand}
        elif isinstance(ev, WagerAdded):
            if ev.kind == "insurance":
                insurance[ev.wager_id] = ev.amount
            else:
                assert acted is not None
                target = acted.new_hand if ev.kind == "split" else acted.hand
                wagers[str(target)].append((ev.wager_id, ev.amount))
    dealer_natural = natural(dealer[:2]) if len(dealer) >= 2 else False
    num, den = (3, 2) if option == 1 else (2, 1)

    def tie(both_natural: bool) -> str:
        return "push" if option == 1 or (option == 2 and both_natural) else "lost"

    out = {w: ("won", 3 * a) if dealer_natural else ("lost", 0) for w, a in insurance.items()}
    for hid, cards in hands.items():
        nat = hid not in split and natural(cards)
        total, d = count(cards), count(dealer)
        if dealer_natural:
            result = tie(True) if nat else "lost"
        elif total > 21:
            result = "lost"
        elif nat:
            for w, a in wagers[hid]:
                out[w] = ("won", a + a * num // den)
            continue
        elif d > 21 or total > d:
            result = "won"
        elif total < d:
            result = "lost"
        else:
            result = tie(False)
        for w, a in wagers[hid]:
            out[w] = (result, {"won": 2 * a, "push": a, "lost": 0}[result])
    return out


# --- seeded play ------------------------------------------------------------------------


def play_rounds(
    t: Table, rounds: int, rng: random.Random, *, restart_every: int = 0
) -> Counter[str]:
    """Play ``rounds`` rounds with random bets on the seven spaces (players p0..p3) and
    random legal decisions; every ``restart_every`` rounds the state is rebuilt from the
    events alone and a new Chance (same key, a fresh generator) takes over. Returns what
    happened, by kind."""
    seen: Counter[str] = Counter()
    for n in range(rounds):
        if restart_every and n and n % restart_every == 0:
            rebuilt = BLACK_JACK.initial(t.config)
            for ev in t.events:
                rebuilt = BLACK_JACK.evolve(t.config, rebuilt, ev)
            assert rebuilt == t.play
            t.play, t.chance = rebuilt, chance(rng.randrange(1 << 30))
            seen["restart"] += 1
        t.open_round()
        for space in range(1, 8):
            if rng.random() < 0.6:
                t.bet(f"p{rng.randrange(4)}", space, 2 * rng.randint(1, 250))
        if not t.bets:
            t.bet("p0", 4, 100)
        events = t.step(Deal())
        up = next(e.card for e in events if isinstance(e, CardDealt) and e.to == "dealer")
        assert up is not None
        if up[:-1] in TENS:  # 4620.5(h)(1): the server peeks at once
            assert any(isinstance(e, DealerPeeked) for e in events)
            seen["ten_up"] += 1
        for _ in range(500):
            if t.phase == "idle":
                break
            view = t.view()
            if view["dealer"]["hole"] == "face down":  # never shown before it is turned up
                assert view["dealer"]["cards"] == [up]
            if view["stage"] == "insurance":
                seen["ace_up"] += 1
                for h in view["hands"]:
                    if rng.random() < 0.5:
                        t.step(Insure(hand=h["hand"], amount=h["wagers"][0]["amount"] // 2))
                        seen["insured"] += 1
                t.step(Peek())
                continue
            hand = view["turn"]
            actions = ["hit", "stand", "double", "split"]
            rng.shuffle(actions)
            for action in actions:
                try:
                    t.step(Act(hand=hand, action=action))
                    seen[action] += 1
                    break
                except RuleError as e:
                    assert e.code == "action_not_allowed", e
        else:
            raise AssertionError("the round did not end")
        round_events = t.round_events()
        assert settlements(round_events) == recompute(round_events, int(t.config["tie_option"]))
        if any(isinstance(e, ShoeShuffled) and e.reason == "box_empty" for e in round_events):
            seen["box_emptied_mid_round"] += 1
    return seen


def shuffles_of(events: Sequence[Event]) -> dict[int, ShoeShuffled]:
    return {e.shuffle: e for e in events if isinstance(e, ShoeShuffled)}


@pytest.mark.parametrize(("option", "deck_count", "seed"), [(1, 1, 11), (2, 1, 12), (3, 2, 13)])
def test_many_rounds_keep_every_rule_of_money_and_the_shoe(
    option: int, deck_count: int, seed: int
) -> None:
    t = Table("rng", seed=seed, tie_option=option, decks=deck_count)
    seen = play_rounds(t, 80, random.Random(seed), restart_every=17)
    # the runs reach every path they are meant to check
    for kind in ("ten_up", "ace_up", "insured", "double", "split", "hit", "stand", "restart"):
        assert seen[kind], kind
    assert seen["box_emptied_mid_round"], "no box ran out during a round"
    events = t.events

    # money: what left the balances is what the settlements took in; each wager settles once
    wagered = [s for e in events if isinstance(e, PartSettled) for s in e.settlements]
    assert debits(events) == sum(s.amount for s in wagered)
    assert len({s.bet_id for s in wagered}) == len(wagered)
    ids = {e.bet_id for e in events if isinstance(e, BetPlaced)}
    ids |= {e.wager_id for e in events if isinstance(e, WagerAdded)}
    assert ids == {s.bet_id for s in wagered}
    assert paid(events) == sum(s.paid for s in wagered)

    # the shoe: each position once, in order; never more of a card than the shoe holds
    shuffles = shuffles_of(events)
    positions: dict[int, list[int]] = {}
    cards: dict[int, Counter[str]] = {}
    hole: tuple[int, int] | None = None
    for e in events:
        if isinstance(e, CardDealt | CardBurnt):
            assert e.position is not None
            positions.setdefault(e.shuffle, []).append(e.position)
            if isinstance(e, CardDealt) and e.card is not None:
                assert e.salt is not None
                commit = shuffles[e.shuffle].commitments[e.position]
                assert shoe.opens(commit, e.card, e.salt)
                cards.setdefault(e.shuffle, Counter())[e.card] += 1
            if isinstance(e, CardDealt) and not e.face_up:
                hole = (e.shuffle, e.position)
        elif isinstance(e, HoleCardRevealed):
            assert hole is not None and e.salt is not None
            assert shoe.opens(shuffles[hole[0]].commitments[hole[1]], e.card, e.salt)
            cards.setdefault(hole[0], Counter())[e.card] += 1
    for n, seq in positions.items():
        assert seq == list(range(len(seq))) and len(seq) <= shuffles[n].cards
    full = decks(deck_count)
    for counted in cards.values():
        assert not counted - full

    # a retired shuffle's seed recomputes its box and every commitment of it
    revealed = [e for e in events if isinstance(e, ShoeRevealed)]
    assert revealed and {e.shuffle for e in revealed} == set(shuffles) - {max(shuffles)}
    for r in revealed:
        seed_bytes = bytes.fromhex(r.seed)
        assert shoe.shuffle_order(seed_bytes, r.cards) == r.cards
        assert shoe.commitments(seed_bytes, r.cards) == shuffles[r.shuffle].commitments
        assert Counter(r.cards) <= full
    assert shuffles[1].cards == 52 * deck_count and Counter(revealed[0].cards) == full

    # the sealed seed opens only with the server's key and for its own shuffle
    first = shuffles[1]
    assert first.sealed is not None
    assert chance(0).unseal(shoe_context(t.table, 1), first.sealed).hex() == revealed[0].seed
    with pytest.raises(ValueError):
        chance(0, b"another server's secret, 32 byte").unseal(
            shoe_context(t.table, 1), first.sealed
        )
    with pytest.raises(ValueError):
        chance(0).unseal(shoe_context(t.table, 2), first.sealed)


def test_each_round_follows_the_event_order_of_the_rules() -> None:
    t = Table("rng", seed=5, decks=1)
    play_rounds(t, 30, random.Random(5))
    starts = [i for i, e in enumerate(t.events) if isinstance(e, RoundOpened)]
    for a, b in zip(starts, [*starts[1:], len(t.events)], strict=True):
        chunk = t.events[a:b]
        assert isinstance(chunk[-1], RoundEnded)
        no_more = next(i for i, e in enumerate(chunk) if isinstance(e, NoMoreBets))
        assert not any(isinstance(e, CardDealt) for e in chunk[:no_more])


def test_a_step_not_prepared_against_the_shoe_is_refused_and_changes_nothing() -> None:
    t = Table("rng", seed=9, decks=1)
    t.open_round()
    t.bet("ann", 1, 100)
    before = t.play
    with pytest.raises(RuleError) as e:  # decide without prepare: no seed to shuffle with
        BLACK_JACK.decide(t.config, t.play, t.round(), Deal())
    assert e.value.code == "shoe_unavailable" and t.play == before
    assert BLACK_JACK.prepare(t.config, t.play, t.round(), Deal(), t.chance).secrets is not None


def test_a_card_that_does_not_open_its_commitment_is_refused() -> None:
    t = Table("rng", seed=21, decks=1)
    t.open_round()
    t.bet("ann", 1, 100)
    t.step(Deal())
    while t.view()["stage"] != "players":
        t.open_round()
        t.bet("ann", 1, 100)
        if t.view()["stage"] == "insurance":
            t.step(Peek())
        t.step(Deal())
    prepared = BLACK_JACK.prepare(t.config, t.play, t.round(), Act(hand="1.0", action="hit"),
                                  t.chance)  # fmt: skip
    assert prepared.secrets is not None
    current = next(o for o in prepared.secrets.opened if o.shuffle == t.play.shuffle)
    at = t.play.drawn
    order = list(current.order)
    swap = next(i for i in range(at + 1, len(order)) if order[i] != order[at])
    order[at], order[swap] = order[swap], order[at]
    forged = replace(current, order=tuple(order))
    opened = tuple(forged if o is current else o for o in prepared.secrets.opened)
    step = replace(prepared, secrets=replace(prepared.secrets, opened=opened))
    with pytest.raises(RuleError) as e:
        BLACK_JACK.decide(t.config, t.play, t.round(), step)
    assert e.value.code == "shoe_mismatch"
