#!/usr/bin/env python3
"""Black Jack house edge under New York's three tie options (9 NYCRR 4620.5).

Written from scratch for this project; no code was taken from anywhere.

RULES (as the project reads the regulation)
-------------------------------------------
* 1, 2 or 4 decks of 52 (and, as a limit, an infinite deck).  The burn card
  is ignored: it does not change any expectation.
* Dealer stands on all 17s (S17).  With a 10 or an ace up the dealer peeks;
  a dealer natural settles at once and only the original bets are at risk.
* A player natural (two-card 21, never on a split hand) is paid at once:
  3 to 2 under option 1, 2 to 1 under options 2 and 3 (after the peek, when
  the dealer shows a 10 or an ace).
* Ties.  Option 1: every tie pushes.  Option 2: natural against natural
  pushes, the house wins every other tie.  Option 3: the house wins every tie,
  natural against natural included.
* Double on the first two cards only when their total counting aces as 1 is
  10 or 11 (hard 10, hard 11, A-9), one card, for the original amount.  No
  double after a split.
* Split any pair (same rank, or any two ten-value cards); resplit any number
  of times except aces; split aces get one card each; a 21 on a split hand is
  not a natural.  No surrender, no side bets.
* Insurance: half the bet, offered with an ace up, pays 2 to 1 if the hole
  card is a ten-value card.  It is a separate wager and is NOT part of the
  main-game edge (its expectation is negative for every two-card player hand,
  so optimal play never takes it); its own edge is reported separately.

The house edge is minus the player's expected net result per unit of initial
bet, over all rounds (dealer naturals included), under the player's optimal
strategy for the option considered.

METHOD
------
Ranks are 1 (ace) .. 10 (every ten-value card).

Infinite deck (exact, `infinite_deck_edge`).  Card probabilities are 1/13 and
4/13 for tens, independent of what has been seen, so the optimal strategy is
total-dependent.  The dealer's final-total distribution for each up-card,
conditioned on no dealer natural when the dealer peeks (hole card drawn from
the ranks that do not make a natural), is computed by recursion in exact
Fractions.  The player's values are computed backwards: stand, hit (max of
stand/hit on the new total), double (one card, twice the stake) and split.
Splits are exact with unlimited resplits: the value E of one split hand
satisfies E = A + q*max(2E, B), where A sums over a non-pair second card, q is
the chance of drawing the pair card again and B is the value of playing the
pair unsplit (no double).  Split aces take one card.  Everything is exact
rational arithmetic.

Finite decks (1, 2, 4 decks; floats).  For the player's hand (its exact card
composition) and the dealer's up-card, the dealer's final-total probabilities
come from the exact remaining deck: every dealer drawing sequence is
enumerated once per up-card and grouped by its multiset of cards; the
probability of a multiset K drawn from a deck with counts n is
    (#valid orderings of K) * prod_r n_r(n_r-1)..(n_r-k_r+1) / N(N-1)..(N-|K|+1),
"valid" meaning the dealer does not stop before the last card and, with a 10
or ace up, the first drawn (hole) card is not the one giving a natural.  Those
probabilities are therefore NOT renormalised: they are
P(no dealer natural and dealer ends on r | cards seen).  The player's value of
a hand is kept in the same unnormalised form,
    W(hand) = P(no dealer natural | hand) * E[result | hand, no dealer natural],
which lets the player's hit cards be drawn from the plain remaining deck while
conditioning exactly on the peek (the hole card is, by exchangeability, a
random card of what the player has not seen).  The player compares
stand / hit / double in W with the exact composition of his own hand
(composition-dependent optimal play); the round's value is
P(dealer natural)*(-1 or the natural-vs-natural result) + max(...).

Split approximation in finite decks (stated):
  (a) a split hand whose second card is drawn while n hands exist is played
      against the deck with the up-card, the n pair cards and that hand's own
      cards removed; the non-pair cards dealt to the OTHER split hands are
      ignored (the player does not use them, and they are not removed);
  (b) each split hand is played composition-dependent-optimally (hit/stand,
      no double after split) for its own cards in that deck;
  (c) resplits up to MAX_SPLIT_HANDS = 8 hands (in one deck the four cards of
      a rank are the physical limit; for the infinite deck going from 8 hands
      to unlimited changes the edge by 4e-6 %), each resplit/no-resplit
      choice made by expectation in the same approximation; split aces get one
      card each and are not resplit.
  Without resplits (a)-(b) is exact for a player who plays each split hand
  on its own cards (an arrangement-bijection / exchangeability argument), so
  the approximation only touches resplit rounds.  Sensitivity (--diag): the
  cruder model that removes only the original pair for every split hand
  ('fixed', 4 hands) moves the edges by at most 0.0015 percentage points.
  With 10,000 decks the finite code reproduces the exact infinite-deck value.

`python bj_edge.py` prints every figure (about 3.5 minutes on 2 cores);
`--quick` prints only the infinite-deck part and insurance (about 1 s);
`--diag` adds the finite-deck CD deviations from the infinite-deck table,
no-resplit figures and a double-any-two validation run.
"""

