"""The bell jar projection on a real Redis and a real server: a live server's figures, a
runner resumed from its checkpoint and ``casino-night replay`` all equal a fresh fold of the
org log; the reports over HTTP are for staff only (projections/bell_jars.py,
services/gateway/read_api.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from events.envelope import seal
from projections.bell_jars import BellJars
from projections.runner import ProjectionRunner, checkpoint_key, fold_raw
from services.aggregates import deal_stream
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import Appended, CommandWrite, EventStore, pack_result
from tests.conftest import deal_night
from tests.e2e.serve import EXE, night_toml
from tests.support import SECRET, LiveServer, start_server, token
from tests.unit.projections.bell_jar_support import Step, everything

STAFF = ("member_in_charge", "auditor", "ops")


async def append(store: EventStore, steps: list[Step], first: int = 0) -> None:
    """Append each step as its own command to its deal's stream, sealed in the chain (the
    steps numbered from ``first``, for their ids)."""
    for i, (deal, body) in enumerate(steps, start=first):
        stream = deal_stream(deal)
        head = await store.head(stream)
        env = seal(
            body,
            id=f"{i:032x}",
            stream=stream,
            seq=head.version + 1,
            ts=1_767_300_000_000 + i,
            actor="member_in_charge:m",
            causation=f"c-{i}",
            correlation=None,
            prev_hash=head.last_hash,
        )
        write = CommandWrite(
            key=f"k-{i}", result=pack_result(f"fp-{i}", {"ok": True}), events=[env]
        )
        assert isinstance(await store.append(stream, head, [write]), Appended)


async def fresh(store: EventStore) -> BellJars:
    projection = BellJars()
    await ProjectionRunner(store, [projection]).catch_up()
    return projection


async def caught_up(server: LiveServer) -> None:
    for _ in range(500):
        if await server.runtime.runner.caught_up():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("projections did not catch up")


def replay(redis_url: str, org: str, workdir: Path) -> dict[str, Any]:
    """``casino-night replay --show`` as an operator runs it, as a process of its own."""
    night = workdir / "night.toml"
    night.write_text(night_toml(org, [{"id": "roulette-1"}], ["p-1"]))
    env = {**os.environ, "REDIS_URL": redis_url, "CASINO_SECRET": SECRET.decode()}
    done = subprocess.run(
        [str(EXE), "replay", "--show", "--night", str(night), "--data-dir", str(workdir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


async def test_live_checkpoint_and_replay_equal_a_fresh_fold(
    redis_server: EmbeddedRedis, org: str, tmp_path: Path
) -> None:
    steps = everything()
    server = await start_server(redis_server.url, deal_night(org))
    try:
        store = server.runtime.store
        await append(store, steps[:20])
        # A runner folds part of the log and checkpoints; it dies; the next one resumes.
        key = checkpoint_key(SECRET)
        first = ProjectionRunner(store, [BellJars()], checkpoint="bj-test", mac_key=key)
        page = await store.log_raw("0", 7)
        fold_raw(first.projections, page)
        first.last_id = page[-1][0]
        await first.save_checkpoint()
        await append(store, steps[20:], 20)
        resumed_state = BellJars()
        resumed = ProjectionRunner(store, [resumed_state], checkpoint="bj-test", mac_key=key)
        await resumed.load_checkpoint()
        assert resumed.last_id == page[-1][0]
        await resumed.catch_up()

        truth = await fresh(store)
        assert resumed_state.snapshot() == truth.snapshot()
        await caught_up(server)
        live = server.runtime.bell_jars
        assert live.snapshot() == truth.snapshot()
        assert live.report() == truth.report()
        assert [q for q in truth.report()["quarters"]] == ["2025-Q4", "2026-Q1", "2026-Q2"]

        # What HTTP serves is the fold's.
        auditor = token("auditor")
        status, body = await server.get("/api/bell-jars/deals", auditor)
        assert status == 200 and body == {"deals": truth.views(), "unknown_deal_anomalies": []}
        status, body = await server.get("/api/bell-jars/deals/c-1", auditor)
        assert status == 200 and body == truth.view("c-1")
        assert body["bank"]["deals"] == ["c-1", "c-2"]
        status, body = await server.get("/api/bell-jars/quarters/2026-Q2", auditor)
        assert status == 200 and body == truth.quarter(2026, 2)
        assert body["A1"] == 3 and [x["deal"] for x in body["schedule_1"]] == ["d-2", "c-1", "c-2"]
        status, body = await server.get("/api/bell-jars/quarters/2031-Q3", auditor)
        assert status == 200 and body["A1"] == body["A7"] == body["B9"] == 0

        # The server saves its checkpoint; one loaded from it folds nothing more.
        await server.runtime.runner.save_checkpoint()
        again_state = BellJars()
        again = ProjectionRunner(store, [again_state], mac_key=key)
        await again.load_checkpoint()
        assert await again.catch_up() == 0
        assert again_state.snapshot() == truth.snapshot()
    finally:
        await server.stop()

    # casino-night replay rebuilds the same figures from the log.
    report = await asyncio.to_thread(replay, redis_server.url, org, tmp_path)
    assert report["bell_jars"] == json.loads(json.dumps(truth.report()))


async def test_the_reports_are_for_staff_only(redis_server: EmbeddedRedis, org: str) -> None:
    server = await start_server(redis_server.url, deal_night(org))
    try:
        await append(server.runtime.store, everything()[:3])
        await caught_up(server)
        paths = (
            "/api/bell-jars/deals",
            "/api/bell-jars/deals/d-1",
            "/api/bell-jars/quarters/2026-Q1",
        )
        for role in STAFF:
            for path in paths:
                status, _ = await server.get(path, token(role))
                assert status == 200, (role, path)
        players = (token("player", player="p-1"), token("seller"), token("cashier"))
        for tok in (*players, token("dealer", tables=("roulette-1",))):
            for path in paths:
                status, body = await server.get(path, tok)
                assert status == 403 and body["error"]["code"] == "forbidden", path
        auditor = token("auditor")
        status, body = await server.get("/api/bell-jars/deals/nope", auditor)
        assert status == 404 and body["error"]["code"] == "unknown_deal"
        for bad in ("2026-Q5", "2026-1", "26-Q1", "2026-Q1x", "1969-Q4"):
            status, body = await server.get(f"/api/bell-jars/quarters/{bad}", auditor)
            assert status == 400 and body["error"]["code"] == "bad_request", bad
    finally:
        await server.stop()
