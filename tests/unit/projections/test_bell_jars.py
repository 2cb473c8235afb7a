"""The bell jar projection (projections/bell_jars.py): every deal's ledger (4620.19(c)(3),
(15), (18), (20)) and the GC-7Q figures per calendar quarter (Section A lines A1-A7,
Section B lines B8-B9, Schedule 1), from hand-written event sequences."""

from __future__ import annotations

import zoneinfo
from typing import Any

import msgpack
import pytest

from projections.bell_jars import (
    BellJars,
    additional_license_fee,
    parse_quarter,
)
from services.bell_jars.quarters import quarter_bounds
from tests.unit.projections.bell_jar_support import (
    NEW_YORK,
    Step,
    at,
    cash,
    closed,
    combination,
    everything,
    fold,
    in_play,
    item,
    redeemed,
    registered,
    sold,
    sold_out_deal,
)

FIGURES = ("A1", "A2", "A3", "A4", "A5", "A6", "A7", "B8", "B9")


def figures(q: dict[str, Any]) -> dict[str, int]:
    return {k: q[k] for k in FIGURES}


def view(p: BellJars, deal: str) -> dict[str, Any]:
    v = p.view(deal)
    assert v is not None
    return v


def test_a_registered_deal_shows_its_registration_and_an_empty_bank() -> None:
    p = fold([registered("d-1")])
    v = view(p, "d-1")
    assert v["state"] == "registered" and v["closed_reason"] is None and v["lead"] is None
    assert v["ideal_handle"] == 400 * 100 and v["cost"] == 6_000
    assert (v["serial_number"], v["form_number"], v["invoice_number"]) == (
        "SN-d-1",
        "F-100",
        "INV-d-1",
    )
    assert v["prizes"] == {"count": 52, "value": 28_000, "awarded_count": 0, "awarded_value": 0}
    assert [f["left"] for f in v["flare"]] == [2, 10, 40]
    assert v["bank"] == {
        "deals": ["d-1"],
        "tickets": 400,
        "sold": 0,
        "unsold": 400,
        "sales": 0,
        "cash_prizes": 0,
        "balance": 0,
        "merchandise": 0,
        "cost": 6_000,
        "profit": -6_000,
    }
    assert v["anomalies"] == [] and p.view("d-2") is None


def test_sales_and_prizes_move_the_deals_own_bank_4620_19_c_20() -> None:
    p = fold(sold_out_deal()[:4])
    v = view(p, "d-1")
    assert v["state"] == "in_play" and v["container"] == "jar"
    assert v["bank"]["sold"] == 150 and v["bank"]["unsold"] == 250
    assert v["bank"]["sales"] == 15_000 and v["bank"]["cash_prizes"] == 5_000
    assert v["bank"]["balance"] == 15_000 - 5_000
    # Profit or loss = sales - cash prizes - merchandise - cost.
    assert v["bank"]["profit"] == 15_000 - 5_000 - 0 - 6_000
    # The flare marks what was awarded, line by line (4620.19(c)(3)).
    assert [(f["awarded"], f["awarded_value"], f["left"]) for f in v["flare"]] == [
        (1, 5_000, 1),
        (0, 0, 10),
        (0, 0, 40),
    ]


def test_the_75_percent_rule_by_count_and_by_value_4620_19_c_18() -> None:
    steps = sold_out_deal()[:4]  # the $50 prize: 1 of 52 prizes, 5,000 of 28,000
    v = view(fold(steps), "d-1")
    # 75 % of 52 prizes is 39; of 28,000 cents, 21,000.
    assert v["seventy_five_percent"] == {"met": False, "count_needed": 38, "value_needed": 16_000}
    # Both big prizes and every $10 one: 12 prizes, 20,000 cents: value short, count short.
    steps += [redeemed("d-1", 0, 5_000, at(2026, 1, 9))]
    steps += [redeemed("d-1", 1, 1_000, at(2026, 1, 9, 13, i)) for i in range(10)]
    v = view(fold(steps), "d-1")
    assert v["seventy_five_percent"] == {"met": False, "count_needed": 27, "value_needed": 1_000}
    # 27 of the $2 prizes: 39 prizes, 25,400 cents: both met.
    steps += [redeemed("d-1", 2, 200, at(2026, 1, 10, 13, i)) for i in range(27)]
    v = view(fold(steps), "d-1")
    assert v["seventy_five_percent"] == {"met": True, "count_needed": 0, "value_needed": 0}


