"""What a name may hold: a token's ``sub``, ``player`` and tables, and the ids of requests
(``services.gateway.protocol.text_field``)."""

from __future__ import annotations

MAX_NAME_CHARS = 128
"""Longest name, in characters (as command ids and player ids, docs/PROTOCOL.md)."""


CONTROL_CHARS = frozenset(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)))
"""C0 controls, DEL and C1 controls: never part of a name."""


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character of :data:`CONTROL_CHARS`."""
    return not text.isprintable() and any(ch in CONTROL_CHARS for ch in text)


def name_problem(value: object) -> str | None:
    """Why ``value`` may not be a name, or None when it may: a name is a string of 1 to
    :data:`MAX_NAME_CHARS` characters with no control character (C0 U+0000-U+001F, DEL
    U+007F, C1 U+0080-U+009F) and no lone surrogate (U+D800-U+DFFF, which no UTF-8 text
    can carry)."""
    if not isinstance(value, str):
        return "is not a string"
    if not value:
        return "is empty"
    if len(value) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    for ch in value:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code <= 0x9F:
            return f"holds the control character U+{code:04X}"
        if 0xD800 <= code <= 0xDFFF:
            return f"holds the lone surrogate U+{code:04X}"
    return None
