"""Every page: served from the package with its security headers, the token kept out of
every URL the server sees, and the connection live."""

from __future__ import annotations

import aiohttp
from playwright.async_api import WebSocket, expect

from services.gateway.pages import CONTENT_SECURITY_POLICY, PAGES
from tests.browser.conftest import Pages
from tests.e2e.serve import ServeProcess


async def test_every_page_and_file_has_the_security_headers(night: ServeProcess) -> None:
    async with aiohttp.ClientSession() as http:
        for path in ["/ui/", *(f"/ui/{p}.html" for p in PAGES), "/ui/js/client.js", "/api/tables"]:
            async with http.get(night.base + path) as response:
                assert response.status in (200, 401), path
                assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
                assert response.headers["X-Content-Type-Options"] == "nosniff"
                assert response.headers["X-Frame-Options"] == "DENY"
                assert response.headers["Referrer-Policy"] == "no-referrer"
                assert response.headers["Cache-Control"] == "no-store"
        async with http.get(night.base + "/", allow_redirects=False) as response:
            assert response.status == 302
            assert response.headers["Location"] == "/ui/"
        # Nothing outside the pages' folder is served.
        for path in ["/ui/../pages.py", "/ui/%2e%2e/pages.py", "/ui/js/../../app.py"]:
            async with http.get(night.base + path) as response:
                assert response.status in (403, 404), path


async def test_the_token_stays_out_of_every_url(pages: Pages, night: ServeProcess) -> None:
    token = night.dealer_token("roulette-1")
    sockets: list[WebSocket] = []
    requests: list[str] = []
    context = await pages.browser.new_context()
    tab = await context.new_page()
    tab.on("websocket", lambda s: sockets.append(s))
    tab.on("request", lambda r: requests.append(r.url))
    from services.gateway.pages import page_link

    await tab.goto(page_link(night.base, "dealer", token, table="roulette-1"))
    await expect(tab.locator("#status")).to_have_text("live")
    assert "token" not in tab.url  # taken off the address bar at once
    assert await tab.evaluate("sessionStorage.getItem('casino-night.token')") == token
    assert sockets and all("token" not in s.url for s in sockets)
    assert requests and all("token" not in url and token not in url for url in requests)
    await pages.shot(tab, "dealer-roulette-1")
    # A reload keeps the tab's token; another tab (another context) has none.
    await tab.reload()
    await expect(tab.locator("#status")).to_have_text("live")
    other = await (await pages.browser.new_context()).new_page()
    await other.goto(night.base + "/ui/dealer.html?table=roulette-1")
    await expect(other.locator("main")).to_contain_text("No token")
    await context.close()