from __future__ import annotations

import math
import sys
import time
from collections import defaultdict
from fractions import Fraction

RANKS = tuple(range(1, 11))  # 1 = ace, 10 = ten-value card
HOLE_EXCLUDED = {1: 10, 10: 1}  # up-card -> hole rank that makes a natural
MAX_SPLIT_HANDS = 8  # finite-deck resplit cap (8 hands ~ unlimited)

# Settlement per option: natural payout, natural vs dealer natural, tie result.
OPTIONS = {
    1: dict(nat_pay=Fraction(3, 2), nat_vs_nat=0, tie=0),
    2: dict(nat_pay=Fraction(2), nat_vs_nat=0, tie=-1),
    3: dict(nat_pay=Fraction(2), nat_vs_nat=-1, tie=-1),
}
# Dealer outcome index: 0..4 = final 17..21 (never a natural after the peek), 5 = bust.
BUST = 5


def hand_total(s: int, ace: bool) -> int:
    """Best total of a hand with hard sum s (aces as 1) and ace flag."""
    return s + 10 if ace and s + 10 <= 21 else s


def stand_value(t: int, dist, tie):
    """Expected result of standing on total t (<= 21) against dealer outcome
    probabilities dist[0..5] (possibly unnormalised)."""
    if t < 17:
        return dist[BUST] - sum(dist[:BUST])
    i = t - 17
    return dist[BUST] + sum(dist[:i]) - sum(dist[i + 1 : BUST]) + tie * dist[i]


# ---------------------------------------------------------------------------
# Infinite deck: exact, total-dependent optimum, Fractions.
# ---------------------------------------------------------------------------
P_INF = {r: Fraction(1, 13) for r in RANKS}
P_INF[10] = Fraction(4, 13)


def infinite_dealer_dist(up: int):
    """Dealer final-total distribution (list of 6 Fractions) given the up-card,
    conditioned on no dealer natural when the dealer peeks."""
    memo = {}

    def from_state(s, ace):
        key = (s, ace)
        if key in memo:
            return memo[key]
        out = [Fraction(0)] * 6
        if s > 21:
            out[BUST] = Fraction(1)
        elif hand_total(s, ace) >= 17:  # stands on all 17s
            out[hand_total(s, ace) - 17] = Fraction(1)
        else:
            for c in RANKS:
                sub = from_state(s + c, ace or c == 1)
                for i in range(6):
                    out[i] += P_INF[c] * sub[i]
        memo[key] = out
        return out

    excl = HOLE_EXCLUDED.get(up)
    p_ok = 1 - (P_INF[excl] if excl else 0)
    dist = [Fraction(0)] * 6
    for hole in RANKS:
        if hole == excl:
            continue
        sub = from_state(up + hole, up == 1 or hole == 1)
        for i in range(6):
            dist[i] += P_INF[hole] / p_ok * sub[i]
    return dist


_INF_DEALER = {}


def _inf_dealer(up):
    if up not in _INF_DEALER:
        _INF_DEALER[up] = infinite_dealer_dist(up)
    return _INF_DEALER[up]


