"""The GC-7R and GC-7Q built from what a real server serves (its live projections over HTTP,
after a 50/50 and a bell jar deal played over real websockets): the figures are the
server's own, to the cent, and survive the JSON round trip."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from services.bell_jars.quarters import local_date, quarter_of_day
from services.reports import gc7q, gc7r
from services.reports.form import to_pdf
from services.store.embedded import EmbeddedRedis
from tests.conftest import deal_night
from tests.support import LiveServer, start_server, token
from tests.unit.reports.support import NEW_YORK, pdf_text
from tests.unit.reports.test_gc7r import lines

DAY = 86_400_000
AUDITOR = token("auditor")


def ok(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["ok"], reply
    result: dict[str, Any] = reply["result"]
    return result


async def caught_up(server: LiveServer) -> None:
    for _ in range(300):
        if await server.runtime.runner.caught_up():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("projections did not catch up")


def night(org: str) -> dict[str, Any]:
    return deal_night(
        org,
        license={
            "number": "GC-TEST-1",
            "games": ["roulette", "raffle"],
            "period_start": "2026-11-01",
            "period_end": "2027-12-31",
        },
        raffles=[
            {
                "id": "ff",
                "kind": "fifty_fifty",
                "options": {
                    "name": "50/50",
                    "location": "Parish hall",
                    "price": 100,
                    "bundles": [{"tickets": 6, "price": 500}],
                    "tickets_printed": 1_000,
                    "identification_number": "GC-ID-9",
                    "first_drawing_at": int(time.time() * 1000) + DAY,
                },
            }
        ],
    )


async def test_the_forms_of_a_night_played_on_a_real_server(
    redis_server: EmbeddedRedis, org: str
) -> None:
    server = await start_server(redis_server.url, night(org))
    try:
        seller = await server.connect(token("seller", "seller-1"))
        mic = await server.connect(token("member_in_charge"))
        ok(await seller.cmd("sell_ticket", raffle="ff", count=6, amount=500))
        ok(await seller.cmd("sell_ticket", raffle="ff", count=3, amount=300))
        ok(await mic.cmd("record_drawing_method", raffle="ff", method="rng", description="RNG"))
        ok(await mic.cmd("hold_drawing", raffle="ff"))
        today = local_date(int(time.time() * 1000), ZoneInfo(NEW_YORK))
        deal = {
            "kind": "bell_jar",
            "supplier": "Acme Gaming Supply",
            "supplier_license": "SUP-77",
            "invoice_number": "INV-9",
            "invoice_date": today.isoformat(),
            "form_number": "F-1",
            "ticket_count": 20,
            "ticket_price": 100,
            "cost": 400,
            "prizes": [
                {"value": 500, "count": 1, "kind": "cash"},
                {"value": 200, "count": 2, "kind": "cash"},
            ],
            "serial_number": "S-1",
            "ticket_serial": "S-1",
            "flare_serial": "S-1",
            "invoice_serial": "S-1",
        }
        ok(await mic.cmd("register_deal", deal="d-1", **deal))
        ok(await mic.cmd("put_deal_in_play", deal="d-1", container="jar"))
        ok(await seller.cmd("record_sale", deal="d-1", count=20, amount=2_000))
        ok(await seller.cmd("redeem_ticket", deal="d-1", prize=0, ticket="T-1"))
        await caught_up(server)

        status, view = await server.get("/api/raffles/ff", AUDITOR)
        assert status == 200
        form = gc7r.build(view, timezone=NEW_YORK)
        got = lines(form)
        assert (
            (got["1"], got["2"], got["4"], got["5"])
            == (1_000, 9, 991, 800)
            == (
                view["tickets_printed"],
                view["tickets"],
                1_000 - view["tickets"],
                view["sales"],
            )
        )
        assert (got["6"], got["8"], got["9"]) == (400, 400, 0)
        assert got["6"] == view["prizes_paid"] and got["8"] == view["profit_kept"]
        assert form.due == today + timedelta(days=30)  # drawn today, in New York
        assert "50% of the ticket money" in pdf_text(to_pdf(form))

        year, n = quarter_of_day(today)
        status, figures = await server.get(f"/api/bell-jars/quarters/{year}-Q{n}", AUDITOR)
        assert status == 200 and figures == server.runtime.bell_jars.quarter(year, n)
        q = gc7q.build(figures, organization=server.runtime.night.organization_name)
        got = {k: v for k, v in lines(q).items() if k[0] in "AB"}
        assert (got["A1"], got["A2"], got["A3"], got["A4"], got["A5"]) == (1, 2_000, 500, 0, 400)
        assert got["A7"] == 2_000 - 900 and got["B8"] == 55 and got["B9"] == 1_100 - 55
        assert q.due == gc7q.due_date(year, n)
    finally:
        await server.stop()
