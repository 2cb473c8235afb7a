"""The gateway's read API: the HTTP GET handlers and the views they answer with.

Tables (:func:`table_view`), bankrolls, raffles, control sheets, the bell jar reports, a
stream's stored events, and the health, readiness and metrics endpoints. Each handler
takes the principal :func:`services.gateway.view_pacing.paced_view` found, which paces
the principal's views; what each role may read is :mod:`services.gateway.auth`'s.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from aiohttp import web

from events.codec import decode, to_json
from events.envelope import Envelope
from projections.bell_jars import parse_quarter
from services.actor import error_reply
from services.aggregates import deal_stream, table_stream
from services.bell_jars.views import flare_view, shown_to_players, staff_view
from services.broker import LOG
from services.gateway.auth import (
    CONTROL_SHEET_READERS,
    DEAL_READERS,
    MONEY_READERS,
    Principal,
    may_read,
    may_read_bankroll,
    may_read_sheet,
)
from services.gateway.protocol import ProtocolError, since_log_id, since_seq
from services.gateway.transport import (
    READERS,
    RUNTIME,
    encode,
    forbidden,
    json_view,
)
from services.gateway.view_pacing import StreamedView, sent_in_time
from services.tables.view import table_view


async def get_tables(request: web.Request, who: Principal) -> web.Response:
    runtime = request.app[RUNTIME]
    views = []
    for spec in runtime.night.tables:
        await runtime.supervisor.refresh(table_stream(spec.id))
        state = runtime.supervisor.table_state(spec.id)
        views.append(table_view(state))
    return json_view({"tables": views})


async def get_table(request: web.Request, who: Principal) -> web.Response:
    runtime = request.app[RUNTIME]
    table = request.match_info["id"]
    if runtime.night.table(table) is not None:
        # Another process may run it: fold what it appended since this one last looked.
        await runtime.supervisor.refresh(table_stream(table))
    state = runtime.supervisor.table_state(table)
    if state is None:
        return json_view(error_reply("unknown_table", "no such table"), status=404)
    return json_view(table_view(state))


async def get_bankrolls(request: web.Request, who: Principal) -> web.Response:
    if who.role not in MONEY_READERS:
        return forbidden("bankrolls are for auditors, ops and cashiers")
    b = request.app[RUNTIME].bankrolls
    return json_view(
        {
            "organization": b.organization,
            "occasions": b.occasions,
            "tables": b.tables,
            "players": b.players,
        }
    )


async def get_player_bankroll(request: web.Request, who: Principal) -> web.Response:
    player = request.match_info["id"]
    if not may_read_bankroll(who, player):
        return forbidden("a player reads only their own bankroll")
    b = request.app[RUNTIME].bankrolls
    if player not in b.players:
        return json_view(error_reply("unknown_player", "no such player"), status=404)
    return json_view({"player": player, **b.players[player]})


async def get_table_bankroll(request: web.Request, who: Principal) -> web.Response:
    table = request.match_info["id"]
    if who.role not in MONEY_READERS and not (who.role == "dealer" and table in who.tables):
        return forbidden("table totals are for its dealers, auditors, ops and cashiers")
    runtime = request.app[RUNTIME]
    if runtime.night.table(table) is None:
        return json_view(error_reply("unknown_table", "no such table"), status=404)
    totals = runtime.bankrolls.tables.get(
        table, dict.fromkeys(("handle", "paid_out", "house_win", "rounds", "bets"), 0)
    )
    return json_view({"table": table, **totals})


async def get_control_sheets(request: web.Request, who: Principal) -> web.Response:
    """Every merchandise wheel's control sheet (auditors, ops, members in charge)."""
    if who.role not in CONTROL_SHEET_READERS:
        return forbidden("control sheets are for auditors, ops and members in charge")
    sheets = request.app[RUNTIME].control_sheets.all_sheets()
    return json_view({"control_sheets": sheets})


async def get_control_sheet(request: web.Request, who: Principal) -> web.Response:
    """One merchandise wheel's control sheet (also its dealers)."""
    table = request.match_info["id"]
    if not may_read_sheet(who, table):
        return forbidden("a control sheet is for its dealers, auditors, ops, members in charge")
    sheet = request.app[RUNTIME].control_sheets.sheet(table)
    if sheet is None:
        return json_view(
            error_reply("unknown_table", "no merchandise wheel of that id"), status=404
        )
    return json_view(sheet)


