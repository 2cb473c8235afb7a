"""The actors' adapters (services/bell_jars/actor.py): the deal's limits and timezone reach
the rules, its replies, and the serial registry's claims."""

from __future__ import annotations

from dataclasses import replace

import pytest

from events.bell_jars import DealSerialClaimed
from services.aggregates import RuleError
from services.bell_jars.actor import ClaimSerial, DealRules, SerialRegistryRules
from services.bell_jars.limits import DealLimits
from services.bell_jars.state import DealState, RedeemTicket
from tests.unit.bell_jars.support import NOW, in_play, registration, sell


def test_the_deal_adapter_applies_the_night_files_limits() -> None:
    adapter = DealRules(DealLimits(max_ticket_price=50))
    state = adapter.initial("deal:d-1")
    assert state == DealState(deal="d-1")
    with pytest.raises(RuleError) as e:
        adapter.decide(state, registration())
    assert e.value.code == "price_over_limit"


def test_the_deal_adapter_dates_a_redemption_in_the_organizations_timezone() -> None:
    # 2026-11-18 03:00 UTC is still the 17th in Honolulu.
    at = 1_795_000_000_000 - (1_795_000_000_000 % 86_400_000) + 3 * 3_600_000
    command = RedeemTicket(prize=0, ticket="T-1", redeemed_by="s", now_ms=at)
    state = sell(in_play(), 1)
    (ny,) = DealRules().decide(state, command)
    (hawaii,) = DealRules(timezone="Pacific/Honolulu").decide(state, command)
    assert ny.retain_until == "2027-11-17"  # type: ignore[attr-defined]
    assert hawaii.retain_until == "2027-11-17"  # type: ignore[attr-defined]
    late = replace(command, now_ms=at + 3 * 3_600_000)  # 06:00 UTC: the 18th in New York
    (ny_late,) = DealRules().decide(state, late)
    (hawaii_late,) = DealRules(timezone="Pacific/Honolulu").decide(state, late)
    assert ny_late.retain_until == "2027-11-18"  # type: ignore[attr-defined]
    assert hawaii_late.retain_until == "2027-11-17"  # type: ignore[attr-defined]


def test_events_are_correlated_with_the_deal_or_its_lead() -> None:
    adapter = DealRules()
    assert adapter.correlation(DealState(deal="d-1")) is None
    assert adapter.correlation(in_play()) == "d-1"
    assert adapter.correlation(replace(in_play(), lead="d-0")) == "d-0"


def test_the_registry_claims_a_serial_once_for_one_deal() -> None:
    registry = SerialRegistryRules()
    state = registry.initial("deal-serials")
    (claimed,) = registry.decide(state, ClaimSerial(serial="S-1", deal="d-1", now_ms=NOW))
    assert claimed == DealSerialClaimed(serial="S-1", deal="d-1", at=NOW)
    state = registry.evolve(state, claimed)
    assert state.claims == {"S-1": "d-1"} and state.version == 1
    assert registry.decide(state, ClaimSerial(serial="S-1", deal="d-1", now_ms=NOW)) == []
    with pytest.raises(RuleError) as e:
        registry.decide(state, ClaimSerial(serial="S-1", deal="d-2", now_ms=NOW))
    assert e.value.code == "duplicate_serial"
