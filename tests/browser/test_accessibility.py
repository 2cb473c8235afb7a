"""Every page, for the token it is made for: keyboard operable (real controls, each with a
name, none taken out of the tab order), readable at arm's length and in a dark room, and
loading nothing from anywhere but the server (it works on a hall's network with no
internet)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page

from tests.browser.conftest import PHONE, TABLET, Pages
from tests.e2e.serve import ServeProcess

NAMELESS_CONTROLS = """() => {
  const named = (el) => {
    if (el.getAttribute("aria-label")) return true;
    const by = el.getAttribute("aria-labelledby");
    const text = (id) => document.getElementById(id)?.textContent.trim();
    if (by && by.split(/\\s+/).some(text)) return true;
    if (el.labels && [...el.labels].some((l) => l.textContent.trim())) return true;
    if (["BUTTON", "A", "SUMMARY"].includes(el.tagName) && el.textContent.trim()) return true;
    return Boolean(el.getAttribute("title"));
  };
  return [...document.querySelectorAll("button, a[href], input, select, textarea, [role=button]")]
    .filter((el) => el.type !== "hidden" && !el.closest("[hidden]") && !named(el))
    .map((el) => el.outerHTML.slice(0, 120));
}"""

OUT_OF_TAB_ORDER = """() => [...document.querySelectorAll("[tabindex]")]
  .filter((el) => Number(el.getAttribute("tabindex")) > 0)
  .map((el) => el.outerHTML.slice(0, 120))"""

LOOK = """() => {
  const body = getComputedStyle(document.body);
  return {
    lang: document.documentElement.lang,
    h1: document.querySelectorAll("h1").length,
    font: parseFloat(body.fontSize),
    background: body.backgroundColor,
    scheme: getComputedStyle(document.documentElement).colorScheme,
  };
}"""


def luminance(css_rgb: str) -> float:
    parts = [int(p) for p in css_rgb[css_rgb.index("(") + 1 : css_rgb.index(")")].split(",")[:3]]
    return sum(w * p / 255 for w, p in zip((0.2126, 0.7152, 0.0722), parts, strict=True))


async def tab_through(tab: Page, presses: int = 25) -> set[str]:
    """Press Tab ``presses`` times; the controls that took the focus."""
    seen: set[str] = set()
    for _ in range(presses):
        await tab.keyboard.press("Tab")
        seen.add(
            await tab.evaluate(
                "document.activeElement ? document.activeElement.outerHTML.slice(0, 80) : ''"
            )
        )
    return seen


def page_tokens(night: ServeProcess) -> list[tuple[str, str, dict[str, Any], dict[str, str]]]:
    return [
        ("ops", night.token("ops", "ops"), TABLET, {}),
        (
            "dealer",
            night.dealer_token("roulette-1", "black-jack-1"),
            TABLET,
            {"table": "roulette-1"},
        ),
        ("cashier", night.token("cashier", "desk"), TABLET, {}),
        ("player", night.player_token("p-1"), PHONE, {"table": "roulette-1"}),
        ("raffle", night.token("member_in_charge", "mic"), TABLET, {}),
        ("screen", night.token("player", "big-screen"), TABLET, {}),
    ]


@pytest.mark.parametrize("which", ["ops", "dealer", "cashier", "player", "raffle", "screen"])
async def test_each_page_is_operable_readable_and_self_contained(
    pages: Pages, night: ServeProcess, which: str
) -> None:
    name, tok, viewport, query = next(p for p in page_tokens(night) if p[0] == which)
    requests: list[str] = []
    tab = await pages.open(name, tok, viewport=viewport, **query)
    tab.on("request", lambda r: requests.append(r.url))
    await tab.reload()
    await tab.locator("#status").filter(has_text="live").wait_for()
    assert requests, "the reload loaded nothing"
    assert all(
        url.startswith((night.base + "/", night.base.replace("http", "ws") + "/"))
        for url in requests
    ), [u for u in requests if not u.startswith(night.base)]

    look = await tab.evaluate(LOOK)
    assert look["lang"] == "en" and look["h1"] == 1, look
    assert look["font"] >= 17, look  # readable at arm's length
    assert luminance(look["background"]) < 0.1 and "dark" in look["scheme"], look  # a dark hall
    assert await tab.evaluate(NAMELESS_CONTROLS) == []
    assert await tab.evaluate(OUT_OF_TAB_ORDER) == []
    controls = await tab.locator("button:visible, a[href]:visible, input:visible").count()
    reached = await tab_through(tab)
    # The keyboard gets to the page's controls (the big screen may have none).
    assert len(reached - {"", await tab.evaluate("document.body.outerHTML.slice(0, 80)")}) >= min(
        2, controls
    ), reached
    await pages.shot(tab, f"{name}-{viewport['width']}")