def test_a_sold_out_deal_counts_in_the_quarter_it_closed() -> None:
    p = fold(sold_out_deal())
    v = view(p, "d-1")
    assert v["state"] == "closed" and v["closed_reason"] == "sold_out"
    assert v["closed_on"] == "2026-02-01" and v["bank"]["unsold"] == 0
    assert v["cash_prizes"] == 5_000 + 1_000 + 28 * 200 == 11_600
    q = p.quarter(2026, 1)
    assert q["quarter"] == "2026-Q1" and (q["from"], q["to"]) == ("2026-01-01", "2026-03-31")
    # A2 ideal handle 400 x $1; A3 cash prizes; A4 nothing unsold; A5 its cost (bought in Q1).
    assert figures(q) == {
        "A1": 1,
        "A2": 40_000,
        "A3": 11_600,
        "A4": 0,
        "A5": 6_000,
        "A6": 17_600,
        "A7": 22_400,
        "B8": 1_120,  # 5 % of 22,400
        "B9": 21_280,
    }
    [line] = q["schedule_1"]
    assert line["deal"] == "d-1" and line["closed_reason"] == "sold_out"
    assert line["ideal_net"] == 40_000 - 11_600 - 0 - 6_000
    assert [x["deal"] for x in q["purchases"]] == ["d-1"]
    # The quarters before and after: zeros, Schedule 1 empty.
    for year, n in ((2025, 4), (2026, 2)):
        other = p.quarter(year, n)
        assert figures(other) == dict.fromkeys(FIGURES, 0)
        assert other["schedule_1"] == [] and other["purchases"] == []


def test_a_removed_deal_reports_its_unsold_tickets_and_its_cost_where_it_was_bought() -> None:
    # Bought in December 2025, removed in April 2026 with 100 tickets unsold.
    steps = [
        registered("d-2", price=50, cost=4_000, invoice_date="2025-12-20", when=at(2025, 12, 21)),
        in_play("d-2", at(2026, 3, 1)),
        sold("d-2", 300, at(2026, 3, 2), price=50),
        redeemed("d-2", 0, 5_000, at(2026, 3, 2)),
        redeemed("d-2", 0, 5_000, at(2026, 3, 3)),
        redeemed("d-2", 1, 1_000, at(2026, 3, 3)),
        closed("d-2", "removed", 100, at(2026, 4, 2)),
    ]
    p = fold(steps)
    v = view(p, "d-2")
    assert v["closed_reason"] == "removed" and v["unsold_recorded"] == 100
    assert v["bank"]["unsold"] == 100 and v["anomalies"] == []
    assert figures(p.quarter(2025, 4)) == {
        **dict.fromkeys(FIGURES, 0),
        "A5": 4_000,
        "A6": 4_000,
        "A7": -4_000,
        "B9": -4_000,  # a loss: no fee, B9 = A7
    }
    assert figures(p.quarter(2026, 1)) == dict.fromkeys(FIGURES, 0)  # in play, not closed
    q = p.quarter(2026, 2)
    # A2 400 x 50; A3 11,000; A4 100 unsold x 50; A5 nothing bought in Q2.
    assert figures(q) == {
        "A1": 1,
        "A2": 20_000,
        "A3": 11_000,
        "A4": 5_000,
        "A5": 0,
        "A6": 16_000,
        "A7": 4_000,
        "B8": 200,
        "B9": 3_800,
    }
    assert q["schedule_1"][0]["tickets_unsold"] == 100


def test_a_combination_keeps_one_bank_on_its_lead() -> None:
    steps = combination()
    p = fold(steps[:3])
    assert view(p, "c-2")["state"] == "commingled" and view(p, "c-2")["lead"] == "c-1"
    p = fold(steps[:9])
    lead, member = view(p, "c-1"), view(p, "c-2")
    assert member["state"] == "in_play" and member["bank"] is None and member["lead"] == "c-1"
    assert lead["lead"] is None and lead["state"] == "in_play"
    # Sales in, and the cash prizes of every deal of the combination out.
    assert lead["bank"]["deals"] == ["c-1", "c-2"]
    assert lead["bank"]["tickets"] == 800 and lead["bank"]["sold"] == 700
    assert lead["bank"]["sales"] == 70_000
    assert lead["bank"]["cash_prizes"] == 5_000 + 5_000 + 1_000 + 200
    assert lead["bank"]["balance"] == 70_000 - 11_200
    assert lead["bank"]["profit"] == 70_000 - 11_200 - 0 - 12_000
    # Each deal keeps its own prizes and flare.
    assert lead["cash_prizes"] == 5_000 and member["cash_prizes"] == 6_200
    assert [f["awarded"] for f in member["flare"]] == [1, 1, 1]


