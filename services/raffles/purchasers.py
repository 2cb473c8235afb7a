"""Online raffle sales: the purchaser account and the checks before a sale, 4620.22(b)(7).

Pure: no I/O, clock or randomness; today's date and the purchaser's reported location enter
as data, and whether the purchaser is on the self-exclusion list is decided by the caller
(``services.raffles.vault.PurchaserVault.is_excluded``) and passed in as a boolean.

Personal data never leaves this module in a message: no :class:`RuleError` text and no
``repr`` of a :class:`PurchaserAccount` carries a name, a date, an address, a number or an
email. Readings of the regulation are written down in ``docs/PERSONAL_DATA.md``.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Final, Protocol

from services.aggregates import RuleError

__all__ = [
    "ACCOUNT_FIELDS",
    "LICENSE_STATE",
    "MIN_PURCHASER_AGE",
    "CalendarDay",
    "PurchaserAccount",
    "age_on",
    "check_online_purchase",
    "exclusion_fingerprint",
    "exclusion_fingerprints",
    "normalize_name",
    "parse_account",
    "parse_date",
    "parse_exclusion_csv",
]

# --------------------------------------------------------------------------------------------
# Limits (named settings with their cites)
# --------------------------------------------------------------------------------------------

MIN_PURCHASER_AGE: Final = 18
"""4620.22(b)(7)(vi)(c): the platform must keep "persons under the age of 18" from
purchasing a raffle ticket; a purchaser is refused before their 18th birthday."""

LICENSE_STATE: Final = "NY"
"""4620.22(b)(7)(ii): the purchaser must be "located, at the moment of purchase, in this
State" (New York, the state that licenses the raffle); the platform "shall block any
attempts to purchase a raffle ticket from a location outside of this State"."""

_STATE_ALIASES: Final = frozenset({LICENSE_STATE, f"US-{LICENSE_STATE}"})
"""Reported locations read as "in this State": the USPS code and its ISO 3166-2 form."""

ACCOUNT_FIELDS: Final = (
    "legal_name",
    "date_of_birth",
    "account_number",
    "address",
    "email",
    "phone",
)
"""4620.22(b)(7)(iii)(a)-(f), in the regulation's order: legal name, date of birth, an
account number unique to the purchaser, address, email address, telephone number."""

_DATE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
_REDACTED: Final = "<redacted>"


class CalendarDay(Protocol):
    """A calendar day: ``datetime.date`` is one (this module does not import the clock's
    module; callers pass ``date`` objects)."""

    @property
    def year(self) -> int: ...

    @property
    def month(self) -> int: ...

    @property
    def day(self) -> int: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class _Day:
    year: int
    month: int
    day: int


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PurchaserAccount:
    """A raffle ticket account, 4620.22(b)(7)(iii): every field a non-empty string,
    ``date_of_birth`` as ``YYYY-MM-DD``.

    ``repr`` (and so ``str``, f-strings and any log line that prints the object) redacts
    every field: personal data must never reach a log (docs/PERSONAL_DATA.md)."""

    legal_name: str
    date_of_birth: str
    account_number: str
    address: str
    email: str
    phone: str

    def __repr__(self) -> str:
        inner = ", ".join(f"{f.name}={_REDACTED}" for f in fields(self))
        return f"PurchaserAccount({inner})"

    __str__ = __repr__

    def to_json(self) -> dict[str, str]:
        """The account as a JSON object (for the vault's ciphertext, never for a log)."""
        return {name: getattr(self, name) for name in ACCOUNT_FIELDS}


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def _is_leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if _is_leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def parse_date(text: str) -> CalendarDay:
    """A ``YYYY-MM-DD`` calendar date (a real day of the Gregorian calendar, year 1 or
    later); RuleError ``invalid_account`` otherwise. The message does not echo the text."""
    m = _DATE.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        raise RuleError("invalid_account", "date_of_birth must be a date YYYY-MM-DD")
    year, month, day = (int(g) for g in m.groups())
    if year < 1 or not 1 <= month <= 12 or not 1 <= day <= _days_in_month(year, month):
        raise RuleError("invalid_account", "date_of_birth is not a day of the calendar")
    return _Day(year=year, month=month, day=day)


def parse_account(raw: Mapping[str, Any]) -> PurchaserAccount:
    """The purchaser account of 4620.22(b)(7)(iii) from a client's JSON object.

    Every field of :data:`ACCOUNT_FIELDS` must be present and a non-empty string (surrounding
    whitespace is dropped): RuleError ``incomplete_account`` names the missing or empty
    fields. ``invalid_account`` for anything else: not an object, an unknown field, a value
    that is not a string, a date of birth that is not a ``YYYY-MM-DD`` calendar day, an email
    address without a local part, ``@`` and a dotted domain. No message echoes a value."""
    if not isinstance(raw, Mapping):
        raise RuleError("invalid_account", "the purchaser account must be an object")
    unknown = sorted(str(k) for k in raw if k not in ACCOUNT_FIELDS)
    if unknown:
        raise RuleError("invalid_account", f"unknown account fields: {', '.join(unknown)}")
    values: dict[str, str] = {}
    missing: list[str] = []
    for name in ACCOUNT_FIELDS:
        value = raw.get(name)
        if value is None:
            missing.append(name)
            continue
        if not isinstance(value, str):
            raise RuleError("invalid_account", f"{name} must be a string")
        value = value.strip()
        if not value:
            missing.append(name)
        values[name] = value
    if missing:
        raise RuleError(
            "incomplete_account",
            f"a raffle ticket account needs {', '.join(missing)} (4620.22(b)(7)(iii))",
        )
    parse_date(values["date_of_birth"])
    if not _EMAIL.fullmatch(values["email"]):
        raise RuleError("invalid_account", "email is not an email address")
    return PurchaserAccount(**values)


