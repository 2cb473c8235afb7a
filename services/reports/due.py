"""When the forms of the GC-7 family are due: pure date arithmetic, each rule with its cite.

Every figure is a named setting; what a date is counted from enters as data (a license
period's last day, an occasion's date in the organization's time zone).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

GC7_FILING_DAYS: Final = 7
"""The GC-7 is filed "within seven days after the conclusion of each license period"
(9 NYCRR 4624.1; GML 195-f(1))."""

GC7_DUE_RULE: Final = "within 7 days after the license period's conclusion (4624.1; GML 195-f(1))"
GC7B_FILING_DAYS: Final = 7
"""The GC-7B is submitted "within seven days" of each Las Vegas Night occasion (NYC DCWP's
reading of the filing, docs/RULES.md "Expenses and the forms", item 9; 4624.1 gives the
GC-7B no deadline of its own)."""

GC7B_DUE_RULE: Final = (
    f"within {GC7B_FILING_DAYS} days after the occasion concluded (NYC DCWP), "
    "and never after the GC-7 (4624.1; GML 195-f(1))"
)


def gc7_due(period_end: date) -> date:
    """The GC-7's deadline: :data:`GC7_FILING_DAYS` days after the license period's last
    day, ``period_end`` (4624.1; GML 195-f(1))."""
    return period_end + timedelta(days=GC7_FILING_DAYS)


def gc7b_due(concluded_on: date, period_end: date | None = None) -> date:
    """The GC-7B's deadline: :data:`GC7B_FILING_DAYS` days after the day the occasion
    concluded (``concluded_on``, in the organization's zone), or the GC-7's of its license
    period (``period_end``) when that is earlier: the earlier date is never late
    (docs/RULES.md "Expenses and the forms", item 9)."""
    due = concluded_on + timedelta(days=GC7B_FILING_DAYS)
    return due if period_end is None else min(due, gc7_due(period_end))


def local_date(unix_ms: int, timezone: str) -> date:
    """The calendar date of ``unix_ms`` in the organization's time zone."""
    return datetime.fromtimestamp(unix_ms / 1000, UTC).astimezone(ZoneInfo(timezone)).date()


def parse_day(text: str) -> date | None:
    """A ``YYYY-MM-DD`` date, or None when ``text`` is not one."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None
