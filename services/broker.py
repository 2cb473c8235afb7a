"""In-process publish/subscribe of appended events, by stream, for the websocket fan-out.

An actor publishes its events right after the append succeeds, in seq order. Subscribers
of the org log (``log``) are fed by one reader that tails the org-log stream itself
(:meth:`publish_log`), because actors of different streams publish concurrently and only
the log holds their commit order. A subscriber is a callback that must not block: the
gateway's callback encodes the frame once and puts it on each client's bounded queue.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from events.envelope import Envelope

LOG = "log"
Listener = Callable[[Envelope], None]


class Broker:
    """Listeners by stream name; ``publish`` calls them synchronously, in order."""

    def __init__(self) -> None:
        self._listeners: defaultdict[str, set[Listener]] = defaultdict(set)

    def add(self, stream: str, listener: Listener) -> None:
        self._listeners[stream].add(listener)

    def remove(self, stream: str, listener: Listener) -> None:
        listeners = self._listeners.get(stream)
        if listeners is not None:
            listeners.discard(listener)
            if not listeners:
                del self._listeners[stream]

    def publish(self, envelopes: Sequence[Envelope]) -> None:
        """An aggregate's events, in seq order, to that stream's subscribers."""
        for env in envelopes:
            for listener in tuple(self._listeners.get(env.stream, ())):
                listener(env)

    def publish_log(self, envelopes: Sequence[Envelope]) -> None:
        """Org-log entries, in log order, to the log's subscribers."""
        for env in envelopes:
            for listener in tuple(self._listeners.get(LOG, ())):
                listener(env)

    def subscribers(self, stream: str) -> int:
        return len(self._listeners.get(stream, ()))
