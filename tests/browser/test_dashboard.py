"""The ops dashboard in Chromium against the real server and the example night: a roulette
round played over the protocol shows on the page with the same figures as
``GET /api/bankrolls``; a closed table raises an alert and a line in the events ticker;
after the server restarts the page resumes the log without a gap and without a double."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from tests.browser.conftest import EXAMPLE_NIGHT, Pages, serving, watched_pages
from tests.e2e.serve import ServeProcess

STRAIGHT_17 = {"kind": "straight", "numbers": ["17"]}


def money(cents: int) -> str:
    """As the pages' ``money()`` writes it (js/ui.js): "$1,234.50", "−$3.00"."""
    sign = "−" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{part:02d}"


async def check_figures(tab: Page, night: ServeProcess) -> None:
    """Every table's handle, paid out and house result, and the cage, as the page shows
    them, against ``GET /api/bankrolls`` in the same money format."""
    status, bankrolls = await night.get("/api/bankrolls", night.token("auditor", "auditor-1"))
    assert status == 200
    assert bankrolls["tables"]
    for table, figures in bankrolls["tables"].items():
        row = tab.locator(f'tr[data-table="{table}"]')
        for k in ("handle", "paid_out", "house_win"):
            await expect(row.locator(f'[data-k="{k}"]')).to_have_text(money(figures[k]))
            await expect(row.locator(f'[data-k="{k}"]')).to_have_attribute(
                "data-cents", str(figures[k])
            )
        await expect(row.locator('[data-k="rounds"]')).to_have_text(str(figures["rounds"]))
    org = bankrolls["organization"]
    for k in ("issued", "redeemed", "outstanding"):
        await expect(tab.locator(f'#cage [data-k="{k}"]')).to_have_text(money(org[k]))
    occasion = next(iter(bankrolls["occasions"].values()))
    await expect(tab.locator('#raised [data-k="raised_tables"]')).to_have_text(
        money(occasion["house_win"])
    )


async def test_the_dashboard_shows_the_bankrolls_after_a_round(
    pages: Pages, night: ServeProcess
) -> None:
    tab = await pages.open("ops", night.token("ops", "ops"))
    await expect(tab.locator('tr[data-table="roulette-1"] [data-k="handle"]')).to_have_text("$0.00")
    await expect(tab.locator("#clock")).to_contain_text("no window set")
    await expect(tab.locator("#sheets")).to_contain_text("prize-wheel-1")
    # The forms due: the license period's GC-7 and the night's GC-7B, with their deadline.
    forms = tab.locator("#forms")
    await expect(forms.locator('tr[data-form="GC-7"] [data-k="due"]')).to_contain_text("2027-01-07")
    await expect(forms.locator('tr[data-form="GC-7B"]')).to_have_count(1)
    cashier = await night.connect(night.token("cashier", "cashier-1"))
    dealer = await night.connect(night.dealer_token("roulette-1"))
    player = await night.connect(night.player_token("p-1"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=20_000))["ok"]
    assert (await cashier.cmd("cash_out", player="p-1", amount=2_500))["ok"]
    assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
    for bet, amount in ((STRAIGHT_17, 200), ({"kind": "red"}, 500)):
        reply = await player.cmd(
            "place_bet", table="roulette-1", player="p-1", bet=bet, amount=amount
        )
        assert reply["ok"], reply
    row = tab.locator('tr[data-table="roulette-1"]')
    await expect(row.locator('[data-k="bets"]')).to_have_text("2")
    await expect(row.locator('[data-k="staked"]')).to_have_text(money(700))
    assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
    done = await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "17"})
    assert done["ok"], done
    await expect(row.locator('[data-k="rounds"]')).to_have_text("1")
    await expect(row.locator('[data-k="outcomes"]')).to_contain_text("17")
    await check_figures(tab, night)
    await expect(row.locator('[data-k="house_win"]')).to_have_text(money(700 - 7200))
    await expect(
        tab.locator("#raised svg.chart path.chart-line, #raised svg.chart circle")
    ).not_to_have_count(0)
    await pages.shot(tab, "dashboard-after-a-round")

    # A table closed: an alert (read out: the list is a live region) and a ticker line.
    closer = await night.connect(night.dealer_token("roulette-2"))
    assert (await closer.cmd("close_table", table="roulette-2"))["ok"]
    alert = tab.locator('#alerts li[data-kind="table_closed"]')
    await expect(alert).to_contain_text("roulette-2 closed")
    await expect(tab.locator('#alerts [role="log"]')).to_have_attribute("aria-live", "polite")
    await expect(tab.locator('#events li[data-type="TableClosed"]')).to_have_count(1)
    await expect(tab.locator('tr[data-table="roulette-2"] [data-k="phase"]')).to_have_text("closed")
    await pages.shot(tab, "dashboard-table-closed")

    # The round number links to the round's recall (docs/AUDIT.md, "Game recall").
    await row.locator('[data-k="round"] a').click()
    await expect(tab.locator("#round-head")).to_have_text("roulette-1 · round 1 · settled")
    await expect(tab.locator("#round-money")).to_have_text(
        f"wagered {money(700)} · paid {money(7200)} · house {money(700 - 7200)}"
    )
    await expect(tab.locator("tr[data-bet] [data-k='result']")).to_have_text(["won", "lost"])
    await expect(tab.locator("tr[data-seq]")).to_have_count(6)
    await pages.shot(tab, "recall-round-1")