async def get_raffles(request: web.Request, who: Principal) -> web.Response:
    """Every raffle as the raffle projection has it (any role: no personal data)."""
    return json_view({"raffles": request.app[RUNTIME].raffles.views()})


async def get_raffle(request: web.Request, who: Principal) -> web.Response:
    view = request.app[RUNTIME].raffles.view(request.match_info["id"])
    if view is None:
        return json_view(error_reply("unknown_raffle", "no such raffle"), status=404)
    return json_view(view)


async def _deal_states(request: web.Request) -> list[Any]:
    """Every registered deal, each folded up to what its stream holds (another process
    may run it), by id."""
    supervisor = request.app[RUNTIME].supervisor
    states = []
    for deal_id in sorted(supervisor.deals):
        await supervisor.refresh(deal_stream(deal_id))
        state = supervisor.deal_state(deal_id)
        if state is not None and state.registered:
            states.append(state)
    return states


async def get_deals(request: web.Request, who: Principal) -> web.Response:
    """Every deal: the staff view for :data:`DEAL_READERS`; for any other reader the
    flares of the deals in play or closed, and nothing else (4620.19(c)(2))."""
    supervisor = request.app[RUNTIME].supervisor
    states = await _deal_states(request)
    if who.role in DEAL_READERS:
        return json_view({"deals": [staff_view(s, supervisor.deal_state) for s in states]})
    flares = [flare_view(s) for s in states if shown_to_players(s, supervisor.deal_state)]
    return json_view({"deals": flares})


async def _one_deal(request: web.Request) -> Any:
    supervisor = request.app[RUNTIME].supervisor
    deal_id = request.match_info["id"]
    if deal_id not in supervisor.deals:
        return None
    await supervisor.refresh(deal_stream(deal_id))
    state = supervisor.deal_state(deal_id)
    if state is not None and state.lead:
        await supervisor.refresh(deal_stream(state.lead))
    return state if state is not None and state.registered else None


async def get_deal(request: web.Request, who: Principal) -> web.Response:
    """One deal's staff view (bank, profit or loss, prizes left, the 75 % rule)."""
    if who.role not in DEAL_READERS:
        return forbidden("a deal's ledger is for sellers, members in charge, auditors and ops")
    state = await _one_deal(request)
    if state is None:
        return json_view(error_reply("unknown_deal", "no such deal"), status=404)
    return json_view(staff_view(state, request.app[RUNTIME].supervisor.deal_state))


async def get_deal_flare(request: web.Request, who: Principal) -> web.Response:
    """One deal's flare with its prizes awarded (any reader; a player only once the deal
    is in play)."""
    state = await _one_deal(request)
    supervisor = request.app[RUNTIME].supervisor
    if state is None or (
        who.role not in DEAL_READERS and not shown_to_players(state, supervisor.deal_state)
    ):
        return json_view(error_reply("unknown_deal", "no such deal"), status=404)
    return json_view(flare_view(state))


BELL_JAR_REPORT_READERS = frozenset({"member_in_charge", "auditor", "ops"})
"""Who reads the bell jar ledger's reports (never a player or a seller: sales figures and
the prizes left would give a player an advantage, 4620.19(c)(2))."""


async def get_bell_jar_deals(request: web.Request, who: Principal) -> web.Response:
    """Every bell jar deal's figures (the bell jar projection), and the anomalies of events
    on deals never registered."""
    if who.role not in BELL_JAR_REPORT_READERS:
        return forbidden("bell jar reports are for members in charge, auditors and ops")
    bell_jars = request.app[RUNTIME].bell_jars
    return json_view(
        {"deals": bell_jars.views(), "unknown_deal_anomalies": bell_jars.unknown_anomalies()}
    )


async def get_bell_jar_deal(request: web.Request, who: Principal) -> web.Response:
    """One bell jar deal's figures; 404 ``unknown_deal``."""
    if who.role not in BELL_JAR_REPORT_READERS:
        return forbidden("bell jar reports are for members in charge, auditors and ops")
    view = request.app[RUNTIME].bell_jars.view(request.match_info["id"])
    if view is None:
        return json_view(error_reply("unknown_deal", "no such deal"), status=404)
    return json_view(view)