def test_a_combinations_schedule_1_lead_line_carries_the_receptacle() -> None:
    p = fold(combination())
    q = p.quarter(2026, 2)  # closed 30 June, 23:30 in New York
    lead, member = q["schedule_1"]
    assert (lead["deal"], lead["lead"], member["deal"], member["lead"]) == (
        "c-1",
        None,
        "c-2",
        "c-1",
    )
    assert (lead["tickets_sold"], lead["tickets_unsold"], lead["unsold_value"]) == (
        700,
        100,
        10_000,
    )
    assert (member["tickets_sold"], member["tickets_unsold"], member["unsold_value"]) == (0, 0, 0)
    assert lead["ideal_handle"] == member["ideal_handle"] == 40_000
    assert (lead["cash_prizes"], member["cash_prizes"]) == (5_000, 6_200)
    # A-lines: both deals' handle and prizes, the receptacle's unsold tickets; bought in Q1.
    assert figures(q) == {
        "A1": 2,
        "A2": 80_000,
        "A3": 11_200,
        "A4": 10_000,
        "A5": 0,
        "A6": 21_200,
        "A7": 58_800,
        "B8": 2_940,
        "B9": 55_860,
    }
    assert sum(x["ideal_net"] for x in q["schedule_1"]) == q["A2"] - q["A3"] - q["A4"] - 12_000
    # Whether a closing records the receptacle's unsold tickets on the lead or splits them,
    # the ledger agrees: no anomaly either way.
    split = combination()
    split[-2] = closed("c-1", "removed", 60, at(2026, 6, 30, 23, 30))
    split[-1] = closed("c-2", "removed", 40, at(2026, 6, 30, 23, 30))
    assert view(fold(split), "c-1")["anomalies"] == q["anomalies"] == []


def test_merchandise_is_awarded_at_its_value_and_not_counted_as_cash() -> None:
    prizes = (cash(1_000, 5), item(2_500, 2))
    steps = [
        registered("m-1", kind="merchandise_board", prizes=prizes, cost=3_000),
        in_play("m-1", at(2026, 1, 7)),
        sold("m-1", 400, at(2026, 1, 8)),
        redeemed("m-1", 1, 2_500, at(2026, 1, 8), kind="merchandise"),
        redeemed("m-1", 0, 1_000, at(2026, 1, 8)),
        closed("m-1", "sold_out", 0, at(2026, 1, 9)),
    ]
    p = fold(steps)
    v = view(p, "m-1")
    assert v["merchandise"] == 2_500 and v["cash_prizes"] == 1_000
    assert v["bank"]["balance"] == 40_000 - 1_000  # the item left no cash bank
    assert v["bank"]["profit"] == 40_000 - 1_000 - 2_500 - 3_000
    q = p.quarter(2026, 1)
    assert q["A3"] == 1_000 and q["merchandise"] == 2_500
    assert q["schedule_1"][0]["merchandise"] == 2_500


def test_a_quarter_follows_the_organizations_time_zone() -> None:
    # 31 March 2026, 23:30 in New York is 1 April, 03:30 UTC.
    steps = [
        registered("d-1"),
        in_play("d-1", at(2026, 1, 7)),
        sold("d-1", 400, at(2026, 1, 8)),
        closed("d-1", "sold_out", 0, at(2026, 3, 31, 23, 30)),
    ]
    ny = fold(steps)
    assert ny.quarter(2026, 1)["A1"] == 1 and ny.quarter(2026, 2)["A1"] == 0
    assert view(ny, "d-1")["closed_on"] == "2026-03-31"
    utc = fold(steps, BellJars("UTC"))
    assert utc.quarter(2026, 1)["A1"] == 0 and utc.quarter(2026, 2)["A1"] == 1
    assert utc.quarter(2026, 2)["timezone"] == "UTC"
    # The folded state does not depend on the zone: only the quarters asked do.
    assert utc.snapshot() == ny.snapshot()
    start, end = quarter_bounds(2026, 1, NEW_YORK)
    assert (start, end) == (at(2026, 1, 1, 0), at(2026, 4, 1, 0))


def test_the_additional_license_fee_b8_is_5_percent_rounded_up_and_never_negative() -> None:
    assert additional_license_fee(22_400) == 1_120
    assert additional_license_fee(1_001) == 51  # 50.05 cents: rounded up
    assert additional_license_fee(1) == 1
    assert additional_license_fee(20) == 1
    assert additional_license_fee(0) == 0
    assert additional_license_fee(-4_000) == 0  # a loss owes no fee


def test_a_quarter_is_named_yyyy_qn() -> None:
    assert parse_quarter("2026-Q1") == (2026, 1) and parse_quarter("1999-Q4") == (1999, 4)
    for bad in ("2026-Q0", "2026-Q5", "2026Q1", "26-Q1", "2026-q1", "1969-Q4", "9999-Q1", ""):
        assert parse_quarter(bad) is None, bad


