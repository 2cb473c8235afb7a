"""Black Jack over the real websocket protocol (4620.5): an RNG table played round after
round by players on several spaces, through the registry's ops; a player's subscription
never carries the hole card before it is turned up; bad input gets its code."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from services.store.embedded import EmbeddedRedis
from tests.conftest import night_doc
from tests.support import LiveServer, WsClient, dealer_token, player_token, start_server, token

TABLE = "bj-1"
PLAYERS = ("p-1", "p-2", "p-3")


def bj_night(org: str, option: int = 1) -> dict[str, Any]:
    doc = night_doc(org)
    doc["license"]["games"] = ["black_jack"]
    doc["license"]["tie_option"] = option
    doc["tables"] = [{"id": TABLE, "game": "black_jack", "outcome_mode": "rng", "options": {}}]
    return doc


@pytest.fixture
async def server(redis_server: EmbeddedRedis, org: str) -> AsyncIterator[LiveServer]:
    live = await start_server(redis_server.url, bj_night(org))
    cashier = await live.connect(token("cashier"))
    for player in PLAYERS:
        assert (await cashier.cmd("buy_chips", player=player, amount=100_000))["ok"]
    yield live
    await live.stop()


async def _play_round(dealer: WsClient, players: dict[str, WsClient], server: LiveServer) -> None:
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    for space, player in enumerate(PLAYERS * 2, start=1):
        reply = await players[player].cmd(
            "place_bet", table=TABLE, player=player, bet={"space": space}, amount=200
        )
        assert reply["ok"], reply
    dealt = await dealer.cmd("deal", table=TABLE)
    assert dealt["ok"], dealt
    from services.tables.view import table_view

    for _ in range(200):
        view = table_view(server.runtime.supervisor.table_state(TABLE))
        if view["phase"] == "idle":
            return
        if view["stage"] == "insurance":
            assert (await dealer.cmd("peek", table=TABLE))["ok"]
            continue
        turn = view["turn"]
        hand = next(h for h in view["hands"] if h["hand"] == turn)
        action = "hit" if hand["total"] < 17 else "stand"
        reply = await players[hand["player"]].cmd("act", table=TABLE, hand=turn, action=action)
        assert reply["ok"], reply
    raise AssertionError("the round did not end")


async def test_rounds_of_black_jack_on_six_spaces_settle_and_conserve_money(
    server: LiveServer,
) -> None:
    dealer = await server.connect(dealer_token(TABLE))
    players = {p: await server.connect(player_token(p)) for p in PLAYERS}
    watcher = await server.connect(player_token("p-1"))
    assert (await watcher.cmd("subscribe", stream=f"table:{TABLE}"))["ok"]
    for _ in range(6):
        await _play_round(dealer, players, server)
    balances = await server.runtime.store.balances()
    state = server.runtime.supervisor.table_state(TABLE)
    assert state.phase == "idle" and state.round == 6
    # every cent is somewhere: the players' balances and the house's result
    events = await server.runtime.store.read(f"table:{TABLE}", since=0, limit=10_000)
    debits = sum(e.data["amount"] for e in events if e.type in ("BetPlaced", "WagerAdded"))
    paid = sum(e.data["paid"] for e in events if e.type == "PartSettled")
    assert sum(balances[p] for p in PLAYERS) == 3 * 100_000 - debits + paid
    # a player's subscription never carries a face-down card before it is turned up
    pushed = await watcher.wait_events(f"table:{TABLE}", len(events))
    for env in pushed:
        if env["type"] == "CardDealt" and not env["data"]["face_up"]:
            assert env["data"]["card"] is None and env["data"]["salt"] is None
        assert "seed" not in env["data"] or env["type"] == "ShoeRevealed"


async def test_black_jack_refusals_have_their_codes(server: LiveServer) -> None:
    dealer = await server.connect(dealer_token(TABLE))
    p1 = await server.connect(player_token("p-1"))
    p2 = await server.connect(player_token("p-2"))
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    odd = await p1.cmd("place_bet", table=TABLE, player="p-1", bet={"space": 1}, amount=201)
    assert odd["error"]["code"] == "invalid_bet", odd
    over = await p1.cmd("place_bet", table=TABLE, player="p-1", bet={"space": 1}, amount=600)
    assert over["error"]["code"] == "over_limit", over
    assert (await p1.cmd("place_bet", table=TABLE, player="p-1", bet={"space": 1}, amount=200))[
        "ok"
    ]
    taken = await p2.cmd("place_bet", table=TABLE, player="p-2", bet={"space": 1}, amount=200)
    assert taken["error"]["code"] == "space_taken", taken
    forbidden = await p1.cmd("deal", table=TABLE)
    assert forbidden["error"]["code"] == "forbidden", forbidden
    bad = await p1.cmd("act", table=TABLE, hand="1.0", action="surrender")
    assert bad["error"]["code"] == "bad_request", bad
    assert (await dealer.cmd("deal", table=TABLE))["ok"]
    state = server.runtime.supervisor.table_state(TABLE)
    late = await p2.cmd("place_bet", table=TABLE, player="p-2", bet={"space": 2}, amount=200)
    # the deal closed the bets (a dealer natural may already have ended the round)
    expected = "round_not_open" if state.phase == "idle" else "bets_closed"
    assert late["error"]["code"] == expected, late
    if state.phase != "idle":
        wrong = await p2.cmd("act", table=TABLE, hand="1.0", action="stand")
        assert wrong["error"]["code"] in ("not_your_turn", "insurance_not_offered"), wrong


async def test_a_member_in_charge_voids_a_round_and_every_wager_comes_back(
    server: LiveServer,
) -> None:
    dealer = await server.connect(dealer_token(TABLE))
    p1 = await server.connect(player_token("p-1"))
    mic = await server.connect(token("member_in_charge"))
    for _ in range(20):  # a round whose deal settled nothing yet (no natural)
        before = await server.runtime.store.balances()
        assert (await dealer.cmd("open_round", table=TABLE))["ok"]
        for space in (1, 2):
            bet = {"space": space}
            assert (await p1.cmd("place_bet", table=TABLE, player="p-1", bet=bet, amount=200))["ok"]
        dealt = await dealer.cmd("deal", table=TABLE)
        assert dealt["ok"], dealt
        if not dealt["result"]["settled"]:
            break
        if server.runtime.supervisor.table_state(TABLE).phase != "idle":
            await mic.cmd("void_round", table=TABLE, reason="next")
    else:
        raise AssertionError("every deal settled something")
    denied = await dealer.cmd("void_round", table=TABLE, reason="misdeal")
    assert denied["error"]["code"] == "forbidden", denied
    voided = await mic.cmd("void_round", table=TABLE, reason="misdeal")
    assert voided["ok"], voided
    assert server.runtime.supervisor.table_state(TABLE).phase == "idle"
    assert (await server.runtime.store.balances())["p-1"] == before["p-1"]
    again = await mic.cmd("void_round", table=TABLE, reason="misdeal")
    assert again["error"]["code"] == "round_not_open", again
