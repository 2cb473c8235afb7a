"""A store written by the server before the per-type encoders (tests/legacy_seal.py) is read
and continued by this one: the actor folds its streams and appends after them, and
``casino-night verify`` (a real process) finds every chain intact, before and after."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Any

from events.cage import ChipsIssued
from events.tables import BetPlaced, RoundOpened, TableOpened
from services.actor import Actor, Submission
from services.cage.actor import CageRules
from services.cage.rules import BuyChips
from services.chance import ServerChance
from services.games.roulette import ROULETTE
from services.games.single_outcome import RecordOutcome
from services.store.embedded import EmbeddedRedis
from services.store.redis_store import EventStore
from services.tables.actor import TableRules
from services.tables.rules import CallNoMoreBets, PlaceBet
from tests.e2e.serve import EXE, night_toml
from tests.legacy_seal import append_legacy
from tests.support import run_until_answered

TS = 1_795_957_757_735
TABLE = "table:roulette-1"


async def _verify(redis_server: EmbeddedRedis, org: str, tmp_path: Path) -> str:
    night = tmp_path / "night.toml"
    night.write_text(night_toml(org, [{"id": "roulette-1"}], ["p-1", "p-2"]))
    env = {**os.environ, "REDIS_URL": redis_server.url, "CASINO_SECRET": "legacy-store-test"}
    done = await asyncio.to_thread(
        subprocess.run,
        [str(EXE), "verify", "--night", str(night), "--data-dir", str(tmp_path / "data")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = done.stdout.splitlines()
    # No server ran here, so no checkpoint was signed: every other check must pass.
    unsigned = [line for line in lines if line.startswith("BROKEN  anchor: no signed checkpoint")]
    assert len(unsigned) == 1, done.stdout + done.stderr
    assert all(line.startswith("ok") for line in lines if line not in unsigned), done.stdout
    assert any(line.startswith("ok      commands:") for line in lines), done.stdout
    assert any(line.startswith("ok      balances:") for line in lines), done.stdout
    return done.stdout


def _submission(actor: str, command_id: str, command: Any) -> Submission[Any]:
    return Submission(
        key=f"{actor}/{command_id}",
        fingerprint=f"fp-{command_id}",
        command_id=command_id,
        actor=actor,
        command=command,
    )


async def test_a_store_sealed_the_old_way_verifies_and_goes_on(
    store: EventStore, redis_server: EmbeddedRedis, org: str, tmp_path: Path
) -> None:
    config = ROULETTE.parse_config({})
    sold = ChipsIssued(player="p-1", amount=1000)
    await append_legacy(store, "cage", "cashier:c", "s-1", [sold], ts=TS)
    await append_legacy(
        store,
        TABLE,
        "system",
        "system-1",
        [TableOpened(table="roulette-1", game="roulette", config=config, outcome_mode="dealer")],
        ts=TS,
    )
    await append_legacy(
        store, TABLE, "dealer:d", "d-1", [RoundOpened(round=1)], ts=TS, correlation="roulette-1#1"
    )
    for n, (numbers, amount) in enumerate([(["17"], 10), (["0"], 20)], start=3):
        placed = BetPlaced(
            round=1,
            bet_id=f"roulette-1.1.{n}",
            player="p-1",
            bet={"numbers": numbers, "kind": "straight"},
            amount=amount,
        )
        await append_legacy(
            store, TABLE, "player:p-1", f"b-{n}", [placed], ts=TS, correlation="roulette-1#1"
        )
    before = await _verify(redis_server, org, tmp_path)
    assert f"ok      {TABLE}: 4 events, chain intact" in before

    # This server folds the old streams and continues them: a sale, a bet, the round settled
    # (its Settled pays the old bet on 17 alongside the new one).
    cage = Actor(store, "cage", CageRules(10**9), publish=lambda _envs: None)
    await cage.load()
    sale = _submission("cashier:c", "s-2", BuyChips(player="p-2", amount=500))
    cage.submit_nowait(sale)
    await run_until_answered(cage, [sale])
    assert sale.future.result()["ok"], sale.future.result()

    table = Actor(store, TABLE, TableRules(ServerChance(b"k" * 32)), publish=lambda _envs: None)
    await table.load()
    assert len(table.state.bets) == 2
    commands = [
        _submission("player:p-2", "b-5", PlaceBet(player="p-2", bet={"kind": "black"}, amount=100)),
        _submission("dealer:d", "d-2", CallNoMoreBets()),
        _submission("dealer:d", "d-3", RecordOutcome(outcome={"pocket": "17"})),
    ]
    for sub in commands:
        table.submit_nowait(sub)
        await run_until_answered(table, [sub])
        assert sub.future.result()["ok"], sub.future.result()
    settled = (await store.read(TABLE))[-1]
    assert settled.type == "Settled"
    assert [s["paid"] for s in settled.data["settlements"]] == [360, 0, 200]
    assert await store.balance("p-1") == 1000 - 30 + 360

    after = await _verify(redis_server, org, tmp_path)
    assert f"ok      {TABLE}: 8 events, chain intact" in after
    assert "ok      cage: 2 events, chain intact" in after
