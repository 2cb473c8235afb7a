"""Prometheus metrics of one server process (``GET /metrics``)."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest


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

    def render(self) -> bytes:
        out: bytes = generate_latest(self.registry)
        return out
