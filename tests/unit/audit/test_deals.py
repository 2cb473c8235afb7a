"""The bell jar check: deals sold and redeemed by the real pure rules pass, and each bank
is its sales less the cash prizes of its deals; a changed sale, prize or closing is named
with its stream and seq (4620.19, docs/RULES.md "Bell jars")."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest

from events.envelope import Envelope
from services.audit.deals import DealChecker
from tests.unit.audit.support import deal_night, index_of, named, run, tampered
from tests.unit.bell_jars.support import FLARE


@functools.cache
def night() -> tuple[Envelope, ...]:
    return tuple(deal_night().envelopes)


def test_every_sale_and_redemption_passes_and_each_bank_is_sales_less_cash_prizes() -> None:
    envelopes = night()
    checker = run(DealChecker(), envelopes)
    assert checker.discrepancies == []
    assert checker.checked["sales"] == sum(1 for e in envelopes if e.type == "TicketsSold")
    assert checker.checked["redemptions"] == sum(1 for e in envelopes if e.type == "TicketRedeemed")
    sales: dict[str, int] = {}
    for e in envelopes:
        if e.type == "TicketsSold":
            sales[e.stream] = sales.get(e.stream, 0) + e.data["count"] * 100
    lone, lead = checker.banks["d-1"], checker.banks["d-2"]
    assert (lone.deals, lone.sales) == (("d-1",), sales["deal:d-1"])
    assert lone.cash_prizes == FLARE[0].value + FLARE[1].value
    assert lone.balance == sales["deal:d-1"] - FLARE[0].value - FLARE[1].value
    # the combination's bank paid its member's prizes too (4620.19(c)(15))
    assert lead.deals == ("d-2", "d-3")
    assert lead.cash_prizes == FLARE[0].value + FLARE[1].value + FLARE[2].value
    assert "d-3" not in checker.banks


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.__setitem__(key, value)


CASES = [
    ("a sale's amount", "TicketsSold", {}, 0, _set("amount", 1), "TicketsSold: 5 at 100"),
    ("more tickets than unsold", "TicketsSold", {}, 1, _set("count", 40), "holds"),
    ("a prize's value", "TicketRedeemed", {}, 0, _set("value", 5_000), "value"),
    ("a prize's kind", "TicketRedeemed", {}, 0, _set("kind", "merchandise"), "kind"),
    ("a line off the flare", "TicketRedeemed", {}, 1, _set("prize", 9), "a line of the flare"),
    ("a ticket redeemed twice", "TicketRedeemed", {}, 1, _set("ticket", "t-1"), "redeemed before"),
    ("a closing's unsold", "DealClosed", {}, 0, _set("unsold", 3), "unsold"),
    ("a removal's unsold", "DealClosed", {"reason": "removed"}, 0, _set("unsold", 0), "unsold"),
    (
        "a removal before 75 % of the prizes, 4620.19(c)(18)",
        "DealClosed",
        {"reason": "sold_out"},
        0,
        _set("reason", "removed"),
        "75 %",
    ),
]


@pytest.mark.parametrize(
    ("what", "type_", "match", "nth", "change", "field"), CASES, ids=[c[0] for c in CASES]
)
def test_a_tampered_deal_is_named_with_its_stream_and_seq(
    what: str,
    type_: str,
    match: dict[str, Any],
    nth: int,
    change: Callable[[dict[str, Any]], None],
    field: str,
) -> None:
    envelopes = night()
    i = index_of(envelopes, type_, nth, **match)
    log = tampered(envelopes, i, change)
    checker = run(DealChecker(), log)
    hits = named(checker.discrepancies, log[i])
    assert hits and checker.discrepancies[0] == hits[0], (what, checker.discrepancies)
    assert any(field in d.what for d in hits), hits
    assert all(d.expected != d.found for d in hits)


def test_a_prize_past_its_flare_line_is_named() -> None:
    envelopes = night()
    # the member deal's line-1 prize recorded as line 2, whose one prize comes next
    i = index_of(envelopes, "TicketRedeemed", 0, ticket="t-3")
    log = tampered(envelopes, i, lambda data: data.update(prize=2, value=FLARE[2].value))
    checker = run(DealChecker(), log)
    [over] = checker.discrepancies
    assert over.stream == "deal:d-3" and over.seq == log[i].seq + 1
    assert (over.expected, over.found) == (FLARE[2].count, FLARE[2].count + 1)


def test_every_bank_is_in_the_report_and_not_counted_as_checked() -> None:
    from services.audit import report as audit_report
    from services.audit.command import audit_events

    envelopes = night()
    report = audit_events("org-audit", envelopes, [], no_checkpoint=None)
    checker = run(DealChecker(), envelopes)
    expected = [
        {
            "deal": deal,
            "deals": list(bank.deals),
            "sales": bank.sales,
            "cash_prizes": bank.cash_prizes,
            "bank": bank.sales - bank.cash_prizes,
        }
        for deal, bank in sorted(checker.banks.items())
    ]
    assert [row["deal"] for row in expected][:2] == ["d-1", "d-2"]
    assert report.to_json()["banks"] == expected
    [deals] = [c for c in report.checks if c.name == "deals"]
    assert "banks" not in deals.checked  # the log holds no other figure to hold them to
    text = audit_report.markdown(report)
    assert "## Bell jar banks" in text
    lone = expected[0]
    assert f"| d-1 | d-1 | {lone['sales']} | {lone['cash_prizes']} | {lone['bank']} |" in text
    assert "| d-2 | d-2, d-3 |" in text


def test_a_deal_not_read_whole_has_no_bank_in_the_report() -> None:
    envelopes = night()
    i = index_of(list(envelopes), "TicketRedeemed", 0)
    log = tampered(envelopes, i, _set("prize", "x"))  # unreadable: the deal is left
    checker = run(DealChecker(), log)
    assert checker.discrepancies and "d-1" not in checker.banks
    assert "d-2" in checker.banks