# --------------------------------------------------------------------------------------------
# The checks of a sale
# --------------------------------------------------------------------------------------------


def age_on(date_of_birth: CalendarDay, today: CalendarDay) -> int:
    """Completed years of age on ``today``: a year is added on each birthday.

    Someone born on 29 February has their birthday on 1 March in a common year (the later
    of the two readings, so a minimum age is never reached early; docs/PERSONAL_DATA.md)."""
    before_birthday = (today.month, today.day) < (date_of_birth.month, date_of_birth.day)
    return today.year - date_of_birth.year - (1 if before_birthday else 0)


def _normal_state(location_state: str | None) -> str:
    if not isinstance(location_state, str):
        return ""
    return location_state.strip().upper()


def check_online_purchase(
    account: PurchaserAccount,
    *,
    today: CalendarDay,
    location_state: str | None,
    excluded: bool,
) -> None:
    """May this purchaser buy a raffle ticket online now? 4620.22(b)(7). Returns None or
    raises RuleError, checking in this order:

    - ``incomplete_account``: a field of the account of (b)(7)(iii) is empty;
      ``invalid_account``: the date of birth is not a calendar day or lies after ``today``;
    - ``underage``: under :data:`MIN_PURCHASER_AGE` (18) on ``today``, (b)(7)(vi)(c);
    - ``self_excluded``: on the self-exclusion list, (b)(7)(iv) (``excluded`` is the
      caller's lookup);
    - ``out_of_state``: the reported location is not :data:`LICENSE_STATE` (``NY`` or
      ``US-NY``, any case); a missing or empty location is refused too, since the
      platform must block purchases from outside the State and cannot tell where an
      unlocated purchaser is, (b)(7)(ii).

    The caller records the location as reported, whatever the answer."""
    missing = [name for name in ACCOUNT_FIELDS if not str(getattr(account, name)).strip()]
    if missing:
        raise RuleError(
            "incomplete_account",
            f"a raffle ticket account needs {', '.join(missing)} (4620.22(b)(7)(iii))",
        )
    born = parse_date(account.date_of_birth)
    if (born.year, born.month, born.day) > (today.year, today.month, today.day):
        raise RuleError("invalid_account", "date_of_birth is after today")
    if age_on(born, today) < MIN_PURCHASER_AGE:
        raise RuleError(
            "underage",
            f"no online raffle sale to anyone under {MIN_PURCHASER_AGE} (4620.22(b)(7)(vi)(c))",
        )
    if excluded:
        raise RuleError(
            "self_excluded",
            "no raffle sale to anyone on the self-exclusion list (4620.22(b)(7)(iv))",
        )
    state = _normal_state(location_state)
    if not state:
        raise RuleError(
            "out_of_state",
            "the purchaser's location is unknown; the platform blocks purchases it cannot "
            "place in the State (4620.22(b)(7)(ii))",
        )
    if state not in _STATE_ALIASES:
        raise RuleError(
            "out_of_state",
            f"the purchaser must be in {LICENSE_STATE} at the moment of purchase "
            "(4620.22(b)(7)(ii))",
        )


# --------------------------------------------------------------------------------------------
# The self-exclusion list
# --------------------------------------------------------------------------------------------


def normalize_name(legal_name: str) -> str:
    """A name as the self-exclusion list compares it: Unicode NFKC, case-folded, every run
    of whitespace one space, no leading or trailing space."""
    return " ".join(unicodedata.normalize("NFKC", legal_name).casefold().split())


def exclusion_fingerprint(secret: bytes, legal_name: str, date_of_birth: str) -> str:
    """HMAC-SHA256 (hex) of the normalized legal name and the date of birth, so that the
    self-exclusion list of 4620.22(b)(7)(iv) is matched without keeping names in clear.

    RuleError ``incomplete_account`` for an empty name, ``invalid_account`` for a date that is
    not a ``YYYY-MM-DD`` calendar day."""
    name = normalize_name(legal_name) if isinstance(legal_name, str) else ""
    if not name:
        raise RuleError("incomplete_account", "a self-exclusion entry needs a legal_name")
    born = parse_date(date_of_birth.strip() if isinstance(date_of_birth, str) else "")
    message = f"{name}\x1f{born.year:04d}-{born.month:02d}-{born.day:02d}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def parse_exclusion_csv(text: str) -> list[tuple[str, str]]:
    """The entries ``(legal_name, date_of_birth)`` of a self-exclusion file: CSV with the
    header ``legal_name,date_of_birth`` (extra columns are ignored), blank lines skipped.

    RuleError ``invalid_account`` for a missing header column or a bad row (the message names
    the line, never its content); nothing is returned then, so nothing is loaded."""
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    if "legal_name" not in header or "date_of_birth" not in header:
        raise RuleError(
            "invalid_account", "a self-exclusion file needs the header legal_name,date_of_birth"
        )
    entries: list[tuple[str, str]] = []
    for row in reader:
        name = (row.get("legal_name") or "").strip()
        born = (row.get("date_of_birth") or "").strip()
        if not name and not born:
            continue
        try:
            exclusion_fingerprint(b"check", name, born)
        except RuleError as e:
            raise RuleError("invalid_account", f"line {reader.line_num}: {e.message}") from None
        entries.append((name, born))
    return entries


def exclusion_fingerprints(secret: bytes, entries: Iterable[tuple[str, str]]) -> set[str]:
    """The fingerprints of ``(legal_name, date_of_birth)`` entries (see
    :func:`exclusion_fingerprint`); one bad entry refuses them all."""
    return {exclusion_fingerprint(secret, name, born) for name, born in entries}
