"""The server's collector settings and the pause metrics (services/cli.py ``tune_gc``,
services/gateway/metrics.py ``watch_gc``)."""

from __future__ import annotations

import gc
import re
import weakref
from collections.abc import Iterator

import pytest

from services.cli import tune_gc
from services.gateway.metrics import Metrics
from services.gc_tuning import UNREACHABLE, YOUNG_OBJECTS, YoungPassesOnly


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


def test_the_server_freezes_what_start_left_and_runs_young_passes_only(gc_state: None) -> None:
    gc.unfreeze()
    metrics = Metrics()
    stop = tune_gc(metrics)
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == (YOUNG_OBJECTS, UNREACHABLE, UNREACHABLE)
    gc.collect(0)
    assert _figure(metrics, "casino_gc_pause_seconds_count", 0) == 1
    stop()
    assert gc.get_threshold() != (YOUNG_OBJECTS, UNREACHABLE, UNREACHABLE)


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_young_pass_collects_young_cycles_and_freezes_what_survived(gc_state: None) -> None:
    plan = YoungPassesOnly(young_objects=10**9)  # passes only when this test runs them
    plan.install()
    try:
        frozen = gc.get_freeze_count()
        kept = [_Cycle() for _ in range(100)]
        dead = _Cycle()
        probe = weakref.ref(dead)
        del dead
        gc.collect(0)
        assert probe() is None  # the cycle that died young is collected
        assert gc.get_freeze_count() >= frozen + 100  # the survivors are frozen
        assert gc.get_count()[0] == 0
        # A frozen cycle that dies later waits for the full pass.
        late = kept.pop()
        probe = weakref.ref(late)
        del late
        gc.collect(0)
        assert probe() is not None
        plan.full_pass()
        assert probe() is None and plan.full_passes == 1
    finally:
        plan.uninstall()


def test_a_full_pass_is_due_once_the_frozen_heap_has_grown(gc_state: None) -> None:
    plan = YoungPassesOnly(young_objects=10**9, full_pass_growth=1.5, full_pass_floor=1)
    plan.install()
    try:
        assert not plan.full_pass_due()
        grown = [_Cycle() for _ in range(gc.get_freeze_count())]
        gc.collect(0)
        assert plan.full_pass_due()
        plan.full_pass()
        assert not plan.full_pass_due()
        del grown
    finally:
        plan.uninstall()
