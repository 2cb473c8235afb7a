"""Events of the license stream ``license``: what the licensee may run, and its occasions."""

from __future__ import annotations

from dataclasses import dataclass

from events.base import Data, Event, event, upcaster


@event("LicenseRecorded", version=2)
@dataclass(frozen=True, slots=True, kw_only=True)
class LicenseRecorded(Event):
    """The games-of-chance license the night runs under (forms GC-2/GC-5, 4620.2).

    Version 2 adds ``tie_option``: the Black Jack tie option (1, 2 or 3) the license shows,
    as the application selected it (4620.5(h)); None when the license lists no Black Jack."""

    organization: str
    license_number: str
    games: tuple[str, ...]
    period_start: str
    period_end: str
    tie_option: int | None = None


@upcaster("LicenseRecorded", 1)
def _license_without_tie_option(data: Data) -> Data:
    """Version 1 had no tie option (no license listed Black Jack before it)."""
    return {**data, "tie_option": None}


@event("OccasionStarted", version=2)
@dataclass(frozen=True, slots=True, kw_only=True)
class OccasionStarted(Event):
    """An occasion (one casino night) began; later events count toward it in reports.

    Version 2 adds the occasion's window (unix ms), when the night file sets one: tables and
    the cage take commands only inside it."""

    occasion: str
    name: str
    starts_at: int | None = None
    ends_at: int | None = None


@upcaster("OccasionStarted", 1)
def _occasion_without_window(data: Data) -> Data:
    """Version 1 had no window: an occasion open at any time."""
    return {**data, "starts_at": None, "ends_at": None}