class InfiniteUpcard:
    """Player values (conditional on no dealer natural) against one up-card."""

    def __init__(self, up, option, split_cap=None, double_any=False):
        self.up = up
        self.double_any = double_any  # validation variant only (not the NY rule)
        self.tie = OPTIONS[option]["tie"]
        self.dist = _inf_dealer(up)
        self.split_cap = split_cap  # None = unlimited resplits (exact rule)
        self._best = {}

    def stand(self, s, ace):
        return stand_value(hand_total(s, ace), self.dist, self.tie)

    def hit(self, s, ace):
        v = Fraction(0)
        for c in RANKS:
            s2 = s + c
            v += P_INF[c] * (-1 if s2 > 21 else self.best(s2, ace or c == 1))
        return v

    def best(self, s, ace):
        """Optimal value of a hand that may only hit or stand."""
        key = (s, ace)
        if key not in self._best:
            self._best[key] = max(self.stand(s, ace), self.hit(s, ace))
        return self._best[key]

    def double(self, s, ace):
        v = Fraction(0)
        for c in RANKS:
            s2 = s + c
            v += P_INF[c] * (-1 if s2 > 21 else self.stand(s2, ace or c == 1))
        return 2 * v

    def split(self, p):
        if p == 1:  # one card each, no resplit
            e = sum(P_INF[c] * self.stand(1 + c, True) for c in RANKS)
            return 2 * e
        a = sum(P_INF[c] * self.best(p + c, c == 1) for c in RANKS if c != p)
        b = self.best(2 * p, False)  # pair kept as an ordinary hand
        q = P_INF[p]
        if self.split_cap is None:
            e = a / (1 - 2 * q)  # always resplitting ...
            if 2 * e < b:  # ... unless keeping the pair is better
                e = a + q * b
            return 2 * e
        return resplit_value(a, b, q, self.split_cap)

    def options(self, c1, c2):
        """All legal first-decision values for a non-natural two-card hand."""
        s, ace = c1 + c2, c1 == 1 or c2 == 1
        opts = {"S": self.stand(s, ace), "H": self.hit(s, ace)}
        if s in (10, 11) or self.double_any:
            opts["D"] = self.double(s, ace)
        if c1 == c2:
            opts["P"] = self.split(c1)
        return opts


def resplit_value(a, b, q, cap):
    """Value of splitting with at most `cap` hands, each new hand's second card
    independent: a = sum over non-pair second cards of prob*value, b = value of
    an unsplittable pair hand, q = prob of the pair card.  V(k, n): k hands still
    waiting for their second card, n hands in total.  a, b, q may also be
    dicts keyed by n (the number of hands, i.e. of pair cards, out so far)."""
    memo = {}

    def at(x, n):
        return x[n] if isinstance(x, dict) else x

    def v(k, n):
        if k == 0:
            return 0
        if (k, n) not in memo:
            keep = at(b, n) + v(k - 1, n)
            tail = max(keep, v(k + 1, n + 1)) if n < cap else keep
            memo[(k, n)] = at(a, n) + (1 - at(q, n)) * v(k - 1, n) + at(q, n) * tail
        return memo[(k, n)]

    return v(2, 2)


def infinite_deck_edge(option: int, split_cap=None, double_any=False) -> Fraction:
    """Exact house edge (as a Fraction of the initial bet) for an infinite deck
    under the optimal strategy of the given option (1, 2 or 3).
    split_cap=None: unlimited resplits (the rule); an int caps the hands
    (2 = no resplit).  double_any=True is a validation variant (double on any
    first two cards), not the New York rule."""
    o = OPTIONS[option]
    p_nat = 2 * P_INF[1] * P_INF[10]
    ev = Fraction(0)
    for up in RANKS:
        excl = HOLE_EXCLUDED.get(up)
        p_dbj = P_INF[excl] if excl else Fraction(0)
        solver = InfiniteUpcard(up, option, split_cap, double_any)
        hands = Fraction(0)
        for c1 in RANKS:
            for c2 in RANKS:
                if {c1, c2} == {1, 10}:
                    continue
                hands += P_INF[c1] * P_INF[c2] * max(solver.options(c1, c2).values())
        ev += P_INF[up] * (
            p_dbj * (p_nat * o["nat_vs_nat"] - (1 - p_nat))
            + (1 - p_dbj) * (p_nat * o["nat_pay"] + hands)
        )
    return -ev


class PolicyUpcard(InfiniteUpcard):
    """Values under option `option`'s settlement while PLAYING the optimal
    strategy of another option (decisions taken from `policy`)."""

    def __init__(self, up, option, policy):
        super().__init__(up, option)
        self.policy = policy

    def best(self, s, ace):
        key = (s, ace)
        if key not in self._best:
            pol = self.policy
            hit = pol.hit(s, ace) > pol.stand(s, ace)
            self._best[key] = self.hit(s, ace) if hit else self.stand(s, ace)
        return self._best[key]

    def split(self, p):
        if p == 1:
            return super().split(p)
        pol, q = self.policy, P_INF[p]
        a_pol = sum(P_INF[c] * pol.best(p + c, c == 1) for c in RANKS if c != p)
        resplit = 2 * a_pol / (1 - 2 * q) >= pol.best(2 * p, False)
        a = sum(P_INF[c] * self.best(p + c, c == 1) for c in RANKS if c != p)
        e = a / (1 - 2 * q) if resplit else a + q * self.best(2 * p, False)
        return 2 * e

    def options(self, c1, c2):
        mine, theirs = super().options(c1, c2), self.policy.options(c1, c2)
        choice = max(theirs, key=theirs.get)
        return {choice: mine[choice]}


