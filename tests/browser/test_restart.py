"""The server killed (SIGKILL) and restarted while pages are open: every page reconnects and
resumes with ``since``, without a gap and without a double; a command sent while the
server was down goes once it is back, and applies once."""

from __future__ import annotations

from typing import Any

from playwright.async_api import Page, expect

from tests.browser.conftest import PHONE, Pages
from tests.e2e.serve import ServeProcess

TABLE = "roulette-1"


async def delivered(tab: Page, stream: str) -> dict[str, Any]:
    """What the page's connection handed the page of ``stream`` (js/client.js)."""
    got: dict[str, Any] = await tab.evaluate(
        "(s) => window.casinoNight.connection.delivered.get(s) || null", stream
    )
    return got


async def test_pages_resume_without_a_gap_after_the_server_is_killed(
    pages: Pages, night: ServeProcess
) -> None:
    cashier = await night.connect(night.token("cashier", "desk-1"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=10_000))["ok"]
    dealer = await pages.open("dealer", night.dealer_token(TABLE), table=TABLE)
    player = await pages.open("player", night.player_token("p-1"), viewport=PHONE, table=TABLE)
    ops = await pages.open("ops", night.token("ops", "ops"))
    cashier = await pages.open("cashier", night.token("cashier", "desk-2"), player="p-1")
    raffles = await pages.open("raffle", night.token("seller", "sam"))
    screen = await pages.open("screen", night.token("player", "big-screen"))
    every = (dealer, player, ops, cashier, raffles, screen)
    pot = screen.locator('[data-raffle="fifty-fifty"] [data-figure="pool"]')
    await expect(cashier.locator("#balance")).to_have_text("$100.00")
    await dealer.get_by_role("button", name="Open round").click()
    await expect(dealer.locator("#phase")).to_have_text("betting")
    bettor = await night.connect(night.player_token("p-1"))
    for n in range(3):
        reply = await bettor.cmd(
            "place_bet", table=TABLE, player="p-1", bet={"kind": "red"}, amount=100 + n
        )
        assert reply["ok"], reply
    await expect(dealer.locator("[data-bet]")).to_have_count(3)
    await night.close_clients()

    night.kill9()
    for tab in every:
        await expect(tab.locator("#status")).not_to_have_text("live")
    # Clicked while the server is down: the command waits, and goes once it is back.
    await dealer.get_by_role("button", name="No more bets").click()
    await night.restart()
    await night.wait_ready()

    for tab in every:
        await expect(tab.locator("#status")).to_have_text("live", timeout=20_000)
    await expect(dealer.locator("#phase")).to_have_text("no more bets")
    await expect(player.locator("#phase")).to_have_text("no more bets")
    status, events = await night.get(f"/api/streams/table:{TABLE}/events", night.token("auditor"))
    assert status == 200
    types = [e["type"] for e in events["events"]]
    assert types.count("NoMoreBets") == 1  # sent again with its id after the restart: once
    head = events["events"][-1]["seq"]
    for tab in (dealer, player):
        got = await delivered(tab, f"table:{TABLE}")
        # Every event after the page's first view, each once, none missing.
        assert got["gaps"] == 0 and got["last"] == head, got
        assert got["count"] == got["last"] - got["first"] + 1, got
    for tab in every:
        await pages.shot(tab, f"after-restart-{tab.url.split('/')[-1].split('.')[0]}")

    # The pages follow what happens after the restart too: at the cage, at the raffles,
    # and on the dashboard.
    desk = await night.connect(night.token("cashier", "desk-1"))
    assert (await desk.cmd("buy_chips", player="p-1", amount=2_500))["ok"]
    await expect(cashier.locator("#balance")).to_have_text("$121.97")  # 100 − 3.03 bet + 25
    sam = await night.connect(night.token("seller", "sam"))
    assert (await sam.cmd("sell_ticket", raffle="fifty-fifty", count=3, amount=300))["ok"]
    await expect(pot).to_have_text("$3.00")
    for tab, stream in (
        (cashier, "cage"),
        (raffles, "raffle:fifty-fifty"),
        (screen, "raffle:fifty-fifty"),
    ):
        got = await delivered(tab, stream)
        assert got["gaps"] == 0 and got["first"] == 1, (stream, got)
        assert got["count"] == got["last"], (stream, got)
    await night.close_clients()
    closer = await night.connect(night.dealer_token("roulette-2"))
    assert (await closer.cmd("close_table", table="roulette-2"))["ok"]
    ticker = ops.locator('#events li[data-type="TableClosed"]')
    await expect(ticker).to_have_count(1)  # once, though the log was resumed mid-way
    await expect(ops.locator('tr[data-table="roulette-2"] [data-k="phase"]')).to_have_text("closed")
    dealer_ws = await night.connect(night.dealer_token(TABLE))
    outcome = {"pocket": "7", "spun_from": None}
    assert (await dealer_ws.cmd("record_outcome", table=TABLE, outcome=outcome))["ok"]
    await expect(dealer.locator("#phase")).to_have_text("idle")
    await expect(player.locator("#phase")).to_have_text("waiting for the next round")
    status, balance = await night.get("/api/bankrolls/players/p-1", night.token("auditor"))
    assert status == 200
    await expect(player.locator("#balance")).to_have_text(
        f"${balance['balance'] // 100:,}.{balance['balance'] % 100:02d}"
    )
