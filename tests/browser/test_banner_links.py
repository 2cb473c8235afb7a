"""``make run`` prints, under each token, the link that opens its page; each link opens a
live page for that token (the night ``make run`` opens: examples/night.toml)."""

from __future__ import annotations

import re

from playwright.async_api import expect

from services.gateway.auth import read_claims
from tests.browser.conftest import Pages
from tests.e2e.serve import ServeProcess

LINK = re.compile(r"^      open (\S+): (http://\S+/ui/(\w+)\.html\S*#token=(\S+))$")


async def test_every_token_of_the_banner_has_the_link_to_its_page(
    pages: Pages, night: ServeProcess
) -> None:
    lines = night.out_path().read_text().splitlines()
    links = []
    for i, line in enumerate(lines):
        m = LINK.match(line)
        if m:
            links.append(m.groups())
            # The line above is the token the link carries (or, for a dealer, a line
            # above it among that dealer's links).
            above = next(t for t in reversed(lines[:i]) if not t.startswith("      open"))
            assert above.split()[-1] == m.group(4)
    pages_by_role = {}
    for _label, _url, page, tok in links:
        pages_by_role.setdefault(read_claims(night.secret, tok).role, set()).add(page)
    assert pages_by_role == {
        "dealer": {"dealer"},
        "cashier": {"cashier"},
        "auditor": {"ops"},
        "ops": {"ops"},
        "member_in_charge": {"raffle"},
        "seller": {"raffle"},
        "player": {"player", "screen"},
    }
    tables = {label for label, _url, page, _tok in links if page == "dealer"}
    assert tables == {
        "roulette-1",
        "roulette-2",
        "money-wheel-1",
        "prize-wheel-1",
        "black-jack-1",
        "joker-seven-1",
    }
    # The printed link itself opens the page, live.
    url = next(url for label, url, _p, _t in links if label == "roulette-1")
    context = await pages.browser.new_context()
    tab = await context.new_page()
    await tab.goto(url)
    await expect(tab.locator("#status")).to_have_text("live")
    await expect(tab.locator("#title")).to_contain_text("roulette-1")
    await context.close()