def infinite_deck_edge_fixed_play(pay_option: int, play_option: int) -> Fraction:
    """Exact infinite-deck edge of option `pay_option` for a player who uses the
    optimal strategy of `play_option` (e.g. ordinary option-1 basic strategy
    at an option-2 table)."""
    o = OPTIONS[pay_option]
    p_nat = 2 * P_INF[1] * P_INF[10]
    ev = Fraction(0)
    for up in RANKS:
        excl = HOLE_EXCLUDED.get(up)
        p_dbj = P_INF[excl] if excl else Fraction(0)
        sv = PolicyUpcard(up, pay_option, InfiniteUpcard(up, play_option))
        hands = sum(
            P_INF[c1] * P_INF[c2] * max(sv.options(c1, c2).values())
            for c1 in RANKS
            for c2 in RANKS
            if {c1, c2} != {1, 10}
        )
        ev += P_INF[up] * (
            p_dbj * (p_nat * o["nat_vs_nat"] - (1 - p_nat))
            + (1 - p_dbj) * (p_nat * o["nat_pay"] + hands)
        )
    return -ev


UPS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)
UP_LABEL = {1: "A", 10: "T"}


def _decision(opts):
    return max(opts, key=lambda k: opts[k])


def infinite_strategy_table(option: int) -> str:
    """Compact basic-strategy text for the infinite deck.
    S stand, H hit, D double (two cards; hit if not allowed), P split."""
    solvers = {u: InfiniteUpcard(u, option) for u in UPS}
    head = "        " + " ".join(f"{UP_LABEL.get(u, u):>2}" for u in UPS)
    lines = [f"Option {option} (infinite deck)  S=stand H=hit D=double P=split", head]

    def row(label, fn):
        lines.append(f"{label:<8}" + " ".join(f"{fn(solvers[u]):>2}" for u in UPS))

    for t in range(4, 22):  # hard totals, two-card where possible

        def fn(sv, t=t):
            if t in (10, 11):  # the only hard totals that may double
                opts = {"S": sv.stand(t, False), "H": sv.hit(t, False), "D": sv.double(t, False)}
            else:
                opts = {"S": sv.stand(t, False), "H": sv.hit(t, False)}
            return _decision(opts)

        row(f"hard {t}", fn)
    for t in range(13, 22):  # soft totals

        def fn(sv, t=t):
            s = t - 10
            opts = {"S": sv.stand(s, True), "H": sv.hit(s, True)}
            if s == 10:  # A-9 may double (counted as 10)
                opts["D"] = sv.double(s, True)
            return _decision(opts)

        row(f"soft {t}", fn)
    for p in (2, 3, 4, 5, 6, 7, 8, 9, 10, 1):
        lab = f"{UP_LABEL.get(p, p)}-{UP_LABEL.get(p, p)}"
        row(lab, lambda sv, p=p: _decision(sv.options(p, p)))
    return "\n".join(lines)


def soft20_double_check(option: int) -> str:
    out = []
    for u in UPS:
        sv = InfiniteUpcard(u, option)
        st, db = sv.stand(10, True), sv.double(10, True)
        out.append(f"{UP_LABEL.get(u, u)}: stand {float(st):+.4f} double {float(db):+.4f}")
    return "; ".join(out)


# ---------------------------------------------------------------------------
# Finite decks: exact dealer probabilities, composition-dependent player play.
# ---------------------------------------------------------------------------
def _dealer_multisets(up):
    """Every terminal dealer multiset of drawn cards for this up-card, with the
    number of valid drawing orders and the outcome index.  Valid: the dealer
    never stood earlier and (peek) the first drawn card is not a natural."""
    excl = HOLE_EXCLUDED.get(up)
    frontier = {((0,) * 10, up, up == 1): 1}
    terminal = defaultdict(int)
    outcome = {}
    first = True
    while frontier:
        nxt = defaultdict(int)
        for (k, s, ace), ways in frontier.items():
            for c in RANKS:
                if first and c == excl:
                    continue
                k2 = (*k[: c - 1], k[c - 1] + 1, *k[c:])
                s2, ace2 = s + c, ace or c == 1
                if s2 > 21 or hand_total(s2, ace2) >= 17:
                    terminal[k2] += ways
                    outcome[k2] = BUST if s2 > 21 else hand_total(s2, ace2) - 17
                else:
                    nxt[(k2, s2, ace2)] += ways
        frontier = nxt
        first = False
    return [(k, ways, outcome[k]) for k, ways in terminal.items()]


