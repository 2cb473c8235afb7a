"""The raffle projection (projections/raffles.py): figures per raffle from the events, the
same whether folded at once or resumed from a checkpoint."""

from __future__ import annotations

import msgpack

from events.base import Event, to_data
from projections.raffles import Raffles
from services.raffles.rules import draw_sizes, evolve
from services.raffles.state import CloseSales, RaffleState, RevealCard, TryKey
from tests.unit.raffles.support import NOW, Raffle, qoh_config, tc_config


def fold(projection: Raffles, stream: str, events: list[Event]) -> None:
    for ev in events:
        projection.apply(ev.NAME, stream, to_data(ev))


def queen_of_hearts() -> Raffle:
    r = Raffle("queen_of_hearts", qoh_config(price=100))
    r.method()
    r.sell(3, occasion="n-1")
    r.draw(0)
    r.run(RevealCard(now_ms=NOW, position=4, card="9C"))
    r.sell(2, occasion="n-2")
    r.draw(1)
    r.run(RevealCard(now_ms=NOW, position=9, card="QH"))
    return r


def test_a_queen_of_hearts_as_the_projection_shows_it() -> None:
    r = queen_of_hearts()
    p = Raffles()
    fold(p, "raffle:q-1", r.log)
    fold(p, "table:roulette-1", r.log[:1])  # other streams are not raffles
    view = p.view("q-1")
    assert view is not None and p.view("roulette-1") is None
    assert view["tickets"] == 5 and view["sales"] == 500
    assert view["rounds"] == {"1": {"tickets": 3, "sales": 300}, "2": {"tickets": 2, "sales": 200}}
    assert view["occasions"] == {
        "n-1": {"tickets": 3, "sales": 300},
        "n-2": {"tickets": 2, "sales": 200},
    }
    assert view["board"]["revealed"] == {"4": "9C", "9": "QH"}
    # 6:1 consolation (600), then 60 % of 500 to the queen; the licensee kept 200 - 600.
    assert view["prizes_paid"] == 600 + 300 and view["profit_kept"] == 200 - 600
    assert view["pool"] == 0 and view["open"] == 0 and view["ended"]
    assert view["prizes_paid"] + view["profit_kept"] == view["sales"] == r.state.total_sales


def test_a_treasure_chest_shows_its_chest_keys_and_carry_overs() -> None:
    r = Raffle("treasure_chest", tc_config(keys=8))
    r.method()
    r.sell(5)
    held = r.draw(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    for key in list(r.state.handed):
        r.run(TryKey(now_ms=NOW, key=key, opened=False))
    p = Raffles()
    fold(p, "raffle:tc-1", r.log)
    view = p.view("tc-1")
    assert view is not None and held
    assert view["keys_in_play"] == [6, 7, 8] and view["round"] == 2
    assert view["pool"] == r.state.pool == view["carry_overs"][0]["chest"]
    assert view["open"] == view["pool"] and view["sales_open"]


def test_resuming_from_a_checkpoint_gives_the_same_state() -> None:
    r = queen_of_hearts()
    whole = Raffles()
    fold(whole, "raffle:q-1", r.log)
    for cut in range(len(r.log) + 1):
        first = Raffles()
        fold(first, "raffle:q-1", r.log[:cut])
        saved = msgpack.unpackb(msgpack.packb(first.snapshot(), use_bin_type=True), raw=False)
        resumed = Raffles()
        resumed.restore(saved)
        fold(resumed, "raffle:q-1", r.log[cut:])
        assert resumed.snapshot() == whole.snapshot()


def test_the_projection_follows_the_rules_state_at_every_event() -> None:
    """Round, sales open, pool, prizes, profit and board as the raffle's own state has them."""
    r = Raffle("queen_of_hearts", qoh_config(price=100))
    r.method()
    for week in range(1, 6):
        r.sell(2)
        r.run(CloseSales(now_ms=NOW))
        r.draw(1)
        r.run(RevealCard(now_ms=NOW, position=week, card=f"{week + 1}D"))
    p = Raffles()
    state = RaffleState(raffle="q")
    for ev in r.log:
        p.apply(ev.NAME, "raffle:q", to_data(ev))
        state = evolve(state, ev)
        view = p.view("q")
        assert view is not None
        assert (view["round"], view["sales_open"], view["pool"]) == (
            state.round,
            state.sales_open,
            state.pool,
        )
        assert (view["prizes_paid"], view["profit_kept"]) == (state.awarded, state.profit)
        assert view["board"]["revealed"] == {str(k): c for k, c in state.revealed.items()}


def test_the_treasure_chest_projection_follows_the_rules_state() -> None:
    r = Raffle("treasure_chest", tc_config(keys=11))
    r.method()
    ends: set[int] = set()  # how many events there were after each command
    for occasion in range(3):
        r.sell(5 + occasion)
        r.run(CloseSales(now_ms=NOW))
        r.draw(*([0] * len(draw_sizes(r.state))))
        ends.add(len(r.log))
        keys = list(r.state.handed)
        for i, key in enumerate(keys):
            r.run(TryKey(now_ms=NOW, key=key, opened=occasion == 2 and i == len(keys) - 1))
            ends.add(len(r.log))
    assert r.state.ended
    p = Raffles()
    state = RaffleState(raffle="t")
    for n, ev in enumerate(r.log, start=1):
        p.apply(ev.NAME, "raffle:t", to_data(ev))
        state = evolve(state, ev)
        view = p.view("t")
        assert view is not None
        assert (view["round"], view["sales_open"], view["pool"], view["ended"]) == (
            state.round,
            state.sales_open,
            state.pool,
            state.ended,
        )
        assert view["keys_in_play"] == sorted(state.keys_in_play)
        if n in ends:  # a drawing's split is complete once all its events are in
            assert view["open"] == state.pool + state.round_sales
