"""The balance audit (services/audit.py): the guarded balances equal what the events give,
and an edit of the balances hash behind the events' back is caught."""

from __future__ import annotations

import redis.asyncio as aioredis

from services.audit import verify_balances
from services.store import keys
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import dealer_token, player_token, start_server, token


async def test_guarded_balances_match_the_events_until_someone_edits_them(
    redis_server: EmbeddedRedis, org: str, redis_client: aioredis.Redis
) -> None:
    server = await start_server(redis_server.url, night_doc(org))
    try:
        cashier = await server.connect(token("cashier"))
        dealer = await server.connect(dealer_token("roulette-1"))
        player = await server.connect(player_token("p-1"))
        assert (await cashier.cmd("buy_chips", player="p-1", amount=900))["ok"]
        assert (await cashier.cmd("buy_chips", player="p-2", amount=300))["ok"]
        assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
        bet = {"kind": "straight", "numbers": ["0"]}
        assert (
            await player.cmd("place_bet", table="roulette-1", player="p-1", bet=bet, amount=100)
        )["ok"]
        assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
        assert (await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "0"}))[
            "ok"
        ]
        assert (await cashier.cmd("cash_out", player="p-1", amount=50))["ok"]

        report = await verify_balances(server.runtime.store)
        assert report.ok and report.players == 2

        await redis_client.hincrby(keys.balances(org), "p-2", 1_000)  # chips from nowhere
        report = await verify_balances(server.runtime.store)
        assert not report.ok and report.settled
        assert report.mismatches == (("p-2", 300, 1_300),)
    finally:
        await server.stop()
