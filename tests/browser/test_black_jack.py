"""Black Jack and Joker Seven at the dealer console and the player page (real server, real
Chromium): a hand split and played through with the cards entered on the card picker, an RNG
round from the console, a Joker Seven hand drawn and one entered, and refusals shown."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import EXAMPLE_NIGHT, PHONE, Pages, serving, watched_pages
from tests.e2e.serve import ServeProcess
from tests.support import WsClient

BJ = "black-jack-1"
J7 = "joker-seven-1"
PLAYER = "p-1"
CHIPS = 5000
BJ_RNG = (
    'id = "black-jack-1"\n'
    'game = "black_jack"        # 4620.5; its tie option is the license\'s (tie_option above)\n'
    'outcome_mode = "rng"'
)
J7_RNG = (
    'id = "joker-seven-1"\n'
    'game = "joker_seven"       # 4620.16: seven cards of 52 and two jokers, 28 squares\n'
    'outcome_mode = "rng"'
)


def dealer_mode_night() -> str:
    """examples/night.toml with black-jack-1 and joker-seven-1 in dealer mode (the cards
    entered from the physical shoe and deck), everything else as it is."""
    text = EXAMPLE_NIGHT.read_text()
    for table in (BJ_RNG, J7_RNG):
        assert table in text, f"examples/night.toml no longer reads {table!r}"
        text = text.replace(table, table.replace('outcome_mode = "rng"', 'outcome_mode = "dealer"'))
    assert (
        text.count('outcome_mode = "dealer"')
        == EXAMPLE_NIGHT.read_text().count('outcome_mode = "dealer"') + 2
    )
    return text


@pytest.fixture
async def dealer_night(tmp_path: Path) -> AsyncIterator[ServeProcess]:
    """The real server running the example night with its card tables in dealer mode."""
    async with serving(tmp_path / "night", dealer_mode_night()) as server:
        yield server


@pytest.fixture
async def dealer_pages(
    browser: Browser, dealer_night: ServeProcess, request: pytest.FixtureRequest
) -> AsyncIterator[Pages]:
    async with watched_pages(browser, dealer_night, request) as opened:
        yield opened


async def sell_chips(server: ServeProcess, player: str = PLAYER, amount: int = CHIPS) -> None:
    cashier = await server.connect(server.token("cashier", "cashier"))
    reply = await cashier.cmd("buy_chips", player=player, amount=amount)
    assert reply["ok"], reply


async def watch(server: ServeProcess, table: str) -> WsClient:
    """A protocol client following the table's stream: what the pages must agree with."""
    client = await server.connect(server.token("ops", "ops"))
    reply = await client.cmd("subscribe", stream=f"table:{table}")
    assert reply["ok"], reply
    return client


def parts_settled(client: WsClient, table: str, round_: int) -> dict[str, dict[str, Any]]:
    return {
        e["data"]["part"]: e["data"]
        for e in client.events
        if e["stream"] == f"table:{table}"
        and e["type"] == "PartSettled"
        and e["data"]["round"] == round_
    }


SUIT_SIGNS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def with_suit_sign(card: str) -> str:
    """A card as the pages write it: "10H" -> "10♥", "JOKER" -> "Joker"."""
    return "Joker" if card == "JOKER" else card[:-1] + SUIT_SIGNS[card[-1]]


def money(cents: int) -> str:
    return f"${cents // 100:,}.{cents % 100:02d}"


async def balance_agrees(server: ServeProcess, player_tab: Page, player: str = PLAYER) -> int:
    status, bankroll = await server.get(f"/api/bankrolls/players/{player}", server.token("ops"))
    assert status == 200, bankroll
    await expect(player_tab.locator("#balance")).to_have_text(money(bankroll["balance"]))
    return int(bankroll["balance"])


def hand(tab: Page, hand_id: str) -> Any:
    return tab.locator(f'li.bj-hand[data-hand="{hand_id}"]')


