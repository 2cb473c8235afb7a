"""Prometheus metrics of one server process (``GET /metrics``)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

GC_PAUSE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
"""Bounds (seconds) of the garbage-collection pause histogram's buckets."""


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.commands = Counter(
            "casino_commands_total", "Commands answered", ["op", "code"], registry=self.registry
        )
        self.command_seconds = Histogram(
            "casino_command_seconds",
            "Time from a command's arrival to its reply",
            ["op"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
            registry=self.registry,
        )
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

        self._answered: dict[tuple[str, str], Any] = {}
        self._timed: dict[str, Any] = {}

    def answered(self, op: str, code: str, seconds: float | None = None) -> None:
        """Count a command's reply (and time it); label children are looked up once."""
        counter = self._answered.get((op, code))
        if counter is None:
            counter = self._answered[(op, code)] = self.commands.labels(op, code)
        counter.inc()
        if seconds is not None:
            timer = self._timed.get(op)
            if timer is None:
                timer = self._timed[op] = self.command_seconds.labels(op)
            timer.observe(seconds)

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