class FiniteDealer:
    """Exact dealer outcome probabilities for any remaining deck.

    Terms are grouped by (outcome, number of cards L, number of distinct ranks)
    so that evaluation is a few plain loops of multiplications."""

    KMAX = 12  # more than any rank can appear in one dealer hand

    def __init__(self):
        self.terms = {}
        for up in RANKS:
            groups = defaultdict(list)
            for k, ways, out in _dealer_multisets(up):
                idx = tuple((r - 1) * self.KMAX + n for r, n in zip(RANKS, k, strict=False) if n)
                groups[(out, sum(k), len(idx))].append((float(ways), *idx))
            self.terms[up] = sorted(groups.items())
        self.cache = {}

    def dist(self, up, rem):
        """rem: counts of the 10 ranks still unseen (up-card and the player's
        cards removed).  Returns P(no dealer natural, dealer ends on i)."""
        key = (up, rem)
        got = self.cache.get(key)
        if got is not None:
            return got
        km = self.KMAX
        f = [0.0] * (10 * km)  # falling factorials n_r^(k)
        for r in range(10):
            n, acc = rem[r], 1.0
            base = r * km
            f[base] = 1.0
            for k in range(1, km):
                acc *= max(n - k + 1, 0)
                f[base + k] = acc
        n_tot = sum(rem)
        denom = [1.0]
        for i in range(1, 25):
            denom.append(denom[-1] * (n_tot - i + 1))
        out = [0.0] * 6
        for (o, length, nf), items in self.terms[up]:
            acc = 0.0
            if nf == 1:
                for w, i in items:
                    acc += w * f[i]
            elif nf == 2:
                for w, i, j in items:
                    acc += w * f[i] * f[j]
            elif nf == 3:
                for w, i, j, k in items:
                    acc += w * f[i] * f[j] * f[k]
            elif nf == 4:
                for w, i, j, k, m in items:
                    acc += w * f[i] * f[j] * f[k] * f[m]
            else:
                for t in items:
                    x = t[0]
                    for i in t[1:]:
                        x *= f[i]
                    acc += x
            if acc:
                out[o] += acc / denom[length]
        out = tuple(out)
        self.cache[key] = out
        return out


def _add(t, c):
    return (*t[: c - 1], t[c - 1] + 1, *t[c:])


def _sub(a, b):
    return tuple(x - y for x, y in zip(a, b, strict=False))


