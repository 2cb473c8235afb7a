"""The HTTP API (PROTOCOL.md "HTTP"): commands over POST, reads, health, metrics."""

from __future__ import annotations

import asyncio

import pytest

from tests.support import LiveServer, dealer_token, player_token, token

TABLE = "roulette-1"


async def _wait_caught_up(server: LiveServer) -> None:
    for _ in range(200):
        if await server.runtime.runner.caught_up():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("projections did not catch up")


async def test_a_night_over_post_api_commands(server: LiveServer) -> None:
    cashier, dealer, player = token("cashier"), dealer_token(TABLE), player_token("p-1")
    status, body = await server.post_command(
        {"op": "buy_chips", "id": "b1", "player": "p-1", "amount": 500}, cashier
    )
    assert status == 200 and body["ok"] and body["re"] == "b1"
    assert (await server.post_command({"op": "open_round", "id": "o1", "table": TABLE}, dealer))[1][
        "ok"
    ]
    bet = {
        "op": "place_bet",
        "id": "x1",
        "table": TABLE,
        "player": "p-1",
        "bet": {"kind": "odd"},
        "amount": 300,
    }
    first = (await server.post_command(bet, player))[1]
    assert first["ok"]
    assert (await server.post_command(bet, player))[1] == first  # a retry changes nothing
    assert (await server.post_command({"op": "no_more_bets", "id": "n1", "table": TABLE}, dealer))[
        1
    ]["ok"]
    done = await server.post_command(
        {"op": "record_outcome", "id": "r1", "table": TABLE, "outcome": {"pocket": "7"}}, dealer
    )
    assert done[1]["result"]["paid"] == 600  # odd pays even money, 4620.4(e)(7)
    await _wait_caught_up(server)
    auditor = token("auditor")
    status, player_view = await server.get("/api/bankrolls/players/p-1", auditor)
    assert status == 200
    assert player_view == {
        "player": "p-1",
        "bought": 500,
        "redeemed": 0,
        "wagered": 300,
        "paid": 600,
        "balance": 800,
        "net": 300,
    }
    status, table_view = await server.get(f"/api/bankrolls/tables/{TABLE}", auditor)
    assert table_view == {
        "table": TABLE,
        "handle": 300,
        "paid_out": 600,
        "house_win": -300,
        "rounds": 1,
        "bets": 1,
    }
    status, everything = await server.get("/api/bankrolls", auditor)
    assert everything["organization"]["issued"] == 500
    assert everything["occasions"]["night-1"]["handle"] == 300
    # A player reads their own bankroll only.
    assert (await server.get("/api/bankrolls/players/p-1", player))[0] == 200
    assert (await server.get("/api/bankrolls/players/p-2", player))[0] == 403
    assert (await server.get("/api/bankrolls", player))[0] == 403


async def test_http_bad_input_gets_its_code(server: LiveServer) -> None:
    player = player_token("p-1")
    async with server.session.post(
        server.base + "/api/commands", data=b"{nope", headers={"Authorization": f"Bearer {player}"}
    ) as r:
        assert (await r.json())["error"]["code"] == "bad_request"
    sub = {"op": "subscribe", "id": "s", "stream": f"table:{TABLE}"}
    assert (await server.post_command(sub, player))[1]["error"]["code"] == "bad_request"
    bet = {
        "op": "place_bet",
        "id": "x",
        "table": TABLE,
        "player": "p-1",
        "bet": {"kind": "odd"},
        "amount": 1,
    }
    assert (await server.post_command(bet, player))[1]["error"]["code"] == "round_not_open"
    assert (await server.post_command(bet, "garbage"))[0] == 401
    async with server.session.post(server.base + "/api/commands", json=bet) as r:
        assert r.status == 401


@pytest.mark.parametrize(
    ("method", "path", "status", "code", "allow"),
    [
        ("GET", "/api/no-such-view", 404, "unknown_endpoint", None),
        ("POST", "/api/tables", 405, "method_not_allowed", "GET, HEAD"),
        ("GET", "/api/commands", 405, "method_not_allowed", "POST"),
        ("HEAD", "/api/streams/cage/events", 405, "method_not_allowed", "GET"),
        ("DELETE", "/ws", 405, "method_not_allowed", "GET, HEAD"),
    ],
)
async def test_a_request_no_route_takes_gets_a_json_error_with_its_code(
    server: LiveServer, method: str, path: str, status: int, code: str, allow: str | None
) -> None:
    """An endpoint the server does not have, or a method its route does not take, is
    answered with the API's error body and a stable code (a HEAD's body is not sent), and
    runs nothing; the connection goes on."""
    headers = {"Authorization": f"Bearer {token('auditor', 'a-1')}"}
    async with server.session.request(method, server.base + path, headers=headers) as r:
        assert r.status == status
        if allow is not None:
            assert r.headers["Allow"] == allow
        if method != "HEAD":
            body = await r.json()
            assert body == {
                "ok": False,
                "error": {"code": code, "message": body["error"]["message"]},
            }
    async with server.session.get(server.base + "/api/tables", headers=headers) as r:
        assert r.status == 200


async def test_a_page_not_there_keeps_the_plain_answer_for_a_browser(server: LiveServer) -> None:
    async with server.session.get(server.base + "/ui/no-such-page.html") as r:
        assert r.status == 404
        assert r.content_type != "application/json"


async def test_table_views(server: LiveServer) -> None:
    dealer = dealer_token(TABLE)
    assert (await server.post_command({"op": "open_round", "id": "o", "table": TABLE}, dealer))[1][
        "ok"
    ]
    status, tables = await server.get("/api/tables", player_token("p-1"))
    assert status == 200
    assert [t["table"] for t in tables["tables"]] == ["roulette-1", "roulette-2"]
    status, one = await server.get(f"/api/tables/{TABLE}", dealer)
    assert one["game"] == "roulette" and one["round"] == 1 and one["phase"] == "betting"
    assert one["config"]["max_inside"] == 200 and one["outcome_mode"] == "dealer"
    assert (await server.get("/api/tables/nope", dealer))[0] == 404


async def test_raw_events_for_auditors(server: LiveServer) -> None:
    auditor = token("auditor")
    status, body = await server.get(f"/api/streams/table:{TABLE}/events?since=0", auditor)
    assert status == 200 and [e["type"] for e in body["events"]] == ["TableOpened"]
    assert body["events"][0]["seq"] == 1 and len(body["events"][0]["hash"]) == 64
    status, log = await server.get("/api/streams/log/events?limit=2", auditor)
    assert status == 200 and len(log["events"]) == 2 and all("log_id" in e for e in log["events"])
    assert (await server.get("/api/streams/cage/events", player_token("p-1")))[0] == 403
    assert (await server.get(f"/api/streams/table:{TABLE}/events?limit=0", auditor))[0] == 400


async def test_health_readiness_and_metrics(server: LiveServer) -> None:
    async with server.session.get(server.base + "/healthz") as r:
        assert r.status == 200
    await _wait_caught_up(server)
    async with server.session.get(server.base + "/readyz") as r:
        assert r.status == 200 and (await r.json())["ready"] is True
    await server.post_command({"op": "open_round", "id": "o", "table": TABLE}, dealer_token(TABLE))
    async with server.session.get(server.base + "/metrics") as r:
        text = await r.text()
    assert 'casino_commands_total{code="ok",op="open_round"} 1.0' in text
    assert "casino_append_batch_size_bucket" in text