async def pick(tab: Page, *cards: str) -> None:
    """Enter cards on the dealer's picker, one at a time, each once the one before is on the
    table (one more card face up: entering a card never turns one down or takes one away)."""
    face_up = tab.locator(".bj-dealer .card:not(.down), .bj-hand .card:not(.down)")
    for card in cards:
        before = await face_up.count()
        await (
            tab.get_by_role("group", name="enter a card")
            .get_by_role("button", name=card, exact=True)
            .click()
        )
        await expect(face_up).to_have_count(before + 1)


async def parts_of(
    client: WsClient, table: str, round_: int, names: set[str]
) -> dict[str, dict[str, Any]]:
    """The round's PartSettled events by part, once those named have all come."""
    while not names <= parts_settled(client, table, round_).keys():
        await client.wait_events(f"table:{table}", len(client.events) + 1)
    return parts_settled(client, table, round_)


async def test_a_black_jack_hand_with_a_split(
    dealer_pages: Pages, dealer_night: ServeProcess
) -> None:
    await sell_chips(dealer_night)
    stream = await watch(dealer_night, BJ)
    dealer = await dealer_pages.open("dealer", dealer_night.dealer_token(BJ), table=BJ)
    player = await dealer_pages.open(
        "player", dealer_night.player_token(PLAYER), viewport=PHONE, table=BJ
    )
    await expect(player.locator("#balance")).to_have_text(money(CHIPS))

    await dealer.get_by_role("button", name="Open round").click()
    await expect(player.locator("#phase")).to_have_text("place your bets")
    await player.locator("#stake").fill("2.00")
    await player.get_by_role("button", name="bet on space 3").click()
    # The console shows the space taken and the bet as it comes.
    await expect(dealer.get_by_role("button", name=f"space 3, taken by {PLAYER}")).to_be_disabled()
    await expect(dealer.get_by_role("table", name="bets of the round")).to_contain_text("space 3")

    await dealer.get_by_role("button", name="Deal (no more bets)").click()
    await expect(dealer.locator("#bj-awaiting")).to_have_text(
        f"Next card: hand 3.0 (space 3, {PLAYER})"
    )
    # 8♠ to the hand, 5♦ up to the dealer, 8♥ to the hand; the hole card goes face down.
    await pick(dealer, "8 of spades", "5 of diamonds", "8 of hearts")
    await expect(dealer.locator("#bj-stage")).to_have_text("hand 3.0 to act")
    await expect(player.locator("#bj-stage")).to_have_text("your turn: hand 3.0")
    await expect(dealer.locator(".bj-dealer .card.down")).to_have_count(1)
    await expect(hand(player, "3.0").locator(".bj-total")).to_have_text("16")
    # A pair of eights: the player may split (no double on 16).
    await expect(hand(player, "3.0").get_by_role("button", name="double hand 3.0")).to_have_count(0)
    await player.get_by_role("button", name="split hand 3.0").click()
    await expect(hand(dealer, "3.1")).to_contain_text("8♥")
    await expect(dealer.locator("#bj-awaiting")).to_have_text(
        f"Next card: hand 3.0 (space 3, {PLAYER})"
    )
    # Hand 3.0 (the right one) first: 8♠ 3♣, then hit: 10♥ makes 21, which stands by itself.
    await pick(dealer, "3 of clubs")
    await expect(hand(dealer, "3.0").locator(".bj-total")).to_have_text("11")
    await expect(dealer.locator("#bj-awaiting")).to_have_text(
        "No card due: hand 3.0's decision first"
    )
    # No double on a split hand (4620.5(k)(6)): only hit and stand are offered, and nothing
    # on hand 3.1 until its turn.
    await expect(hand(player, "3.0").get_by_role("button")).to_have_text(["Hit", "Stand"])
    await expect(hand(player, "3.1").get_by_role("button")).to_have_count(0)
    await dealer_pages.shot(dealer, "dealer-split-mid-hand")
    await dealer_pages.shot(player, "player-split-mid-hand")
    await player.get_by_role("button", name="hit hand 3.0").click()
    await pick(dealer, "10 of hearts")
    await expect(hand(dealer, "3.0").locator(".bj-total")).to_have_text("21")
    # Hand 3.1 gets its second card when its turn comes: 8♥ 9♣, and the dealer stands for it.
    await expect(dealer.locator("#bj-awaiting")).to_have_text(
        f"Next card: hand 3.1 (space 3, {PLAYER})"
    )
    await pick(dealer, "9 of clubs")
    await expect(dealer.locator("#bj-stage")).to_have_text("hand 3.1 to act")
    await dealer.get_by_role("button", name="stand hand 3.1").click()
    # The dealer's hand: the hole card turned up (10♦: 15), then a draw (3♠: 18).
    await expect(dealer.locator("#bj-awaiting")).to_have_text(
        "Next card: the dealer's hole card, turned up"
    )
    await pick(dealer, "10 of diamonds")
    await expect(dealer.locator("#bj-awaiting")).to_have_text("Next card: the dealer (face up)")
    await pick(dealer, "3 of spades")
    await expect(dealer.locator("#bj-stage")).to_have_text("round over")
    await expect(dealer.locator("#bj-dealer-total")).to_have_text("18")

    # The settlement: both hands' parts, as the stream's PartSettled events say.
    parts = await parts_of(stream, BJ, 1, {"hand:3.0", "hand:3.1"})
    assert parts["hand:3.0"]["paid"] == 400 and parts["hand:3.1"]["paid"] == 0
    for tab in (dealer, player):
        await expect(hand(tab, "3.0").locator(".bj-result")).to_have_text(
            f"won · paid {money(parts['hand:3.0']['paid'])}"
        )
        await expect(hand(tab, "3.1").locator(".bj-result")).to_have_text(
            f"lost · paid {money(parts['hand:3.1']['paid'])}"
        )
    settled = dealer.get_by_role("region", name="settlement")
    for part in parts.values():
        for s in part["settlements"]:
            row = settled.locator(f'tr[data-bet="{s["bet_id"]}"]')
            await expect(row.locator("td").nth(3)).to_have_text(s["result"])
            await expect(row.locator("td").nth(5)).to_have_text(money(s["paid"]))
    assert await balance_agrees(dealer_night, player) == CHIPS - 400 + 400
    await dealer_pages.shot(dealer, "dealer-split-settled")
    await dealer_pages.shot(player, "player-split-settled")


