"""The ``table`` and ``bankroll`` views (pushed, coalesced) and the websocket's ``bearer.``
subprotocol, which the browser consoles use (docs/PROTOCOL.md, docs/CONSOLES.md)."""

from __future__ import annotations

import itertools

import aiohttp
import pytest

from services.gateway.transport import WS_SUBPROTOCOL
from tests.support import LiveServer, WsClient, dealer_token, player_token, token

TABLE = "roulette-1"


async def round_with_a_bet(server: LiveServer, dealer: WsClient, amount: int = 300) -> str:
    cashier = await server.connect(token("cashier"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=5000))["ok"]
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    placed = await dealer.cmd(
        "place_bet", table=TABLE, player="p-1", bet={"kind": "red"}, amount=amount
    )
    assert placed["ok"], placed
    bet_id: str = placed["result"]["bet_id"]
    return bet_id


async def test_the_table_view_is_the_table_as_http_shows_it_and_follows_it(
    server: LiveServer,
) -> None:
    dealer = await server.connect(dealer_token(TABLE))
    reply = await dealer.send({"op": "subscribe", "id": "v-1", "view": "table", "table": TABLE})
    assert reply["ok"], reply
    status, http = await server.get(f"/api/tables/{TABLE}", token("auditor"))
    assert status == 200
    assert reply["result"] == {"view": "table", "data": http}
    assert http["phase"] == "idle"

    bet_id = await round_with_a_bet(server, dealer)
    pushed = await dealer.wait_view(lambda d: d["phase"] == "betting" and len(d["bets"]) == 1)
    assert pushed["bets"][0]["bet_id"] == bet_id
    status, http = await server.get(f"/api/tables/{TABLE}", token("auditor"))
    assert pushed == http
    assert all(v["key"] == TABLE and v["view"] == "table" for v in dealer.views)


async def test_a_burst_of_events_comes_as_few_pushes_of_the_newest_table(
    server: LiveServer,
) -> None:
    dealer = await server.connect(dealer_token(TABLE))
    cashier = await server.connect(token("cashier"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=50_000))["ok"]
    assert (await dealer.send({"op": "subscribe", "id": "v", "view": "table", "table": TABLE}))[
        "ok"
    ]
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    for _ in range(40):  # sent at once, so they land within a push interval or two
        await dealer.ws.send_json(
            {
                "op": "place_bet",
                "id": dealer.next_id(),
                "table": TABLE,
                "player": "p-1",
                "bet": {"kind": "black"},
                "amount": 100,
            }
        )
    final = await dealer.wait_view(lambda d: len(d["bets"]) == 40)
    assert final["phase"] == "betting"
    # Coalesced: far fewer pushes than the 41 events, and never the same data twice running.
    assert len(dealer.views) < 41
    datas = [v["data"] for v in dealer.views]
    assert all(a != b for a, b in itertools.pairwise(datas))


async def test_the_bankroll_view_follows_a_players_money(server: LiveServer) -> None:
    player = await server.connect(player_token("p-1"))
    first = await player.send({"op": "subscribe", "id": "b", "view": "bankroll", "player": "p-1"})
    assert first["ok"] and first["result"] == {"view": "bankroll", "data": None}  # no chips yet
    dealer = await server.connect(dealer_token(TABLE))
    await round_with_a_bet(server, dealer, amount=300)
    pushed = await player.wait_view(lambda d: d["wagered"] == 300)
    status, http = await server.get("/api/bankrolls/players/p-1", token("auditor"))
    assert status == 200 and pushed == http
    assert pushed["balance"] == 4700


@pytest.mark.parametrize(
    ("tok", "msg", "code"),
    [
        (player_token("p-1"), {"view": "bankroll", "player": "p-2"}, "forbidden"),
        (dealer_token(TABLE), {"view": "bankroll", "player": "p-1"}, "forbidden"),
        (token("member_in_charge"), {"view": "bankroll", "player": "p-1"}, "forbidden"),
        (player_token("p-1"), {"view": "bankroll"}, "bad_request"),
        (player_token("p-1"), {"view": "bankroll", "player": 7}, "bad_request"),
        (dealer_token(TABLE), {"view": "table", "table": "roulette-2"}, "forbidden"),
        (token("cashier"), {"view": "table", "table": TABLE}, "forbidden"),
        (token("ops"), {"view": "table", "table": "baccarat-9"}, "unknown_table"),
        (token("ops"), {"view": "table"}, "bad_request"),
    ],
)
async def test_views_refused(
    server: LiveServer, tok: str, msg: dict[str, object], code: str
) -> None:
    client = await server.connect(tok)
    reply = await client.send({"op": "subscribe", "id": "v", **msg})
    assert not reply["ok"] and reply["error"]["code"] == code, reply
    # Nothing is watched: the refused subscription left no listener behind.
    assert not [k for k in server.runtime.view_listeners if k[0] in ("table", "bankroll")]