@pytest.mark.parametrize(
    ("steps", "code"),
    [
        # A third $50 prize where the flare holds two.
        (
            [
                *sold_out_deal()[:4],
                redeemed("d-1", 0, 5_000, at(2026, 1, 9)),
                redeemed("d-1", 0, 5_000, at(2026, 1, 9)),
            ],
            "prize_over_flare",
        ),
        ([*sold_out_deal()[:3], redeemed("d-1", 7, 100, at(2026, 1, 9))], "prize_not_on_flare"),
        ([*sold_out_deal()[:3], redeemed("d-1", 0, 4_000, at(2026, 1, 9))], "prize_not_as_flare"),
        (
            [*sold_out_deal()[:2], sold("d-1", 3, at(2026, 1, 8), amount=250)],
            "sale_amount_mismatch",
        ),
        (
            [
                *sold_out_deal()[:2],
                sold("d-1", 399, at(2026, 1, 8)),
                sold("d-1", 2, at(2026, 1, 8)),
            ],
            "oversold",
        ),
        ([registered("d-1"), sold("d-1", 1, at(2026, 1, 8))], "sale_not_in_play"),
        (
            [
                *sold_out_deal()[:2],
                sold("d-1", 300, at(2026, 1, 8)),
                closed("d-1", "removed", 50, at(2026, 1, 9)),
            ],
            "unsold_mismatch",
        ),
        ([registered("d-1"), registered("d-1")], "registered_twice"),
        ([registered("d-1", invoice_date="2026-13-01")], "bad_invoice_date"),
    ],
)
def test_what_the_rules_forbid_is_counted_and_flagged_for_the_auditor(
    steps: list[Step], code: str
) -> None:
    p = fold(steps)
    v = view(p, "d-1")
    assert [a["code"] for a in v["anomalies"]] == [code]
    assert v["anomalies"][0]["deal"] == "d-1" and v["anomalies"][0]["message"]


def test_prizes_paid_beyond_the_flare_still_count_as_the_events_say() -> None:
    steps = [*sold_out_deal()[:4]] + [redeemed("d-1", 0, 5_000, at(2026, 1, 9))] * 2
    v = view(fold(steps), "d-1")
    assert v["flare"][0]["awarded"] == 3 and v["flare"][0]["left"] == 0
    assert v["cash_prizes"] == 15_000 and v["bank"]["balance"] == 15_000 - 15_000


def test_events_of_a_deal_never_registered_are_flagged_and_counted_nowhere() -> None:
    p = fold([sold("ghost", 5, at(2026, 1, 8)), *sold_out_deal()])
    assert [a["code"] for a in p.unknown_anomalies()] == ["unknown_deal"]
    assert p.view("ghost") is None and [v["deal"] for v in p.views()] == ["d-1"]
    assert p.quarter(2026, 1)["A1"] == 1


def test_the_quarter_lists_the_anomalies_of_its_deals() -> None:
    steps = [
        *sold_out_deal()[:-1],
        redeemed("d-1", 0, 5_000, at(2026, 2, 1)),
        redeemed("d-1", 0, 5_000, at(2026, 2, 1)),
        sold_out_deal()[-1],
    ]
    q = fold(steps).quarter(2026, 1)
    assert [a["code"] for a in q["anomalies"]] == ["prize_over_flare"]


def test_other_streams_are_not_deals() -> None:
    p = BellJars()
    p.apply("TicketsSold", "table:roulette-1", {"count": 1, "amount": 1, "at": 1})
    assert p.snapshot() == BellJars().snapshot()


def test_resuming_from_a_checkpoint_gives_the_same_state_and_reports() -> None:
    steps = everything()
    whole = fold(steps)
    for cut in range(len(steps) + 1):
        first = fold(steps[:cut])
        saved = msgpack.unpackb(msgpack.packb(first.snapshot(), use_bin_type=True), raw=False)
        resumed = BellJars()
        resumed.restore(saved)
        fold(steps[cut:], resumed)
        assert resumed.snapshot() == whole.snapshot()
    assert resumed.report() == whole.report()
    assert list(whole.report()["quarters"]) == ["2025-Q4", "2026-Q1", "2026-Q2"]


def test_the_zone_data_ships_with_the_server_not_the_host() -> None:
    """Without any system zone directory, the zones still resolve (the tzdata package)."""
    saved = zoneinfo.TZPATH
    zoneinfo.reset_tzpath(to=[])
    try:
        zone = zoneinfo.ZoneInfo.no_cache("America/New_York")
        start, _end = quarter_bounds(2026, 3, zone)
        assert start == at(2026, 7, 1, 0)
    finally:
        zoneinfo.reset_tzpath(to=saved)