async def test_refusals_at_black_jack_show_their_message(
    dealer_pages: Pages, dealer_night: ServeProcess
) -> None:
    await sell_chips(dealer_night)
    dealer = await dealer_pages.open("dealer", dealer_night.dealer_token(BJ), table=BJ)
    player = await dealer_pages.open(
        "player", dealer_night.player_token(PLAYER), viewport=PHONE, table=BJ
    )
    await dealer.get_by_role("button", name="Open round").click()
    # An odd stake: a 3 to 2 natural and a half insurance need even cents.
    await player.locator("#stake").fill("1.01")
    await player.get_by_role("button", name="bet on space 1").click()
    await expect(player.get_by_role("alert").first).to_contain_text("invalid_bet: 101 is odd")
    await expect(player.locator("#balance")).to_have_text(money(CHIPS))
    await player.locator("#stake").fill("1.00")
    await player.get_by_role("button", name="bet on space 1").click()
    await expect(player.get_by_role("button", name=f"space 1, taken by {PLAYER}")).to_be_disabled()

    await dealer.get_by_role("button", name="Deal (no more bets)").click()
    await pick(dealer, "9 of spades", "9 of spades")
    # Two decks hold two 9♠: a third is a card the shoe cannot hold.
    await (
        dealer.get_by_role("group", name="enter a card")
        .get_by_role("button", name="9 of spades", exact=True)
        .click()
    )
    await expect(dealer.get_by_role("alert").first).to_contain_text(
        "invalid_card: 9S: every copy of it in the shoe is already out of the box"
    )
    # A dead card the player refused is burnt: the hand still waits for its card.
    burn = dealer.get_by_role("button", name="Burn a dead card")
    await burn.click()
    await expect(burn).to_have_attribute("aria-pressed", "true")
    await expect(dealer.locator("#bj-awaiting")).to_have_text(
        "Next card picked: burnt as a dead card"
    )
    await (
        dealer.get_by_role("group", name="enter a card")
        .get_by_role("button", name="2 of clubs", exact=True)
        .click()
    )
    await expect(dealer.locator(".notice").first).to_have_text("2 of clubs burnt")
    await expect(burn).to_have_attribute("aria-pressed", "false")
    await expect(dealer.locator("#bj-awaiting")).to_have_text(
        f"Next card: hand 1.0 (space 1, {PLAYER})"
    )
    # The discards go back only once the box is empty.
    await dealer.get_by_role("button", name="Shuffle the discards").click()
    await expect(dealer.get_by_role("alert").first).to_contain_text("box_not_empty:")
    await pick(dealer, "7 of hearts")
    await expect(hand(player, "1.0").locator(".bj-total")).to_have_text("16")
    # A nine and a seven: no split, no double offered; hit and stand are.
    await expect(hand(player, "1.0").get_by_role("button")).to_have_text(["Hit", "Stand"])
    await player.get_by_role("button", name="stand hand 1.0").click()
    await expect(dealer.locator("#bj-awaiting")).to_have_text(
        "Next card: the dealer's hole card, turned up"
    )


