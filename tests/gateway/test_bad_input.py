"""Bad input gets its stable error code (PROTOCOL.md "Errors") and changes nothing.

Each test sends one kind of bad input over a real websocket to a real server, checks the
code, and checks that no event was written and no balance moved.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from services.gateway.auth import mint
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import (
    SECRET,
    LiveServer,
    WsClient,
    dealer_token,
    player_token,
    start_server,
    token,
)

TABLE = "roulette-1"
STREAM = f"table:{TABLE}"
STRAIGHT = {"kind": "straight", "numbers": ["17"]}


class Night:
    """A server with p-1 holding 1,000 cents and round 1 of roulette-1 open for bets."""

    def __init__(self, server: LiveServer, player: WsClient, dealer: WsClient) -> None:
        self.server = server
        self.player = player
        self.dealer = dealer

    async def snapshot(self) -> tuple[Any, ...]:
        store = self.server.runtime.store
        return (
            (await store.head(STREAM)).version,
            (await store.head("cage")).version,
            await store.balances(),
            await store.log_head(),
        )

    async def refused(self, client: WsClient, code: str, **msg: Any) -> dict[str, Any]:
        """Send a command that must be refused with ``code`` and change nothing."""
        before = await self.snapshot()
        reply = await client.send({"id": client.next_id(), **msg})
        assert reply["ok"] is False, reply
        assert reply["error"]["code"] == code, reply
        assert reply["error"]["message"]
        assert await self.snapshot() == before
        return reply

    def bet(self, **overrides: Any) -> dict[str, Any]:
        return {
            "op": "place_bet",
            "table": TABLE,
            "player": "p-1",
            "bet": STRAIGHT,
            "amount": 100,
            **overrides,
        }


@pytest.fixture
async def night(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[Night]:
    server = await start_server(redis_server.url, night_doc(org))
    cashier = await server.connect(token("cashier"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=1000))["ok"]
    dealer = await server.connect(dealer_token(TABLE))
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    player = await server.connect(player_token("p-1"))
    yield Night(server, player, dealer)
    await server.stop()


async def test_malformed_json_is_bad_request(night: Night) -> None:
    before = await night.snapshot()
    reply = await night.player.send_raw("{not json")
    assert reply["error"]["code"] == "bad_request"
    assert await night.snapshot() == before
    # The connection stays open after an error.
    assert (await night.player.send({"id": "after", **night.bet()}))["ok"]


async def test_an_unknown_op_is_bad_request(night: Night) -> None:
    await night.refused(night.player, "bad_request", op="place_bets", table=TABLE)


async def test_a_missing_field_is_bad_request(night: Night) -> None:
    msg = night.bet()
    del msg["bet"]
    await night.refused(night.player, "bad_request", **msg)


async def test_a_mistyped_field_is_bad_request(night: Night) -> None:
    await night.refused(night.player, "bad_request", **night.bet(table=7))
    await night.refused(night.player, "bad_request", **night.bet(amount="100"))
    await night.refused(night.player, "bad_request", **night.bet(bet=["straight", "17"]))


async def test_a_zero_amount_is_bad_request(night: Night) -> None:
    await night.refused(night.player, "bad_request", **night.bet(amount=0))


async def test_a_negative_amount_is_bad_request(night: Night) -> None:
    await night.refused(night.player, "bad_request", **night.bet(amount=-100))


async def test_a_fractional_amount_is_bad_request(night: Night) -> None:
    await night.refused(night.player, "bad_request", **night.bet(amount=100.5))


async def test_a_huge_amount_is_over_limit(night: Night) -> None:
    await night.refused(night.player, "over_limit", **night.bet(amount=10**30))
    await night.refused(night.player, "over_limit", **night.bet(amount=2**53 - 1))


async def test_numbers_that_do_not_form_the_bet_are_invalid_bet(night: Night) -> None:
    split = {"kind": "split", "numbers": ["17", "19"]}
    await night.refused(night.player, "invalid_bet", **night.bet(bet=split))
    corner = {"kind": "corner", "numbers": ["1", "2", "3", "4"]}
    await night.refused(night.player, "invalid_bet", **night.bet(bet=corner))


async def test_a_wager_the_table_does_not_offer_is_refused(night: Night) -> None:
    # roulette-1 offers basket and five_adjacent, not the colour or seven-number wagers.
    await night.refused(
        night.player, "wager_not_offered", **night.bet(bet={"kind": "seven_numbers"})
    )


async def test_a_bet_over_the_limit_is_over_limit_4620_4_d(night: Night) -> None:
    await night.refused(night.player, "over_limit", **night.bet(amount=201))
    await night.refused(night.player, "over_limit", **night.bet(bet={"kind": "red"}, amount=501))


async def test_a_bet_over_the_balance_is_insufficient_funds(night: Night) -> None:
    for _ in range(5):
        assert (await night.player.cmd(**night.bet(amount=200)))["ok"]
    await night.refused(night.player, "insufficient_funds", **night.bet(amount=1))


async def test_a_bet_after_no_more_bets_is_bets_closed_4620_4_c_1(night: Night) -> None:
    assert (await night.dealer.cmd("no_more_bets", table=TABLE))["ok"]
    await night.refused(night.player, "bets_closed", **night.bet())


async def test_a_bet_with_no_round_open_is_round_not_open(night: Night) -> None:
    await night.refused(night.player, "round_not_open", **night.bet(table="roulette-2"))


async def test_an_unknown_table_is_unknown_table(night: Night) -> None:
    await night.refused(night.player, "unknown_table", **night.bet(table="craps-9"))


async def test_the_wrong_role_is_forbidden(night: Night) -> None:
    await night.refused(night.player, "forbidden", op="open_round", table=TABLE)
    await night.refused(night.player, "forbidden", op="buy_chips", player="p-1", amount=100)
    auditor = await night.server.connect(token("auditor"))
    await night.refused(auditor, "forbidden", **night.bet())
    await night.refused(night.player, "forbidden", **night.bet(player="p-2"))


async def test_another_tables_dealer_is_forbidden(night: Night) -> None:
    other = await night.server.connect(dealer_token("roulette-2"))
    await night.refused(other, "forbidden", op="no_more_bets", table=TABLE)
    await night.refused(other, "forbidden", **night.bet())


async def test_a_command_id_reused_with_different_content_is_a_conflict(night: Night) -> None:
    first = await night.player.send({"id": "same", **night.bet(amount=100)})
    assert first["ok"]
    retry = await night.player.send({"id": "same", **night.bet(amount=100)})
    assert retry == first  # a retry returns the first reply
    await night.player.send({"id": "other", **night.bet()})
    before = await night.snapshot()
    reused = await night.player.send({"id": "same", **night.bet(amount=150)})
    assert reused["error"]["code"] == "conflict"
    assert await night.snapshot() == before


async def test_a_closed_table_is_table_closed(night: Night) -> None:
    assert (await night.dealer.cmd("no_more_bets", table=TABLE))["ok"]
    assert (await night.dealer.cmd("record_outcome", table=TABLE, outcome={"pocket": "3"}))["ok"]
    assert (await night.dealer.cmd("close_table", table=TABLE))["ok"]
    await night.refused(night.dealer, "table_closed", op="open_round", table=TABLE)


async def _upgrade_status(server: LiveServer, tok: str) -> int:
    with pytest.raises(aiohttp.WSServerHandshakeError) as info:
        await server.session.ws_connect(f"{server.base}/ws?token={tok}")
    return info.value.status


async def test_an_expired_token_gets_401_and_no_upgrade(night: Night) -> None:
    expired = mint(
        SECRET, role="player", sub="p-1", player="p-1", ttl_seconds=60, now=int(time.time()) - 120
    )
    assert await _upgrade_status(night.server, expired) == 401
    status, body = await night.server.post_command(night.bet(id="x"), expired)
    assert status == 401 and body["error"]["code"] == "unauthorized"


async def test_a_forged_token_gets_401_and_no_upgrade(night: Night) -> None:
    forged = mint(
        b"not-the-secret",
        role="dealer",
        sub="d",
        tables=(TABLE,),
        ttl_seconds=60,
        now=int(time.time()),
    )
    assert await _upgrade_status(night.server, forged) == 401
    header, body, _sig = player_token("p-1").split(".")
    assert await _upgrade_status(night.server, f"{header}.{body}.AAAA") == 401
    assert await _upgrade_status(night.server, "") == 401


async def test_an_oversize_frame_closes_the_socket_with_1009(night: Night) -> None:
    before = await night.snapshot()
    huge = json.dumps(
        {**night.bet(id="big"), "pad": "x" * (night.server.runtime.settings.max_frame_bytes + 1)}
    )
    await night.player.ws.send_str(huge)
    code = await night.player.closed
    assert code == aiohttp.WSCloseCode.MESSAGE_TOO_BIG == 1009
    assert await night.snapshot() == before


async def test_a_token_that_expires_on_an_open_socket_is_closed_at_its_expiry(
    night: Night,
) -> None:
    """At its token's expiry a socket is closed with 1008 even if it sends nothing, and it
    receives nothing after the expiry."""
    now = int(time.time())
    short = mint(SECRET, role="player", sub="p-1", player="p-1", ttl_seconds=2, now=now)
    client = await night.server.connect(short)
    assert (await client.cmd("subscribe", stream=f"table:{TABLE}"))["ok"]
    assert (await client.send({"id": "early", **night.bet()}))["ok"]
    code = await asyncio.wait_for(client.closed, 5)
    assert code == aiohttp.WSCloseCode.POLICY_VIOLATION
    assert time.time() >= now + 2
    seen = len(client.events)
    watcher = await night.server.connect(token("auditor"))
    head = (await watcher.cmd("subscribe", stream=STREAM))["result"]["head"]
    await watcher.wait_events(STREAM, head)
    assert (await night.player.send({"id": "after", **night.bet()}))["ok"]
    later = await watcher.wait_events(STREAM, head + 1)
    assert later[-1]["causation"] == "after"
    assert len(client.events) == seen  # the expired socket got nothing more


async def test_commands_outside_the_occasion_are_occasion_closed(
    redis_server: EmbeddedRedis, org: str
) -> None:
    past = night_doc(org)
    past["occasion"] = {"id": "last-week", "name": "Last week", "starts_at": "2026-01-01T18:00:00Z"}
    server = await start_server(redis_server.url, past)
    try:
        cashier = await server.connect(token("cashier"))
        auditor = await server.connect(token("auditor"))
        before = await server.runtime.store.log_head()
        reply = await cashier.cmd("buy_chips", player="p-1", amount=100)
        assert reply["error"]["code"] == "occasion_closed"
        dealer = await server.connect(dealer_token(TABLE))
        assert (await dealer.cmd("open_round", table=TABLE))["error"]["code"] == "occasion_closed"
        assert await server.runtime.store.log_head() == before
        # Reading stays open: an auditor replays the night after it closed.
        assert (await auditor.cmd("subscribe", stream="license"))["ok"]
        [_license, started] = await auditor.wait_events("license", 2)
        assert started["type"] == "OccasionStarted" and started["version"] == 2
        assert started["data"]["ends_at"] - started["data"]["starts_at"] == 14 * 3_600_000
    finally:
        await server.stop()
