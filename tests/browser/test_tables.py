"""The dealer console and the player page in a real Chromium against the real server: a
roulette round from both pages while the cage sells chips, refusals shown with their code
and message, an RNG draw, a wheel and a dice game, a bet placed and cancelled for a
player, a round from the keyboard, and a screenshot of each page."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Locator, Page, WebSocketRoute, expect

from services.gateway.pages import page_link
from tests.browser.conftest import PHONE, ROOT, Pages, serving, watched_pages
from tests.e2e.serve import ServeProcess

DICE_NIGHT = ROOT / "examples" / "dice-night.toml"


@pytest.fixture
async def dice_night(tmp_path: Path) -> AsyncIterator[ServeProcess]:
    """The real server running ``examples/dice-night.toml`` (the dice games' night)."""
    async with serving(tmp_path / "dice-night", DICE_NIGHT.read_text()) as server:
        yield server


@pytest.fixture
async def dice_pages(
    browser: Browser, dice_night: ServeProcess, request: pytest.FixtureRequest
) -> AsyncIterator[Pages]:
    async with watched_pages(browser, dice_night, request) as opened:
        yield opened


def dollars(cents: int) -> str:
    sign = "−" if cents < 0 else ""
    return f"{sign}${abs(cents) // 100:,}.{abs(cents) % 100:02d}"


async def sell_chips(server: ServeProcess, player: str, amount: int) -> None:
    # Set-up through the protocol (the whole round's test sells from the cashier console).
    cashier = await server.connect(server.token("cashier", "cashier"))
    reply = await cashier.cmd("buy_chips", player=player, amount=amount)
    assert reply["ok"], reply


async def balance(server: ServeProcess, player: str) -> int:
    status, body = await server.get(f"/api/bankrolls/players/{player}", server.token("ops", "ops"))
    assert status == 200, body
    return int(body["balance"])


async def notice(tab: Page, text: str) -> None:
    await expect(tab.locator("#notices")).to_contain_text(text)


def button(tab: Page, name: str) -> Locator:
    return tab.get_by_role("button", name=name, exact=True)


async def open_round(dealer: Page) -> None:
    await dealer.get_by_role("button", name="Open round").click()
    await expect(dealer.locator("#phase")).to_have_text("betting")


async def no_more_bets(dealer: Page) -> None:
    await dealer.get_by_role("button", name="No more bets").click()
    await expect(dealer.locator("#phase")).to_have_text("no more bets")


async def bet_for(dealer: Page, player: str, stake: str) -> None:
    await dealer.get_by_label("player", exact=True).fill(player)
    await dealer.get_by_label("stake ($)").fill(stake)


async def test_a_whole_roulette_round_from_the_dealer_console_and_the_player_page(
    pages: Pages, night: ServeProcess
) -> None:
    dealer = await pages.open("dealer", night.dealer_token("roulette-1"), table="roulette-1")
    player = await pages.open(
        "player", night.player_token("p-1"), viewport=PHONE, table="roulette-1"
    )
    # The cashier sells the chips from the cashier console while the pages are open.
    cashier = await pages.open("cashier", night.token("cashier", "cashier"))
    await cashier.get_by_label("player", exact=True).fill("p-1")
    await cashier.get_by_label("amount ($)").fill("50")
    await cashier.get_by_role("button", name="Sell chips").click()
    await expect(cashier.locator("#balance")).to_have_text("$50.00")
    await expect(player.locator("#balance")).to_have_text("$50.00")
    await expect(player.locator("#phase")).to_have_text("waiting for the next round")

    await open_round(dealer)
    await expect(player.locator("#phase")).to_have_text("place your bets")
    # The dealer starts a split on the console's own layout ...
    await button(dealer, "20 black").click()
    await button(dealer, "23 red").click()
    await expect(button(dealer, "Split 20-23")).to_be_visible()
    # A straight on 17: tap the number, then the bet; then red. $1 each.
    await player.get_by_label("stake ($)").fill("1.00")
    await button(player, "17 black").click()
    await button(player, "Straight 17").click()
    await notice(player, "bet placed: $1.00")
    await button(player, "Red").click()
    await expect(player.locator(".my-bets li")).to_have_count(2)
    await expect(player.locator(".my-bets")).to_contain_text("straight 17 · $1.00")
    await expect(player.locator(".my-bets")).to_contain_text("red · $1.00")
    await expect(player.locator("#balance")).to_have_text("$48.00")
    await pages.shot(player, "player-roulette-phone-betting")

    # The bets reach the dealer as they come.
    bets = dealer.get_by_role("table", name="bets of the round")
    await expect(bets.locator("tbody tr")).to_have_count(2)
    await expect(bets).to_contain_text("straight 17")
    await expect(dealer.locator("#bets-total")).to_have_text("2 bets · $2.00 staked")
    # ... and the bets coming in left it as it was: the numbers tapped, the focus.
    await expect(button(dealer, "20 black")).to_have_attribute("aria-pressed", "true")
    await expect(button(dealer, "23 red")).to_be_focused()
    await button(dealer, "Clear").click()
    await expect(button(dealer, "20 black")).to_have_attribute("aria-pressed", "false")

    await no_more_bets(dealer)
    await expect(player.locator("#phase")).to_have_text("no more bets")
    await button(dealer, "pocket 17 black").click()
    # The table's first spin: spun-from may be none.
    await expect(dealer.get_by_label("spun from")).to_have_value("")
    await pages.shot(dealer, "dealer-roulette-outcome")
    await button(dealer, "Record 17 black").click()

    # 17 black: the straight pays 35 to 1 ($36 back), red loses.
    for tab in (dealer, player):
        await expect(tab.locator("#last-settlement")).to_contain_text("Round 1: 17 black")
        await expect(tab.locator("#last-settlement .paid")).to_have_text("$36.00")
    results = player.get_by_role("table", name="my results")
    await expect(results.locator("tbody tr")).to_have_count(2)
    await expect(results).to_contain_text("straight 17")
    await expect(results.locator("tr", has_text="straight 17")).to_contain_text("won")
    await expect(results.locator("tr", has_text="red")).to_contain_text("lost")
    await expect(player.locator("#balance")).to_have_text("$84.00")
    assert await balance(night, "p-1") == 5000 - 200 + 3600
    await expect(player.locator("#balance")).to_have_text(dollars(await balance(night, "p-1")))
    # The cashier's console shows the same balance, live; the player cashes out there.
    await expect(cashier.locator("#balance")).to_have_text("$84.00")
    await cashier.get_by_label("amount ($)").fill("84")
    await cashier.get_by_role("button", name="Cash out").click()
    await expect(player.locator("#balance")).to_have_text("$0.00")
    assert await balance(night, "p-1") == 0
    await pages.shot(cashier, "cashier-after-the-round")
    await pages.shot(dealer, "dealer-roulette-settled")
    await pages.shot(player, "player-roulette-phone-settled")

    # The next spin: spun-from is preset to 17, the previous winning pocket.
    await open_round(dealer)
    await no_more_bets(dealer)
    await expect(dealer.get_by_label("spun from")).to_have_value("17")
    await button(dealer, "pocket 00 green").click()
    await button(dealer, "Record 00 green").click()
    await expect(dealer.locator("#last-settlement")).to_contain_text(
        "Round 2: 00 green (spun from 17)"
    )


async def test_a_refused_bet_shows_its_code_and_message(pages: Pages, night: ServeProcess) -> None:
    await sell_chips(night, "p-1", 1000)
    dealer = await pages.open("dealer", night.dealer_token("roulette-1"), table="roulette-1")
    player = await pages.open(
        "player", night.player_token("p-1"), viewport=PHONE, table="roulette-1"
    )
    await open_round(dealer)
    await expect(player.locator("#phase")).to_have_text("place your bets")
    # $5 on a straight: over the table's $2 inside limit.
    await player.get_by_label("stake ($)").fill("5")
    await button(player, "7 red").click()
    await button(player, "Straight 7").click()
    alert = player.get_by_role("alert")
    await expect(alert).to_contain_text("over_limit: 500 is over the straight limit 200")
    await expect(player.get_by_role("region", name="my bets")).to_contain_text(
        "no bet in this round"
    )
    # More than the balance: insufficient_funds, with the server's message.
    await player.get_by_label("stake ($)").fill("5")
    await button(player, "Column 1 · 2 to 1").click()
    await notice(player, "bet placed: $5.00")
    await button(player, "Column 2 · 2 to 1").click()
    await notice(player, "bet placed: $5.00")
    await button(player, "Column 3 · 2 to 1").click()
    await expect(player.locator("#notices")).to_contain_text("insufficient_funds: ")
    await pages.shot(player, "player-roulette-phone-refused")
    assert await balance(night, "p-1") == 0
    await expect(player.locator("#balance")).to_have_text("$0.00")
    # After no more bets the layout is gone from the page.
    await no_more_bets(dealer)
    await expect(player.locator("#phase")).to_have_text("no more bets")
    await expect(player.get_by_role("button", name="Straight")).to_have_count(0)


async def test_an_rng_table_draws_from_the_dealer_console(
    pages: Pages, night: ServeProcess
) -> None:
    await sell_chips(night, "p-2", 2000)
    dealer = await pages.open("dealer", night.dealer_token("roulette-2"), table="roulette-2")
    await open_round(dealer)
    await bet_for(dealer, "p-2", "1")
    # roulette-2 offers colour sections instead of red and black.
    await expect(dealer.get_by_role("button", name="Red", exact=True)).to_have_count(0)
    await button(dealer, "gold").click()
    await expect(dealer.get_by_role("table", name="bets of the round")).to_contain_text(
        "color six gold"
    )
    await no_more_bets(dealer)
    await pages.shot(dealer, "dealer-roulette-rng")
    await button(dealer, "Draw the pocket").click()
    line = dealer.locator("#last-settlement")
    await expect(line).to_contain_text("Round 1: ")
    text = await line.inner_text()
    first = re.match(r"Round 1: (\d+|00) ", text)
    assert first, text
    settled = dealer.get_by_role("table", name="settlement")
    await expect(settled.locator("tbody tr")).to_have_count(1)
    await expect(settled).to_contain_text("color six gold")
    # The next draw is spun from the pocket drawn before.
    await open_round(dealer)
    await no_more_bets(dealer)
    await button(dealer, "Draw the pocket").click()
    await expect(line).to_contain_text(f"(spun from {first.group(1)})")


async def test_the_dealer_places_and_cancels_a_bet_for_a_player(
    pages: Pages, night: ServeProcess
) -> None:
    await sell_chips(night, "p-3", 1000)
    dealer = await pages.open("dealer", night.dealer_token("roulette-1"), table="roulette-1")
    await open_round(dealer)
    await bet_for(dealer, "p-3", "2.50")
    await button(dealer, "13-24").click()
    bets = dealer.get_by_role("table", name="bets of the round")
    row = bets.locator("tbody tr", has_text="p-3")
    await expect(row).to_contain_text("dozen 2 (13-24)")
    await expect(row).to_contain_text("$2.50")
    assert await balance(night, "p-3") == 750
    await dealer.get_by_role("button", name="cancel p-3's dozen 2 (13-24)").click()
    await notice(dealer, "bet cancelled")
    await expect(dealer.get_by_text("no bet in this round yet")).to_be_visible()
    assert await balance(night, "p-3") == 1000
    # Without a player named, nothing is sent.
    await dealer.get_by_label("player", exact=True).fill("")
    await button(dealer, "Odd").click()
    await expect(dealer.get_by_role("alert")).to_contain_text("choose the player to bet for first")


async def focus_by_tab(tab: Page, key: str, presses: int = 120) -> None:
    """Press Tab until the control `data-k=key` has the focus."""
    for _ in range(presses):
        if await tab.evaluate("document.activeElement && document.activeElement.dataset.k") == key:
            return
        await tab.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {key}")


async def test_a_round_from_the_keyboard_only(pages: Pages, night: ServeProcess) -> None:
    dealer = await pages.open("dealer", night.dealer_token("roulette-1"), table="roulette-1")
    await focus_by_tab(dealer, "open")
    await dealer.keyboard.press("Enter")
    await expect(dealer.locator("#phase")).to_have_text("betting")
    # Open round is disabled now: the focus moved on to No more bets.
    await expect(dealer.get_by_role("button", name="No more bets")).to_be_focused()
    await dealer.keyboard.press("Space")
    await expect(dealer.locator("#phase")).to_have_text("no more bets")
    await focus_by_tab(dealer, "pocket-5")
    await dealer.keyboard.press("Enter")
    await expect(button(dealer, "pocket 5 red")).to_have_attribute("aria-pressed", "true")
    await focus_by_tab(dealer, "record")
    await expect(dealer.locator(":focus")).to_have_text("Record 5 red")
    await dealer.keyboard.press("Space")
    await expect(dealer.locator("#last-settlement")).to_contain_text("Round 1: 5 red")
    await expect(dealer.locator("#phase")).to_have_text("idle")


async def test_a_money_wheel_round(pages: Pages, night: ServeProcess) -> None:
    await sell_chips(night, "p-1", 1000)
    dealer = await pages.open("dealer", night.dealer_token("money-wheel-1"), table="money-wheel-1")
    player = await pages.open(
        "player", night.player_token("p-1"), viewport=PHONE, table="money-wheel-1"
    )
    await open_round(dealer)
    await expect(player.locator("#phase")).to_have_text("place your bets")
    await player.get_by_label("stake ($)").fill("1")
    await button(player, "$5").click()
    await expect(player.locator(".my-bets")).to_contain_text("on $5 · $1.00")
    await bet_for(dealer, "p-1", "2")
    await button(dealer, "flag · 40 to 1").click()
    await expect(
        dealer.get_by_role("table", name="bets of the round").locator("tbody tr")
    ).to_have_count(2)
    await pages.shot(player, "player-money-wheel-phone")
    await no_more_bets(dealer)
    # Section 4 shows $5: the $5 bet pays 5 to 1, the flag loses.
    await button(dealer, "section 4: $5").click()
    await pages.shot(dealer, "dealer-money-wheel-outcome")
    await button(dealer, "Record section 4: $5").click()
    for tab in (dealer, player):
        await expect(tab.locator("#last-settlement")).to_contain_text("Round 1: section 4: $5")
    await expect(dealer.locator("#last-settlement .paid")).to_have_text("$6.00")
    await expect(player.locator("#last-settlement .paid")).to_have_text("$6.00")
    await expect(player.locator("#balance")).to_have_text(dollars(1000 - 300 + 600))
    assert await balance(night, "p-1") == 1300


async def test_a_merchandise_wheel_shows_its_awards(pages: Pages, night: ServeProcess) -> None:
    await sell_chips(night, "p-2", 1000)
    dealer = await pages.open("dealer", night.dealer_token("prize-wheel-1"), table="prize-wheel-1")
    await expect(dealer.get_by_role("region", name="the game's round")).to_contain_text(
        "on the shelf: large 1, medium 2, small 3"
    )
    # Every space backed: whichever section the draw lands on, p-2 wins its prize class.
    await open_round(dealer)
    await bet_for(dealer, "p-2", "0.10")
    for space in range(1, 13):
        await button(dealer, str(space)).click()
    bets = dealer.get_by_role("table", name="bets of the round")
    await expect(bets.locator("tbody tr")).to_have_count(12)
    await no_more_bets(dealer)
    await button(dealer, "Spin: draw the section").click()
    await expect(dealer.locator("#last-settlement")).to_contain_text("Round 1: section ")
    awards = dealer.get_by_role("table", name="awards")
    await expect(awards.locator("tbody tr")).to_have_count(1)
    await expect(awards.locator("tbody tr")).to_contain_text("p-2")
    prizes = dealer.get_by_role("region", name="the game's round")
    await expect(prizes).not_to_contain_text("awarded $0.00 of")  # the view follows the awards
    shelf = await prizes.inner_text()
    counts = [int(n) for n in re.findall(r"(?:large|medium|small) (\d+)", shelf)]
    assert sum(counts) == 5, shelf
    await pages.shot(dealer, "dealer-merchandise-wheel")


async def test_a_chuck_a_luck_round_with_the_dice_faces_entered(
    dice_pages: Pages, dice_night: ServeProcess
) -> None:
    await sell_chips(dice_night, "p-1", 1000)
    dealer = await dice_pages.open(
        "dealer", dice_night.dealer_token("chuck-a-luck-1"), table="chuck-a-luck-1"
    )
    player = await dice_pages.open(
        "player", dice_night.player_token("p-1"), viewport=PHONE, table="chuck-a-luck-1"
    )
    await open_round(dealer)
    await expect(player.locator("#phase")).to_have_text("place your bets")
    await player.get_by_label("stake ($)").fill("1")
    await button(player, "number 5").click()
    await bet_for(dealer, "p-1", "2")
    await button(dealer, "number 3").click()
    await expect(
        dealer.get_by_role("table", name="bets of the round").locator("tbody tr")
    ).to_have_count(2)
    await dice_pages.shot(player, "player-chuck-a-luck-phone")
    await no_more_bets(dealer)
    for die, f in enumerate((2, 5, 5), start=1):
        await button(dealer, f"die {die}: {f}").click()
    await dealer.get_by_label("thrown by").select_option("cage")
    await dice_pages.shot(dealer, "dealer-chuck-a-luck-outcome")
    await button(dealer, "Record ⚁ ⚄ ⚄ (2-5-5)").click()
    # 5 shows on two dice: 2 to 1, $3 back; the 3 loses.
    for tab in (dealer, player):
        await expect(tab.locator("#last-settlement")).to_contain_text(
            "Round 1: ⚁ ⚄ ⚄ (2-5-5, total 12, thrown by cage)"
        )
    await expect(player.locator("#last-settlement .paid")).to_have_text("$3.00")
    await expect(dealer.locator("#last-settlement .paid")).to_have_text("$3.00")
    assert await balance(dice_night, "p-1") == 1000 - 300 + 300
    await expect(player.locator("#balance")).to_have_text("$10.00")


async def test_a_hazard_draw_and_a_refused_triple(
    dice_pages: Pages, dice_night: ServeProcess
) -> None:
    await sell_chips(dice_night, "p-2", 1000)
    dealer = await dice_pages.open("dealer", dice_night.dealer_token("hazard-1"), table="hazard-1")
    await open_round(dealer)
    await bet_for(dealer, "p-2", "2")
    await button(dealer, "raffle 6").click()
    await expect(dealer.get_by_role("alert")).to_contain_text("over_limit: 200 is over 150")
    await button(dealer, "total 10").click()
    await expect(dealer.get_by_role("table", name="bets of the round")).to_contain_text("total 10")
    await no_more_bets(dealer)
    await dice_pages.shot(dealer, "dealer-hazard-rng")
    await button(dealer, "Roll the dice (RNG)").click()
    await expect(dealer.locator("#last-settlement")).to_contain_text("thrown by rng")


async def test_a_game_of_bang_from_the_dealer_console(
    dice_pages: Pages, dice_night: ServeProcess
) -> None:
    await sell_chips(dice_night, "p-1", 1000)
    await sell_chips(dice_night, "p-2", 1000)
    dealer = await dice_pages.open("dealer", dice_night.dealer_token("bang-1"), table="bang-1")
    player = await dice_pages.open(
        "player", dice_night.player_token("p-2"), viewport=PHONE, table="bang-1"
    )
    for seat, who in ((1, "p-1"), (3, "p-2")):
        await dealer.get_by_label("seat number").fill(str(seat))
        await dealer.get_by_label("player to seat").fill(who)
        await button(dealer, "Seat the player").click()
        await expect(dealer.locator(".seats")).to_contain_text(f"seat {seat}: {who}")
    await dealer.get_by_label("seat number").fill("3")
    await dealer.get_by_label("player to seat").fill("p-3")
    await button(dealer, "Seat the player").click()
    await expect(dealer.get_by_role("alert")).to_contain_text("seat_taken: ")
    await open_round(dealer)
    await bet_for(dealer, "p-1", "1")
    await button(dealer, "Field · 2-4, 9-12").click()
    # A seat half typed while the bets come in: the round panel is drawn again on every
    # change, and the field keeps its focus, its text and its caret.
    await dealer.get_by_label("seat number").fill("5")
    await dealer.get_by_label("player to seat").fill("")  # still p-3, refused above
    await dealer.keyboard.type("p-")
    await player.get_by_label("stake ($)").fill("1")
    await button(player, "Hi Dice · beat the point").click()
    await expect(
        dealer.get_by_role("table", name="bets on the layout").locator("tbody tr")
    ).to_have_count(2)
    await expect(dealer.get_by_label("player to seat")).to_be_focused()
    await dealer.keyboard.type("3")
    await expect(dealer.get_by_label("player to seat")).to_have_value("p-3")
    await button(dealer, "Seat the player").click()
    await expect(dealer.locator(".seats")).to_contain_text("seat 5: p-3")
    await expect(
        dealer.get_by_role("table", name="bets on the layout").locator("tbody tr")
    ).to_have_count(2)
    await no_more_bets(dealer)
    # The dealer's roll: the point, 5; the field loses.
    await button(dealer, "die 1: 2").click()
    await button(dealer, "die 2: 3").click()
    await button(dealer, "Roll for the dealer").click()
    await expect(dealer.locator("#bang-stage")).to_have_text("inside bets")
    await expect(player.get_by_role("button", name="Hi Dice · beat the point")).to_be_disabled()
    await no_more_bets(dealer)
    await expect(dealer.locator("#shooter")).to_have_text("seat 1: p-1")
    await button(dealer, "Pass the dice (p-1 declines)").click()
    await expect(dealer.locator("#shooter")).to_have_text("seat 3: p-2")
    await button(dealer, "die 1: 6").click()
    await button(dealer, "die 2: 6").click()
    await dealer.get_by_label("thrown by").select_option("player")
    await dice_pages.shot(dealer, "dealer-bang-shooter")
    await button(dealer, "Roll for p-2").click()
    await expect(dealer.locator("#phase")).to_have_text("idle")
    # 12 beats the point: the Hi Dice bet pays even money.
    await expect(player.locator("#last-settlement")).to_contain_text("shooter_roll")
    await expect(player.locator("#last-settlement .paid")).to_have_text("$2.00")
    await expect(player.locator("#balance")).to_have_text("$11.00")
    await dice_pages.shot(player, "player-bang-phone")


async def test_a_beat_the_dealer_round_with_rng_rolls(
    dice_pages: Pages, dice_night: ServeProcess
) -> None:
    await sell_chips(dice_night, "p-1", 1000)
    await sell_chips(dice_night, "p-2", 1000)
    dealer = await dice_pages.open(
        "dealer", dice_night.dealer_token("beat-the-dealer-1"), table="beat-the-dealer-1"
    )
    await open_round(dealer)
    for who in ("p-1", "p-2"):
        await bet_for(dealer, who, "1")
        await button(dealer, "Beat the Dealer · even money").click()
        await expect(dealer.get_by_role("table", name="bets of the round")).to_contain_text(who)
    await no_more_bets(dealer)
    await button(dealer, "Roll for the dealer (RNG)").click()
    await expect(dealer.locator("#dealer-roll")).not_to_have_text("–")
    await button(dealer, "Roll for p-1 (RNG)").click()
    await expect(dealer.get_by_label("next to roll")).to_have_value("p-2")
    await button(dealer, "Roll for p-2 (RNG)").click()
    await expect(dealer.locator("#phase")).to_have_text("idle")
    stakes = dealer.get_by_role("table", name="stakes")
    await expect(stakes.locator("tbody tr")).to_have_count(2)
    await expect(dealer.get_by_role("table", name="settlement").locator("tbody tr")).to_have_count(
        2
    )
    await dice_pages.shot(dealer, "dealer-beat-the-dealer")


async def test_a_bet_whose_reply_was_lost_is_sent_again_and_applied_once(
    pages: Pages, night: ServeProcess
) -> None:
    await sell_chips(night, "p-1", 1000)
    dealer = await pages.open("dealer", night.dealer_token("roulette-1"), table="roulette-1")
    await open_round(dealer)
    # The player's phone loses the connection just as the reply to its bet comes back:
    # the reply never reaches the page, which reconnects and sends the bet again.
    sent: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    tasks: list[asyncio.Task[None]] = []

    def route(ws: WebSocketRoute) -> None:
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            data = json.loads(message)
            if data.get("op") == "place_bet":
                sent.append(data)
            server.send(message)

        def from_server(message: str | bytes) -> None:
            data = json.loads(message)
            if not dropped and "-place_bet-" in str(data.get("re")):
                dropped.append(data)
                tasks.append(asyncio.ensure_future(ws.close(code=4000, reason="lost")))
                return
            ws.send(message)

        ws.on_message(from_page)
        server.on_message(from_server)

    context = await pages.browser.new_context(viewport=PHONE)  # type: ignore[arg-type]
    player = await context.new_page()
    player.on("pageerror", lambda e: pages.errors.append(f"player: {e}"))
    await player.route_web_socket(re.compile(r"/ws$"), route)
    await player.goto(
        page_link(night.base, "player", night.player_token("p-1"), table="roulette-1")
    )
    await expect(player.locator("#status")).to_have_text("live")
    await expect(player.locator("#phase")).to_have_text("place your bets")
    await button(player, "Black").click()
    await notice(player, "bet placed: $1.00")  # the first reply, answered to the retry
    assert dropped and dropped[0]["ok"], dropped
    assert len(sent) == 2 and sent[0] == sent[1], sent  # the same command, the same id
    await expect(player.locator(".my-bets li")).to_have_count(1)
    await expect(
        dealer.get_by_role("table", name="bets of the round").locator("tbody tr")
    ).to_have_count(1)
    assert await balance(night, "p-1") == 900
    await expect(player.locator("#balance")).to_have_text("$9.00")
    status, body = await night.get(
        "/api/streams/table:roulette-1/events", night.token("ops", "ops")
    )
    assert status == 200, body
    placed = [e for e in body["events"] if e["type"] == "BetPlaced"]
    assert len(placed) == 1 and placed[0]["causation"] == sent[0]["id"], placed
    await asyncio.gather(*tasks)
    await context.close()


async def test_under_and_over_seven_one_space_and_who_threw(
    dice_pages: Pages, dice_night: ServeProcess
) -> None:
    await sell_chips(dice_night, "p-4", 1000)
    dealer = await dice_pages.open(
        "dealer", dice_night.dealer_token("over-under-1"), table="over-under-1"
    )
    player = await dice_pages.open(
        "player", dice_night.player_token("p-4"), viewport=PHONE, table="over-under-1"
    )
    await open_round(dealer)
    await button(player, "$2.00").click()
    await expect(button(player, "$2.00")).to_have_attribute("aria-pressed", "true")
    await button(player, "7 · 4 to 1").click()
    await notice(player, "bet placed: $2.00")
    await button(player, "Over 7 · 1 to 1").click()
    await expect(player.get_by_role("alert")).to_contain_text("one_space_per_roll: ")
    await no_more_bets(dealer)
    # Two dice here; the default thrower is the dealer, a player threw this one.
    await expect(dealer.get_by_label("thrown by")).to_have_value("dealer")
    await expect(dealer.get_by_role("group", name="die 3")).to_have_count(0)
    await button(dealer, "die 1: 3").click()
    await button(dealer, "die 2: 4").click()
    await dealer.get_by_label("thrown by").select_option("player")
    await button(dealer, "Record ⚂ ⚃ (3-4)").click()
    await expect(player.locator("#last-settlement")).to_contain_text(
        "Round 1: ⚂ ⚃ (3-4, total 7, thrown by player)"
    )
    await expect(player.locator("#last-settlement .paid")).to_have_text("$10.00")
    await expect(player.locator("#balance")).to_have_text("$18.00")
    await dice_pages.shot(player, "player-over-under-phone")


WHEEL_NIGHTS = {
    "a": ["big_six", "big_nine", "color_wheel", "horse_race_wheel", "fruit_wheel"],
    "b": ["card_wheel"],
}


def wheel_night(org: str, games: list[str]) -> str:
    """A night of the wheel games on their standard layouts, dealer mode."""
    lines = [
        'players = ["p-1"]',
        "[organization]",
        f'id = "{org}"',
        'name = "Wheels night"',
        "[license]",
        'number = "GC-WHEELS-1"',
        "games = [" + ", ".join(f'"{g}"' for g in games) + "]",
        'period_start = "2026-11-01"',
        'period_end = "2026-12-31"',
        "[occasion]",
        'id = "wheels"',
        'name = "Wheels"',
        "[cage]",
        "max_transaction = 100000",
    ]
    for game in games:
        lines += [
            "[[tables]]",
            f'id = "{game.replace("_", "-")}-1"',
            f'game = "{game}"',
            'outcome_mode = "dealer"',
            "[tables.options]",
            'layout = "standard"',
        ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("night_name", sorted(WHEEL_NIGHTS))
async def test_every_wheel_game_draws_its_spaces_and_sections(
    browser: Browser, tmp_path: Path, night_name: str, request: pytest.FixtureRequest
) -> None:
    games = WHEEL_NIGHTS[night_name]
    server = ServeProcess(tmp_path / "wheels", wheel_night(f"wheels-{night_name}", games))
    await server.start()
    await server.wait_ready()
    opened = Pages(browser, server, request.node.name)
    try:
        await sell_chips(server, "p-1", 5000)
        for game in games:
            table = f"{game.replace('_', '-')}-1"
            status, view = await server.get(f"/api/tables/{table}", server.token("ops", "ops"))
            assert status == 200, view
            first = view["config"]["sections"][0]["shows"][0]
            dealer = await opened.open("dealer", server.dealer_token(table), table=table)
            spaces = {s for section in view["config"]["sections"] for s in section["shows"]}
            await open_round(dealer)
            await expect(dealer.locator('[data-k^="space-"]')).to_have_count(len(spaces))
            await bet_for(dealer, "p-1", "1")
            await dealer.locator(f'[data-k="space-{first}"]').click()
            await expect(dealer.get_by_role("table", name="bets of the round")).to_contain_text(
                f"on {first}"
            )
            await no_more_bets(dealer)
            sections = dealer.get_by_role("group", name="the wheel's sections, by index")
            await expect(sections.get_by_role("button")).to_have_count(
                len(view["config"]["sections"])
            )
            await dealer.locator('[data-k="section-0"]').click()
            await opened.shot(dealer, f"dealer-{game}")
            await dealer.locator('[data-k="record"]').click()
            line = dealer.locator("#last-settlement")
            await expect(line).to_contain_text("Round 1: section 0: ")
            # The bet on a space section 0 shows wins: more than the stake comes back.
            await expect(line.locator(".paid")).not_to_have_text(re.compile(r"^\$[01]\.00$"))
        opened.check()
    finally:
        await server.aclose()