async def test_a_black_jack_round_in_rng_mode(pages: Pages, night: ServeProcess) -> None:
    await sell_chips(night)
    stream = await watch(night, BJ)
    dealer = await pages.open("dealer", night.dealer_token(BJ), table=BJ)
    await expect(dealer.get_by_role("button", name="Shuffle the discards")).to_have_count(0)
    await dealer.get_by_role("button", name="Open round").click()
    # The dealer bets for the player on space 2.
    await dealer.locator("#bet-player").fill(PLAYER)
    await dealer.locator("#bet-amount").fill("2.00")
    await dealer.get_by_role("button", name="bet on space 2").click()
    await expect(dealer.get_by_role("button", name=f"space 2, taken by {PLAYER}")).to_be_disabled()
    await dealer.get_by_role("button", name="Deal (no more bets)").click()
    stage = dealer.locator("#bj-stage")
    await expect(stage).not_to_have_text(re.compile("bets open|dealing"))
    # Whatever the cards: peek when an ace is up, stand when the hand is to act.
    for _ in range(3):
        text = await stage.inner_text()
        if text == "round over":
            break
        if text.startswith("insurance"):
            await dealer.get_by_role("button", name="Peek", exact=True).click()
        elif text == "hand 2.0 to act":
            await dealer.get_by_role("button", name="stand hand 2.0").click()
        await expect(stage).not_to_have_text(text)
    await expect(stage).to_have_text("round over")
    await expect(hand(dealer, "2.0").locator(".card")).to_have_count(2)
    part = (await parts_of(stream, BJ, 1, {"hand:2.0"}))["hand:2.0"]
    await expect(hand(dealer, "2.0").locator(".bj-result")).to_contain_text(
        f"paid {money(part['paid'])}"
    )
    settled = dealer.get_by_role("region", name="settlement")
    row = settled.locator(f'tr[data-bet="{part["settlements"][0]["bet_id"]}"]')
    await expect(row.locator("td").nth(5)).to_have_text(money(part["paid"]))
    await pages.shot(dealer, "dealer-rng-round")
    # A round whose bets close with none on the layout: the deal just ends it.
    await dealer.get_by_role("button", name="Open round").click()
    await expect(dealer.get_by_role("button", name="Deal (no more bets)")).to_be_disabled()
    await dealer.get_by_role("button", name="No more bets", exact=True).click()
    await dealer.get_by_role("button", name="End the round (no bet)").click()
    await expect(stage).to_have_text("round over")
    await expect(dealer.locator("#phase")).to_have_text("idle")