async def test_after_a_restart_the_page_resumes_without_a_gap_or_a_double(
    pages: Pages, night: ServeProcess
) -> None:
    tab = await pages.open("ops", night.token("auditor", "auditor-1"))
    first = await night.connect(night.dealer_token("roulette-2"))
    assert (await first.cmd("close_table", table="roulette-2"))["ok"]
    ticker = tab.locator('#events li[data-type="TableClosed"]')
    alerts = tab.locator('#alerts li[data-kind="table_closed"]')
    await expect(ticker).to_have_count(1)
    await expect(alerts).to_have_count(1)
    await night.close_clients()
    await night.terminate()
    await expect(tab.locator("#status")).not_to_have_text("live")
    await night.restart()
    # Closed at once, perhaps before the page is back: caught up or live, it shows once.
    second = await night.connect(night.dealer_token("money-wheel-1"))
    assert (await second.cmd("close_table", table="money-wheel-1"))["ok"]
    await expect(tab.locator("#status")).to_have_text("live")
    await expect(ticker).to_have_count(2)
    await expect(ticker.nth(0)).to_contain_text("money-wheel-1 closed")
    await expect(ticker.nth(1)).to_contain_text("roulette-2 closed")
    await expect(tab.locator('tr[data-table="money-wheel-1"] [data-k="phase"]')).to_have_text(
        "closed"
    )
    # The old alert stays on the page; the restarted server's ring (empty at start) has
    # the new closing's.
    await expect(alerts).to_have_count(2)
    await expect(alerts.nth(0)).to_contain_text("money-wheel-1 closed")
    await pages.shot(tab, "dashboard-after-restart")


async def test_the_occasion_clock_runs_from_the_window_s_start_to_its_end(
    browser: Browser, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A night file with a window that opened an hour ago, for four hours: the bar is a
    quarter along, three hours left."""
    start = (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).replace(microsecond=0)
    text = EXAMPLE_NIGHT.read_text().replace(
        "# starts_at = 2026-11-29T18:00:00-05:00", f"starts_at = {start.isoformat()}"
    )
    text = text.replace("# hours = 14 ", "hours = 4 ")
    async with (
        serving(tmp_path / "windowed", text) as server,
        watched_pages(browser, server, request) as pages,
    ):
        tab = await pages.open("ops", server.token("auditor", "auditor-1"))
        bar = tab.locator('#clock [role="progressbar"]')
        # (a minute or so of start-up later: 25 %, 2 h 58 or 59 min left)
        await expect(bar).to_have_attribute("aria-valuenow", re.compile(r"^2[56]$"))
        await expect(tab.locator('#clock [data-k="window"]')).to_have_text(
            re.compile(r"^2 h 5[89] min left$")
        )
        await pages.shot(tab, "dashboard-occasion-clock")
