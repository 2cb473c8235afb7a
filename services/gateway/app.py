"""The aiohttp gateway's wiring: the application, its routes and its lifecycle.

The parts: :mod:`services.gateway.transport` (connections, subscriptions, the send path,
the websocket and the HTTP command path), :mod:`services.gateway.commands` (one dispatch,
driven by the op registry :mod:`services.gateway.ops`) and :mod:`services.gateway.read_api`
(the HTTP GET handlers). Protocol: docs/PROTOCOL.md.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from services.actor import error_reply
from services.gateway.commands import submit_command
from services.gateway.connections import CONNECTIONS, PrincipalConnections
from services.gateway.pages import add_page_routes
from services.gateway.read_api import (
    get_bankrolls,
    get_bell_jar_deal,
    get_bell_jar_deals,
    get_bell_jar_quarter,
    get_control_sheet,
    get_control_sheets,
    get_deal,
    get_deal_flare,
    get_deals,
    get_player_bankroll,
    get_raffle,
    get_raffles,
    get_stream_events,
    get_table,
    get_table_bankroll,
    get_tables,
    healthz,
    metrics,
    readyz,
)
from services.gateway.recall_api import get_round
from services.gateway.report_api import get_report_file, get_reports
from services.gateway.transport import (
    CATCH_UP_READERS,
    CLIENTS,
    DUE_WRITES,
    FRAMES,
    READERS,
    RUNTIME,
    SLOTS,
    DueWrites,
    FrameCache,
    PrincipalSlots,
    authenticated,
    close_clients,
    follow_revocations,
    json_view,
    post_command,
    websocket,
)
from services.gateway.view_pacing import VIEW_TURNS, ViewHandler, ViewTurns, paced_view
from services.runtime import Runtime
from services.settings import Settings

VIEWS: tuple[tuple[str, ViewHandler], ...] = (
    ("/api/tables", get_tables),
    ("/api/tables/{id}", get_table),
    ("/api/tables/{id}/rounds/{n}", get_round),
    ("/api/bankrolls", get_bankrolls),
    ("/api/bankrolls/players/{id}", get_player_bankroll),
    ("/api/bankrolls/tables/{id}", get_table_bankroll),
    ("/api/raffles", get_raffles),
    ("/api/raffles/{id}", get_raffle),
    # Bell jar deals: the flare for everyone, the ledger for staff (docs/PROTOCOL.md).
    ("/api/deals", get_deals),
    ("/api/deals/{id}", get_deal),
    ("/api/deals/{id}/flare", get_deal_flare),
    ("/api/control-sheets", get_control_sheets),
    ("/api/control-sheets/{id}", get_control_sheet),
    ("/api/bell-jars/deals", get_bell_jar_deals),
    ("/api/bell-jars/deals/{id}", get_bell_jar_deal),
    ("/api/bell-jars/quarters/{quarter}", get_bell_jar_quarter),
    ("/api/reports", get_reports),
    ("/api/reports/{form}/{file}", get_report_file),
)
"""The HTTP views (docs/PROTOCOL.md, "HTTP"), each paced per principal
(:mod:`services.gateway.view_pacing`); the stream events page is routed on its own."""


@web.middleware
async def refused_by_the_router(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A request no route takes, answered as the API answers errors (docs/PROTOCOL.md,
    "HTTP"): 404 ``unknown_endpoint`` for a path the server does not serve, 405
    ``method_not_allowed`` (with ``Allow``) for a method its route does not take. The
    consoles' pages (``/``, ``/ui/…``) keep aiohttp's plain answers, for a browser."""
    refusal = request.match_info.http_exception
    if refusal is None or request.path == "/" or request.path.startswith("/ui/"):
        return await handler(request)
    if isinstance(refusal, web.HTTPMethodNotAllowed):
        allowed = ", ".join(sorted(refusal.allowed_methods))
        body = error_reply("method_not_allowed", f"{request.path} takes {allowed}")
        return json_view(body, status=405, headers={"Allow": allowed})
    body = error_reply("unknown_endpoint", f"the server has no {request.path}")
    return json_view(body, status=refusal.status)


def create_app(runtime: Runtime, *, manage: bool = True) -> web.Application:
    """The aiohttp application; with ``manage`` it starts and stops the runtime itself."""
    app = web.Application(
        client_max_size=runtime.settings.max_frame_bytes, middlewares=[refused_by_the_router]
    )
    app[RUNTIME] = runtime
    app[FRAMES] = FrameCache()
    app[CLIENTS] = set()
    settings = runtime.settings
    app[SLOTS] = PrincipalSlots(
        settings.principal_in_flight, settings.principal_rate, settings.principal_burst
    )
    app[READERS] = asyncio.Semaphore(CATCH_UP_READERS)
    app[VIEW_TURNS] = ViewTurns()
    app[CONNECTIONS] = PrincipalConnections(settings.principal_connections)
    app[DUE_WRITES] = DueWrites()
    # An actor's batch answered: its replies go out in this turn (transport.DueWrites).
    runtime.after_batch.append(app[DUE_WRITES].write)
    app.on_startup.append(follow_revocations)
    app.on_shutdown.append(close_clients)

    # A command another process forwards here runs through the same path as a client's.
    runtime.submit_local = functools.partial(submit_command, runtime)
    if manage:

        async def lifecycle(app: web.Application) -> AsyncIterator[None]:
            await runtime.start()
            yield
            await runtime.stop()

        app.cleanup_ctx.append(lifecycle)

    app.router.add_get("/ws", websocket)
    app.router.add_post("/api/commands", authenticated(post_command))  # paces itself
    for path, view in VIEWS:
        app.router.add_get(path, paced_view(view))
    # A page is streamed as it is read: a HEAD of it would get its body too (405 instead).
    app.router.add_get(
        "/api/streams/{stream}/events", paced_view(get_stream_events), allow_head=False
    )
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    add_page_routes(app)
    return app


def app_runner(app: web.Application, settings: Settings, **options: Any) -> web.AppRunner:
    """The runner that serves ``app`` as ``settings`` say (an idle HTTP connection closes
    after ``keepalive_seconds``): the one way a server's site is set up."""
    return web.AppRunner(app, keepalive_timeout=settings.keepalive_seconds, **options)