async def test_a_joker_seven_round_drawn(pages: Pages, night: ServeProcess) -> None:
    await sell_chips(night)
    stream = await watch(night, J7)
    dealer = await pages.open("dealer", night.dealer_token(J7), table=J7)
    player = await pages.open("player", night.player_token(PLAYER), viewport=PHONE, table=J7)
    await dealer.get_by_role("button", name="Open round").click()
    await player.locator("#stake").fill("3.00")
    await player.get_by_role(
        "button", name=re.compile(r"^bet on red 4 or more, pays 1 to 1")
    ).click()
    await expect(
        player.get_by_role("button", name="bet on red 4 or more, pays 1 to 1, $3.00 on it")
    ).to_be_visible()
    await expect(dealer.get_by_role("table", name="bets of the round")).to_contain_text(
        "red 4 or more"
    )
    await pages.shot(player, "player-joker-seven-betting")
    await dealer.get_by_role("button", name="No more bets").click()
    await dealer.get_by_role("button", name="Draw the seven cards").click()
    await expect(dealer.locator("#phase")).to_have_text("idle")
    settled = [e for e in await stream.wait_events(f"table:{J7}", 1) if e["type"] == "Settled"]
    while not settled:
        events = await stream.wait_events(f"table:{J7}", len(stream.events) + 1)
        settled = [e for e in events if e["type"] == "Settled"]
    data = settled[0]["data"]
    cards = data["outcome"]["cards"]
    assert len(cards) == 7
    (s,) = data["settlements"]
    for tab in (dealer, player):
        await expect(tab.locator(".j7-round .card")).to_have_count(7)
        row = tab.locator(f'table.settlement tr[data-bet="{s["bet_id"]}"]').first
        await expect(row.locator("td").nth(3)).to_have_text(s["result"])
        await expect(row.locator("td").nth(5)).to_have_text(money(s["paid"]))
    await expect(player.locator("#j7-last")).to_have_text(" ".join(map(with_suit_sign, cards)))
    assert await balance_agrees(night, player) == CHIPS - 300 + s["paid"]
    await pages.shot(dealer, "dealer-joker-seven-drawn")
    await pages.shot(player, "player-joker-seven-drawn")


async def test_a_joker_seven_hand_entered_on_the_card_picker(
    dealer_pages: Pages, dealer_night: ServeProcess
) -> None:
    await sell_chips(dealer_night)
    dealer = await dealer_pages.open("dealer", dealer_night.dealer_token(J7), table=J7)
    player = await dealer_pages.open(
        "player", dealer_night.player_token(PLAYER), viewport=PHONE, table=J7
    )
    await dealer.get_by_role("button", name="Open round").click()
    await player.get_by_role("button", name=re.compile("^bet on one joker")).click()
    await player.get_by_role("button", name=re.compile("^bet on pair of Q")).click()
    await expect(
        dealer.get_by_role("table", name="bets of the round").locator("tbody tr")
    ).to_have_count(2)
    await dealer.get_by_role("button", name="No more bets").click()
    hand = dealer.get_by_role("group", name="the seven cards")
    record = dealer.get_by_role("button", name="Record the hand")
    for card in ["ace of spades", "3 of clubs", "7 of hearts", "10 of hearts", "queen of diamonds"]:
        await hand.get_by_role("button", name=card, exact=True).click()
    # A card tapped twice is taken back; the count says how many are in.
    await hand.get_by_role("button", name="3 of clubs", exact=True).click()
    await expect(dealer.locator("#j7-count")).to_have_text("4 of 7 cards")
    await expect(record).to_be_disabled()
    for card in ["3 of clubs", "queen of spades", "joker"]:
        await hand.get_by_role("button", name=card, exact=True).click()
    await expect(dealer.locator("#j7-count")).to_have_text("7 of 7 cards")
    await expect(hand.get_by_role("button", name="king of clubs", exact=True)).to_be_disabled()
    await dealer_pages.shot(dealer, "dealer-joker-seven-entry")
    await record.click()
    await expect(dealer.locator("#phase")).to_have_text("idle")
    await expect(player.locator("#j7-last")).to_have_text("A♠ 3♣ 7♥ 10♥ Q♦ Q♠ Joker")
    # One joker and a pair of queens: both bets win 3 to 1 and 9 to 1 on $1.00.
    results = player.get_by_role("region", name="my results")
    await expect(results.locator("tbody tr")).to_have_count(2)
    await expect(results.locator("tbody tr td:nth-child(4)")).to_have_text(["won", "won"])
    await expect(results.locator("tbody tr td:nth-child(6)")).to_have_text(
        [money(1000), money(400)]
    )
    assert await balance_agrees(dealer_night, player) == CHIPS - 200 + 400 + 1000


