"""The night file's bell jar settings: ``[organization] timezone`` and ``[bell_jars]``
(services/night.py, services/bell_jars/limits.py)."""

from __future__ import annotations

from typing import Any

import pytest

from services.bell_jars.limits import DealLimits
from services.night import NightError, parse_night
from tests.conftest import night_doc


def test_the_timezone_defaults_to_new_york_and_may_be_set() -> None:
    assert parse_night(night_doc("o")).timezone == "America/New_York"
    doc = night_doc("o", organization={"id": "o", "name": "O", "timezone": "America/Chicago"})
    assert parse_night(doc).timezone == "America/Chicago"


@pytest.mark.parametrize("zone", ["Mars/Olympus", "", "../etc/passwd", 5])
def test_an_unknown_timezone_is_refused(zone: Any) -> None:
    doc = night_doc("o", organization={"id": "o", "name": "O", "timezone": zone})
    with pytest.raises(NightError, match="timezone"):
        parse_night(doc)


def test_the_bell_jar_limits_may_be_lowered() -> None:
    doc = night_doc("o", bell_jars={"max_ticket_price": 100, "max_deal_prizes": 300_000})
    assert parse_night(doc).deal_limits == DealLimits(
        max_ticket_price=100, max_single_prize=100_000, max_deal_prizes=300_000
    )
    assert parse_night(night_doc("o")).deal_limits == DealLimits()


@pytest.mark.parametrize(
    "section",
    [
        {"max_ticket_price": 601},
        {"max_single_prize": 100_001},
        {"max_deal_prizes": 600_001},
        {"max_ticket_price": 0},
        {"max_single_prize": True},
    ],
)
def test_the_bell_jar_limits_are_never_raised(section: dict[str, Any]) -> None:
    with pytest.raises(NightError, match="lower only"):
        parse_night(night_doc("o", bell_jars=section))


def test_an_unknown_bell_jar_key_is_refused() -> None:
    with pytest.raises(NightError, match="unknown key"):
        parse_night(night_doc("o", bell_jars={"max_jar": 1}))
