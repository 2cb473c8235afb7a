"""A subscriber's events in seq order when they reach a process two ways (its actor and
the org log's tail), as when a stream changes owner: nothing twice, nothing skipped."""

from __future__ import annotations

import random

from services.cluster.tail import InOrder


def test_an_early_event_waits_for_the_gap_to_close() -> None:
    order = InOrder(4)
    assert order.offer(7, "e7") == []  # the new owner's actor, before the tail's 5 and 6
    assert order.offer(4, "e4") == []  # sent already
    assert order.offer(5, "e5") == ["e5"]
    assert order.offer(6, "e6") == ["e6", "e7"]
    assert order.offer(7, "e7 again, from the tail") == []
    assert (order.position, order.ahead) == (7, {})


def test_two_feeds_in_any_interleaving_give_each_event_once_in_order() -> None:
    rng = random.Random(20261201)
    for _ in range(200):
        n = rng.randint(1, 40)
        took_at = rng.randint(0, n)
        # The tail brings every event in order; the actor brings those after it took the
        # stream, in order, interleaved anyhow with the tail.
        tail = list(range(1, n + 1))
        actor = list(range(took_at + 1, n + 1))
        feeds: list[int] = []
        while tail or actor:
            source = tail if (tail and (not actor or rng.random() < 0.5)) else actor
            feeds.append(source.pop(0))
        order = InOrder(0)
        out = [seq for s in feeds for seq in order.offer(s, s)]
        assert out == list(range(1, n + 1))
        assert order.ahead == {}
