"""What the raffle projection keeps for the GC-7R (projections/raffles.py): the prizes'
descriptions, each round's drawings, prizes and profit, the ticket's settings; the same
statement from a checkpoint at any point; and a checkpoint of the earlier shape refolded
from the log rather than restored (projections/runner.py, on a real Redis)."""

from __future__ import annotations

from typing import Any

import msgpack
import redis.asyncio as aioredis
from structlog.testing import capture_logs

from events.base import to_data
from projections.raffles import SNAPSHOT_SCHEMA, Raffles
from projections.runner import ProjectionRunner, checkpoint_key
from services.reports import gc7r
from services.reports.form import to_csv
from services.store import keys
from services.store.redis_store import EventStore
from tests.unit.reports.support import NEW_YORK, raffles, view_of
from tests.unit.reports.test_gc7r import queen_of_hearts


def test_each_round_keeps_its_drawings_prizes_and_profit() -> None:
    r = queen_of_hearts()
    view = view_of(raffles(("qoh", r)), "qoh")
    results = view["round_results"]
    assert sorted(results) == ["1", "2", "3"]
    assert [results[k]["winners"] for k in "123"] == [1, 1, 1]
    assert [results[k]["prizes_paid"] for k in "123"] == [600, 1_500, 720]
    assert [results[k]["profit_kept"] for k in "123"] == [-600, -1_500, 480]
    drawn = [e.at for e in r.log if e.NAME == "DrawingHeld"]  # type: ignore[attr-defined]
    assert [results[k]["drawn_at"] for k in "123"] == drawn
    assert view["prizes"][0]["description"].startswith("9C: 6:1")
    assert (view["tickets_printed"], view["identification_number"]) == (500, "GC-ID-77")
    assert view["organization"] == "St. Mary's Parish Council" and view["bundles"] == []


def test_a_statement_from_a_checkpoint_at_any_event_is_the_same() -> None:
    r = queen_of_hearts()
    whole = view_of(raffles(("qoh", r)), "qoh")
    expected = [to_csv(gc7r.build(whole, timezone=NEW_YORK, round_number=n)) for n in (1, 2, 3)]
    for cut in range(len(r.log) + 1):
        first = Raffles()
        for ev in r.log[:cut]:
            first.apply(ev.NAME, "raffle:qoh", to_data(ev))
        saved = msgpack.unpackb(msgpack.packb(first.snapshot(), use_bin_type=True), raw=False)
        assert first.accepts(saved)
        resumed = Raffles()
        resumed.restore(saved)
        for ev in r.log[cut:]:
            resumed.apply(ev.NAME, "raffle:qoh", to_data(ev))
        view = view_of(resumed, "qoh")
        got = [to_csv(gc7r.build(view, timezone=NEW_YORK, round_number=n)) for n in (1, 2, 3)]
        assert got == expected


def seal(runner: ProjectionRunner, raffles_state: dict[str, Any]) -> bytes:
    """A checkpoint at log id 99-0 holding ``raffles_state``, sealed as the runner seals."""
    body = msgpack.packb({"last_id": "99-0", "states": {"raffles": raffles_state}})
    return msgpack.packb({"body": body, "mac": runner._mac(body)}, use_bin_type=True)


async def test_a_checkpoint_of_the_earlier_shape_is_refolded_from_the_log(
    redis_client: aioredis.Redis, org: str
) -> None:
    store = EventStore(redis_client, org)
    key = checkpoint_key(b"test-secret")
    # What the version before SNAPSHOT_SCHEMA saved: the raffles alone, no round results.
    old = Raffles()
    for ev in queen_of_hearts().log:
        old.apply(ev.NAME, "raffle:qoh", to_data(ev))
    earlier = {"raffles": old.snapshot()["raffles"]}
    for raffle in earlier["raffles"].values():
        del raffle["round_results"]
    projection = Raffles()
    assert not projection.accepts(earlier) and SNAPSHOT_SCHEMA == 2
    runner = ProjectionRunner(store, [projection], mac_key=key)
    await redis_client.set(keys.projection(org, "runner"), seal(runner, earlier))
    with capture_logs() as logs:
        await runner.load_checkpoint()
    assert runner.last_id == "0" and projection.views() == []  # the log, from its start
    assert [(e["event"], e["reason"]) for e in logs] == [
        ("checkpoint_ignored", "a projection's snapshot is of another shape")
    ]
    # This version's own checkpoint is restored.
    runner = ProjectionRunner(store, [projection], mac_key=key)
    await redis_client.set(keys.projection(org, "runner"), seal(runner, old.snapshot()))
    await runner.load_checkpoint()
    assert runner.last_id == "99-0" and projection.views() == old.views()
