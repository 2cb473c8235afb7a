"""``GET /api/tables/{id}/rounds/{n}`` on the real server: a round played over websockets,
recalled; who may read it; bad input with its stable code (docs/PROTOCOL.md)."""

from __future__ import annotations

from services.store import keys
from tests.contract.test_recall import seated_table
from tests.support import LiveServer, dealer_token, player_token, token


async def test_a_played_round_is_recalled_and_bad_requests_change_nothing(
    server: LiveServer,
) -> None:
    cashier = await server.connect(token("cashier"))
    dealer = await server.connect(dealer_token("roulette-1"))
    player = await server.connect(player_token("p-1"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=1000))["ok"]
    for outcome in ({"pocket": "17"}, {"pocket": "2", "spun_from": "17"}):
        assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
        bet = {"kind": "straight", "numbers": ["17"]}
        placed = await player.cmd(
            "place_bet", table="roulette-1", player="p-1", bet=bet, amount=100
        )
        assert placed["ok"], placed
        assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
        done = await dealer.cmd("record_outcome", table="roulette-1", outcome=outcome)
        assert done["ok"], done
    assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]

    status, first = await server.get("/api/tables/roulette-1/rounds/1", token("auditor"))
    assert status == 200, first
    assert first["status"] == "settled" and first["game"] == "roulette"
    [bet] = first["bets"]
    assert bet["player"] == "p-1" and bet["placed"]["actor"].startswith("player")
    assert bet["settlement"][0]["result"] == "won" and bet["settlement"][0]["paid"] == 3600
    [outcome] = first["outcomes"]
    assert outcome["outcome"]["pocket"] == "17" and outcome["source"] == "dealer"
    assert outcome["actor"].startswith("dealer")
    assert [s["type"] for s in first["steps"]] == [
        "RoundOpened", "BetPlaced", "NoMoreBets", "OutcomeRecorded", "Settled",
    ]  # fmt: skip
    status, second = await server.get("/api/tables/roulette-1/rounds/2", dealer_token("roulette-1"))
    assert status == 200 and second["settlement"]["paid"] == 0
    assert second["first_seq"] == first["last_seq"] + 1
    status, third = await server.get("/api/tables/roulette-1/rounds/3", token("member_in_charge"))
    assert status == 200 and third["status"] == "in_play" and third["ended"] is None

    head = (await server.runtime.store.head("table:roulette-1")).version
    for path, tok, code, expected in [
        ("/api/tables/nope/rounds/1", token("auditor"), 404, "unknown_table"),
        ("/api/tables/roulette-2/rounds/1", token("auditor"), 404, "unknown_round"),
        ("/api/tables/roulette-1/rounds/4", token("auditor"), 404, "unknown_round"),
        ("/api/tables/roulette-1/rounds/0", token("auditor"), 400, "bad_request"),
        ("/api/tables/roulette-1/rounds/x1", token("auditor"), 400, "bad_request"),
        ("/api/tables/roulette-1/rounds/-1", token("auditor"), 400, "bad_request"),
        ("/api/tables/roulette-1/rounds/1.0", token("auditor"), 400, "bad_request"),
        ("/api/tables/roulette-1/rounds/1", player_token("p-1"), 403, "forbidden"),
        ("/api/tables/roulette-1/rounds/1", dealer_token("roulette-2"), 403, "forbidden"),
    ]:
        status, body = await server.get(path, tok)
        assert (status, body["error"]["code"]) == (code, expected), (path, body)
    assert (await server.runtime.store.head("table:roulette-1")).version == head


async def test_a_round_no_bounded_search_can_place_is_refused_unavailable(
    server: LiveServer,
) -> None:
    """A table of an earlier night whose stream has no round index (begun before it was
    kept) and 3,000 seatings before each round: 503 ``unavailable``, never an unbounded
    read; with its index, the same round is answered."""
    store = server.runtime.store
    head = await seated_table(store, "legacy-1", rounds=2)
    status, body = await server.get("/api/tables/legacy-1/rounds/2", token("auditor"))
    assert status == 200 and body["round"] == 2 and body["status"] == "settled", body
    await store.redis.delete(keys.rounds(store.org, "table:legacy-1"))
    status, body = await server.get("/api/tables/legacy-1/rounds/2", token("auditor"))
    assert (status, body["error"]["code"]) == (503, "unavailable"), body
    assert (await store.head("table:legacy-1")).version == head
