"""The organization's calendar, in its time zone (an IANA name, ``[organization]
timezone``): which quarter (GC-7Q) an instant or a date falls in, where a quarter begins
and ends, the date a redeemed ticket is kept until, and whether text is a date. The one
module of the bell jars that does calendar arithmetic (``datetime``, ``zoneinfo``), always
on times given to it: it never reads the clock. The rules (a closed deal's redemptions end
with its quarter) and the bell jar projection (the quarter's figures) read it from here."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def local_date(ms: int, zone: ZoneInfo) -> date:
    """The calendar date in ``zone`` of the instant ``ms`` (unix milliseconds)."""
    return (_EPOCH + ms * _MS).astimezone(zone).date()


def quarter_of_day(day: date) -> tuple[int, int]:
    """``(year, n)``: the calendar quarter (n from 1 to 4) of a date."""
    return day.year, (day.month - 1) // 3 + 1


def quarter_of_date(day: str) -> list[int] | None:
    """``[year, n]``, the calendar quarter of an ISO date ``YYYY-MM-DD`` (a date has no
    time zone); None for text that is not such a date."""
    try:
        parsed = date.fromisoformat(day) if len(day) == 10 else None
    except ValueError:
        parsed = None
    return None if parsed is None else list(quarter_of_day(parsed))


def quarter_bounds(year: int, n: int, zone: ZoneInfo) -> tuple[int, int]:
    """The first and one past the last unix millisecond of quarter ``n`` of ``year`` in
    ``zone`` (its first day's midnight, local time, to the next quarter's)."""
    start = datetime(year, 3 * n - 2, 1, tzinfo=zone)
    end = datetime(year + (n == 4), 1 if n == 4 else 3 * n + 1, 1, tzinfo=zone)
    return (start - _EPOCH) // _MS, (end - _EPOCH) // _MS


def quarter_end_ms(at_ms: int, timezone: str) -> int:
    """The first instant (unix ms) of the calendar quarter after the one holding ``at_ms``,
    in ``timezone``."""
    zone = ZoneInfo(timezone)
    return quarter_bounds(*quarter_of_day(local_date(at_ms, zone)), zone)[1]


def quarter_first_day(year: int, n: int) -> date:
    """The first calendar day of quarter ``n`` of ``year``."""
    return date(year, 3 * n - 2, 1)


def years_on(now_ms: int, timezone: str, years: int) -> str:
    """The same calendar date ``years`` on from the organization's date at ``now_ms``, as
    ``YYYY-MM-DD`` (29 February: 1 March, so never short of the years)."""
    day = local_date(now_ms, ZoneInfo(timezone))
    try:
        until = day.replace(year=day.year + years)
    except ValueError:  # 29 February
        until = date(day.year + years, 3, 1)
    return until.isoformat()


def is_iso_date(text: str) -> bool:
    """Whether ``text`` is a real calendar date written ``YYYY-MM-DD``."""
    if len(text) != 10:
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True
