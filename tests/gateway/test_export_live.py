"""The export of a live store (services/export.py): written while bets are placed, it still
verifies whole (tools/verify_export.py), its checkpoints signing nothing beyond its events
(docs/AUDIT.md, "The export and the standalone verifier")."""

from __future__ import annotations

import asyncio
import io
import time

from services.export import checkpoint_texts, write_export
from services.store import anchor
from tests.support import LiveServer, dealer_token, player_token, token
from tests.unit.test_verify_export import tool

BETS = 150
"""Bets placed one after another while the exports are taken: enough to span several."""


async def test_an_export_taken_while_bets_flow_verifies(server: LiveServer) -> None:
    runtime = server.runtime
    settings = runtime.settings
    cashier = await server.connect(token("cashier"))
    dealer = await server.connect(dealer_token("roulette-1"))
    player = await server.connect(player_token("p-1"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=100_000))["ok"]
    assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
    await runtime.anchor.sign("interval")

    async def bets() -> int:
        placed = 0
        for _ in range(BETS):
            reply = await player.cmd(
                "place_bet", table="roulette-1", player="p-1", bet={"kind": "red"}, amount=100
            )
            placed += reply["ok"]
        return placed

    key = anchor.load_signing_key(anchor.key_file(settings.data_dir, settings.anchor_key))
    directory = anchor.checkpoint_dir(settings.data_dir, runtime.store.org)
    verify_export = tool()

    async def export() -> int:
        texts = checkpoint_texts(directory)
        out = io.BytesIO()
        written = await write_export(
            runtime.store, out, key=key, checkpoints=texts, organization_name="live",
            occasion=None, now_ms=int(time.time() * 1000),
        )  # fmt: skip
        checked = verify_export.verify(out.getvalue().splitlines(keepends=True))
        assert checked.problems == [], checked.problems
        return written.events

    exported = [await export()]
    betting = asyncio.create_task(bets())
    while not betting.done():
        exported.append(await export())
        await runtime.anchor.sign("interval")  # heads signed mid-flow, for the next export
        await asyncio.sleep(0.02)
    exported.append(await export())
    assert await betting == BETS
    # The first export came before the bets, the last after all of them, one in between.
    before, after = exported[0], exported[-1]
    assert after == before + BETS and exported == sorted(exported)
    assert any(before < n < after for n in exported), exported
