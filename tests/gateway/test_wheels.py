"""Wheel games over the real websocket protocol: a money wheel's round, a merchandise
wheel's shelf and control sheet, and every kind of bad input (a stable code, nothing
changes)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from services.games.wheels import DEFAULT_LAYOUTS
from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import LiveServer, WsClient, dealer_token, player_token, start_server, token

MONEY = "money-1"
PRIZES = "prizes-1"
PRIZE_SECTIONS = [
    {"shows": ["1"], "prize": "mug"},
    {"shows": ["2"], "prize": "bear"},
    {"shows": ["3"]},
]
INVENTORY = [
    {"item": "mug-1", "prize": "mug", "value": 400},
    {"item": "mug-2", "prize": "mug", "value": 600},
    {"item": "bear-1", "prize": "bear", "value": 1_000, "donated": True},
]
LIMIT = 1_000
MONEY_SECTIONS = DEFAULT_LAYOUTS["money_wheel"]["standard"]
BILL_ODDS = {"$1": 1, "$2": 2, "$5": 5, "$10": 10, "$20": 20, "flag": 40, "joker": 40}


def wheel_night(org: str) -> dict[str, Any]:
    doc = night_doc(org)
    doc["license"]["games"] = ["roulette", "money_wheel", "merchandise_wheel"]
    doc["tables"] = [
        {"id": MONEY, "game": "money_wheel", "outcome_mode": "dealer", "options": {}},
        {
            "id": PRIZES,
            "game": "merchandise_wheel",
            "outcome_mode": "dealer",
            "options": {
                "sections": PRIZE_SECTIONS,
                "aggregate_prize_limit": LIMIT,
                "inventory": INVENTORY,
            },
        },
    ]
    return doc


def wager(table: str, player: str, bet: dict[str, Any], amount: int) -> dict[str, Any]:
    """A ``place_bet`` command's fields."""
    return {"op": "place_bet", "table": table, "player": player, "bet": bet, "amount": amount}


class Night:
    """A server with p-1 and p-2 holding chips and round 1 open at both wheels."""

    def __init__(self, server: LiveServer, dealer: WsClient, player: WsClient) -> None:
        self.server = server
        self.dealer = dealer
        self.player = player

    async def snapshot(self) -> tuple[Any, ...]:
        store = self.server.runtime.store
        return (
            (await store.head(f"table:{MONEY}")).version,
            (await store.head(f"table:{PRIZES}")).version,
            await store.balances(),
            await store.log_head(),
        )

    async def refused(self, client: WsClient, code: str, **msg: Any) -> None:
        before = await self.snapshot()
        reply = await client.send({"id": client.next_id(), **msg})
        assert reply["ok"] is False, reply
        assert reply["error"]["code"] == code, reply
        assert await self.snapshot() == before

    async def ok(self, client: WsClient, op: str, **msg: Any) -> dict[str, Any]:
        reply = await client.cmd(op, **msg)
        assert reply["ok"], reply
        result: dict[str, Any] = reply["result"]
        return result


