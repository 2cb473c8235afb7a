"""The cashier console, the raffle console and the big screen, in Chromium against the real
server running the example night: every figure a page shows is the server's (the
bankroll and raffle views), every command is the page's own, and every refusal shows the
server's code and message."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.async_api import Page, WebSocket, expect

from tests.browser.conftest import Pages
from tests.e2e.serve import ServeProcess
from tests.support import WsClient

TV = {"width": 1920, "height": 1080}
SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def money(cents: int) -> str:
    """As the pages show an amount (ui.js ``money``)."""
    sign = "−" if cents < 0 else ""
    return f"{sign}${abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def card_name(card: str) -> str:
    """As the pages show a card (raffle_feed.js ``cardName``)."""
    return "Joker" if card.startswith("JK") else card[:-1] + SUITS[card[-1]]


def alert(tab: Page, text: str) -> Any:
    return tab.get_by_role("alert").filter(has_text=text)


async def raffle_view(night: ServeProcess, raffle: str, token: str) -> dict[str, Any]:
    status, view = await night.get(f"/api/raffles/{raffle}", token)
    assert status == 200, view
    return dict(view)


async def watching(night: ServeProcess, token: str, raffle: str) -> WsClient:
    """A protocol client watching the raffle view, to wait for the projection to fold."""
    client = await night.connect(token)
    reply = await client.send({"op": "subscribe", "id": "w", "view": "raffle", "raffle": raffle})
    assert reply["ok"], reply
    return client


async def test_the_cashier_sells_chips_and_cashes_out(pages: Pages, night: ServeProcess) -> None:
    cashier = night.token("cashier", "cass")
    tab = await pages.open("cashier", cashier)
    sent: list[dict[str, Any]] = []

    def on_socket(ws: WebSocket) -> None:
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)))

    tab.on("websocket", on_socket)
    await tab.reload()  # so that the page's socket is one this test listens to
    await expect(tab.locator("#status")).to_have_text("live")

    player = tab.get_by_label("player", exact=True)
    amount = tab.get_by_label("amount ($)")
    await player.fill("p-7")
    await amount.fill("50")
    await tab.get_by_role("button", name="Sell chips").click()
    await expect(tab.locator("#balance")).to_have_text("$50.00")
    await amount.fill("20")
    await tab.get_by_role("button", name="Cash out").click()
    await expect(tab.locator("#balance")).to_have_text("$30.00")
    status, bankroll = await night.get("/api/bankrolls/players/p-7", cashier)
    assert status == 200
    assert money(bankroll["balance"]) == "$30.00"
    await expect(tab.locator("#bought")).to_have_text(money(bankroll["bought"]))
    await expect(tab.locator("#redeemed")).to_have_text(money(bankroll["redeemed"]))
    await expect(tab.locator("#net")).to_have_text(money(bankroll["net"]))

    # A cash-out over the balance: the server's refusal, word for word; nothing changes.
    other = await night.connect(cashier)
    refused = await other.cmd("cash_out", player="p-7", amount=10_000)
    assert refused["error"]["code"] == "insufficient_funds"
    await amount.fill("100")
    await tab.get_by_role("button", name="Cash out").click()
    await expect(alert(tab, f"insufficient_funds: {refused['error']['message']}")).to_be_visible()
    # Over the cage's transaction limit ($1,000 in the example night).
    await amount.fill("1500")
    await tab.get_by_role("button", name="Sell chips").click()
    await expect(
        alert(tab, "over_limit: 150000 cents is over the cage's transaction limit")
    ).to_be_visible()
    status, after = await night.get("/api/bankrolls/players/p-7", cashier)
    assert status == 200 and after == bankroll
    await expect(tab.locator("#balance")).to_have_text("$30.00")

    # The history: both moves, newest first, with who made them.
    rows = tab.locator("tr.cage-move")
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0)).to_contain_text("cashed out")
    await expect(rows.nth(0)).to_contain_text("$20.00")
    await expect(rows.nth(1)).to_contain_text("chips sold")
    await expect(rows.nth(1)).to_contain_text("$50.00")
    await expect(rows.nth(0)).to_contain_text("cashier:cass")
    await expect(tab.locator("#players option[value='p-7']")).to_have_count(1)
    totals = tab.get_by_role("table", name="cage totals")
    await expect(totals.get_by_role("row", name=re.compile("^the cage"))).to_have_text(
        "the cage$50.00$20.00$30.002"
    )
    await pages.shot(tab, "cashier")

    # Another player: that one's bankroll is watched, the last one's is no longer.
    await other.cmd("buy_chips", player="p-8", amount=700)
    await player.fill("p-8")
    await player.press("Enter")
    await expect(tab.locator("#balance")).to_have_text("$7.00")
    assert {"op": "unsubscribe", "view": "bankroll", "player": "p-7"} in sent
    await other.cmd("buy_chips", player="p-7", amount=900)  # p-7's balance moves: not shown
    await expect(tab.locator("tr.cage-move")).to_have_count(1)
    await expect(tab.locator("#balance")).to_have_text("$7.00")


async def test_door_sales_grow_the_fifty_fifty_pool_on_the_big_screen(
    pages: Pages, night: ServeProcess
) -> None:
    seller = night.token("seller", "sam")
    screen = await pages.open("screen", night.token("player", "big-screen"), viewport=TV)
    pool = screen.locator('[data-raffle="fifty-fifty"] [data-figure="pool"]')
    await expect(pool).to_have_text("$0.00")
    console = await pages.open("raffle", seller)
    panel = console.locator('[data-raffle="fifty-fifty"]')
    await panel.get_by_label("tickets", exact=True).fill("3")
    await panel.get_by_role("button", name="Sell at $1.00 each").click()
    await expect(pool).to_have_text("$3.00")
    await panel.get_by_role("button", name="Sell a book: 6 for $5.00").click()
    await expect(pool).to_have_text("$8.00")
    view = await raffle_view(night, "fifty-fifty", seller)
    assert view["tickets"] == 9 and view["sales"] == 800
    await expect(pool).to_have_text(money(view["sales"]))
    prize = screen.locator('[data-raffle="fifty-fifty"] [data-figure="prize"]')
    await expect(prize).to_have_text(money(view["sales"] // 2))
    await expect(panel.locator('[data-figure="sales"]')).to_have_text(money(view["sales"]))
    await expect(panel.locator('[data-figure="tickets"]')).to_have_text("9")
    await expect(console.get_by_text("sold tickets #4–#9 for $5.00")).to_be_visible()
    # Each sale is a command of the page's own, with an id no other tab shares.
    status, body = await night.get("/api/streams/raffle:fifty-fifty/events", seller)
    assert status == 200, body
    sales = [e for e in body["events"] if e["type"] == "TicketSold"]
    assert len(sales) == 2 and all(
        re.fullmatch(r"raffle-[0-9a-f]{12}-sell_ticket-\d+", e["causation"]) for e in sales
    )
    assert len({e["causation"] for e in sales}) == 2
    await pages.shot(console, "raffle-seller")
    await pages.shot(screen, "screen")


async def test_a_queen_of_hearts_pick_shows_on_the_big_screen(
    pages: Pages, night: ServeProcess
) -> None:
    seller = await night.connect(night.token("seller", "sam"))
    sold = await seller.cmd("sell_ticket", raffle="queen-of-hearts", count=4, amount=800)
    assert sold["ok"], sold
    screen = await pages.open("screen", night.token("player", "big-screen"), viewport=TV)
    member_token = night.token("member_in_charge", "mia")
    watcher = await watching(night, member_token, "queen-of-hearts")
    console = await pages.open("raffle", member_token)
    panel = console.locator('[data-raffle="queen-of-hearts"]')
    await expect(
        screen.locator('[data-raffle="queen-of-hearts"] [data-figure="pool"]')
    ).to_have_text("$8.00")
    await panel.get_by_role("button", name="Record the method").click()
    await expect(panel.get_by_text("drawing method: rng")).to_be_visible()
    await panel.get_by_role("button", name="Hold the drawing").click()
    # Week 1 of a raffle with triple draws: three winners search in the order drawn.
    await expect(panel.locator('[data-figure="waiting"]')).to_contain_text("picks a position")
    await panel.get_by_role("button", name="position 17", exact=True).click()
    await panel.get_by_role("button", name="Reveal position 17").click()
    await watcher.wait_view(lambda v: "17" in v["board"]["revealed"])
    view = await raffle_view(night, "queen-of-hearts", member_token)
    card = view["board"]["revealed"]["17"]
    cell = screen.locator('[data-raffle="queen-of-hearts"] [data-position="17"]')
    await expect(cell).to_have_text(card_name(card))
    await expect(cell).to_have_class(re.compile(r"\brevealed\b"))
    await expect(panel.get_by_role("img", name=f"position 17: {card_name(card)}")).to_be_visible()
    await expect(panel.get_by_role("list", name=re.compile("what happened"))).to_contain_text(
        f"picked position 17: {card_name(card)}"
    )
    # The other 53 positions are still numbered.
    await expect(
        screen.locator('[data-raffle="queen-of-hearts"] .board-cell.revealed')
    ).to_have_count(1)
    await expect(
        screen.locator('[data-raffle="queen-of-hearts"] [data-position="18"]')
    ).to_have_text("18")
    await pages.shot(console, "raffle-member")
    await pages.shot(screen, "screen-queen")


async def test_a_key_tried_at_the_treasure_chest_leaves_play(
    pages: Pages, night: ServeProcess
) -> None:
    seller = await night.connect(night.token("seller", "sam"))
    sold = await seller.cmd("sell_ticket", raffle="treasure-chest", count=6, amount=600)
    assert sold["ok"], sold
    member_token = night.token("member_in_charge", "mia")
    screen = await pages.open("screen", night.token("player", "big-screen"), viewport=TV)
    keys = screen.locator('[data-raffle="treasure-chest"] [data-figure="keys-in-play"]')
    await expect(keys).to_have_text("20")
    watcher = await watching(night, member_token, "treasure-chest")
    console = await pages.open("raffle", member_token)
    panel = console.locator('[data-raffle="treasure-chest"]')
    await panel.get_by_role("button", name="Record the method").click()
    await expect(panel.get_by_text("drawing method: rng")).to_be_visible()
    await panel.get_by_role("button", name="Hold the drawing").click()
    not_open = panel.get_by_role("button", name=re.compile(r"^key \d+ did not open$"))
    await expect(not_open).to_have_count(5)
    # The drawing split the occasion's money: the chest on the screen is the view's.
    await watcher.wait_view(lambda v: v["drawings"] == 1)
    drawn = await raffle_view(night, "treasure-chest", member_token)
    chest = screen.locator('[data-raffle="treasure-chest"] [data-figure="pool"]')
    await expect(chest).to_have_text(money(drawn["pool"]))
    label = await not_open.first.get_attribute("aria-label")
    assert label is not None
    key = int(label.split()[1])
    await not_open.first.click()
    await expect(keys).to_have_text("19")
    await expect(not_open).to_have_count(4)
    await expect(panel.get_by_role("list", name=re.compile("what happened"))).to_contain_text(
        f"key {key} did not open"
    )
    view = await raffle_view(night, "treasure-chest", member_token)
    assert key not in view["keys_in_play"] and len(view["keys_in_play"]) == 19
    await expect(screen.locator('[data-raffle="treasure-chest"] .screen-keys li')).to_have_count(19)
    await expect(panel.locator('[data-figure="keys-in-play"]')).to_have_text("19")
    await pages.shot(console, "raffle-chest")
    await pages.shot(screen, "screen-chest")


async def test_a_refused_raffle_command_shows_its_message(
    pages: Pages, night: ServeProcess
) -> None:
    seller = night.token("seller", "sam")
    console = await pages.open("raffle", seller)
    panel = console.locator('[data-raffle="fifty-fifty"]')
    serial = panel.get_by_label("first serial (printed)")
    await serial.fill("1")
    await panel.get_by_role("button", name="Sell at $1.00 each").click()
    await expect(panel.locator('[data-figure="tickets"]')).to_have_text("1")
    await serial.fill("1")
    await panel.get_by_role("button", name="Sell at $1.00 each").click()
    await expect(
        alert(console, "serial_taken: ticket 1 of this raffle is already sold")
    ).to_be_visible()
    # The member in charge opens the 50/50 alone (`raffle.html?raffle=fifty-fifty`) and
    # draws before the method was announced: refused, with its reason.
    member = await pages.open(
        "raffle", night.token("member_in_charge", "mia"), raffle="fifty-fifty"
    )
    await expect(member.locator("[data-raffle]")).to_have_count(1)
    await member.get_by_role("button", name="Hold the drawing").click()
    await expect(
        alert(member, "method_not_recorded: announce and record the drawing method before drawing")
    ).to_be_visible()
    view = await raffle_view(night, "fifty-fifty", seller)
    assert view["tickets"] == 1 and view["drawings"] == 0
    await expect(panel.locator('[data-figure="tickets"]')).to_have_text("1")


async def test_the_cashier_console_resumes_after_the_server_restarts(
    pages: Pages, night: ServeProcess
) -> None:
    cashier = night.token("cashier", "cass")
    tab = await pages.open("cashier", cashier, player="p-3")
    amount = tab.get_by_label("amount ($)")
    await amount.fill("10")
    await tab.get_by_role("button", name="Sell chips").click()
    await expect(tab.locator("#balance")).to_have_text("$10.00")
    await night.terminate()
    await expect(tab.locator("#status")).not_to_have_text("live")
    # A sale made while the server is away waits, and is sent once it is back.
    await amount.fill("5")
    await tab.get_by_role("button", name="Sell chips").click()
    await night.restart()
    await night.wait_ready()
    await expect(tab.locator("#status")).to_have_text("live", timeout=20_000)
    await expect(tab.locator("#balance")).to_have_text("$15.00")
    # The history and the totals resume where they were: no move shown twice.
    await expect(tab.locator("tr.cage-move")).to_have_count(2)
    totals = tab.get_by_role("table", name="cage totals")
    await expect(totals.get_by_role("row", name=re.compile("^the cage"))).to_have_text(
        "the cage$15.00$0.00$15.002"
    )
    status, bankroll = await night.get("/api/bankrolls/players/p-3", cashier)
    assert status == 200 and bankroll["bought"] == 1500
