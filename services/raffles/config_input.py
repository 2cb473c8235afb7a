"""A raffle's settings as a person writes them (night file, ``setup_raffle``) turned into
what the pure rules take: date-times as unix ms, the organization's name filled in."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from services.aggregates import RuleError

TIME_KEYS = ("first_drawing_at",)
TIME_LIST_KEYS = ("drawings",)


def to_ms(value: Any, key: str) -> Any:
    """An RFC 3339 date-time with its UTC offset (string or TOML date-time) as unix ms;
    integers (already unix ms) pass; anything else is left for the rules to refuse."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise RuleError(
                "invalid_config", f"{key} {value!r} is not an RFC 3339 date-time"
            ) from None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise RuleError("invalid_config", f"{key} needs its UTC offset")
        return int(value.timestamp() * 1000)
    return value


def raffle_options(raw: Mapping[str, Any], *, organization: str) -> dict[str, Any]:
    """The settings with times in unix ms and ``organization`` defaulting to the night's."""
    if not isinstance(raw, Mapping):
        raise RuleError("invalid_config", "a raffle's settings are an object")
    out = dict(raw)
    out.setdefault("organization", organization)
    if "board" in out and not isinstance(out["board"], str):
        # A server board's commitments come from the board the server dealt, never from
        # the person setting the raffle up.
        raise RuleError("invalid_config", "board must be 'physical' or 'server'")
    for key in TIME_KEYS:
        if key in out:
            out[key] = to_ms(out[key], key)
    for key in TIME_LIST_KEYS:
        if isinstance(out.get(key), list):
            out[key] = [to_ms(v, key) for v in out[key]]
    return out
