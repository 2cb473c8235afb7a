"""Occasions: one casino night of at most 14 consecutive hours (our reading, docs/RULES.md
"Occasions"), its window in the night file, recorded by ``OccasionStarted`` (version 2)
and enforced for every command."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from events.base import from_data
from events.license import OccasionStarted
from services.aggregates import RuleError
from services.license import LicenseState, StartOccasion, decide, evolve, occasion_open
from services.night import NightError, parse_night
from tests.conftest import night_doc

HOUR = 3_600_000


def with_occasion(**occasion: object) -> dict[str, object]:
    doc = night_doc("org-a")
    doc["occasion"] = {"id": "n1", "name": "Night", **occasion}
    return doc


def test_an_occasion_without_a_window_is_always_open() -> None:
    night = parse_night(night_doc("org-a"))
    assert (night.occasion_starts_at, night.occasion_ends_at) == (None, None)
    assert occasion_open(None, None, 0)


def test_the_window_is_14_hours_from_the_start_by_default() -> None:
    night = parse_night(with_occasion(starts_at="2026-11-29T18:00:00-05:00"))
    start = int(datetime(2026, 11, 29, 23, 0, tzinfo=UTC).timestamp() * 1000)
    assert night.occasion_starts_at == start
    assert night.occasion_ends_at == start + 14 * HOUR


def test_open_from_its_start_until_just_before_its_end() -> None:
    start, end = 1_000 * HOUR, 1_005 * HOUR
    assert not occasion_open(start, end, start - 1)
    assert occasion_open(start, end, start)
    assert occasion_open(start, end, end - 1)
    assert not occasion_open(start, end, end)


def test_a_toml_date_time_and_fewer_hours_are_accepted() -> None:
    starts = datetime(2026, 11, 29, 18, 0, tzinfo=timezone(timedelta(hours=-5)))
    night = parse_night(with_occasion(starts_at=starts, hours=6))
    assert night.occasion_ends_at == night.occasion_starts_at + 6 * HOUR  # type: ignore[operator]


@pytest.mark.parametrize(
    ("occasion", "message"),
    [
        ({"starts_at": "2026-11-29T18:00:00"}, "UTC offset"),
        ({"starts_at": "tonight"}, "RFC 3339"),
        ({"starts_at": "2026-11-29T18:00:00Z", "hours": 15}, "1 to 14"),
        ({"starts_at": "2026-11-29T18:00:00Z", "hours": 0}, "1 to 14"),
        ({"hours": 6}, "needs occasion.starts_at"),
    ],
)
def test_a_window_over_14_hours_or_without_an_offset_is_refused(
    occasion: dict[str, object], message: str
) -> None:
    with pytest.raises(NightError, match=message):
        parse_night(with_occasion(**occasion))


def test_an_occasion_is_started_once_and_its_window_is_fixed() -> None:
    command = StartOccasion(occasion="n1", name="Night", starts_at=1, ends_at=2)
    [started] = decide(LicenseState(), command)
    assert started == OccasionStarted(occasion="n1", name="Night", starts_at=1, ends_at=2)
    state = evolve(LicenseState(), started)
    assert decide(state, command) == []
    with pytest.raises(RuleError) as info:
        decide(state, StartOccasion(occasion="n1", name="Night", starts_at=1, ends_at=3))
    assert info.value.code == "conflict"


def test_a_version_1_occasion_is_upcast_on_read_with_no_window() -> None:
    body = from_data("OccasionStarted", 1, {"occasion": "n0", "name": "Old night"})
    assert body == OccasionStarted(occasion="n0", name="Old night", starts_at=None, ends_at=None)
    assert OccasionStarted.VERSION == 2
