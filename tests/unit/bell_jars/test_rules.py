"""The pure rules of a bell jar deal (services/bell_jars/rules.py), rule by rule with its
cite (9 NYCRR 4620.19; readings BJAR-1 to BJAR-7 in docs/RULES.md "Bell jars")."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import replace
from zoneinfo import ZoneInfo

import pytest

from events.bell_jars import DealClosed, FlarePrize, TicketRedeemed
from services.aggregates import RuleError
from services.bell_jars import quarters, rules
from services.bell_jars.limits import DealLimits
from services.bell_jars.state import (
    CloseCommingled,
    Commingle,
    DealState,
    PutDealInPlay,
    RecordSale,
    RedeemTicket,
    RemoveDeal,
)
from tests.unit.bell_jars.support import (
    FLARE,
    NOW,
    apply,
    combination,
    in_play,
    redeem,
    registered,
    registration,
    sell,
)

NY = "America/New_York"


def refused(state: DealState, command: object, limits: DealLimits | None = None) -> str:
    with pytest.raises(RuleError) as e:
        if limits is None:
            rules.decide(state, command)  # type: ignore[arg-type]
        else:
            rules.decide(state, command, limits)  # type: ignore[arg-type]
    return e.value.code


# Registration.


def test_a_registration_records_the_deal_as_bought() -> None:
    state = registered()
    assert state.registered and state.ticket_count == 20 and state.prizes == FLARE
    assert state.awarded == (0, 0, 0) and state.total_value == 1000


@pytest.mark.parametrize("where", ["ticket_serial", "flare_serial", "invoice_serial"])
def test_every_serial_number_must_match_the_deals_4620_19_c_17(where: str) -> None:
    assert refused(DealState(deal="d-1"), registration(**{where: "S-2"})) == "serial_mismatch"


def test_a_deal_is_played_only_under_a_game_the_license_lists_4620_2() -> None:
    """Banded tickets are bell jar tickets; the boards and seal cards go by their names."""
    fresh = DealState(deal="d-1")
    jar_only = frozenset({"roulette", "bell_jar"})
    for kind in ("bell_jar", "banded"):
        assert rules.decide(fresh, registration(kind=kind), licensed=jar_only)
    for kind in ("coin_board", "seal_card", "merchandise_board"):
        with pytest.raises(RuleError) as e:
            rules.decide(fresh, registration(kind=kind), licensed=jar_only)
        assert e.value.code == "game_not_licensed" and kind in e.value.message
    with pytest.raises(RuleError) as e:
        rules.decide(fresh, registration(), licensed=frozenset({"roulette"}))
    assert e.value.code == "game_not_licensed"


def test_the_price_is_within_the_single_wager_limit_b_2() -> None:
    assert registered(ticket_price=600).ticket_price == 600
    assert refused(DealState(deal="d-1"), registration(ticket_price=601)) == "price_over_limit"


def test_a_prize_is_within_the_bell_jar_single_prize_limit_b_3_bjar_1() -> None:
    big = (FlarePrize(100_000, 1, "cash", "", "cash"),)
    assert registered(prizes=big).total_value == 100_000
    over = (FlarePrize(100_001, 1, "cash", "", "cash"),)
    assert refused(DealState(deal="d-1"), registration(prizes=over)) == "prize_over_limit"


def test_the_flare_total_is_within_the_per_deal_aggregate_b_4_bjar_5() -> None:
    six = (FlarePrize(100_000, 6, "cash", "", "cash"),)
    assert registered(prizes=six).total_value == 600_000
    more = (*six, FlarePrize(1, 1, "cash", "", "cash"))
    assert refused(DealState(deal="d-1"), registration(prizes=more)) == "flare_over_limit"


def test_merchandise_counts_toward_the_limits_at_its_value_bjar_5() -> None:
    tv = (FlarePrize(100_001, 1, "merchandise", "A TV", "fair_market_value"),)
    assert (
        refused(DealState(deal="d-1"), registration(kind="seal_card", prizes=tv))
        == "prize_over_limit"
    )


def test_lowered_limits_are_enforced() -> None:
    limits = DealLimits(max_ticket_price=100, max_single_prize=400, max_deal_prizes=900)
    blank = DealState(deal="d-1")
    assert refused(blank, registration(ticket_price=200), limits) == "price_over_limit"
    assert refused(blank, registration(), limits) == "prize_over_limit"  # a $5 prize
    small = (FlarePrize(400, 3, "cash", "", "cash"),)
    assert refused(blank, registration(prizes=small), limits) == "flare_over_limit"
    assert DealLimits(max_ticket_price=601).problem() is not None
    assert DealLimits(max_single_prize=0).problem() is not None
    assert DealLimits().problem() is None


@pytest.mark.parametrize("kind", ["bell_jar", "coin_board"])
def test_cash_only_types_refuse_merchandise_c_8(kind: str) -> None:
    bike = (FlarePrize(5000, 1, "merchandise", "A bicycle", "cost"),)
    assert refused(DealState(deal="d-1"), registration(kind=kind, prizes=bike)) == (
        "merchandise_not_allowed"
    )


@pytest.mark.parametrize("kind", ["merchandise_board", "seal_card", "banded"])
def test_merchandise_boards_seal_cards_and_banded_tickets_may_award_merchandise(
    kind: str,
) -> None:
    bike = (FlarePrize(5000, 1, "merchandise", "A bicycle", "cost"),)
    assert registered(kind=kind, prizes=bike).prizes == bike


def test_prizes_never_outnumber_the_tickets_c_5() -> None:
    many = (FlarePrize(1, 21, "cash", "", "cash"),)
    assert refused(DealState(deal="d-1"), registration(prizes=many)) == "too_many_prizes"


def test_a_serial_registered_to_another_deal_is_refused() -> None:
    assert refused(DealState(deal="d-1"), registration(serial_holder="d-0")) == ("duplicate_serial")
    assert refused(DealState(deal="d-1"), registration(serial_holder=None)) == ("duplicate_serial")


def test_a_deal_is_registered_once() -> None:
    assert refused(registered(), registration()) == "deal_exists"


@pytest.mark.parametrize(
    "over",
    [
        {"kind": "raffle"},
        {"supplier": " "},
        {"invoice_date": "2026-13-01"},
        {"ticket_count": 0},
        {"ticket_price": 0},
        {"cost": -1},
        {"prizes": ()},
        {"prizes": (FlarePrize(0, 1, "cash", "", "cash"),)},
        {"prizes": (FlarePrize(1, 1, "cash", "a TV", "cash"),)},
        {"kind": "seal_card", "prizes": (FlarePrize(1, 1, "merchandise", "TV", "cash"),)},
        {"kind": "seal_card", "prizes": (FlarePrize(1, 1, "merchandise", "", "cost"),)},
    ],
)
def test_malformed_facts_are_invalid(over: dict[str, object]) -> None:
    assert refused(DealState(deal="d-1"), registration(**over)) == "invalid_deal"


def test_the_serial_registry_claims_each_serial_once() -> None:
    (claim,) = rules.claim_serial({}, "S-1", "d-1", NOW)
    assert rules.claim_serial({"S-1": "d-1"}, "S-1", "d-1", NOW) == []
    with pytest.raises(RuleError) as e:
        rules.claim_serial({"S-1": "d-1"}, "S-1", "d-2", NOW)
    assert e.value.code == "duplicate_serial" and "d-1" in e.value.message
    assert claim.serial == "S-1" and claim.deal == "d-1"  # type: ignore[attr-defined]


# Play (4620.19(a)(1), (c)(15), (c)(16)).


def test_a_deal_goes_into_play_once_from_a_jar_or_a_machine_column() -> None:
    state = in_play()
    assert state.in_play and state.deals == ("d-1",) and state.container == "jar"
    assert refused(state, PutDealInPlay(container="jar", column="", now_ms=NOW)) == ("deal_in_play")
    fresh = registered()
    machine = PutDealInPlay(container="vending_machine", column="", now_ms=NOW)
    assert refused(fresh, machine) == "bad_request"  # the column is named, (c)(16)
    assert apply(fresh, replace(machine, column="3")).column == "3"
    assert refused(fresh, PutDealInPlay(container="jar", column="3", now_ms=NOW)) == ("bad_request")


def test_an_unregistered_deal_takes_nothing() -> None:
    blank = DealState(deal="d-9")
    assert refused(blank, PutDealInPlay(container="jar", column="", now_ms=NOW)) == "unknown_deal"
    assert refused(blank, RecordSale(count=1, amount=100, seller="s", now_ms=NOW)) == (
        "unknown_deal"
    )


def test_only_complete_identical_deals_are_commingled_c_15() -> None:
    lead = registered("a", "S-a")
    same = registered("b", "S-b")
    assert apply(same, Commingle(lead=lead, now_ms=NOW)).lead == "a"
    # again into the same lead: nothing new (a retry finishes a combination)
    marked = apply(same, Commingle(lead=lead, now_ms=NOW))
    assert rules.decide(marked, Commingle(lead=lead, now_ms=NOW)) == []
    for field, value in (
        ("kind", "coin_board"),
        ("form_number", "F-2"),
        ("ticket_count", 21),
        ("ticket_price", 50),
        ("prizes", FLARE[:2]),
    ):
        other = registered("c", "S-c", **{field: value})
        assert refused(other, Commingle(lead=lead, now_ms=NOW)) == "deals_differ", field
    sold_from = sell(in_play("c"), 1)
    assert refused(sold_from, Commingle(lead=lead, now_ms=NOW)) == "deal_not_complete"
    assert refused(marked, Commingle(lead=registered("z", "S-z"), now_ms=NOW)) == (
        "deal_commingled"
    )
    assert refused(lead, Commingle(lead=sell(in_play("y"), 1), now_ms=NOW)) == ("deal_not_complete")


def test_a_combinations_lead_needs_every_deal_marked_first() -> None:
    lead, b = registered("a", "S-a"), registered("b", "S-b")
    play = PutDealInPlay(container="jar", column="", now_ms=NOW, commingle=("b",), members=(b,))
    assert refused(lead, play) == "deal_not_commingled"
    assert refused(lead, replace(play, members=(None,))) == "unknown_deal"
    marked = apply(b, Commingle(lead=lead, now_ms=NOW))
    assert apply(lead, replace(play, members=(marked,))).deals == ("a", "b")


def test_a_commingled_deal_refuses_play_sales_and_removal_on_its_own() -> None:
    _lead, b = combination("a", "b")
    for command in (
        PutDealInPlay(container="jar", column="", now_ms=NOW),
        RecordSale(count=1, amount=100, seller="s", now_ms=NOW),
        RemoveDeal(now_ms=NOW),
    ):
        with pytest.raises(RuleError) as e:
            rules.decide(b, command)
        assert e.value.code == "deal_commingled" and "a" in e.value.message


# Sales (4620.19(c)(20)).


def test_sales_are_count_times_price_into_the_deals_bank() -> None:
    state = sell(in_play(), 3)
    assert state.sold == 3 and state.sales == 300
    assert refused(state, RecordSale(count=2, amount=150, seller="s", now_ms=NOW)) == (
        "amount_mismatch"
    )


def test_never_more_than_the_unsold_tickets_and_the_last_closes_the_deal() -> None:
    state = sell(in_play(), 15)
    assert refused(state, RecordSale(count=6, amount=600, seller="s", now_ms=NOW)) == (
        "more_than_unsold"
    )
    events = rules.decide(state, RecordSale(count=5, amount=500, seller="s", now_ms=NOW))
    assert events[-1] == DealClosed(reason="sold_out", unsold=0, at=NOW)
    closed = rules.fold(state, events)
    assert refused(closed, RecordSale(count=1, amount=100, seller="s", now_ms=NOW)) == (
        "deal_closed"
    )


def test_a_sale_needs_the_deal_in_play() -> None:
    assert refused(registered(), RecordSale(count=1, amount=100, seller="s", now_ms=NOW)) == (
        "deal_not_in_play"
    )


def test_a_combinations_receptacle_holds_every_deals_tickets() -> None:
    lead, b, _c = combination("a", "b", "c")
    assert lead.receptacle_tickets == 60
    events = rules.decide(lead, RecordSale(count=60, amount=6000, seller="s", now_ms=NOW))
    assert isinstance(events[-1], DealClosed)
    closed = rules.fold(lead, events)
    close = CloseCommingled(lead="a", reason="sold_out", at=closed.closed_at)
    assert rules.decide(b, close) == [DealClosed(reason="sold_out", unsold=0, at=NOW)]
    assert rules.decide(apply(b, close), close) == []
    assert refused(registered("x", "S-x"), close) == "deal_not_commingled"


# Redemptions (4620.19(c)(3), (c)(9), (c)(11)).


def test_a_redemption_records_the_ticket_defaced_and_kept_a_year() -> None:
    (event,) = rules.decide(
        sell(in_play(), 1), RedeemTicket(prize=0, ticket="T-1", redeemed_by="s", now_ms=NOW)
    )
    assert isinstance(event, TicketRedeemed)
    assert event.defaced and event.retain_until == "2027-11-18"
    assert (event.value, event.kind) == (500, "cash")


def test_retention_is_a_year_on_in_the_organizations_calendar() -> None:
    late = int(dt.datetime(2026, 12, 31, 23, 30, tzinfo=ZoneInfo(NY)).timestamp() * 1000)
    assert rules.retain_until(late, NY) == "2027-12-31"  # 04:30 UTC on 1 January
    leap = int(dt.datetime(2028, 2, 29, 12, tzinfo=ZoneInfo(NY)).timestamp() * 1000)
    assert rules.retain_until(leap, NY) == "2029-03-01"  # never short of a year


def test_a_merchandise_prize_awards_its_item_at_its_value() -> None:
    bike = (FlarePrize(5000, 1, "merchandise", "A bicycle", "cost"),)
    state = redeem(in_play(kind="seal_card", prizes=bike), 0, "T-1")
    assert state.merchandise_paid == 5000 and state.cash_paid == 0


def test_a_prize_the_flare_no_longer_holds_is_refused() -> None:
    state = redeem(in_play(), 0, "T-1")
    assert state.awarded == (1, 0, 0)
    command = RedeemTicket(prize=0, ticket="T-2", redeemed_by="s", now_ms=NOW)
    assert refused(state, command) == "prize_not_available"
    assert refused(state, replace(command, prize=3)) == "prize_not_available"
    assert refused(state, replace(command, prize=1, ticket="T-1")) == "ticket_redeemed"


def test_a_redemption_needs_the_deal_in_play_through_its_lead_when_commingled() -> None:
    command = RedeemTicket(prize=0, ticket="T-1", redeemed_by="s", now_ms=NOW)
    assert refused(registered(), command) == "deal_not_in_play"
    lead, b = combination("a", "b")
    assert redeem(b, 0, "B-1", lead=lead).awarded == (1, 0, 0)
    assert refused(b, command) == "deal_not_in_play"  # the lead unread
    marked = apply(registered("c", "S-c"), Commingle(lead=registered("a", "S-a"), now_ms=NOW))
    assert refused(marked, replace(command, lead=registered("a", "S-a"))) == "deal_not_in_play"


def test_a_closed_deal_takes_redemptions_until_its_quarter_ends() -> None:
    zone = ZoneInfo(NY)
    closed_ms = int(dt.datetime(2026, 12, 31, 22, tzinfo=zone).timestamp() * 1000)
    state = replace(sell(in_play(), 20), closed=True, closed_at=closed_ms)
    before = int(dt.datetime(2026, 12, 31, 23, 59, tzinfo=zone).timestamp() * 1000)
    after = int(dt.datetime(2027, 1, 1, 0, 0, tzinfo=zone).timestamp() * 1000)
    assert redeem(state, 0, "T-1", at=before).awarded[0] == 1
    command = RedeemTicket(prize=0, ticket="T-1", redeemed_by="s", now_ms=after, timezone=NY)
    assert refused(state, command) == "deal_reported"


def test_quarters_are_the_organizations_calendar_quarters() -> None:
    zone = ZoneInfo(NY)
    for (y, m, d), (ny, nm) in (
        ((2026, 1, 1), (2026, 4)),
        ((2026, 3, 31), (2026, 4)),
        ((2026, 4, 1), (2026, 7)),
        ((2026, 9, 30), (2026, 10)),
        ((2026, 12, 31), (2027, 1)),
    ):
        at = int(dt.datetime(y, m, d, 23, 59, tzinfo=zone).timestamp() * 1000)
        end = int(dt.datetime(ny, nm, 1, tzinfo=zone).timestamp() * 1000)
        assert quarters.quarter_end_ms(at, NY) == end


# Out of play (4620.19(c)(18), reading BJAR-2).


def test_removal_needs_75_percent_by_count_and_by_value() -> None:
    # Four prizes, $10: the $5, a $2 and the $1 are 3 of 4 by count and $8 of $10 by value.
    state = sell(in_play(), 10)
    for line, ticket in ((0, "T-1"), (1, "T-2")):
        state = redeem(state, line, ticket)
    with pytest.raises(RuleError) as e:
        rules.decide(state, RemoveDeal(now_ms=NOW))
    assert e.value.code == "too_few_prizes_awarded"
    assert "2 of 4" in e.value.message and "700 of 1000" in e.value.message
    state = redeem(state, 2, "T-3")
    (event,) = rules.decide(state, RemoveDeal(now_ms=NOW))
    assert event == DealClosed(reason="removed", unsold=10, at=NOW)


def test_75_percent_by_count_alone_is_not_enough() -> None:
    flare = (
        FlarePrize(1000, 1, "cash", "", "cash"),
        FlarePrize(100, 3, "cash", "", "cash"),
    )
    state = sell(in_play(prizes=flare), 5)
    for i in range(3):
        state = redeem(state, 1, f"T-{i}")
    assert rules.removal_progress([state])["awarded_count"] == 3  # 75 % by count
    assert refused(state, RemoveDeal(now_ms=NOW)) == "too_few_prizes_awarded"  # 300 of 1300


def test_a_combination_is_removed_as_one_counting_all_its_flares() -> None:
    lead, b = combination("a", "b")
    lead = sell(lead, 10)
    for line, ticket in ((0, "A-1"), (1, "A-2"), (1, "A-3"), (2, "A-4")):
        lead = redeem(lead, line, ticket)
    # the lead's flare is all awarded, b's not at all: 50 % of the combination's prizes
    assert refused(lead, RemoveDeal(now_ms=NOW, members=(b,))) == "too_few_prizes_awarded"
    for line, ticket in ((0, "B-1"), (1, "B-2"), (1, "B-3")):
        b = redeem(b, line, ticket, lead=lead)
    (event,) = rules.decide(lead, RemoveDeal(now_ms=NOW, members=(b,)))
    assert event == DealClosed(reason="removed", unsold=30, at=NOW)


def test_removal_needs_the_deal_in_play_and_not_closed() -> None:
    assert refused(registered(), RemoveDeal(now_ms=NOW)) == "deal_not_in_play"


# Properties.


def test_a_random_sequence_keeps_the_bank_and_the_flare_seeded() -> None:
    """Whatever is accepted, the bank is sales minus cash prizes paid, and no line awards
    more prizes than the flare lists."""
    rng = random.Random(4620_19)
    for _ in range(50):
        state = in_play()
        tickets = 0
        for _step in range(40):
            try:
                if rng.random() < 0.5:
                    count = rng.randint(1, 6)
                    state = apply(
                        state,
                        RecordSale(
                            count=count,
                            amount=count * 100 + rng.choice((0, 0, 0, 1)),
                            seller="s",
                            now_ms=NOW,
                        ),
                    )
                else:
                    tickets += 1
                    state = redeem(state, rng.randint(0, 3), f"T-{rng.randint(0, tickets)}")
            except RuleError:
                pass
            assert state.sales == state.sold * state.ticket_price
            assert all(a <= p.count for a, p in zip(state.awarded, state.prizes, strict=True))
            assert state.cash_paid == sum(
                a * p.value for a, p in zip(state.awarded, state.prizes, strict=True)
            )
            assert state.sold <= state.ticket_count
            assert state.closed == (state.sold == state.ticket_count)


def test_different_form_numbers_never_share_a_machine_column_c_16() -> None:
    machine = PutDealInPlay(container="vending_machine", column="m1/3", now_ms=NOW)
    fresh = registered()
    assert refused(fresh, replace(machine, column_forms=("F-2",))) == "column_in_use"
    assert apply(fresh, replace(machine, column_forms=("F-1",))).column == "m1/3"
    jar = PutDealInPlay(container="jar", column="", now_ms=NOW, column_forms=("F-2",))
    assert apply(fresh, jar).in_play
