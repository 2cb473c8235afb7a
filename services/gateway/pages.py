"""The browser consoles: the pages shipped in the package (``services/gateway/web``),
served by the same server under ``/ui/``, and the security headers on every response.

The pages are plain files, with no build step: HTML, CSS and JavaScript modules. A page
reads its token once from the link's fragment (``#token=…``, which a browser never sends),
keeps it in the tab's session storage and sends it in headers and in the websocket's
``bearer.`` subprotocol, never on a URL (docs/CONSOLES.md)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlencode

from aiohttp import web

WEB_ROOT = Path(__file__).parent / "web"
"""The pages, their scripts and their style sheet."""

PAGES = ("index", "ops", "dealer", "cashier", "player", "raffle", "screen", "recall")
"""Every page, ``/ui/<page>.html`` (``/ui/`` is the index)."""

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)
"""Only the server's own files run, style and connect: no inline script or style, no other
origin, no framing."""

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}
"""Sent with every response (pages, files, the API, errors)."""


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: the security headers; the API and the pages are not cached
    (a page must never show another night's figures from a cache)."""
    if isinstance(response, web.WebSocketResponse):
        return
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    response.headers.setdefault("Cache-Control", "no-store")


async def index(request: web.Request) -> web.FileResponse:
    return web.FileResponse(WEB_ROOT / "index.html")


async def to_index(request: web.Request) -> web.StreamResponse:
    raise web.HTTPFound("/ui/")


def add_page_routes(app: web.Application) -> None:
    """``/`` and ``/ui/`` (the index), and every file under ``/ui/``."""
    app.on_response_prepare.append(security_headers)
    app.router.add_get("/", to_index)
    app.router.add_get("/ui/", index)
    app.router.add_static("/ui/", WEB_ROOT, show_index=False, follow_symlinks=False)


def page_link(base: str, page: str, token: str, **query: str) -> str:
    """The link ``make run`` prints beside a token: the page, its query (a table, say),
    and the token in the fragment, which the browser keeps to itself."""
    q = f"?{urlencode(query)}" if query else ""
    return f"{base}/ui/{page}.html{q}#token={quote(token, safe='')}"
