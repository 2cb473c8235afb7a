"""Reading client requests: JSON, the checks every request gets, and the field parsers.

Everything a client sends is checked before it reaches an actor: shape and types
(``bad_request``), amounts (``bad_request`` for zero, negative or fractional, ``over_limit``
for amounts beyond any limit); each op's fields, its aggregate (``unknown_table``) and the
principal's right to send it (``forbidden``) are declared in :mod:`services.gateway.ops`,
which uses the parsers here. The game's own checks (``invalid_bet``, ``wager_not_offered``,
``over_limit``, ``bets_closed``…) run in the actor's ``decide``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Collection, Mapping
from typing import Any

import msgspec

from services.limits import MAX_SAFE_AMOUNT_CENTS
from services.text import MAX_NAME_CHARS, has_control

MAX_ID_LENGTH = MAX_NAME_CHARS
MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects a request may have (a bet or an outcome needs 3):
deeper is ``bad_request``, refused before anything walks it recursively."""
MAX_JSON_CONTAINERS = 512
"""Most arrays and objects a request may have, counted as ``[`` and ``{`` characters in its
text (strings included): refused before it is parsed, so that no request costs more than
a fraction of a millisecond to parse and check (an ``add_stock`` of 100 items has 101)."""
MAX_JSON_COMMAS = 4096
"""Most commas a request's text may hold, strings included (about as many values)."""
MSGPACK_INT_RANGE = (-(2**63), 2**64 - 1)
"""Whole numbers the event store can encode (msgpack): a request holding any other is
``bad_request``, so no command can fail later when its events are encoded."""
MAX_SAFE_POSITION = 2**53 - 1
"""Largest seq (and largest part of an org-log id) a ``since`` may name: the largest
integer every JSON reader keeps exactly, and far past any stream's head."""
STREAM_OPS = frozenset({"subscribe", "unsubscribe"})
MAX_LOCATION_BYTES = 2048
"""Largest reported location (JSON) an online sale may carry."""


