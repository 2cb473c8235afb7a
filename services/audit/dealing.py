"""Who checks what when the audit's pass is shared among processes (``services.audit.
shares``, docs/AUDIT.md "Shared among processes"): the shares, and the dealing of each
stream to one of them as the log first names it. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from services.aggregates import TABLE_PREFIX

FIRST_SHARE_WEIGHT = 0.75
"""The first share's part of the tables against another share's (1): it also reads the
log from Redis, decodes every entry's stream and deals the others theirs, and checks every
stream that is no table's. Chosen by measuring the bench's night on 2 cores: 0.65, 0.85
and 1 each gave fewer events/s than 0.75 (docs/AUDIT.md, "Cost")."""


@dataclass(frozen=True, slots=True)
class Share:
    """Share ``index`` (0 is the first, run by the audit's own process) of ``of``."""

    index: int
    of: int

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.of:
            raise ValueError(f"no share {self.index} of {self.of}")


class Owners:
    """Which share checks each stream, decided by the first share as the log first names
    the stream: a table goes to the share with the fewest tables for its weight (the first
    share's :data:`FIRST_SHARE_WEIGHT`, every other's 1; the lower index on a tie); any
    other stream to the first share."""

    __slots__ = ("counts", "owned", "weights")

    def __init__(self, shares: int) -> None:
        self.owned: dict[str, int] = {}
        """Each stream seen so far: the index of the share that checks it."""
        self.counts = [0] * shares
        self.weights = [FIRST_SHARE_WEIGHT, *([1.0] * (shares - 1))]

    def assign(self, stream: str) -> int:
        """Deal ``stream`` (first seen now) to its share; that share's index."""
        owner = 0
        if stream.startswith(TABLE_PREFIX):
            counts, weights = self.counts, self.weights
            owner = min(range(len(counts)), key=lambda k: ((counts[k] + 1) / weights[k], k))
            counts[owner] += 1
        self.owned[stream] = owner
        return owner
