"""Where a stream should live: rendezvous hashing over the live nodes."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def _weight(node: str, name: str) -> bytes:
    return hashlib.sha256(f"{node}|{name}".encode()).digest()


def ranked(nodes: Iterable[str], name: str) -> list[str]:
    """The nodes in the order they should own ``name``: highest ``sha256(node|name)``
    first. When a node leaves, only the streams it ranked first move (to their second)."""
    return sorted(set(nodes), key=lambda node: _weight(node, name), reverse=True)


def preferred(nodes: Iterable[str], name: str) -> str | None:
    """The node that should own ``name`` among ``nodes`` (None when there are none)."""
    order = ranked(nodes, name)
    return order[0] if order else None
