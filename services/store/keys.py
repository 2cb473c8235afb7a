"""Every Redis key name the project uses, in one place.

Each key of an organization carries the hash tag ``{org}`` so that one organization lives
on one Redis Cluster slot and the append script can touch all of its keys atomically.
"""

from __future__ import annotations

PREFIX = "cn"


def _tag(org: str) -> str:
    return f"{PREFIX}:{{{org}}}"


def stream(org: str, name: str) -> str:
    """An aggregate's event stream (``table:roulette-1``, ``cage``, ``license``).

    Entry IDs are ``0-<seq>``."""
    return f"{_tag(org)}:stream:{name}"


def meta(org: str, name: str) -> str:
    """An aggregate stream's meta hash: ``v`` (version = last seq) and ``h`` (last hash)."""
    return f"{_tag(org)}:meta:{name}"


def log(org: str) -> str:
    """The organization's log: every event of every aggregate in commit order (``*`` IDs)."""
    return f"{_tag(org)}:log"


def commands(org: str) -> str:
    """Hash of command results by idempotency key (``<role>:<subject>/<command id>``)."""
    return f"{_tag(org)}:commands"


def balances(org: str) -> str:
    """Hash player -> chip balance in cents, moved only by the append script's balance guard."""
    return f"{_tag(org)}:balances"


def streams(org: str) -> str:
    """Set of every aggregate stream name of the organization (for verify and audits)."""
    return f"{_tag(org)}:streams"


def projection(org: str, name: str) -> str:
    """A projection's checkpoint: its state and the last org-log id folded, in one value."""
    return f"{_tag(org)}:projection:{name}"