async def get_bell_jar_quarter(request: web.Request, who: Principal) -> web.Response:
    """The GC-7Q figures and Schedule 1 of one calendar quarter, ``YYYY-Qn``; 400
    ``bad_request`` for anything else."""
    if who.role not in BELL_JAR_REPORT_READERS:
        return forbidden("bell jar reports are for members in charge, auditors and ops")
    parsed = parse_quarter(request.match_info["quarter"])
    if parsed is None:
        return json_view(
            error_reply("bad_request", "a quarter is YYYY-Qn: a year 1970-9998, n 1 to 4"),
            status=400,
        )
    return json_view(request.app[RUNTIME].bell_jars.quarter(*parsed))


PAGE_PART = 100
"""Events of a ``GET /api/streams/…/events`` page read, encoded and sent at a time: a
part holds the event loop for well under a millisecond (fewer than the websocket catch-up's
250: a page is asked for all at once, up to 10,000 events; in the soak bench, 100 a part
gave the good player a p99 of 6-7.6 ms during a flood of pages, where 250 gave 8.5-15)."""


async def get_stream_events(request: web.Request, who: Principal) -> web.StreamResponse:
    runtime = request.app[RUNTIME]
    store = runtime.store
    stream = request.match_info["stream"]
    if not may_read(who, stream):
        return forbidden(f"{who.role} may not read {stream}")
    try:
        raw_limit = request.query.get("limit", "1000")
        if not (raw_limit.isascii() and raw_limit.isdigit()):
            raise ValueError
        limit = min(int(raw_limit), 10_000)
        since = request.query.get("since", "0")
        if limit <= 0:
            raise ValueError
    except ValueError:
        return json_view(error_reply("bad_request", "limit must be 1..10000"), status=400)

    async def log_entries(after: Any, n: int) -> list[Envelope]:
        return [decode(raw, log_id) for log_id, raw in await store.log_raw(after, n)]

    async def stream_events(after: Any, n: int) -> list[Envelope]:
        return await store.read(stream, after, n)

    try:
        if stream == LOG:
            parts = _parts(request, log_entries, _log_id, since_log_id(since), limit)
        else:
            if stream not in runtime.supervisor.actors:
                return json_view(error_reply("unknown_stream", "no such stream"), status=404)
            seq = since_seq(int(since) if since.isascii() and since.isdigit() else -1)
            parts = _parts(request, stream_events, _seq, seq, limit)
        first = await anext(parts, b"")  # a store that fails here gets a plain 500
    except ProtocolError as e:
        return json_view(error_reply(e.code, e.message), status=400)
    response = StreamedView(request)
    response.content_type = "application/json"
    response.charset = "utf-8"
    await response.prepare(request)
    head = b'{"stream":' + encode(stream) + b',"events":['
    if not await sent_in_time(request, response.write(head + first)):
        return response
    async for part in parts:
        if not await sent_in_time(request, response.write(b"," + part)):
            return response
    await sent_in_time(request, response.write_eof(b"]}"))  # which drains too
    return response


async def _parts(
    request: web.Request,
    read: Callable[[Any, int], Awaitable[list[Envelope]]],
    position: Callable[[Envelope], Any],
    after: Any,
    limit: int,
) -> AsyncIterator[bytes]:
    """The JSON of the events ``read`` gives after ``after`` (at most ``limit``; the next
    read is after the ``position`` of the last event read), as parts
    of :data:`PAGE_PART` events joined by commas (never an empty one): each part is
    read from the store (among ``READERS``) and encoded in its own turn of the event loop,
    so a large page never holds up the other clients' commands, and is sent before the
    next is read, so a page's memory is one part's."""
    left = limit
    while left > 0:
        want = min(PAGE_PART, left)
        async with request.app[READERS]:
            page = await read(after, want)
        if page:
            yield encode([to_json(env) for env in page])[1:-1]
        if len(page) < want:
            return
        left -= want
        after = position(page[-1])


def _seq(env: Envelope) -> int:
    return env.seq


def _log_id(env: Envelope) -> str | None:
    return env.log_id


async def healthz(request: web.Request) -> web.Response:
    return json_view({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    try:
        await runtime.store.redis.ping()
        caught_up = await runtime.runner.caught_up()
    except Exception as e:
        return json_view({"ready": False, "reason": f"event store: {e}"}, status=503)
    if not caught_up:
        return json_view({"ready": False, "reason": "projections catching up"}, status=503)
    return json_view({"ready": True})


async def metrics(request: web.Request) -> web.Response:
    body = request.app[RUNTIME].metrics.render()
    return web.Response(body=body, content_type="text/plain", charset="utf-8")
