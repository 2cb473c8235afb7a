"""Browser tests: Playwright for Python driving Debian's Chromium (``/usr/bin/chromium``;
Playwright's own browser download cannot be reached from these machines) against the real
``casino-night serve`` process running the example night.

Every page a test opens fails the test on a script error or a Content-Security-Policy
violation (both reach the console), and :func:`shot` saves a screenshot of it under
``tests/artifacts/screenshots/`` (``CASINO_ARTIFACTS`` moves it)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, async_playwright, expect

from services.gateway.pages import page_link
from tests.e2e.serve import EXE, ServeProcess

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_NIGHT = ROOT / "examples" / "night.toml"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FOUND = Path(CHROMIUM).exists()
LAUNCH_ARGS = [
    # As root in a container, and with no network but loopback: no sandbox, no GPU, none of
    # Chromium's own calls home (they would be refused, many at a time).
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("CASINO_ARTIFACTS", ROOT / "tests" / "artifacts")) / "screenshots"
PHONE = {"width": 390, "height": 844}
TABLET = {"width": 1180, "height": 820}


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    if not CHROMIUM_FOUND:
        pytest.fail(
            "Chromium is missing: `make test` installs Debian's chromium package with apt-get"
            " where it can; otherwise install it (apt-get install chromium)"
        )
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS, headless=True)
        try:
            yield b
        finally:
            await b.close()


@contextlib.asynccontextmanager
async def serving(workdir: Path, night_text: str) -> AsyncIterator[ServeProcess]:
    """The real ``casino-night serve`` running ``night_text``, ready; stopped at the end."""
    if not EXE.exists():
        pytest.fail(f"{EXE} is missing: install the project into this venv (make install)")
    server = ServeProcess(workdir, night_text)
    await server.start()
    await server.wait_ready()
    try:
        yield server
    finally:
        await server.aclose()


@pytest.fixture
async def night(tmp_path: Path) -> AsyncIterator[ServeProcess]:
    """The real server running ``examples/night.toml``, the night ``make run`` opens."""
    async with serving(tmp_path / "night", EXAMPLE_NIGHT.read_text()) as server:
        yield server


class Pages:
    """Opens the consoles for one test, each in a context of its own (its own session
    storage, as another tablet would have), and watches them for script errors."""

    def __init__(self, browser: Browser, server: ServeProcess, test: str) -> None:
        self.browser = browser
        self.server = server
        self.test = re.sub(r"[^A-Za-z0-9_-]+", "-", test)
        self.errors: list[str] = []
        self.opened: list[Page] = []

    async def open(
        self, page: str, token: str, *, viewport: dict[str, int] = TABLET, **query: str
    ) -> Page:
        context = await self.browser.new_context(viewport=viewport)  # type: ignore[arg-type]
        tab = await context.new_page()

        def on_console(msg: ConsoleMessage) -> None:
            if msg.type == "error":
                self.errors.append(f"{page}: console: {msg.text}")

        tab.on("console", on_console)
        tab.on("pageerror", lambda e: self.errors.append(f"{page}: {e}"))
        await tab.goto(page_link(self.server.base, page, token, **query))
        await expect(tab.locator("#status")).to_have_text("live")
        self.opened.append(tab)
        return tab

    async def shot(self, tab: Page, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{self.test}-{name}.png"
        # From the top: the header and the notices are sticky, and a full-page shot draws
        # them where the page was last scrolled to, over the page.
        await tab.evaluate("window.scrollTo(0, 0)")
        # Every page fits its screen's width (a phone's too): nothing to scroll sideways.
        wide = await tab.evaluate(
            "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert wide[0] <= wide[1], f"{name}: the page is {wide[0]} px wide on a {wide[1]} px screen"
        await tab.screenshot(path=str(path), full_page=True)
        return path

    def check(self) -> None:
        # A closed connection while the server restarts is logged by Chromium itself.
        real = [e for e in self.errors if "WebSocket connection to" not in e]
        assert not real, "the pages had errors:\n" + "\n".join(real)


@contextlib.asynccontextmanager
async def watched_pages(
    browser: Browser, server: ServeProcess, request: pytest.FixtureRequest
) -> AsyncIterator[Pages]:
    """A :class:`Pages` for one test; the test fails if any page it opened had an error."""
    opened = Pages(browser, server, request.node.name)
    yield opened
    opened.check()


@pytest.fixture
async def pages(
    browser: Browser, night: ServeProcess, request: pytest.FixtureRequest
) -> AsyncIterator[Pages]:
    async with watched_pages(browser, night, request) as opened:
        yield opened
