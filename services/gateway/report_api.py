"""The forms over HTTP: what is due (``GET /api/reports``) and each form's file
(``GET /api/reports/{form}/{key}.csv`` or ``.pdf``), built from this process's projections
on request (docs/FORMS.md "What is due", docs/PROTOCOL.md "HTTP")."""

from __future__ import annotations

import asyncio
import time

from aiohttp import web

from services.actor import error_reply
from services.gateway.auth import Principal
from services.gateway.transport import RUNTIME, forbidden, json_view
from services.reports import catalog
from services.reports.due import local_date
from services.reports.form import to_csv, to_pdf

REPORT_READERS = frozenset({"member_in_charge", "auditor", "ops"})
"""Who reads the forms: the member in charge files them (GML 195-f(1)), auditors and ops
check them. Never a player, a dealer, a cashier or a seller: the forms hold every table's
result and every payee."""

FILE_TYPES = {"csv": "text/csv", "pdf": "application/pdf"}


async def get_reports(request: web.Request, who: Principal) -> web.Response:
    """Every form instance that is or will be due, soonest first, overdue ones flagged."""
    if who.role not in REPORT_READERS:
        return forbidden("the forms are for members in charge, auditors and ops")
    runtime = request.app[RUNTIME]
    today = local_date(time.time_ns() // 1_000_000, runtime.night.timezone)
    due = catalog.due_reports(runtime.report_inputs(), today)
    return json_view({"today": today.isoformat(), "reports": [r.view() for r in due]})


async def get_report_file(request: web.Request, who: Principal) -> web.Response:
    """One form instance as CSV or PDF: 404 ``unknown_form`` or ``unknown_report``, 400
    ``bad_request`` for another file type."""
    if who.role not in REPORT_READERS:
        return forbidden("the forms are for members in charge, auditors and ops")
    form = request.match_info["form"]
    key, _dot, kind = request.match_info["file"].rpartition(".")
    if kind not in FILE_TYPES or not key:
        return json_view(
            error_reply("bad_request", "a form's file is <key>.csv or <key>.pdf"), status=400
        )
    try:
        filled = catalog.build(request.app[RUNTIME].report_inputs(), form, key)
    except catalog.UnknownForm:
        names = ", ".join(e.form for e in catalog.CATALOG)
        return json_view(
            error_reply("unknown_form", f"no form {form!r}; forms: {names}"), status=404
        )
    except catalog.UnknownReport:
        return json_view(
            error_reply("unknown_report", f"{form} has no instance {key!r}"), status=404
        )
    if kind == "csv":
        body = to_csv(filled).encode()
    else:
        body = await asyncio.to_thread(to_pdf, filled)
    name = f"{filled.code}-{key}.{kind}"
    return web.Response(
        body=body,
        content_type=FILE_TYPES[kind],
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