class ProtocolError(Exception):
    """A request refused before any actor sees it; ``code`` is the stable error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def parse_json(text: str | bytes, *, check: bool = True) -> dict[str, Any]:
    """One request object, checked (unless ``check`` is false: then the caller runs
    :func:`check_value`) so that nothing in it can fail later: at most
    :data:`MAX_JSON_DEPTH` levels deep, text that is valid Unicode (no lone surrogates, as
    JSON's ``\\ud800`` escapes allow), whole numbers the store can encode."""
    _check_width(text)
    try:
        msg = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise ProtocolError("bad_request", "malformed JSON") from None
    except RecursionError:
        raise ProtocolError("bad_request", _too_deep()) from None
    if not isinstance(msg, dict):
        raise ProtocolError("bad_request", "a request is one JSON object")
    if check:
        check_request(text, msg)
    return msg


_LONG_NUMBER = re.compile(r"\d{19}")
"""19 digits in a row: a whole number that may be beyond 64 bits (2^63 has 19)."""
_LONG_DIGITS = re.compile(rb"\d{19}")


def check_request(text: str | bytes, msg: Any) -> None:
    """:func:`check_value` of a request parsed from ``text``, walked only when the text
    could hold what it refuses: a lone surrogate needs a ``\\u`` escape or text that is
    not ASCII (``json`` decodes bytes with ``surrogatepass``), too deep a nesting more than
    :data:`MAX_JSON_DEPTH` brackets, a number out of range 19 digits. A plain request is
    passed by a scan of its text."""
    if isinstance(text, bytes):
        suspect = (
            not text.isascii()
            or b"\x00" in text  # UTF-16 or -32, which json reads as well
            or b"\\u" in text
            or text.count(b"[") + text.count(b"{") > MAX_JSON_DEPTH
            or _LONG_DIGITS.search(text) is not None
        )
    else:
        suspect = (
            not text.isascii()
            or "\\u" in text
            or text.count("[") + text.count("{") > MAX_JSON_DEPTH
            or _LONG_NUMBER.search(text) is not None
        )
    if suspect:
        check_value(msg)


RANGE_CHECKED = frozenset({"amount"})
"""Top-level fields whose own check gives out-of-range numbers their code (an amount over
2^53 - 1 is ``over_limit``)."""


def request_id(msg: Mapping[str, Any]) -> Any:
    """The ``id`` a reply echoes as ``re``: the request's, if it is a string or a finite
    number (``None`` otherwise: an id is never an object, a list, NaN or infinite)."""
    value = msg.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None  # NaN and infinities are not JSON
    return value


def _check_width(text: str | bytes) -> None:
    """Refuse (``bad_request``) a request with more than :data:`MAX_JSON_CONTAINERS` arrays
    and objects or :data:`MAX_JSON_COMMAS` commas, by counting characters: before parsing."""
    if isinstance(text, bytes):
        containers = text.count(b"[") + text.count(b"{")
        commas = text.count(b",")
    else:
        containers = text.count("[") + text.count("{")
        commas = text.count(",")
    if containers > MAX_JSON_CONTAINERS or commas > MAX_JSON_COMMAS:
        raise ProtocolError(
            "bad_request",
            f"a request holds at most {MAX_JSON_CONTAINERS} arrays and objects and "
            f"{MAX_JSON_COMMAS} commas",
        )


def _too_deep() -> str:
    return f"the request nests deeper than {MAX_JSON_DEPTH} levels"


def check_value(value: Any) -> None:
    """Refuse (``bad_request``) JSON data nested deeper than :data:`MAX_JSON_DEPTH`, text
    that is not valid Unicode, or a whole number outside :data:`MSGPACK_INT_RANGE` (but an
    ``amount``'s, which its own check refuses as ``over_limit``).

    Iterative, so a hostile nesting cannot exhaust the stack here either."""
    low, high = MSGPACK_INT_RANGE
    stack: list[tuple[Any, int]] = [(value, 1)]
    if isinstance(value, dict):
        # The request object: its own fields, the range-checked ones without their number.
        stack = [(k, 1) for k in value]
        stack += [(v, 2) for k, v in value.items() if not (k in RANGE_CHECKED and _is_int(v))]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if not _valid_text(item):
                raise ProtocolError("bad_request", "text must be valid Unicode (a lone surrogate)")
        elif isinstance(item, bool) or item is None or isinstance(item, float):
            continue
        elif isinstance(item, int):
            if not low <= item <= high:
                raise ProtocolError("bad_request", "a whole number is out of range")
        elif isinstance(item, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise ProtocolError("bad_request", _too_deep())
            if isinstance(item, dict):
                for key, child in item.items():
                    stack.append((key, depth))
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _valid_text(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def idempotency_key(role: str, sub: str, command_id: str) -> str:
    """``<role>:<sub>/<id>``, each part percent-encoded (``%``, ``:``, ``/``) so that no two
    (role, sub, id) share a key: cashier ``desk/1`` with id ``7`` and cashier ``desk``
    with id ``1/7`` are different commands (docs/PROTOCOL.md "Idempotency")."""
    return f"{_quote(role)}:{_quote(sub)}/{_quote(command_id)}"


def _quote(part: str) -> str:
    if "%" in part or ":" in part or "/" in part:
        return part.replace("%", "%25").replace(":", "%3A").replace("/", "%2F")
    return part


def since_seq(value: Any) -> int:
    """A ``since`` of an aggregate stream: a seq from 0 to :data:`MAX_SAFE_POSITION`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProtocolError("bad_request", "since must be a seq >= 0")
    if value > MAX_SAFE_POSITION:
        raise ProtocolError("bad_request", f"since must be a seq <= {MAX_SAFE_POSITION}")
    return value


def since_log_id(value: Any) -> str:
    """A ``since`` of the org log: ``"<ms>-<n>"`` (each part at most
    :data:`MAX_SAFE_POSITION`), or ``0`` / ``"0"`` for the beginning. Returns the id, or
    ``"0"``."""
    bad = ProtocolError("bad_request", "since must be an org-log id or 0")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise bad
    if value == 0 or value == "0":
        return "0"
    if not isinstance(value, str):
        raise bad
    ms, sep, n = value.partition("-")
    if not (sep and ms.isascii() and n.isascii() and ms.isdigit() and n.isdigit()):
        raise bad
    if len(ms) > 16 or len(n) > 16 or max(int(ms), int(n)) > MAX_SAFE_POSITION:
        raise bad
    return value


def field(msg: Mapping[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    """A required field of the given JSON type (``bad_request`` when missing or mistyped)."""
    if name not in msg:
        raise ProtocolError("bad_request", f"missing field {name!r}")
    value = msg[name]
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ProtocolError("bad_request", f"field {name!r} must be {names}")
    return value


def text_field(msg: Mapping[str, Any], name: str) -> str:
    """An id-like text field: 1 to :data:`MAX_ID_LENGTH` characters, no control
    characters (``bad_request``)."""
    value: str = field(msg, name, str)
    if not value or len(value) > MAX_ID_LENGTH:
        raise ProtocolError(
            "bad_request", f"field {name!r} must be 1 to {MAX_ID_LENGTH} characters"
        )
    if has_control(value):
        raise ProtocolError("bad_request", f"field {name!r} may not hold control characters")
    return value


MAX_LOG_TYPES = 64
"""At most this many event types in a ``log`` subscription's ``types`` filter (there are
fewer kinds of event than that)."""


def log_types_field(msg: Mapping[str, Any], known: Collection[str]) -> frozenset[str] | None:
    """A ``log`` subscription's optional ``types``: a non-empty list of at most
    :data:`MAX_LOG_TYPES` event type names the server knows (``bad_request``); None when
    absent (every event)."""
    if "types" not in msg:
        return None
    value = msg["types"]
    if not isinstance(value, list) or not value or len(value) > MAX_LOG_TYPES:
        raise ProtocolError(
            "bad_request", f"field 'types' must be a list of 1 to {MAX_LOG_TYPES} event types"
        )
    unknown = [t for t in value if not isinstance(t, str) or t not in known]
    if unknown:
        raise ProtocolError("bad_request", f"unknown event type {str(unknown[0])[:64]!r}")
    return frozenset(value)


def amount_field(msg: Mapping[str, Any]) -> int:
    """A positive whole number of cents."""
    if "amount" not in msg:
        raise ProtocolError("bad_request", "missing field 'amount'")
    value = msg["amount"]
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 200.0 is 200 cents; 2.5 is not a number of cents
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError("bad_request", "amount must be a whole number of cents")
    if value <= 0:
        raise ProtocolError("bad_request", "amount must be positive")
    if value > MAX_SAFE_AMOUNT_CENTS:
        raise ProtocolError(
            "over_limit", f"amount is over the largest amount {MAX_SAFE_AMOUNT_CENTS}"
        )
    return value


def fingerprint(msg: Mapping[str, Any]) -> str:
    """What a command asks, without its id: a retry must ask the same.

    The SHA-256 (hex) of the request without ``id`` as canonical JSON: keys sorted at
    every level, no spaces, every character outside printable ASCII escaped (``\\uXXXX``),
    so another key order or other whitespace is the same command. An online sale's
    reported location is personal data: only its ``state`` is part of the fingerprint (a
    retry may report a slightly different position)."""
    body = {k: v for k, v in msg.items() if k != "id"}
    location = body.get("location")
    if isinstance(location, Mapping):
        body["location"] = {"state": location.get("state")}
    return _json_fingerprint(body)


def _json_fingerprint(body: Mapping[str, Any]) -> str:
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()


_SORTED = msgspec.json.Encoder(order="sorted")


def typed_fingerprint(body: dict[str, Any]) -> str:
    """:func:`fingerprint` of a request already without its ``id`` and known to hold no
    float (strings, whole numbers, booleans, null, and lists and objects of them, as the
    typed decoder of :mod:`services.gateway.ops` reads them): the same value, computed
    without the standard library's encoder.

    msgspec writes the same canonical bytes as ``json.dumps(sort_keys=True)`` for such
    data whenever its output is printable ASCII (``json`` escapes DEL and everything past
    ASCII, msgspec writes them as they are): otherwise the standard encoder computes it.
    So a stored fingerprint matches a retry whichever version computed either."""
    canonical = _SORTED.encode(body)
    if canonical.isascii() and b"\x7f" not in canonical:
        return hashlib.sha256(canonical).hexdigest()
    return _json_fingerprint(body)


def int_field(msg: Mapping[str, Any], name: str, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high`` (``2.0`` is 2; ``bad_request`` otherwise)."""
    value = field(msg, name, (int, float))
    if isinstance(value, float):
        if not value.is_integer():
            raise ProtocolError("bad_request", f"{name} must be a whole number")
        value = int(value)
    if not low <= value <= high:
        raise ProtocolError("bad_request", f"{name} must be from {low} to {high}")
    return int(value)
