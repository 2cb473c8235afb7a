"""What a projection is: a deterministic fold over the org log, with no I/O.

A projection owns its accumulator and folds events into it one at a time, in log order;
it must give the same state for the same events whether live or rebuilt
(``casino-night replay``). Its state round-trips through plain data for checkpoints.
"""

from __future__ import annotations

from typing import Any, Protocol


class Projection(Protocol):
    """A fold over the org log. It may also have ``types``, the frozenset of event types
    it folds: the runner then hands it only those (``projections.runner.folds``)."""

    name: str

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        """Fold one event: its type, stream, body data and when it happened (the envelope's
        occurred-at, unix ms)."""
        ...

    def snapshot(self) -> dict[str, Any]:
        """The state as plain data (for checkpoints and comparison)."""
        ...

    def restore(self, data: dict[str, Any]) -> None:
        """Replace the state with a snapshot."""
        ...
