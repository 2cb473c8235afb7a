"""The checkpointed projection runner on a real Redis: every event counts exactly once,
even when the process dies between folding and checkpointing; a rebuild equals the live
state (projections/runner.py)."""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

import msgpack
import redis.asyncio as aioredis
from structlog.testing import capture_logs

from projections.bankroll import Bankrolls
from projections.runner import ProjectionRunner, checkpoint_key, fold_raw
from services.store import keys
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import EventStore
from tests.conftest import night_doc
from tests.support import LiveServer, dealer_token, player_token, start_server, token

TABLE = "roulette-1"


async def play(server: LiveServer, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    cashier = await server.connect(token("cashier"))
    dealer = await server.connect(dealer_token(TABLE))
    players = {p: await server.connect(player_token(p)) for p in ("p-1", "p-2")}
    for p in players:
        assert (await cashier.cmd("buy_chips", player=p, amount=5000))["ok"]
    for _ in range(rounds):
        assert (await dealer.cmd("open_round", table=TABLE))["ok"]
        for p, client in players.items():
            kind = rng.choice(["red", "black", "odd", "even", "low", "high"])
            await client.cmd(
                "place_bet", table=TABLE, player=p, bet={"kind": kind}, amount=rng.randint(1, 500)
            )
        assert (await dealer.cmd("no_more_bets", table=TABLE))["ok"]
        pocket = str(rng.randint(1, 36))
        outcome = {
            "pocket": pocket,
            "spun_from": server.runtime.supervisor.table_state(TABLE).play.last_outcome,
        }
        assert (await dealer.cmd("record_outcome", table=TABLE, outcome=outcome))["ok"]
    assert (await cashier.cmd("cash_out", player="p-1", amount=100))["ok"]


async def rebuild(store: EventStore) -> Bankrolls:
    bankrolls = Bankrolls()
    await ProjectionRunner(store, [bankrolls]).catch_up()
    return bankrolls


async def test_a_rebuild_equals_the_live_projection(redis_server: EmbeddedRedis, org: str) -> None:
    server = await start_server(redis_server.url, night_doc(org))
    try:
        await play(server, rounds=15, seed=3)
        runner = server.runtime.runner
        for _ in range(500):
            if await runner.caught_up():
                break
            await asyncio.sleep(0.01)
        live = server.runtime.bankrolls.snapshot()
        rebuilt = await rebuild(server.runtime.store)
        assert rebuilt.snapshot() == live
        assert live["organization"]["issued"] == 10_000
        assert live["players"]["p-1"]["redeemed"] == 100
        # The projection's balances equal the balances the append script guards.
        guarded = await server.runtime.store.balances()
        assert {p: v["balance"] for p, v in live["players"].items()} == guarded
    finally:
        await server.stop()


async def test_dying_between_fold_and_checkpoint_counts_each_event_once(
    redis_server: EmbeddedRedis, org: str
) -> None:
    server = await start_server(redis_server.url, night_doc(org))
    try:
        await play(server, rounds=5, seed=5)
        store = server.runtime.store
        # A runner folds part of the log and checkpoints.
        key = checkpoint_key(b"test-secret")
        first = ProjectionRunner(store, [Bankrolls()], checkpoint="crash-test", mac_key=key)
        page = await store.log_raw("0", 10)
        fold_raw(first.projections, page)
        first.last_id = page[-1][0]
        await first.save_checkpoint()
        # It folds more, then dies before its next checkpoint: that work is lost, not kept.
        await first.catch_up()
        del first
        # The next process resumes from the checkpoint and folds every later event once.
        resumed_state = Bankrolls()
        resumed = ProjectionRunner(store, [resumed_state], checkpoint="crash-test", mac_key=key)
        await resumed.load_checkpoint()
        assert resumed.last_id == page[-1][0]
        await resumed.catch_up()
        assert resumed_state.snapshot() == (await rebuild(store)).snapshot()
        await play(server, rounds=2, seed=6)
        await resumed.catch_up()
        assert resumed_state.snapshot() == (await rebuild(store)).snapshot()
    finally:
        await server.stop()


async def test_a_checkpoint_whose_mac_does_not_check_is_discarded_and_the_log_refolded(
    redis_server: EmbeddedRedis, org: str
) -> None:
    server = await start_server(redis_server.url, night_doc(org))
    try:
        await play(server, rounds=3, seed=9)
        store = server.runtime.store
        key = checkpoint_key(b"test-secret")
        truth = (await rebuild(store)).snapshot()
        saver = ProjectionRunner(store, [Bankrolls()], checkpoint="mac-test", mac_key=key)
        await saver.catch_up()
        await saver.save_checkpoint()
        redis_key = keys.projection(org, "mac-test")
        sealed = await store.redis.get(redis_key)
        assert sealed is not None

        async def load(raw: bytes, mac_key: bytes = key) -> tuple[ProjectionRunner, list[Any]]:
            await store.redis.set(redis_key, raw)
            state = Bankrolls()
            runner = ProjectionRunner(store, [state], checkpoint="mac-test", mac_key=mac_key)
            with capture_logs() as logs:
                await runner.load_checkpoint()
            await runner.catch_up()
            assert state.snapshot() == truth  # whatever was stored: what the events give
            return runner, logs

        # Intact: restored, nothing logged, nothing left to fold.
        runner, logs = await load(sealed)
        assert logs == [] and runner.folded == 0
        # The body edited (a richer player), the MAC kept.
        outer = msgpack.unpackb(sealed, raw=False)
        body = msgpack.unpackb(outer["body"], raw=False)
        body["states"]["bankrolls"]["players"]["p-1"]["balance"] += 100_000
        edited = dict(outer, body=msgpack.packb(body, use_bin_type=True))
        plain = msgpack.packb(body, use_bin_type=True)  # the old format: no MAC at all
        other_secret = checkpoint_key(b"another-secret")
        for raw, mac_key, reason in (
            (msgpack.packb(edited, use_bin_type=True), key, "bad MAC"),
            (plain, key, "no MAC"),
            (b"\xc1 not msgpack", key, "unreadable"),
            (sealed, other_secret, "bad MAC"),  # saved under another secret
        ):
            runner, logs = await load(raw, mac_key)
            assert runner.folded == len(await store.log_raw("0", 100_000))  # from the start
            assert [(e["event"], e["log_level"], e["reason"]) for e in logs] == [
                ("projection_checkpoint_rejected", "error", reason)
            ]
        # A MAC'd checkpoint copied under another name does not hold there either.
        await store.redis.set(keys.projection(org, "runner"), sealed)
        state = Bankrolls()
        runner = ProjectionRunner(store, [state], mac_key=key)
        with capture_logs() as logs:
            await runner.load_checkpoint()
        assert runner.last_id == "0" and logs[0]["reason"] == "bad MAC"
    finally:
        await server.stop()


async def test_the_server_counts_a_rejected_checkpoint_and_serves_the_events_balances(
    redis_server: EmbeddedRedis, org: str
) -> None:
    first = await start_server(redis_server.url, night_doc(org))
    try:
        await play(first, rounds=2, seed=4)
    finally:
        await first.stop()  # saves the checkpoint
    redis_key = keys.projection(org, "runner")
    store_client = aioredis.Redis.from_url(redis_server.url)
    try:
        outer = msgpack.unpackb(await store_client.get(redis_key), raw=False)
        body = msgpack.unpackb(outer["body"], raw=False)
        body["states"]["bankrolls"]["players"]["p-2"]["balance"] = 10**9
        outer["body"] = msgpack.packb(body, use_bin_type=True)
        await store_client.set(redis_key, msgpack.packb(outer, use_bin_type=True))
    finally:
        await store_client.aclose()
    second = await start_server(redis_server.url, night_doc(org))
    try:
        status, got = await second.get("/api/bankrolls/players/p-2", token("auditor"))
        assert status == 200
        guarded = await second.runtime.store.balance("p-2")
        assert got["balance"] == guarded != 10**9
        metrics = second.runtime.metrics.render().decode()
        assert "casino_projection_checkpoint_rejected_total 1.0" in metrics
    finally:
        await second.stop()


async def test_the_live_tail_reads_what_was_appended_during_its_wait_in_one_page(
    redis_server: EmbeddedRedis, org: str
) -> None:
    """After a short page the tail waits (``tail_gather``) before it reads again: what
    was appended meanwhile comes in one read and one fold, in order, none missed."""
    server = await start_server(redis_server.url, night_doc(org))
    pages: list[list[str]] = []
    bankrolls = Bankrolls()
    runner = ProjectionRunner(
        server.runtime.store,
        [bankrolls],
        on_entries=lambda page: pages.append([log_id for log_id, _raw in page]),
        tail_gather=0.5,
    )
    tail = asyncio.create_task(runner.run(block_ms=100))
    try:
        cashier = await server.connect(token("cashier"))

        async def folded_after(count: int) -> None:
            for _ in range(300):
                if len(pages) > count:
                    return
                await asyncio.sleep(0.01)
            raise AssertionError(f"the tail read no page after {count}")

        for _ in range(300):  # its catch-up folds without a page: wait until it is done
            if await runner.caught_up():
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # tailing now
        assert (await cashier.cmd("buy_chips", player="p-1", amount=100))["ok"]
        await folded_after(0)
        one_command = len(pages[-1])
        read = len(pages)
        # Both answered well within the tail's wait after the page it just read.
        for amount in (200, 300):
            assert (await cashier.cmd("buy_chips", player="p-1", amount=amount))["ok"]
        await folded_after(read)
        await asyncio.sleep(0.6)  # and nothing more comes after them
        assert len(pages) == read + 1
        assert len(pages[-1]) == 2 * one_command
        assert bankrolls.players["p-1"]["bought"] == 600
        assert runner.last_id == await server.runtime.store.log_head()
    finally:
        tail.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await tail
        await server.stop()