class FiniteSolver:
    """Composition-dependent optimal expectation for a d-deck shoe."""

    def __init__(
        self,
        decks,
        dealer=None,
        max_split_hands=MAX_SPLIT_HANDS,
        double_any=False,
        split_model="track",
    ):
        self.decks = decks
        self.split_model = split_model  # 'track' (reported) or 'fixed' (sensitivity)
        self.double_any = double_any  # validation variant only
        self.full = tuple([4 * decks] * 9 + [16 * decks])
        self.dealer = dealer or FiniteDealer()
        self.cap = max_split_hands

    # --- per up-card, per option helpers (W = unnormalised values) ---------
    def _setup(self, up, option):
        self.up = up
        self.tie = float(OPTIONS[option]["tie"])
        self.base = _sub(self.full, _add((0,) * 10, up))  # deck minus up-card
        self.excl = HOLE_EXCLUDED.get(up)
        self._best = {}

    def _no_nat(self, rem):
        if self.excl is None:
            return 1.0
        return 1.0 - rem[self.excl - 1] / sum(rem)

    def stand(self, removed, total):
        d = self.dealer.dist(self.up, _sub(self.base, removed))
        return stand_value(total, d, self.tie)

    def hit(self, removed, s, ace):
        rem = _sub(self.base, removed)
        n_tot = sum(rem)
        v = 0.0
        for c in RANKS:
            n = rem[c - 1]
            if not n:
                continue
            if s + c > 21:
                v -= n * self._no_nat(_sub(rem, _add((0,) * 10, c)))
            else:
                v += n * self.best(_add(removed, c), s + c, ace or c == 1)
        return v / n_tot

    def best(self, removed, s, ace):
        """Hit/stand optimum; `removed` = every card out besides the up-card
        (the hand's own cards, plus the partner pair card for a split hand)."""
        key = (removed, s)
        v = self._best.get(key)
        if v is None:
            v = max(self.stand(removed, hand_total(s, ace)), self.hit(removed, s, ace))
            self._best[key] = v
        return v

    def double(self, removed, s, ace):
        rem = _sub(self.base, removed)
        n_tot = sum(rem)
        v = 0.0
        for c in RANKS:
            n = rem[c - 1]
            if not n:
                continue
            if s + c > 21:  # only possible in the double-any variant
                v -= n * self._no_nat(_sub(rem, _add((0,) * 10, c)))
            else:
                v += n * self.stand(_add(removed, c), hand_total(s + c, ace or c == 1))
        return 2 * v / n_tot

    def split(self, p, removed):
        rem = _sub(self.base, removed)
        n_tot = sum(rem)
        if p == 1:
            e = (
                sum(
                    rem[c - 1] * self.stand(_add(removed, c), hand_total(1 + c, True))
                    for c in RANKS
                    if rem[c - 1]
                )
                / n_tot
            )
            return 2 * e
        a, b, q = {}, {}, {}
        for n in range(2, self.cap + 1):
            # 'track' (reported): a hand whose second card is drawn when n hands
            # exist sees the deck minus the up-card and all n pair cards.
            # 'fixed' (sensitivity): every split hand sees the deck minus the
            # original pair and the up-card only.
            out = removed
            if self.split_model == "track":
                for _ in range(n - 2):
                    out = _add(out, p)
            r = _sub(self.base, out)
            nt = sum(r)
            if min(r) < 0 or nt == 0:
                a[n], b[n], q[n] = 0.0, 0.0, 0.0
                continue
            a[n] = (
                sum(
                    r[c - 1] * self.best(_add(out, c), p + c, c == 1)
                    for c in RANKS
                    if c != p and r[c - 1]
                )
                / nt
            )
            q[n] = r[p - 1] / nt
            b[n] = self.best(_add(out, p), 2 * p, False) if r[p - 1] else 0.0
            if self.split_model == "fixed":
                a, b, q = a[n], b[n], q[n]
                break
        return resplit_value(a, b, q, self.cap)

    def upcard_ev(self, up, option, record=None):
        """Contribution of this up-card: sum over the player's two cards of
        P(cards | up) * E[result], unconditional on the dealer natural."""
        self._setup(up, option)
        o = OPTIONS[option]
        nat_pay, nat_vs_nat = float(o["nat_pay"]), float(o["nat_vs_nat"])
        base = self.base
        n0 = sum(base)
        ev = 0.0
        for c1 in RANKS:
            for c2 in RANKS:
                if c2 < c1:
                    continue
                if c1 == c2:
                    pr = base[c1 - 1] * (base[c1 - 1] - 1) / (n0 * (n0 - 1))
                else:
                    pr = 2 * base[c1 - 1] * base[c2 - 1] / (n0 * (n0 - 1))
                if pr <= 0:
                    continue
                removed = _add(_add((0,) * 10, c1), c2)
                rem = _sub(base, removed)
                p_dbj = 1.0 - self._no_nat(rem)
                if (c1, c2) == (1, 10):
                    val = p_dbj * nat_vs_nat + (1 - p_dbj) * nat_pay
                else:
                    s, ace = c1 + c2, c1 == 1
                    opts = {
                        "S": self.stand(removed, hand_total(s, ace)),
                        "H": self.hit(removed, s, ace),
                    }
                    if s in (10, 11) or self.double_any:
                        opts["D"] = self.double(removed, s, ace)
                    if c1 == c2:
                        opts["P"] = self.split(c1, removed)
                    choice = max(opts, key=opts.get)
                    if record is not None:
                        record[(up, c1, c2)] = choice
                    val = -p_dbj + opts[choice]
                ev += pr * val
        self._best = {}
        return ev

    def edge(self, option, record=None):
        n = sum(self.full)
        ev = 0.0
        for up in RANKS:
            ev += self.full[up - 1] / n * self.upcard_ev(up, option, record)
        return -ev


def _finite_worker(args):
    decks, ups, cap, double_any, options, split_model = args
    solver = FiniteSolver(
        decks, max_split_hands=cap, double_any=double_any, split_model=split_model
    )
    res = {}
    n = sum(solver.full)
    for opt in options:
        rec = {}
        part = 0.0
        for up in ups:
            part += solver.full[up - 1] / n * solver.upcard_ev(up, opt, rec)
        res[opt] = (part, rec)
    return res


