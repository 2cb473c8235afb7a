"""The command figures of /metrics (services/gateway/metrics.py): counted in plain numbers,
exposed exactly as the client library's own counter and histogram would expose them."""

from __future__ import annotations

import random
import re

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from services.gateway.metrics import COMMAND_SECONDS_BUCKETS, Metrics


def _samples(text: str, name: str) -> list[str]:
    return sorted(
        line
        for line in text.splitlines()
        if re.match(rf"{name}(_total|_bucket|_count|_sum)?\{{", line)
    )


def test_commands_and_their_times_read_as_the_library_metrics_would() -> None:
    rng = random.Random(10)
    metrics = Metrics()
    reference = CollectorRegistry()
    counter = Counter(
        "casino_commands_total", "Commands answered", ["op", "code"], registry=reference
    )
    timer = Histogram(
        "casino_command_seconds",
        "Time from a command's arrival to its reply",
        ["op"],
        buckets=COMMAND_SECONDS_BUCKETS,
        registry=reference,
    )
    for _ in range(2_000):
        op = rng.choice(["place_bet", "open_round", "invalid"])
        code = rng.choice(["ok", "ok", "bad_request", "insufficient_funds"])
        # exact bucket bounds too: a bucket counts the values up to and including its bound
        seconds = rng.choice([rng.random() * 0.3, rng.choice(COMMAND_SECONDS_BUCKETS), 2.0])
        timed = op != "invalid"
        metrics.answered(op, code, seconds if timed else None)
        counter.labels(op, code).inc()
        if timed:
            timer.labels(op).observe(seconds)
    ours = metrics.render().decode()
    theirs = generate_latest(reference).decode()
    assert _samples(ours, "casino_commands") == _samples(theirs, "casino_commands")
    for kind in ("bucket", "count"):
        assert _samples(ours, f"casino_command_seconds_{kind}") == _samples(
            theirs, f"casino_command_seconds_{kind}"
        )
    sums = dict(re.findall(r'^casino_command_seconds_sum\{op="(\w+)"\} (\S+)$', ours, re.M))
    expected = dict(re.findall(r'^casino_command_seconds_sum\{op="(\w+)"\} (\S+)$', theirs, re.M))
    assert sums.keys() == expected.keys() == {"place_bet", "open_round"}
    for op, value in sums.items():
        assert abs(float(value) - float(expected[op])) < 1e-9
    assert "# TYPE casino_commands_total counter" in ours
    assert "# TYPE casino_command_seconds histogram" in ours
