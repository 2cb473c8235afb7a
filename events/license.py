"""Events of the license stream ``license``: what the licensee may run, and its occasions."""

from __future__ import annotations

from dataclasses import dataclass

from events.base import Event, event


@event("LicenseRecorded")
@dataclass(frozen=True, slots=True, kw_only=True)
class LicenseRecorded(Event):
    """The games-of-chance license the night runs under (forms GC-2/GC-5, 4620.2)."""

    organization: str
    license_number: str
    games: tuple[str, ...]
    period_start: str
    period_end: str


@event("OccasionStarted")
@dataclass(frozen=True, slots=True, kw_only=True)
class OccasionStarted(Event):
    """An occasion (one casino night) began; later events count toward it in reports."""

    occasion: str
    name: str
