"""Properties of the bell jar projection over generated seasons of deals (hypothesis,
derandomized): a deal's bank is its sales less the cash prizes paid from it (4620.19(c)(20));
the prizes awarded never exceed the flare unless the projection flags it; the GC-7Q figures
add up to the cent in every quarter, and over the quarters to the deals' own totals."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from events.bell_jars import FlarePrize
from projections.bell_jars import BellJars, additional_license_fee
from services.bell_jars.quarters import quarter_of_date
from tests.unit.projections.bell_jar_support import (
    Step,
    at,
    cash,
    closed,
    commingled,
    fold,
    in_play,
    item,
    redeemed,
    registered,
    sold,
)

PROPERTY = settings(
    derandomize=True,
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
QUARTERS = [(2025, 4), (2026, 1), (2026, 2), (2026, 3), (2026, 4), (2027, 1)]


@dataclass
class Jar:
    deals: list[str]
    price: int
    tickets: int
    flare: tuple[FlarePrize, ...]
    sold: int = 0


@dataclass
class Model:
    """What the generated events say, kept by the test itself."""

    steps: list[Step] = field(default_factory=list)
    sales: Counter[str] = field(default_factory=Counter)
    cash: Counter[str] = field(default_factory=Counter)
    awarded: Counter[tuple[str, int]] = field(default_factory=Counter)
    cost: dict[str, int] = field(default_factory=dict)
    bank_of: dict[str, str] = field(default_factory=dict)
    closed: set[str] = field(default_factory=set)


flares = st.lists(
    st.one_of(
        st.builds(cash, st.integers(1, 5_000), st.integers(1, 4)),
        st.builds(item, st.integers(1, 5_000), st.integers(1, 2)),
    ),
    min_size=1,
    max_size=3,
).map(tuple)


@st.composite
def seasons(draw: st.DrawFn) -> Model:
    m = Model()
    now = at(2025, 12, 1)
    jars: list[Jar] = []
    number = 0
    for _ in range(draw(st.integers(1, 60))):
        now += draw(st.integers(1, 20)) * 86_400_000 // 4
        if not jars or draw(st.integers(0, 5)) == 0:
            pair = draw(st.integers(1, 2))
            tickets = draw(st.integers(1, 40))
            price = draw(st.sampled_from([25, 50, 100, 200]))
            flare = draw(flares)
            invoice = draw(
                st.sampled_from(
                    [
                        "2025-11-30",
                        "2026-01-01",
                        "2026-03-31",
                        "2026-04-01",
                        "2026-09-30",
                        "2026-12-31",
                    ]
                )
            )
            deals = []
            for _ in range(pair):
                number += 1
                deal = f"d-{number}"
                deals.append(deal)
                cost = draw(st.integers(0, 9_999))
                m.cost[deal] = cost
                m.bank_of[deal] = deals[0]
                m.steps.append(
                    registered(
                        deal,
                        tickets=tickets,
                        price=price,
                        cost=cost,
                        invoice_date=invoice,
                        prizes=flare,
                        when=now,
                    )
                )
            for member in deals[1:]:
                m.steps.append(commingled(member, deals[0], now))
            m.steps.append(in_play(deals[0], now, *deals[1:]))
            jars.append(Jar(deals, price, tickets * pair, flare))
            continue
        jar = draw(st.sampled_from(jars))
        action = draw(st.sampled_from(["sell", "sell", "redeem", "redeem", "close"]))
        if action == "sell" and jar.sold < jar.tickets:
            count = draw(st.integers(1, jar.tickets - jar.sold))
            jar.sold += count
            m.sales[jar.deals[0]] += count * jar.price
            m.steps.append(sold(jar.deals[0], count, now, price=jar.price))
        elif action == "redeem":
            deal = draw(st.sampled_from(jar.deals))
            line = draw(st.integers(0, len(jar.flare) - 1))  # possibly one already gone
            prize = jar.flare[line]
            m.awarded[deal, line] += 1
            if prize.kind == "cash":
                m.cash[deal] += prize.value
            m.steps.append(redeemed(deal, line, prize.value, now, kind=prize.kind))
        if action == "close" or jar.sold == jar.tickets:
            reason = "sold_out" if jar.sold == jar.tickets else "removed"
            for deal in jar.deals:
                unsold = jar.tickets - jar.sold if deal == jar.deals[0] else 0
                m.steps.append(closed(deal, reason, unsold, now))
                m.closed.add(deal)
            jars.remove(jar)
    return m


@PROPERTY
@given(seasons())
def test_a_banks_balance_is_its_sales_less_the_cash_prizes_of_its_deals(m: Model) -> None:
    p = fold(m.steps)
    for v in p.views():
        bank = v["bank"]
        if bank is None:
            assert v["lead"] == m.bank_of[v["deal"]] != v["deal"]
            continue
        assert v["deal"] == m.bank_of[v["deal"]]
        paid = sum(m.cash[d] for d in bank["deals"])
        assert bank["sales"] == m.sales[v["deal"]]
        assert bank["cash_prizes"] == paid
        assert bank["balance"] == m.sales[v["deal"]] - paid
        merchandise = sum(view["merchandise"] for d in bank["deals"] if (view := p.view(d)))
        cost = sum(m.cost[d] for d in bank["deals"])
        assert bank["profit"] == bank["sales"] - paid - merchandise - cost


@PROPERTY
@given(seasons())
def test_prizes_awarded_never_exceed_the_flare_unless_flagged(m: Model) -> None:
    p = fold(m.steps)
    for v in p.views():
        over = [f for f in v["flare"] if f["awarded"] > f["count"]]
        flagged = [a for a in v["anomalies"] if a["code"] == "prize_over_flare"]
        assert bool(over) == bool(flagged)
        excess = sum(f["awarded"] - f["count"] for f in over)
        assert len(flagged) == excess  # one flag per prize beyond its line
        for f in v["flare"]:
            assert f["awarded"] == m.awarded[v["deal"], f["line"]]
            assert f["left"] == max(0, f["count"] - f["awarded"])
        codes = {a["code"] for a in v["anomalies"]}
        assert codes <= {"prize_over_flare"}  # nothing else is wrong in these seasons


@PROPERTY
@given(seasons(), st.sampled_from(["America/New_York", "UTC", "Pacific/Kiritimati"]))
def test_the_quarters_figures_add_up_to_the_cent(m: Model, zone: str) -> None:
    p = fold(m.steps, BellJars(zone))
    totals: Counter[str] = Counter()
    for year, n in QUARTERS:
        q = p.quarter(year, n)
        lines = q["schedule_1"]
        assert q["A6"] == q["A3"] + q["A4"] + q["A5"]
        assert q["A7"] == q["A2"] - q["A6"]
        assert q["B8"] == additional_license_fee(q["A7"]) >= 0
        assert q["B9"] == q["A7"] - q["B8"]
        assert 20 * q["B8"] - 20 < max(q["A7"], 0) <= 20 * q["B8"]  # 5 %, rounded up
        assert q["A1"] == len(lines)
        assert q["A2"] == sum(x["ideal_handle"] for x in lines)
        assert q["A3"] == sum(x["cash_prizes"] for x in lines)
        assert q["A4"] == sum(x["unsold_value"] for x in lines)
        assert q["A5"] == sum(x["cost"] for x in q["purchases"])
        assert all(quarter_of_date(x["invoice_date"]) == [year, n] for x in q["purchases"])
        for x in lines:
            assert x["ideal_net"] == (
                x["ideal_handle"] - x["cash_prizes"] - x["unsold_value"] - x["cost"]
            )
        for k in ("A1", "A2", "A3", "A4", "A5"):
            totals[k] += q[k]
    # Over the quarters: every deal closed once, every deal bought once.
    assert totals["A1"] == len(m.closed)
    assert totals["A5"] == sum(m.cost.values())
    assert totals["A3"] == sum(m.cash[d] for d in m.closed)
    # The closed receptacles' handle less their unsold tickets is what they sold.
    views = {v["deal"]: v for v in p.views()}
    assert totals["A2"] - totals["A4"] == sum(
        m.sales[d] for d in m.closed if views[d]["bank"] is not None
    )
