"""What every raffle shares: its limits, its ticket (face, price, serials) and its schedule.

Pure: no I/O, clock or randomness. Times enter as unix milliseconds (``now_ms`` stamped by
the gateway); a calendar day is computed here with integer arithmetic. Readings of the
regulation are in docs/RULES.md, section "Raffles".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from services.aggregates import RuleError
from services.raffles import serials as runs

KINDS: Final = ("standard", "fifty_fifty", "queen_of_hearts", "treasure_chest")
"""The raffle families: a standard raffle and the 50/50 (4620.22), the Search for the
Queen of Hearts (4620.23) and the Treasure Chest (4620.24)."""

DAY_MS: Final = 86_400_000

SALES_WINDOW_DAYS: Final = 180
"""No ticket is sold more than 180 days before the date scheduled for the drawing of the
last ticket in that raffle, 4620.22(b)(9)."""

DEFAULT_MAX_SINGLE_PRIZE: Final = 10_000_000
"""No single prize shall exceed the amount set in General Municipal Law 189(5)(b),
4620.22(b)(1). The statute's figure is not in the regulation text this project was given:
$100,000 is a default the raffle's ``max_single_prize`` setting replaces (docs/RULES.md)."""

DEFAULT_MAX_SERIES_PRIZES: Final = 40_000_000
"""The prizes of one raffle's series together may not exceed General Municipal Law
189(6)(b). Not in the regulation text either: $400,000 is a default the raffle's
``max_series_prizes`` setting replaces (docs/RULES.md)."""

NEED_NOT_BE_PRESENT: Final = "Ticket holders need not be present to win"
"""The statement every ticket but a 50/50 admission-style ticket carries,
4620.22(a)(1)(vi)."""

MAX_TICKETS_PER_SALE: Final = 1_000
"""Tickets one sale may carry: an operator setting against typing errors, not a rule."""

MAX_SERIAL: Final = 10_000_000
"""Highest serial number a raffle may print: an operator setting, not a rule."""

MAX_NAME_LENGTH: Final = 200


def fail(message: str) -> RuleError:
    return RuleError("invalid_config", message)