async def test_unsubscribing_a_view_stops_its_pushes(server: LiveServer) -> None:
    dealer = await server.connect(dealer_token(TABLE))
    assert (await dealer.send({"op": "subscribe", "id": "v", "view": "table", "table": TABLE}))[
        "ok"
    ]
    gone = await dealer.send({"op": "unsubscribe", "id": "u", "view": "table", "table": TABLE})
    assert gone == {"re": "u", "ok": True, "result": {}}
    assert ("table", TABLE) not in server.runtime.view_listeners
    auditor = await server.connect(token("auditor"))
    assert (await auditor.send({"op": "subscribe", "id": "v", "view": "table", "table": TABLE}))[
        "ok"
    ]
    await round_with_a_bet(server, dealer)
    # The table's watcher got its pushes; the connection that unsubscribed got none.
    await auditor.wait_view(lambda d: len(d["bets"]) == 1)
    assert dealer.views == []


async def test_a_browser_offers_its_token_as_the_bearer_subprotocol(server: LiveServer) -> None:
    tok = player_token("p-1")
    async with aiohttp.ClientSession() as http:
        ws = await http.ws_connect(f"{server.base}/ws", protocols=(WS_SUBPROTOCOL, f"bearer.{tok}"))
        assert ws.protocol == WS_SUBPROTOCOL  # the server names its protocol, not the token
        client = WsClient(ws)
        reply = await client.send({"op": "subscribe", "id": "s", "stream": f"table:{TABLE}"})
        assert reply["ok"], reply
        refused = await client.cmd("buy_chips", player="p-1", amount=100)
        assert refused["error"]["code"] == "forbidden"  # it is that player's token
        await client.close()
        for bad, reason in [("bearer.not-a-token", "malformed token"), ("bearer.", "no token")]:
            with pytest.raises(aiohttp.WSServerHandshakeError) as e:
                await http.ws_connect(f"{server.base}/ws", protocols=(WS_SUBPROTOCOL, bad))
            assert e.value.status == 401, reason


async def test_a_log_subscription_with_types_gets_only_those_and_resumes_past_the_others(
    server: LiveServer,
) -> None:
    dealer = await server.connect(dealer_token(TABLE))
    await round_with_a_bet(server, dealer)
    assert (await dealer.cmd("no_more_bets", table=TABLE))["ok"]
    outcome = {"pocket": "7", "spun_from": None}
    assert (await dealer.cmd("record_outcome", table=TABLE, outcome=outcome))["ok"]

    ops = await server.connect(token("ops"))
    wanted = ["Settled", "TableClosed"]
    sub = {"op": "subscribe", "id": "l", "stream": "log", "since": 0, "types": wanted}
    assert (await ops.send(sub))["ok"]
    caught_up = await ops.wait_events(f"table:{TABLE}", 1)  # the catch-up: the Settled only
    assert [e["type"] for e in caught_up] == ["Settled"]
    assert (await dealer.cmd("open_round", table=TABLE))["ok"]
    other = await server.connect(dealer_token("roulette-2"))
    assert (await other.cmd("close_table", table="roulette-2"))["ok"]
    live = await ops.wait_events("table:roulette-2", 1)  # live: the TableClosed, nothing else
    assert [e["type"] for e in live] == ["TableClosed"]
    assert {e["type"] for e in ops.events} == {"Settled", "TableClosed"}

    # Resumed from the last event it was sent: nothing twice, and the rest still filtered.
    again = await server.connect(token("auditor"))
    since = ops.events[0]["log_id"]
    resumed = {"op": "subscribe", "id": "r", "stream": "log", "since": since, "types": wanted}
    assert (await again.send(resumed))["ok"]
    got = await again.wait_events("table:roulette-2", 1)
    assert [e["type"] for e in again.events] == ["TableClosed"] and got[0] == live[0]


@pytest.mark.parametrize(
    ("msg", "message"),
    [
        ({"stream": "log", "types": []}, "field 'types' must be a list of 1 to 64 event types"),
        ({"stream": "log", "types": "Settled"}, "field 'types' must be a list of 1 to 64"),
        ({"stream": "log", "types": ["Settled"] * 65}, "must be a list of 1 to 64"),
        (
            {"stream": "log", "types": ["Settled", "NoSuchEvent"]},
            "unknown event type 'NoSuchEvent'",
        ),
        ({"stream": "log", "types": [7]}, "unknown event type '7'"),
        ({"stream": f"table:{TABLE}", "types": ["Settled"]}, "field 'types' filters the log only"),
    ],
)
async def test_bad_log_types_are_refused(
    server: LiveServer, msg: dict[str, object], message: str
) -> None:
    ops = await server.connect(token("ops"))
    reply = await ops.send({"op": "subscribe", "id": "s", **msg})
    assert reply["error"]["code"] == "bad_request" and message in reply["error"]["message"]
    # Nothing is followed: a later subscribe to the same stream is a new one, not "already".
    ok = await ops.send({"op": "subscribe", "id": "t", "stream": msg["stream"]})
    assert ok["ok"] and "already" not in ok["result"], ok
