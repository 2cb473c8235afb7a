"""Properties of nights of Bang and Beat the Dealer (hypothesis, derandomized): over random
games with big six and big eight riding across them, every balance is what the test's own
statement of the rules gives, every bet is settled once or is still on the layout, money is
conserved, and a restart (the table folded again from its events) rebuilds the same state."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from events.tables import PartSettled
from services.games.bang import PassDice, SeatPlayer, UnseatPlayer
from services.tables.rules import CancelBet, PlaceBet
from tests.unit.games.dice_support import DiceTable
from tests.unit.games.test_bang import rule

PLAYERS = ("p-1", "p-2", "p-3", "p-4")
KINDS = ("field", "under_seven", "any_seven", "over_seven", "big_six", "big_eight", "hi_dice")
dice = st.tuples(st.integers(1, 6), st.integers(1, 6))


class Model:
    """The test's own book: each bet on the layout (kind, player, amount, whether a roll has
    applied to it) and each player's balance, from the rules of 4620.15(d) alone."""

    def __init__(self) -> None:
        self.bets: dict[str, tuple[str, str, int, bool]] = {}
        self.balance: Counter[str] = Counter()
        self.settled: set[str] = set()

    def place(self, bet_id: str, player: str, kind: str, amount: int) -> None:
        self.bets[bet_id] = (kind, player, amount, False)
        self.balance[player] -= amount

    def roll(self, total: int, point: int | None) -> None:
        for bet_id, (kind, player, amount, _) in list(self.bets.items()):
            decided = rule(kind, total, point)
            if decided is None:
                self.bets[bet_id] = (kind, player, amount, True)
                continue
            self.balance[player] += amount * decided[1]
            del self.bets[bet_id]
            self.settled.add(bet_id)

    def give_back(self, bet_ids: list[str]) -> None:
        for bet_id in bet_ids:
            _kind, player, amount, _ = self.bets.pop(bet_id)
            self.balance[player] += amount


def check(table: DiceTable, model: Model) -> None:
    assert +table.balance == +model.balance
    assert {b["bet_id"] for b in table.view["layout"]} == set(model.bets)
    ids = [s.bet_id for e in table.events if isinstance(e, PartSettled) for s in e.settlements]
    assert len(ids) == len(set(ids))  # no wager settles twice
    on_layout = sum(a for _k, _p, a, _ in model.bets.values())
    house = -sum(model.balance.values()) - on_layout
    # conserved: what the players lost is the house's result plus what is still staked
    assert sum(table.balance.values()) + on_layout + house == 0


@settings(max_examples=60, derandomize=True, deadline=None)
@given(data=st.data(), mode=st.sampled_from(["dealer", "rng"]))
def test_random_bang_nights_keep_the_book_and_refold(data: st.DataObject, mode: str) -> None:
    table = DiceTable("bang", mode, seed=data.draw(st.integers(0, 2**16), label="seed"))
    model = Model()
    for seat, p in enumerate(PLAYERS[:3], start=1):
        table.do(SeatPlayer(seat=seat * 2, player=p))
    games = data.draw(st.integers(1, 6), label="games")
    for _ in range(games):
        table.open()
        for phase in ("all", "inside"):
            for player, kind, amount in data.draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(PLAYERS), st.sampled_from(KINDS), st.integers(1, 500)
                    ),
                    max_size=6,
                ),
                label=f"bets {phase}",
            ):
                cmd = PlaceBet(player=player, bet={"kind": kind}, amount=amount)
                taken = any(k == kind and p == player for k, p, _a, _ in model.bets.values())
                if (phase == "inside" and kind == "hi_dice") or taken:
                    table.refused(cmd)
                    continue
                [ev] = table.do(cmd)
                model.place(ev.bet_id, player, kind, amount)  # type: ignore[attr-defined]
            for bet_id in data.draw(
                st.lists(st.sampled_from(sorted(model.bets) or ["none"]), max_size=2, unique=True),
                label="cancels",
            ):
                entry = model.bets.get(bet_id)
                if entry is None or entry[3]:  # unknown, or a roll has applied to it
                    table.refused(CancelBet(bet_id=bet_id))
                    continue
                table.cancel(bet_id)
                model.give_back([bet_id])
            table.close_bets()
            if phase == "all":
                events = table.roll(data.draw(dice, label="dealer") if mode == "dealer" else None)
                model.roll(events[0].total, None)  # type: ignore[attr-defined]
                point = events[0].total  # type: ignore[attr-defined]
            else:
                passes = table.view["shooter"] is not None and len(table.view["seats"]) > 1
                if data.draw(st.booleans(), label="pass") and passes:
                    table.do(PassDice())
                offered = table.view["shooter"]
                seated = {s["player"] for s in table.view["seats"]}
                if offered is None and "p-4" not in seated:  # no seated bettor: seat one
                    table.do(SeatPlayer(seat=1, player="p-4"))
                    offered = table.view["shooter"]
                if offered is None:  # still none (no seated player bet): void the game
                    table.void()
                    model.give_back(
                        [b for b in model.bets if b.split(".")[1] == str(table.state.round)]
                    )
                    break
                roll = data.draw(dice, label="shooter") if mode == "dealer" else None
                events = table.roll(roll, player=offered["player"])
                model.roll(events[0].total, point)  # type: ignore[attr-defined]
            check(table, model)
        if data.draw(st.booleans(), label="unseat") and len(table.view["seats"]) > 2:
            table.do(UnseatPlayer(seat=table.view["seats"][0]["seat"]))
        assert table.refold() == table.state
    # the night ends: closing returns every bet still riding
    table.close()
    model.give_back(list(model.bets))
    check(table, model)
    assert table.view["layout"] == []
    assert table.refold() == table.state


@settings(max_examples=40, derandomize=True, deadline=None)
@given(data=st.data(), mode=st.sampled_from(["dealer", "rng"]))
def test_random_beat_the_dealer_nights_keep_the_book(data: st.DataObject, mode: str) -> None:
    table = DiceTable("beat_the_dealer", mode, seed=data.draw(st.integers(0, 2**16)))
    balance: Counter[str] = Counter()
    for _ in range(data.draw(st.integers(1, 5))):
        table.open()
        stakes = data.draw(
            st.dictionaries(st.sampled_from(PLAYERS), st.integers(1, 500), max_size=4)
        )
        for p, amount in stakes.items():
            table.bet(p, "beat_the_dealer", amount)
            balance[p] -= amount
        table.close_bets()
        dealer = table.roll(data.draw(dice) if mode == "dealer" else None)[0]
        order = data.draw(st.permutations(sorted(stakes)))
        stop = data.draw(st.integers(0, len(order)))
        for p in order[:stop]:
            roll = table.roll(data.draw(dice) if mode == "dealer" else None, player=p)[0]
            if roll.total > dealer.total:  # type: ignore[attr-defined]
                balance[p] += 2 * stakes[p]
        if table.state.phase != "idle":
            assert table.refold() == table.state  # a restart mid-round
            table.void()
            for p in order[stop:]:
                balance[p] += stakes[p]
        assert +table.balance == +balance
    assert table.refold() == table.state