def finite_deck_edges(
    decks,
    processes=2,
    cap=MAX_SPLIT_HANDS,
    double_any=False,
    options=tuple(OPTIONS),
    split_model="track",
):
    """Edges (floats) for the given options, sharing the dealer cache, and the
    composition-dependent first decisions {option: {(up, c1, c2): 'S'|'H'|'D'|'P'}}.
    Up-cards are split across two worker processes when processes > 1."""
    chunks = [
        (decks, ups, cap, double_any, options, split_model)
        for ups in ((1, 3, 5, 7, 9), (2, 4, 6, 8, 10))
    ]
    if processes > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(min(processes, 2)) as pool:
            parts = pool.map(_finite_worker, chunks)
    else:
        parts = [_finite_worker(c) for c in chunks]
    edges, records = {}, {}
    for opt in options:
        edges[opt] = -sum(p[opt][0] for p in parts)
        records[opt] = {}
        for p in parts:
            records[opt].update(p[opt][1])
    return edges, records


def infinite_first_decisions(option):
    """{(up, c1, c2): decision} of the infinite-deck optimum, c1 <= c2, non-naturals."""
    out = {}
    for up in RANKS:
        sv = InfiniteUpcard(up, option)
        for c1 in RANKS:
            for c2 in RANKS:
                if c1 <= c2 and (c1, c2) != (1, 10):
                    out[(up, c1, c2)] = _decision(sv.options(c1, c2))
    return out


# ---------------------------------------------------------------------------
# Insurance
# ---------------------------------------------------------------------------
def insurance_edges(decks):
    """House edge of insurance per unit of insurance wagered (it pays 2:1).
    Returns dict: condition -> Fraction.  decks=None means infinite."""

    def edge(tens, unseen):
        p = Fraction(tens, unseen)
        return -(2 * p - (1 - p))

    if decks is None:
        e = 1 - 3 * Fraction(4, 13)
        return {"any": e, "player 0 tens": e, "player 1 ten": e, "player 2 tens": e}
    t, n = 16 * decks, 52 * decks - 1  # dealer's ace removed
    return {
        "any": edge(t, n),  # player's cards unknown / averaged
        "player 0 tens": edge(t, n - 2),
        "player 1 ten": edge(t - 1, n - 2),
        "player 2 tens": edge(t - 2, n - 2),
    }


# ---------------------------------------------------------------------------
def _pct(x):
    """x as a percentage with 4 significant figures."""
    v = 100 * float(x)
    digits = 3 - math.floor(math.log10(abs(v))) if v else 3
    return f"{v:.{max(digits, 0)}f} %"


def _lab(c):
    return UP_LABEL.get(c, str(c))


