"""Prometheus metrics of one server process (``GET /metrics``)."""

from __future__ import annotations

import bisect
import gc
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric

GC_PAUSE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
"""Bounds (seconds) of the garbage-collection pause histogram's buckets."""


COMMAND_SECONDS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
"""Bounds (seconds) of the command latency histogram's buckets."""

WATCHED_REFUSALS = frozenset({"unavailable", "busy"})
"""Reply codes handed to :attr:`Metrics.on_refusal` (the dashboard's alerts)."""


class CommandFigures:
    """The figures of every command's reply: ``casino_commands_total`` by op and code, and
    ``casino_command_seconds`` by op, kept in plain counts (one dict update per reply; the
    client library's metrics take a lock and a call per update) and turned into metrics
    when ``/metrics`` is read. A collector of the metrics registry."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], int] = {}
        self.timings: dict[str, list[float]] = {}
        """Per op: the count in each bucket (the last one beyond every bound), then the sum."""

    def answered(self, op: str, code: str, seconds: float | None) -> None:
        key = (op, code)
        counts = self.counts
        counts[key] = counts.get(key, 0) + 1
        if seconds is not None:
            timing = self.timings.get(op)
            if timing is None:
                timing = self.timings[op] = [0.0] * (len(COMMAND_SECONDS_BUCKETS) + 2)
            # A bucket counts the values up to and including its bound, as Prometheus's do.
            timing[bisect.bisect_left(COMMAND_SECONDS_BUCKETS, seconds)] += 1
            timing[-1] += seconds

    def collect(self) -> Iterator[Metric]:
        commands = CounterMetricFamily(
            "casino_commands_total", "Commands answered", labels=["op", "code"]
        )
        for (op, code), count in self.counts.items():
            commands.add_metric([op, code], count)
        yield commands
        seconds = HistogramMetricFamily(
            "casino_command_seconds", "Time from a command's arrival to its reply", labels=["op"]
        )
        # The bounds as the client library writes them ("0.001", "1.0"); the test compares.
        bounds = [*(repr(float(b)) for b in COMMAND_SECONDS_BUCKETS), "+Inf"]
        for op, timing in self.timings.items():
            cumulative = 0.0
            buckets = []
            for bound, in_bucket in zip(bounds, timing[:-1], strict=True):
                cumulative += in_bucket
                buckets.append((bound, cumulative))
            seconds.add_metric([op], buckets, timing[-1])
        yield seconds


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.commands = CommandFigures()
        """``casino_commands_total`` and ``casino_command_seconds``, counted per reply."""
        self.registry.register(self.commands)
        self.batches = Histogram(
            "casino_append_batch_size",
            "Commands per actor batch (group commit)",
            buckets=(1, 2, 4, 8, 16, 32, 64),
            registry=self.registry,
        )
        self.batch_seconds = Histogram(
            "casino_append_batch_seconds",
            "Time an actor batch takes: decide, append, publish",
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1),
            registry=self.registry,
        )
        self.connections = Gauge(
            "casino_ws_connections", "Open websocket connections", registry=self.registry
        )
        self.slow_disconnects = Counter(
            "casino_ws_slow_disconnects_total",
            "Clients disconnected because their send queue was full",
            registry=self.registry,
        )
        self.checkpoint_rejections = Counter(
            "casino_projection_checkpoint_rejected_total",
            "Projection checkpoints discarded because their MAC was missing or wrong",
            registry=self.registry,
        )
        self.forwarded = Counter(
            "casino_forwarded_commands_total",
            "Commands sent to the server process that owns their stream",
            registry=self.registry,
        )
        self.fenced = Counter(
            "casino_fenced_appends_total",
            "Appends refused because this process's lease on the stream was gone",
            registry=self.registry,
        )
        self.leases = Gauge(
            "casino_leases_held", "Aggregate streams this process owns", registry=self.registry
        )

        self.gc_pause = Histogram(
            "casino_gc_pause_seconds",
            "Pauses of the cyclic garbage collector (the whole process waits), by generation",
            ["generation"],
            buckets=GC_PAUSE_BUCKETS,
            registry=self.registry,
        )
        self.gc_longest = Gauge(
            "casino_gc_pause_longest_seconds",
            "The longest pause of the cyclic garbage collector since it was watched, by generation",
            ["generation"],
            registry=self.registry,
        )
        self._gc_pauses = [self.gc_pause.labels(str(g)) for g in range(3)]
        self._gc_longest = [self.gc_longest.labels(str(g)) for g in range(3)]
        self._gc_max = [0.0, 0.0, 0.0]
        self._gc_started = 0.0
        self.on_refusal: Callable[[str], None] | None = None
        """Called with the code of each reply in :data:`WATCHED_REFUSALS`."""

    def answered(self, op: str, code: str, seconds: float | None = None) -> None:
        """Count a command's reply (and time it)."""
        self.commands.answered(op, code, seconds)
        if code in WATCHED_REFUSALS:
            self.refused(code)

    def refused(self, code: str) -> None:
        """A reply of a watched code (also one answered before its command was parsed,
        which is not counted per op): tell :attr:`on_refusal`."""
        if self.on_refusal is not None:
            self.on_refusal(code)

    def observe_batch(self, size: int, seconds: float) -> None:
        self.batches.observe(size)
        self.batch_seconds.observe(seconds)

    def watch_gc(self) -> Callable[[], None]:
        """Time every pass of the cyclic garbage collector (``gc.callbacks``) into
        ``casino_gc_pause_seconds`` and ``casino_gc_pause_longest_seconds`` by generation
        (0, 1, 2; the process is paused for the whole pass). Returns the function that stops
        watching. One process-wide hook: a server watches once, at start."""
        clock = time.perf_counter

        def on_gc(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                self._gc_started = clock()
                return
            took = clock() - self._gc_started
            generation = info["generation"]
            self._gc_pauses[generation].observe(took)
            if took > self._gc_max[generation]:
                self._gc_max[generation] = took
                self._gc_longest[generation].set(took)

        gc.callbacks.append(on_gc)

        def stop() -> None:
            if on_gc in gc.callbacks:
                gc.callbacks.remove(on_gc)

        return stop

    def render(self) -> bytes:
        out: bytes = generate_latest(self.registry)
        return out
