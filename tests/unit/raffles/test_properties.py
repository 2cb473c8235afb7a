"""Properties of the raffle rules over many generated raffles (hypothesis, derandomized):
the money always adds up to the sales to the cent, no serial or board position is used
twice, and a Search for the Queen of Hearts always ends within 54 picks."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from events.raffles import CardRevealed, PrizeAwarded, ProfitKept, TicketSold
from services.aggregates import RuleError
from services.raffles import queen_of_hearts as qoh
from services.raffles import serials as runs
from services.raffles import treasure_chest as tc
from services.raffles.rules import draw_sizes
from services.raffles.state import RevealCard, SellTicket, TryKey
from tests.unit.raffles.support import (
    NOW,
    Raffle,
    common,
    fifty_fifty_config,
    of_type,
    qoh_config,
    tc_config,
)

PROPERTY = settings(
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def money_adds_up(r: Raffle) -> None:
    """Every cent sold is a prize awarded, profit kept, or still in a pool / this round."""
    s = r.state
    sold = sum(e.amount for e in of_type(r.log, TicketSold))
    awarded = sum(e.amount for e in of_type(r.log, PrizeAwarded))
    kept = sum(e.amount for e in of_type(r.log, ProfitKept))
    assert sold == s.total_sales and awarded == s.awarded and kept == s.profit
    open_money = s.pool + (s.round_sales if s.kind == "treasure_chest" else 0)
    if s.kind in ("standard", "fifty_fifty"):
        # Prizes drawn before the last drawing are paid before the profit is known; once
        # the raffle ends nothing is left open.
        open_money = 0 if s.ended else s.total_sales - s.awarded
        assert s.profit == 0 or s.ended
    assert awarded + kept + open_money == sold


def serials_unique(r: Raffle) -> None:
    serials = [n for e in of_type(r.log, TicketSold) for n in e.serials]
    assert len(serials) == len(set(serials)) == runs.count(r.state.sold) == r.state.tickets
    assert sorted(serials) == list(runs.each(r.state.sold))


def draw(data: st.DataObject, r: Raffle) -> list[int]:
    return [data.draw(st.integers(0, size - 1)) for size in draw_sizes(r.state)]


@PROPERTY
@given(
    board=st.permutations(qoh.DECK), triple=st.booleans(), price=st.integers(1, 997), data=st.data()
)
def test_queen_of_hearts_money_adds_up_and_ends_within_54_picks(
    board: list[str], triple: bool, price: int, data: st.DataObject
) -> None:
    r = Raffle("queen_of_hearts", qoh_config(price=price, triple_draws=triple))
    r.method()
    picks = 0
    pool = 0
    while not r.state.ended:
        for _ in range(data.draw(st.integers(3, 6), label="tickets this week")):
            r.sell(1)
            pool += price
        r.draw(*draw(data, r))
        while r.state.searchers:
            left = [p for p in range(1, 55) if p not in r.state.revealed]
            position = data.draw(st.sampled_from(left), label="position")
            r.run(RevealCard(now_ms=NOW, position=position, card=board[position - 1]))
            picks += 1
            money_adds_up(r)
            if not r.state.ended:
                assert r.state.pool == pool  # all the ticket money, and only it, (b)(1)
    revealed = of_type(r.log, CardRevealed)
    assert picks <= qoh.POSITIONS and revealed[-1].card == qoh.QUEEN_OF_HEARTS
    assert len({c.position for c in revealed}) == len(revealed)
    grand = [p for p in of_type(r.log, PrizeAwarded) if p.prize == "grand"]
    assert [g.amount for g in grand] == [pool * 60 // 100]
    serials_unique(r)


@PROPERTY
@given(
    keys=st.integers(5, 16),
    profit_bp=st.integers(0, 10_000),
    price=st.integers(1, 2_000),
    data=st.data(),
)
def test_treasure_chest_money_adds_up_across_occasions(
    keys: int, profit_bp: int, price: int, data: st.DataObject
) -> None:
    r = Raffle("treasure_chest", tc_config(keys=keys, profit_bp=profit_bp, price=price))
    r.method()
    opener = data.draw(st.integers(1, keys), label="the key that opens")
    chest = 0
    occasions = 0
    while not r.state.ended:
        occasions += 1
        sales = 0
        for _ in range(data.draw(st.integers(5, 9), label="tickets this occasion")):
            count = data.draw(st.integers(1, 3))
            r.sell(count)
            sales += count * price
        money_adds_up(r)
        r.draw(*draw(data, r))
        chest += tc.split(r.state.config, sales, occasions > 1)[2]
        assert r.state.pool == chest
        money_adds_up(r)
        for key in list(r.state.handed):
            r.run(TryKey(now_ms=NOW, key=key, opened=key == opener))
            money_adds_up(r)
            if r.state.ended:
                break
    secondary = [p for p in of_type(r.log, PrizeAwarded) if p.prize == "secondary"]
    assert [p.amount for p in secondary] == [chest]
    assert occasions <= -(-keys // tc.PRIMARY_PRIZES)
    serials_unique(r)


@PROPERTY
@given(
    sales=st.lists(st.sampled_from([(1, 200), (3, 500), (2, 400)]), min_size=1, max_size=40),
    percent=st.integers(1, 100),
    data=st.data(),
)
def test_fifty_fifty_prize_and_profit_are_the_sales(
    sales: list[tuple[int, int]], percent: int, data: st.DataObject
) -> None:
    r = Raffle("fifty_fifty", fifty_fifty_config(prize_percent=percent))
    for count, amount in sales:
        r.sell(count, amount=amount)
        money_adds_up(r)
    r.method()
    r.draw(*draw(data, r))
    assert r.state.ended
    money_adds_up(r)
    serials_unique(r)


@PROPERTY
@given(
    wanted=st.lists(
        st.tuples(st.integers(1, 4), st.none() | st.integers(1, 60)), min_size=1, max_size=50
    )
)
def test_no_serial_is_ever_sold_twice(wanted: list[tuple[int, int | None]]) -> None:
    r = Raffle("standard", common(prizes=[{"description": "A", "value": 100}], tickets_printed=64))
    for count, serial in wanted:
        start = serial if serial is not None else r.state.top_serial + 1
        asked = range(start, start + count)
        command = SellTicket(count=count, amount=count * 500, now_ms=NOW, serial=serial)
        try:
            r.run(command)
        except RuleError as e:
            if e.code == "no_such_serial":
                assert asked[-1] > 64
            else:
                assert e.code == "serial_taken" and any(
                    runs.contains(r.state.sold, n) for n in asked
                )
        else:
            assert asked[-1] <= 64
    serials_unique(r)


@PROPERTY
@given(
    prizes=st.lists(st.tuples(st.integers(1, 50_000), st.booleans()), min_size=1, max_size=6),
    drawings=st.integers(1, 3),
    price=st.integers(1, 5_000),
    data=st.data(),
)
def test_a_standard_raffle_keeps_what_its_prizes_do_not_take(
    prizes: list[tuple[int, bool]], drawings: int, price: int, data: st.DataObject
) -> None:
    drawings = min(drawings, len(prizes))  # every drawing has a prize
    days = [NOW + (10 + d) * 86_400_000 for d in range(drawings)]
    listed = [
        {"description": f"prize {i}", "value": value, "cash": cash, "drawing": i % drawings + 1}
        for i, (value, cash) in enumerate(prizes)
    ]
    raw = common(price=price, first_drawing_at=days[0], drawings=days, prizes=listed)
    r = Raffle("standard", raw)
    r.method()
    for _ in range(len(days)):
        for _ in range(data.draw(st.integers(len(listed), 8), label="sales")):
            r.sell(data.draw(st.integers(1, 3), label="count"))
        money_adds_up(r)
        r.draw(*draw(data, r))
        money_adds_up(r)
    assert r.state.ended
    won = [e.serial for e in of_type(r.log, PrizeAwarded)]
    assert len(won) == len(set(won)) == len(listed)  # one prize per ticket
    assert r.state.awarded == sum(p["value"] for p in listed)
    serials_unique(r)