def main(argv):
    quick = "--quick" in argv
    diag = "--diag" in argv
    timings = {}
    print(__doc__.split("METHOD")[0].strip().splitlines()[0])
    print()
    print("== Infinite deck (exact rational arithmetic) ==")
    inf = {}
    for opt in OPTIONS:
        t0 = time.perf_counter()
        inf[opt] = infinite_deck_edge(opt)
        timings[f"infinite option {opt}"] = time.perf_counter() - t0
        caps = {c: infinite_deck_edge(opt, split_cap=c) for c in (8, 4, 2)}
        print(
            f"option {opt}: edge {_pct(inf[opt])}  (= {float(inf[opt]) * 100:.8f} %; "
            f"split to max 8 hands: {float(caps[8]) * 100:.8f} %, 4 hands: "
            f"{float(caps[4]) * 100:.8f} %, no resplit: {float(caps[2]) * 100:.8f} %)"
        )
    print(f"exact fraction, option 1: {inf[1]}")
    d32 = float(inf[3] - inf[2]) * 100
    print(
        f"option 3 - option 2 = {d32:.6f} % (= P(both naturals) = 64/28561 = "
        f"{100 * 64 / 28561:.6f} %)"
    )
    for pay, play in ((2, 1), (3, 1), (1, 2)):
        x = infinite_deck_edge_fixed_play(pay, play)
        print(
            f"option {pay} played with the option-{play} optimal strategy: {_pct(x)} "
            f"(cost of not re-optimising {float(x - inf[pay]) * 100:.4f} points)"
        )
    # What the tie rule costs: option-2 settlement, option-1 play, 3:2 naturals.
    p_nat = 2 * P_INF[1] * P_INF[10]
    bonus = Fraction(1, 2) * p_nat * (1 - p_nat)  # 2:1 instead of 3:2, no dealer natural
    tie_cost = infinite_deck_edge_fixed_play(2, 1) - inf[1] + bonus
    print(
        f'expected stake on non-natural ties under option-1 play (= what "house wins '
        f'ties" costs): {float(tie_cost) * 100:.4f} %; 2:1 instead of 3:2 on naturals is '
        f"worth {float(bonus) * 100:.4f} %"
    )
    griffin = infinite_deck_edge(1, split_cap=2, double_any=True)
    print(
        f"validation: option 1 rules but double on ANY two cards and no resplit: "
        f"{float(griffin) * 100:.6f} %  (Griffin, Theory of Blackjack: 0.690223 %)"
    )
    print()
    tables = {opt: infinite_strategy_table(opt) for opt in OPTIONS}
    for opt in OPTIONS:
        print(tables[opt])
        print("  A-9 (soft 20) stand vs double: " + soft20_double_check(opt))
        print()
    print("Rows where option 2 (= option 3) differs from option 1:")
    assert tables[2].splitlines()[2:] == tables[3].splitlines()[2:]
    for la, lb in zip(tables[1].splitlines()[2:], tables[2].splitlines()[2:], strict=False):
        if la != lb:
            print(f"  opt1   {la}\n  opt2/3 {lb}")
    print()
    print("== Insurance edge (per unit of insurance wagered; same for every option) ==")
    for decks in (None, 1, 2, 4):
        ins = insurance_edges(decks)
        name = "infinite" if decks is None else f"{decks} deck(s)"
        print(f"{name:>10}: " + ", ".join(f"{k}: {_pct(v)}" for k, v in ins.items()))
    print()
    if quick:
        return
    print("== Finite decks (exact dealer probabilities, CD play, split approx.) ==")
    fin = {}
    inf_dec = {o: infinite_first_decisions(o) for o in OPTIONS}
    deck_list = (1, 2, 4, 10000)
    for decks in deck_list:
        t0 = time.perf_counter()
        edges, rec = finite_deck_edges(decks)
        dt = time.perf_counter() - t0
        timings[f"{decks} decks (3 options)"] = dt
        fin[decks] = edges
        print(
            f"{decks:>5} decks: "
            + "  ".join(f"opt{o} {100 * e:.6f} %" for o, e in edges.items())
            + f"   [{dt:.1f} s]"
        )
        for o in OPTIONS:
            dif = sorted(k for k, v in rec[o].items() if v != inf_dec[o][k])
            a9 = sorted(k[0] for k, v in rec[o].items() if k[1:] == (1, 9) and v == "D")
            line = (
                f"      option {o}: {len(dif)} of 540 two-card (hand, up-card) cases "
                f"played differently from the infinite-deck table"
            )
            if a9:
                line += f"; A-9 doubled vs {a9}"
            print(line)
            if diag and decks < 10000:
                print(
                    "        "
                    + " ".join(
                        f"{_lab(c1)}{_lab(c2)}v{_lab(u)}:"
                        f"{inf_dec[o][(u, c1, c2)]}>{rec[o][(u, c1, c2)]}"
                        for u, c1, c2 in dif
                    )
                )
    print("  (10000 decks must reproduce the infinite deck with an 8-hand split cap.)")
    if diag:
        print()
        print("== Diagnostics ==")
        variants = (
            ("no resplit (2 hands)", dict(cap=2)),
            ("track model, 4 hands", dict(cap=4)),
            ("fixed model, 4 hands", dict(cap=4, split_model="fixed")),
        )
        for decks in (1, 2, 4):
            for name, kw in variants:
                t0 = time.perf_counter()
                e2, _ = finite_deck_edges(decks, **kw)
                print(
                    f"{decks} decks, {name}: "
                    + "  ".join(f"opt{o} {100 * e:.6f} %" for o, e in e2.items())
                    + f"   [{time.perf_counter() - t0:.1f} s]"
                )
        t0 = time.perf_counter()
        ea, _ = finite_deck_edges(1, cap=2, double_any=True, options=(1,))
        print(
            f"1 deck, option 1 but double on any two cards, no resplit: {100 * ea[1]:.6f} % "
            f"[{time.perf_counter() - t0:.1f} s]"
        )
    print()
    print("== Table (house edge, % of initial bet) ==")
    print("option | infinite | 1 deck | 2 decks | 4 decks")
    for o in OPTIONS:
        print(
            f"  {o}    | {_pct(inf[o])} | {_pct(fin[1][o])} | {_pct(fin[2][o])} | {_pct(fin[4][o])}"
        )
    print()
    print("runtimes: " + ", ".join(f"{k}: {v:.2f} s" for k, v in timings.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