@pytest.fixture
async def night(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[Night]:
    server = await start_server(redis_server.url, wheel_night(org))
    cashier = await server.connect(token("cashier"))
    for player in ("p-1", "p-2"):
        assert (await cashier.cmd("buy_chips", player=player, amount=5_000))["ok"]
    dealer = await server.connect(dealer_token(MONEY, PRIZES))
    for table in (MONEY, PRIZES):
        assert (await dealer.cmd("open_round", table=table))["ok"]
    player = await server.connect(player_token("p-1"))
    yield Night(server, dealer, player)
    await server.stop()


async def test_a_money_wheel_round_pays_the_bill_the_indicator_rests_on(night: Night) -> None:
    """4620.8(b)(2): the bill's number is the payoff odds; flag and joker at the layout's."""
    section = MONEY_SECTIONS.index("$5")
    stakes = {"$1": 100, "$5": 200, "flag": 500}
    for space, amount in stakes.items():
        await night.ok(
            night.player,
            "place_bet",
            table=MONEY,
            player="p-1",
            bet={"space": space},
            amount=amount,
        )
    await night.ok(night.dealer, "no_more_bets", table=MONEY)
    result = await night.ok(
        night.dealer, "record_outcome", table=MONEY, outcome={"section": section}
    )
    assert result["outcome"] == {"section": section}
    assert result["wagered"] == 800
    assert result["paid"] == 200 + 200 * BILL_ODDS["$5"]
    balances = await night.server.runtime.store.balances()
    assert balances["p-1"] == 5_000 - 800 + 1_200


async def test_a_merchandise_winner_gets_an_item_and_the_sheet_is_pushed(night: Night) -> None:
    ops = await night.server.connect(token("ops"))
    subscribed = await ops.send(
        {"op": "subscribe", "id": "w-1", "view": "control_sheet", "table": PRIZES}
    )
    assert subscribed["ok"] and subscribed["result"]["data"]["aggregate"] == 0
    assert [i["item"] for i in subscribed["result"]["data"]["inventory"]] == [
        "mug-1",
        "mug-2",
        "bear-1",
    ]
    await night.ok(night.player, **wager(PRIZES, "p-1", {"space": "1"}, 200))
    await night.ok(night.dealer, "no_more_bets", table=PRIZES)
    result = await night.ok(night.dealer, "record_outcome", table=PRIZES, outcome={"section": 0})
    assert result["paid"] == 0  # 4620.10(d): merchandise, not cash
    assert result["awards"] == [
        {
            "bet_id": result["awards"][0]["bet_id"],
            "player": "p-1",
            "item": "mug-1",
            "prize": "mug",
            "value": 400,
        }
    ]
    sheet = await ops.wait_view(lambda d: d["aggregate"] == 400)
    assert [a["item"] for a in sheet["awarded"]] == ["mug-1"]
    assert sheet["distance_to_limit"] == LIMIT - 400
    assert [i["item"] for i in sheet["inventory"]] == ["mug-2", "bear-1"]
    status, http_sheet = await night.server.get(f"/api/control-sheets/{PRIZES}", token("auditor"))
    assert status == 200 and http_sheet == sheet
    status, table = await night.server.get(f"/api/tables/{PRIZES}", token("auditor"))
    assert table["prizes"] == {
        "aggregate": 400,
        "limit": LIMIT,
        "headroom": 600,
        "on_shelf": {"bear": 1, "mug": 1},
    }


async def test_a_restock_by_a_member_in_charge_reaches_the_sheet(night: Night) -> None:
    member = await night.server.connect(token("member_in_charge"))
    result = await night.ok(
        member, "add_stock", table=PRIZES, items=[{"item": "mug-3", "prize": "mug", "value": 100}]
    )
    assert result["stocked"] == 1
    status, sheet = await night.server.get(
        f"/api/control-sheets/{PRIZES}", token("member_in_charge")
    )
    # the projection follows the log: wait until it has folded the restock
    for _ in range(50):
        if sheet["stocked_count"] == 4:
            break
        await asyncio.sleep(0.05)
        status, sheet = await night.server.get(
            f"/api/control-sheets/{PRIZES}", token("member_in_charge")
        )
    assert status == 200 and sheet["stocked_count"] == 4
    assert sheet["inventory"][-1]["item"] == "mug-3"


async def test_the_wheel_closes_itself_at_the_aggregate_limit(night: Night) -> None:
    p2 = await night.server.connect(player_token("p-2"))
    await night.ok(night.player, **wager(PRIZES, "p-1", {"space": "1"}, 100))
    await night.ok(p2, **wager(PRIZES, "p-2", {"space": "1"}, 100))
    await night.ok(night.dealer, "no_more_bets", table=PRIZES)
    result = await night.ok(night.dealer, "record_outcome", table=PRIZES, outcome={"section": 0})
    assert [a["item"] for a in result["awards"]] == ["mug-1", "mug-2"]
    assert result["closed"] == "prize_limit"
    await night.refused(night.dealer, "table_closed", op="open_round", table=PRIZES)
    member = await night.server.connect(token("member_in_charge"))
    await night.refused(member, "table_closed", op="add_stock", table=PRIZES, items=INVENTORY[:1])


# Bad input: one test per kind.


async def test_a_bet_on_a_space_the_layout_does_not_have(night: Night) -> None:
    await night.refused(night.player, "invalid_bet", **wager(MONEY, "p-1", {"space": "$3"}, 100))


async def test_a_bet_over_the_wheel_maximum_4620_8_b_3(night: Night) -> None:
    await night.refused(night.player, "over_limit", **wager(MONEY, "p-1", {"space": "$1"}, 501))


async def test_a_merchandise_bet_over_two_dollars_4620_10_c(night: Night) -> None:
    await night.refused(night.player, "over_limit", **wager(PRIZES, "p-1", {"space": "1"}, 201))


async def test_merchandise_offered_as_a_wager_4620_10_c(night: Night) -> None:
    bet = {"space": "1", "merchandise": "mug-1"}
    await night.refused(night.player, "merchandise_wager", **wager(PRIZES, "p-1", bet, 100))


async def test_a_section_index_outside_the_wheel(night: Night) -> None:
    await night.ok(night.dealer, "no_more_bets", table=MONEY)
    for outcome in ({"section": 54}, {"section": -1}, {"section": "3"}, {"pocket": "1"}, 7, [3]):
        # Not an object at all is invalid_outcome too, as docs/PROTOCOL.md says.
        await night.refused(
            night.dealer, "invalid_outcome", op="record_outcome", table=MONEY, outcome=outcome
        )


async def test_a_bet_the_shelf_could_not_honour(night: Night) -> None:
    p2 = await night.server.connect(player_token("p-2"))
    await night.ok(night.player, **wager(PRIZES, "p-1", {"space": "2"}, 100))
    await night.refused(p2, "out_of_stock", **wager(PRIZES, "p-2", {"space": "2"}, 100))


async def test_a_bet_that_could_pass_the_aggregate_limit(night: Night) -> None:
    p2 = await night.server.connect(player_token("p-2"))
    await night.ok(night.player, **wager(PRIZES, "p-1", {"space": "1"}, 100))
    await night.ok(night.player, **wager(PRIZES, "p-1", {"space": "1"}, 100))
    # a third mug winner would need a third mug: out of stock before the limit
    await night.refused(p2, "out_of_stock", **wager(PRIZES, "p-2", {"space": "1"}, 100))
    # the bear (1,000) alone fits the limit (1,000); with the two mugs it is another section
    await night.ok(p2, **wager(PRIZES, "p-2", {"space": "2"}, 100))
    member = await night.server.connect(token("member_in_charge"))
    await night.ok(
        member, "add_stock", table=PRIZES, items=[{"item": "mug-9", "prize": "mug", "value": 1}]
    )
    # three mugs would be 400 + 600 + 1 = 1,001 > 1,000
    await night.refused(p2, "prize_limit", **wager(PRIZES, "p-2", {"space": "1"}, 100))


@pytest.mark.parametrize(
    ("items", "code"),
    [
        ([{"item": "mug-1", "prize": "mug", "value": 100}], "duplicate_item"),
        ([{"item": "tv-1", "prize": "mug", "value": 40_001}], "prize_over_limit"),
        ([{"item": "sofa-1", "prize": "sofa", "value": 100}], "invalid_stock"),
        ([{"item": "mug-7", "prize": "mug"}], "invalid_stock"),
        ([], "bad_request"),
    ],
)
async def test_a_restock_that_does_not_validate(night: Night, items: Any, code: str) -> None:
    member = await night.server.connect(token("member_in_charge"))
    await night.refused(member, code, op="add_stock", table=PRIZES, items=items)


async def test_restocking_is_for_a_member_in_charge_and_a_merchandise_wheel(night: Night) -> None:
    items = [{"item": "mug-8", "prize": "mug", "value": 100}]
    await night.refused(night.dealer, "forbidden", op="add_stock", table=PRIZES, items=items)
    member = await night.server.connect(token("member_in_charge"))
    await night.refused(member, "wrong_game", op="add_stock", table=MONEY, items=items)
    await night.refused(member, "bad_request", op="add_stock", table=PRIZES, items="mug")


async def test_control_sheets_are_not_for_players_and_unknown_views_are_refused(
    night: Night,
) -> None:
    status, _ = await night.server.get(f"/api/control-sheets/{PRIZES}", player_token("p-1"))
    assert status == 403
    status, _ = await night.server.get(f"/api/control-sheets/{MONEY}", token("auditor"))
    assert status == 404  # a money wheel has no control sheet
    refused = await night.player.send(
        {"op": "subscribe", "id": "v-1", "view": "control_sheet", "table": PRIZES}
    )
    assert refused["error"]["code"] == "forbidden"
    ops = await night.server.connect(token("ops"))
    unknown = await ops.send({"op": "subscribe", "id": "v-2", "view": "horoscope", "table": PRIZES})
    assert unknown["error"]["code"] == "unknown_view"


async def test_many_concurrent_winners_never_pass_the_limit_or_the_shelf(night: Night) -> None:
    """4620.10(e): sixty bets sent at once from six players (the actor takes them in
    batches) on the one mug section: only as many are accepted as the shelf and the limit
    can honour, and the awards stay within both."""
    players = [f"p-{n}" for n in range(3, 9)]
    cashier = await night.server.connect(token("cashier"))
    for p in players:
        assert (await cashier.cmd("buy_chips", player=p, amount=1_000))["ok"]
    clients = {p: await night.server.connect(player_token(p)) for p in players}
    replies = await asyncio.gather(
        *(
            clients[p].cmd("place_bet", table=PRIZES, player=p, bet={"space": "1"}, amount=10)
            for p in players
            for _ in range(10)
        )
    )
    accepted = [r for r in replies if r["ok"]]
    refused = {r["error"]["code"] for r in replies if not r["ok"]}
    # two mugs (400 + 600 = 1,000 = the limit): two winners at most, the rest refused
    assert len(accepted) == 2 and refused == {"out_of_stock"}
    await night.ok(night.dealer, "no_more_bets", table=PRIZES)
    result = await night.ok(night.dealer, "record_outcome", table=PRIZES, outcome={"section": 0})
    assert sum(a["value"] for a in result["awards"]) == LIMIT
    assert result["closed"] == "prize_limit"
