"""The checkpointed projection runner on a real Redis: every event counts exactly once,
even when the process dies between folding and checkpointing; a rebuild equals the live
state (projections/runner.py)."""

from __future__ import annotations

import asyncio
import random

from projections.bankroll import Bankrolls
from projections.runner import ProjectionRunner, fold_raw
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
            "spun_from": server.runtime.supervisor.table_state(TABLE).last_outcome,
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
        first = ProjectionRunner(store, [Bankrolls()], checkpoint="crash-test")
        page = await store.log_raw("0", 10)
        fold_raw(first.projections, page)
        first.last_id = page[-1][0]
        await first.save_checkpoint()
        # It folds more, then dies before its next checkpoint: that work is lost, not kept.
        await first.catch_up()
        del first
        # The next process resumes from the checkpoint and folds every later event once.
        resumed_state = Bankrolls()
        resumed = ProjectionRunner(store, [resumed_state], checkpoint="crash-test")
        await resumed.load_checkpoint()
        assert resumed.last_id == page[-1][0]
        await resumed.catch_up()
        assert resumed_state.snapshot() == (await rebuild(store)).snapshot()
        await play(server, rounds=2, seed=6)
        await resumed.catch_up()
        assert resumed_state.snapshot() == (await rebuild(store)).snapshot()
    finally:
        await server.stop()