def _int(
    raw: Mapping[str, Any], key: str, *, low: int, high: int, default: int | None = None
) -> int:
    value = raw.get(key, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise fail(f"{key} must be a whole number from {low} to {high}")
    return value


def _text(raw: Mapping[str, Any], key: str, *, default: str | None = None) -> str:
    value = raw.get(key, default)
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_LENGTH:
        raise fail(f"{key} must be a string of 1 to {MAX_NAME_LENGTH} characters")
    return value.strip()


def _bool(raw: Mapping[str, Any], key: str, default: bool) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise fail(f"{key} must be true or false")
    return value


COMMON_KEYS: Final = frozenset(
    {
        "name",
        "organization",
        "identification_number",
        "location",
        "price",
        "bundles",
        "first_drawing_at",
        "max_single_prize",
        "max_series_prizes",
        "tickets_printed",
    }
)


def check_keys(raw: Mapping[str, Any], allowed: frozenset[str]) -> None:
    if not isinstance(raw, Mapping):
        raise fail("a raffle's configuration is an object")
    unknown = sorted(str(k) for k in raw if k not in allowed)
    if unknown:
        raise fail(f"unknown raffle setting(s): {', '.join(unknown)}")


def parse_common(raw: Mapping[str, Any], kind: str) -> dict[str, Any]:
    """The settings every raffle has, canonical (times as unix ms, money in cents).

    - ``price``: the single-ticket price, uniform, 4620.22(b)(10);
    - ``bundles``: ``[{"tickets": n, "price": cents}]``. A 50/50's admission-style tickets
      may be sold at any bundle prices; every other raffle may have one book price, which
      is printed on each ticket with the single price, 4620.22(b)(10);
    - ``organization``, ``identification_number``, ``location``: printed on every ticket,
      4620.22(a)(1)(i)-(ii);
    - ``first_drawing_at``: when the (first) drawing is scheduled, unix ms;
    - ``max_single_prize``, ``max_series_prizes``: GML 189(5)(b), 189(6)(b) (defaults
      :data:`DEFAULT_MAX_SINGLE_PRIZE`, :data:`DEFAULT_MAX_SERIES_PRIZES`);
    - ``tickets_printed``: the highest serial printed (optional; unlimited when absent)."""
    price = _int(raw, "price", low=1, high=MAX_SERIES_LIMIT)
    bundles_raw = raw.get("bundles", [])
    if not isinstance(bundles_raw, list | tuple):
        raise fail("bundles must be a list of {tickets, price}")
    bundles: list[dict[str, int]] = []
    for b in bundles_raw:
        if not isinstance(b, Mapping) or set(b) != {"tickets", "price"}:
            raise fail("each bundle is {tickets, price}")
        tickets = _int(b, "tickets", low=2, high=MAX_TICKETS_PER_SALE)
        bprice = _int(b, "price", low=1, high=MAX_SERIES_LIMIT)
        if bprice > tickets * price:
            raise fail("a bundle may not cost more than its tickets at the single price")
        bundles.append({"tickets": tickets, "price": bprice})
    if len({b["tickets"] for b in bundles}) != len(bundles):
        raise fail("two bundles of the same number of tickets")
    if kind != "fifty_fifty" and len(bundles) > 1:
        raise fail(
            "only a 50/50 may have several bundle prices; other raffles sell at a uniform "
            "price with at most one book price printed on each ticket (4620.22(b)(10))"
        )
    max_single = _int(
        raw, "max_single_prize", low=1, high=MAX_SERIES_LIMIT, default=DEFAULT_MAX_SINGLE_PRIZE
    )
    max_series = _int(
        raw, "max_series_prizes", low=1, high=MAX_SERIES_LIMIT, default=DEFAULT_MAX_SERIES_PRIZES
    )
    printed = raw.get("tickets_printed")
    out: dict[str, Any] = {
        "name": _text(raw, "name"),
        "organization": _text(raw, "organization"),
        "identification_number": (
            None
            if raw.get("identification_number") is None
            else _text(raw, "identification_number")
        ),
        "location": _text(raw, "location"),
        "price": price,
        "bundles": sorted(bundles, key=lambda b: b["tickets"]),
        "first_drawing_at": _int(raw, "first_drawing_at", low=0, high=2**53 - 1),
        "max_single_prize": max_single,
        "max_series_prizes": max_series,
        "tickets_printed": (
            None if printed is None else _int(raw, "tickets_printed", low=1, high=MAX_SERIAL)
        ),
    }
    return out


MAX_SERIES_LIMIT: Final = 2**53 - 1
"""Largest amount of cents a setting may hold (what every JSON client reads exactly)."""


def ticket_face(raffle: str, kind: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """What every ticket of the raffle carries besides its serial, 4620.22(a)(1)(i)-(vi):
    the organization (and its identification number), where and when the drawings are,
    the price (and book price), the prizes offered and the statement of (a)(1)(vi). A 50/50
    admission-style ticket carries only its serial, on both parts, 4620.22(a)(2)."""
    if kind == "fifty_fifty":
        return {"raffle": raffle, "admission_style": True, "parts": 2}
    return {
        "raffle": raffle,
        "organization": config["organization"],
        "identification_number": config["identification_number"],
        "location": config["location"],
        "drawings": config.get("drawings") or [config["first_drawing_at"]],
        "price": config["price"],
        "book": config["bundles"][0] if config["bundles"] else None,
        "prizes": prize_list(kind, config),
        "statement": NEED_NOT_BE_PRESENT,
    }


def prize_list(kind: str, config: Mapping[str, Any]) -> list[str]:
    """The prizes offered, as printed on the ticket, 4620.22(a)(1)(v)."""
    if kind == "standard":
        return [f"{p['description']} ({p['value']} cents)" for p in config["prizes"]]
    if kind == "queen_of_hearts":
        return [
            "60% of the grand prize pool for the queen of hearts (4620.23(b)(10))",
            "consolation prizes at the odds of 4620.23(b)(8) for any other card",
        ]
    return [
        "five primary prizes of one fifth of the primary prize pool (4620.24(b)(6))",
        "the treasure chest to the key that opens it (4620.24(b)(7))",
    ]


def face_hash(face: Mapping[str, Any]) -> str:
    """SHA-256 of the ticket face as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(face, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def check_price(config: Mapping[str, Any], count: int, amount: int) -> int:
    """The price of ``count`` tickets must be ``count`` times the single price, or a
    bundle's price for exactly its tickets, 4620.22(b)(10); else ``wrong_price``.
    Returns the single-ticket price printed on the tickets."""
    if not 1 <= count <= MAX_TICKETS_PER_SALE:
        raise RuleError("bad_request", f"count must be 1 to {MAX_TICKETS_PER_SALE}")
    price: int = config["price"]
    if amount == count * price:
        return price
    for b in config["bundles"]:
        if b["tickets"] == count and b["price"] == amount:
            return price
    raise RuleError(
        "wrong_price",
        f"{count} ticket(s) cost {count * price} cents at this raffle's uniform price"
        + ("".join(f" or {b['price']} for a bundle of {b['tickets']}" for b in config["bundles"]))
        + f", not {amount} (4620.22(b)(10))",
    )


def sale_serials(
    sold: runs.Runs, top: int, config: Mapping[str, Any], count: int, first: int | None
) -> tuple[int, ...]:
    """The serials of a sale: the printed serial ``first`` (and the ``count - 1`` after it)
    the seller hands out, or the next ones after the highest sold. Serials are the
    consecutively printed numbers of 4620.22(a)(1)(iii); none is sold twice
    (``serial_taken``), none beyond ``tickets_printed`` (``no_such_serial``)."""
    start = top + 1 if first is None else first
    if start < 1:
        raise RuleError("no_such_serial", "serial numbers start at 1")
    serials = tuple(range(start, start + count))
    printed = config.get("tickets_printed")
    if serials[-1] > (printed if printed is not None else MAX_SERIAL):
        raise RuleError("no_such_serial", f"serial {serials[-1]} was not printed for this raffle")
    if runs.overlaps(sold, serials[0], serials[-1]):
        taken = next(s for s in serials if runs.contains(sold, s))
        raise RuleError("serial_taken", f"ticket {taken} of this raffle is already sold")
    return serials


def check_sales_window(scheduled_ms: int, now_ms: int) -> None:
    """No sale more than 180 days before the drawing of the last ticket, 4620.22(b)(9)."""
    if scheduled_ms - now_ms > SALES_WINDOW_DAYS * DAY_MS:
        raise RuleError(
            "too_early",
            f"tickets may be sold at most {SALES_WINDOW_DAYS} days before the drawing they "
            "are for (4620.22(b)(9))",
        )


def check_prize_limits(config: Mapping[str, Any], prize: int, awarded: int) -> None:
    """A prize (as it stands when this money joins it) within GML 189(5)(b), and the
    raffle's prizes together within GML 189(6)(b), 4620.22(b)(1); else
    ``prize_over_limit``."""
    if prize > config["max_single_prize"]:
        raise RuleError(
            "prize_over_limit",
            f"a prize of {prize} cents would exceed the single-prize limit of "
            f"{config['max_single_prize']} (GML 189(5)(b), 4620.22(b)(1))",
        )
    if awarded + prize > config["max_series_prizes"]:
        raise RuleError(
            "prize_over_limit",
            f"the raffle's prizes would reach {awarded + prize} cents, over the series limit "
            f"of {config['max_series_prizes']} (GML 189(6)(b))",
        )


def pick(pool: Sequence[int], indices: Sequence[int]) -> list[int]:
    """Draw ``len(indices)`` distinct items from ``pool`` without replacement: index ``k``
    is in ``range(len(pool) - k)`` (as the CSPRNG drew it) into what is left, in order."""
    left = list(pool)
    out: list[int] = []
    for i in indices:
        if not 0 <= i < len(left):
            raise RuleError("bad_request", "a drawn index is out of range")
        out.append(left.pop(i))
    return out


@dataclass(frozen=True, slots=True)
class Day:
    """A calendar day (``services.raffles.purchasers.CalendarDay``)."""

    year: int
    month: int
    day: int


def calendar_day(unix_ms: int) -> Day:
    """The UTC calendar day of a unix time in ms (days-from-civil inverted, proleptic
    Gregorian), without the clock's module."""
    z = unix_ms // DAY_MS + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return Day(year, month, day)
