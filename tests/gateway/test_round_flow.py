"""A whole round over real websockets: chips, bets, no more bets, outcome, settlement."""

from __future__ import annotations

from tests.support import LiveServer, dealer_token, player_token, token

STRAIGHT_17 = {"kind": "straight", "numbers": ["17"]}


async def test_a_round_settles_and_moves_balances(server: LiveServer) -> None:
    cashier = await server.connect(token("cashier"))
    dealer = await server.connect(dealer_token("roulette-1"))
    player = await server.connect(player_token("p-1"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=1000))["ok"]
    sub = await dealer.cmd("subscribe", stream="table:roulette-1", since=0)
    assert sub["ok"] and sub["result"]["head"] == 1
    assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
    bet = await player.cmd(
        "place_bet", table="roulette-1", player="p-1", bet=STRAIGHT_17, amount=200
    )
    assert bet["ok"], bet
    red = await player.cmd(
        "place_bet", table="roulette-1", player="p-1", bet={"kind": "red"}, amount=500
    )
    assert red["ok"], red
    assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
    done = await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "17"})
    assert done["ok"], done
    # 17 is black: the straight pays 35 to 1 (4620.4(d)(1)), red loses.
    assert done["result"]["paid"] == 200 * 36
    events = await dealer.wait_events("table:roulette-1", 7)
    assert [e["type"] for e in events] == [
        "TableOpened",
        "RoundOpened",
        "BetPlaced",
        "BetPlaced",
        "NoMoreBets",
        "OutcomeRecorded",
        "Settled",
    ]
    assert [e["seq"] for e in events] == list(range(1, 8))
    settled = events[-1]["data"]
    assert [(s["result"], s["paid"]) for s in settled["settlements"]] == [
        ("won", 7200),
        ("lost", 0),
    ]
    assert await server.runtime.store.balance("p-1") == 1000 - 700 + 7200
