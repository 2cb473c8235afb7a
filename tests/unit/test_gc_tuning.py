"""The server's collector settings and the pause metrics (services/cli.py ``tune_gc``,
services/gateway/metrics.py ``watch_gc``)."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator

import pytest

from services.cli import GC_THRESHOLDS, tune_gc
from services.gateway.metrics import Metrics


def _figure(metrics: Metrics, name: str, generation: int) -> float:
    text = metrics.render().decode()
    found = re.search(rf'^{name}{{generation="{generation}"}} ([0-9.e+-]+)$', text, re.M)
    assert found, text
    return float(found.group(1))


@pytest.fixture
def gc_state() -> Iterator[None]:
    """Whatever a test does to the collector is undone after it."""
    thresholds = gc.get_threshold()
    callbacks = list(gc.callbacks)
    yield
    gc.callbacks[:] = callbacks
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_every_pass_is_timed_by_generation_until_unwatched(gc_state: None) -> None:
    metrics = Metrics()
    assert _figure(metrics, "casino_gc_pause_seconds_count", 2) == 0
    stop = metrics.watch_gc()
    gc.collect(1)
    gc.collect(2)
    gc.collect(2)
    assert _figure(metrics, "casino_gc_pause_seconds_count", 1) == 1
    assert _figure(metrics, "casino_gc_pause_seconds_count", 2) == 2
    longest = _figure(metrics, "casino_gc_pause_longest_seconds", 2)
    assert 0 < longest <= _figure(metrics, "casino_gc_pause_seconds_sum", 2)
    stop()
    gc.collect(2)
    assert _figure(metrics, "casino_gc_pause_seconds_count", 2) == 2


def test_the_server_freezes_what_start_left_and_runs_at_its_thresholds(gc_state: None) -> None:
    gc.unfreeze()
    metrics = Metrics()
    stop = tune_gc(metrics)
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == GC_THRESHOLDS
    gc.collect(0)
    assert _figure(metrics, "casino_gc_pause_seconds_count", 0) == 1
    stop()
