"""Beat the Dealer (4620.14) and Bang (4620.15) over the real websocket protocol: the
``roll``, ``seat_player``, ``unseat_player`` and ``pass_dice`` ops through the registry, a
big six riding across games, RNG rolls, and one refusal per code, each changing nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from services.store.embedded import EmbeddedRedis
from services.tables.view import table_view
from tests.conftest import night_doc
from tests.support import LiveServer, WsClient, dealer_token, player_token, start_server, token

BANG = "bang-1"
BANG_RNG = "bang-2"
BTD = "btd-1"
BTD_RNG = "btd-2"
TABLES = (BANG, BANG_RNG, BTD, BTD_RNG)
PLAYERS = ("p-1", "p-2", "p-3")
CHIPS = 50_000


def dice_night(org: str) -> dict[str, Any]:
    doc = night_doc(org)
    doc["license"]["games"] = ["bang", "beat_the_dealer"]
    doc["tables"] = [
        {"id": BANG, "game": "bang", "outcome_mode": "dealer", "options": {"seats": 8}},
        {"id": BANG_RNG, "game": "bang", "outcome_mode": "rng", "options": {}},
        {"id": BTD, "game": "beat_the_dealer", "outcome_mode": "dealer", "options": {}},
        {"id": BTD_RNG, "game": "beat_the_dealer", "outcome_mode": "rng", "options": {}},
    ]
    return doc


@pytest.fixture
async def server(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[LiveServer]:
    live = await start_server(redis_server.url, dice_night(org))
    cashier = await live.connect(token("cashier"))
    for player in PLAYERS:
        assert (await cashier.cmd("buy_chips", player=player, amount=CHIPS))["ok"]
    yield live
    await live.stop()


def view(server: LiveServer, table: str) -> dict[str, Any]:
    return table_view(server.runtime.supervisor.table_state(table))


async def ok(client: WsClient, op: str, **fields: Any) -> dict[str, Any]:
    reply = await client.cmd(op, **fields)
    assert reply["ok"], (op, fields, reply)
    result: dict[str, Any] = reply["result"]
    return result


async def test_bang_games_with_a_big_six_riding_across_them(server: LiveServer) -> None:
    dealer = await server.connect(dealer_token(BANG))
    p1 = await server.connect(player_token("p-1"))
    p2 = await server.connect(player_token("p-2"))
    await ok(dealer, "seat_player", table=BANG, seat=2, player="p-1")
    await ok(dealer, "seat_player", table=BANG, seat=5, player="p-2")
    # game 1: p-1 (seat 2, the first bettor on the dealer's left) shoots
    await ok(dealer, "open_round", table=BANG)
    six = (
        await ok(p1, "place_bet", table=BANG, player="p-1", bet={"kind": "big_six"}, amount=500)
    )["bet_id"]
    await ok(p2, "place_bet", table=BANG, player="p-2", bet={"kind": "hi_dice"}, amount=300)
    await ok(p2, "place_bet", table=BANG, player="p-2", bet={"kind": "field"}, amount=100)
    await ok(dealer, "no_more_bets", table=BANG)
    dealer_roll = await ok(dealer, "roll", table=BANG, dice=[4, 5], thrown_by="dealer")
    assert dealer_roll["rolls"] == [
        {"turn": "dealer", "player": None, "dice": [4, 5], "total": 9, "thrown_by": "dealer"}
    ]
    assert dealer_roll["bets_reopened"] and not dealer_roll["round_ended"]
    [part] = dealer_roll["settled"]
    assert part["part"] == "dealer_roll" and part["paid"] == 200  # the field won on 9
    v = view(server, BANG)
    assert (v["phase"], v["stage"], v["point"]) == ("betting", "inside_bets", 9)
    assert v["shooter"] == {"seat": 2, "player": "p-1"}
    await ok(p2, "place_bet", table=BANG, player="p-2", bet={"kind": "any_seven"}, amount=100)
    await ok(dealer, "no_more_bets", table=BANG)
    shot = await ok(dealer, "roll", table=BANG, dice=[5, 5], player="p-1")
    assert shot["round_ended"]
    assert {s["result"] for s in shot["settled"][0]["settlements"]} == {"won", "lost"}
    # game 2: the big six rides; p-2 (seat 5) is offered the dice and declines
    await ok(dealer, "open_round", table=BANG)
    layout = view(server, BANG)["layout"]
    assert [(b["bet_id"], b["riding"], b["in_action"]) for b in layout] == [(six, True, True)]
    taken = await p1.cmd("cancel_bet", table=BANG, bet_id=six)
    assert taken["error"]["code"] == "bet_in_action", taken
    passed = await ok(dealer, "pass_dice", table=BANG)
    assert passed["seq"] > 0
    assert view(server, BANG)["shooter"] == {"seat": 2, "player": "p-1"}
    await ok(dealer, "no_more_bets", table=BANG)
    await ok(dealer, "roll", table=BANG, dice=[2, 2])
    await ok(dealer, "no_more_bets", table=BANG)
    end = await ok(dealer, "roll", table=BANG, dice=[3, 3], player="p-1", thrown_by="player")
    [part] = end["settled"]
    assert part["settlements"] == [
        {"bet_id": six, "player": "p-1", "amount": 500, "result": "won", "paid": 1000}
    ]
    assert end["round"] == 2 and end["round_ended"]
    balances = await server.runtime.store.balances()
    assert balances["p-1"] == CHIPS + 500
    assert balances["p-2"] == CHIPS + 100 + 300 - 100  # field won, Hi Dice won (10 > 9), any 7 lost
    events = await server.runtime.store.read(f"table:{BANG}", since=0, limit=1000)
    assert [e.data["turn"] for e in events if e.type == "DiceRolled"] == [
        "dealer",
        "player",
        "dealer",
        "player",
    ]


async def test_rng_tables_roll_for_the_dealer_and_the_players(server: LiveServer) -> None:
    dealer = await server.connect(dealer_token(BTD_RNG, BANG_RNG))
    p1 = await server.connect(player_token("p-1"))
    await ok(dealer, "open_round", table=BTD_RNG)
    await ok(
        p1, "place_bet", table=BTD_RNG, player="p-1", bet={"kind": "beat_the_dealer"}, amount=200
    )
    await ok(dealer, "no_more_bets", table=BTD_RNG)
    first = await ok(dealer, "roll", table=BTD_RNG)
    second = await ok(dealer, "roll", table=BTD_RNG, player="p-1")
    [d], [p] = first["rolls"], second["rolls"]
    assert d["thrown_by"] == p["thrown_by"] == "rng" and p["player"] == "p-1"
    [s] = second["settled"][0]["settlements"]
    assert s["result"] == ("won" if p["total"] > d["total"] else "lost")
    assert second["round_ended"]
    # Bang, RNG: the server rolls the dealer's point and the shooter's roll
    await ok(dealer, "seat_player", table=BANG_RNG, seat=1, player="p-1")
    await ok(dealer, "open_round", table=BANG_RNG)
    await ok(p1, "place_bet", table=BANG_RNG, player="p-1", bet={"kind": "hi_dice"}, amount=100)
    await ok(dealer, "no_more_bets", table=BANG_RNG)
    point = (await ok(dealer, "roll", table=BANG_RNG))["rolls"][0]["total"]
    await ok(dealer, "no_more_bets", table=BANG_RNG)
    shot = await ok(dealer, "roll", table=BANG_RNG, player="p-1")
    [s] = shot["settled"][0]["settlements"]
    assert s["result"] == ("won" if shot["rolls"][0]["total"] > point else "lost")


async def refused(
    server: LiveServer, client: WsClient, table: str, code: str, op: str, **fields: Any
) -> None:
    before = await server.runtime.store.head(f"table:{table}")
    balances = await server.runtime.store.balances()
    reply = await client.cmd(op, table=table, **fields)
    assert not reply["ok"] and reply["error"]["code"] == code, (op, fields, reply)
    assert await server.runtime.store.head(f"table:{table}") == before
    assert await server.runtime.store.balances() == balances


async def test_every_refusal_has_its_code_and_changes_nothing(server: LiveServer) -> None:
    dealer = await server.connect(dealer_token(BANG, BTD, BANG_RNG, BTD_RNG))
    p1 = await server.connect(player_token("p-1"))
    p2 = await server.connect(player_token("p-2"))
    # Beat the Dealer
    await ok(dealer, "open_round", table=BTD)
    await ok(p1, "place_bet", table=BTD, player="p-1", bet={"kind": "beat_the_dealer"}, amount=500)
    await refused(
        server,
        p1,
        BTD,
        "over_limit",
        "place_bet",
        player="p-1",
        bet={"kind": "beat_the_dealer"},
        amount=501,
    )
    await refused(
        server,
        dealer,
        BTD,
        "already_bet",
        "place_bet",
        player="p-1",
        bet={"kind": "beat_the_dealer"},
        amount=100,
    )
    await refused(server, dealer, BTD, "bets_open", "roll", dice=[1, 2])
    await refused(server, p1, BTD, "forbidden", "roll", dice=[1, 2])
    await ok(dealer, "no_more_bets", table=BTD)
    await refused(server, dealer, BTD, "dealer_rolls_first", "roll", dice=[1, 2], player="p-1")
    await refused(server, dealer, BTD, "invalid_die_face", "roll", dice=[0, 2])
    await refused(server, dealer, BTD, "invalid_die_face", "roll", dice=[7, 2])
    await refused(server, dealer, BTD, "wrong_number_of_dice", "roll", dice=[1, 2, 3])
    await refused(server, dealer, BTD, "invalid_thrower", "roll", dice=[1, 2], thrown_by="rng")
    await refused(server, dealer, BTD, "wrong_mode", "roll")
    await ok(dealer, "roll", table=BTD, dice=[3, 3])
    await refused(server, dealer, BTD, "already_rolled", "roll", dice=[1, 2])
    await refused(server, dealer, BTD, "no_bet", "roll", dice=[1, 2], player="p-2")
    # RNG tables take no dice
    await ok(dealer, "open_round", table=BTD_RNG)
    await ok(dealer, "no_more_bets", table=BTD_RNG)
    await refused(server, dealer, BTD_RNG, "wrong_mode", "roll", dice=[1, 2])
    # Bang
    await ok(dealer, "seat_player", table=BANG, seat=1, player="p-1")
    await refused(server, dealer, BANG, "seat_taken", "seat_player", seat=1, player="p-2")
    await refused(server, dealer, BANG, "already_seated", "seat_player", seat=3, player="p-1")
    await refused(server, dealer, BANG, "invalid_seat", "seat_player", seat=9, player="p-2")
    await refused(server, dealer, BANG, "seat_empty", "unseat_player", seat=4)
    await refused(server, dealer, BANG, "round_not_open", "pass_dice")
    await ok(dealer, "open_round", table=BANG)
    six = (
        await ok(p1, "place_bet", table=BANG, player="p-1", bet={"kind": "big_six"}, amount=200)
    )["bet_id"]
    await ok(p2, "place_bet", table=BANG, player="p-2", bet={"kind": "field"}, amount=100)
    await refused(
        server,
        p2,
        BANG,
        "invalid_bet",
        "place_bet",
        player="p-2",
        bet={"kind": "craps"},
        amount=100,
    )
    await refused(server, dealer, BANG, "no_other_player", "pass_dice")
    await ok(dealer, "no_more_bets", table=BANG)
    await refused(server, dealer, BANG, "dealer_rolls_first", "roll", dice=[1, 2], player="p-1")
    await ok(dealer, "roll", table=BANG, dice=[2, 3])
    await refused(
        server,
        p2,
        BANG,
        "hi_dice_closed",
        "place_bet",
        player="p-2",
        bet={"kind": "hi_dice"},
        amount=100,
    )
    await refused(server, p1, BANG, "bet_in_action", "cancel_bet", bet_id=six)
    await refused(server, dealer, BANG, "bets_open", "roll", dice=[1, 2], player="p-1")
    await ok(dealer, "no_more_bets", table=BANG)
    await refused(server, dealer, BANG, "already_rolled", "roll", dice=[1, 2])
    await refused(server, dealer, BANG, "not_the_shooter", "roll", dice=[1, 2], player="p-2")
    await ok(dealer, "roll", table=BANG, dice=[1, 2], player="p-1")
    # a bet its roll settled is no longer on the layout
    await ok(dealer, "open_round", table=BANG)
    field = (
        await ok(p2, "place_bet", table=BANG, player="p-2", bet={"kind": "field"}, amount=100)
    )["bet_id"]
    await ok(dealer, "no_more_bets", table=BANG)
    await ok(dealer, "roll", table=BANG, dice=[1, 1])
    await refused(server, p2, BANG, "unknown_bet", "cancel_bet", bet_id=field)
    await ok(dealer, "no_more_bets", table=BANG)
    await ok(dealer, "roll", table=BANG, dice=[1, 2], player="p-1")
    # no seated player has a bet at the table's first game: no shooter
    await ok(dealer, "open_round", table=BANG_RNG)
    await ok(p1, "place_bet", table=BANG_RNG, player="p-1", bet={"kind": "hi_dice"}, amount=100)
    await ok(dealer, "no_more_bets", table=BANG_RNG)
    await ok(dealer, "roll", table=BANG_RNG)
    await ok(dealer, "no_more_bets", table=BANG_RNG)
    await refused(server, dealer, BANG_RNG, "no_shooter", "roll", player="p-1")
    await refused(server, dealer, BANG_RNG, "bad_request", "roll", player="p-1", dice="six")
    # a close at the night's end returns the big six still riding
    before = (await server.runtime.store.balances())["p-1"]
    await ok(dealer, "close_table", table=BANG)
    assert (await server.runtime.store.balances())["p-1"] == before + 200