async def test_insurance_and_a_dealer_natural(
    dealer_pages: Pages, dealer_night: ServeProcess
) -> None:
    await sell_chips(dealer_night)
    stream = await watch(dealer_night, BJ)
    dealer = await dealer_pages.open("dealer", dealer_night.dealer_token(BJ), table=BJ)
    player = await dealer_pages.open(
        "player", dealer_night.player_token(PLAYER), viewport=PHONE, table=BJ
    )
    await dealer.get_by_role("button", name="Open round").click()
    await player.locator("#stake").fill("2.00")
    await player.get_by_role("button", name="bet on space 1").click()
    await expect(dealer.get_by_role("button", name=f"space 1, taken by {PLAYER}")).to_be_disabled()
    await dealer.get_by_role("button", name="Deal (no more bets)").click()
    await pick(dealer, "9 of spades", "ace of hearts", "9 of diamonds")
    # An ace up: insurance (half the wager) until the dealer peeks; no action before it.
    await expect(player.locator("#bj-stage")).to_have_text(
        "insurance offered (an ace up) until the dealer peeks"
    )
    await expect(hand(player, "1.0").get_by_role("button")).to_have_text(["Insure $1.00"])
    # Another player sees the hand, not its commands.
    other = await dealer_pages.open(
        "player", dealer_night.player_token("p-2"), viewport=PHONE, table=BJ
    )
    await expect(hand(other, "1.0").locator(".bj-total")).to_have_text("18")
    await expect(hand(other, "1.0").get_by_role("button")).to_have_count(0)
    await player.get_by_role("button", name="insure hand 1.0 for $1.00").click()
    await expect(hand(dealer, "1.0")).to_contain_text("insured $1.00")
    await expect(hand(player, "1.0").get_by_role("button")).to_have_count(0)
    # The dealer peeks: a natural, the hole card a king (only 10-counts are offered).
    await expect(dealer.locator("#bj-awaiting")).to_have_text("No card due: the dealer peeks first")
    naturals = dealer.get_by_role("group", name="peek: a natural, the hole card is")
    await expect(naturals.get_by_role("button")).to_have_count(16)
    await naturals.get_by_role("button", name="natural: hole card king of clubs").click()
    await expect(dealer.locator("#bj-stage")).to_have_text("round over")
    await expect(dealer.get_by_role("group", name="the dealer's cards")).to_have_text("A♥K♣")
    parts = await parts_of(stream, BJ, 1, {"insurance", "hand:1.0"})
    assert parts["insurance"]["paid"] == 300 and parts["hand:1.0"]["paid"] == 0
    await expect(dealer.locator(".bj-dealer .bj-result")).to_have_text(
        "insurance: won · paid $3.00"
    )
    await expect(hand(player, "1.0").locator(".bj-result")).to_have_text("lost · paid $0.00")
    assert await balance_agrees(dealer_night, player) == CHIPS - 200 - 100 + 300
    # Dealer mode too: bets closed with none on the layout, the deal ends the round.
    await dealer.get_by_role("button", name="Open round").click()
    await dealer.get_by_role("button", name="No more bets", exact=True).click()
    await expect(dealer.locator("#bj-awaiting")).to_have_text("No card due: no bet on the layout")
    await dealer.get_by_role("button", name="End the round (no bet)").click()
    await expect(dealer.locator("#bj-stage")).to_have_text("round over")
