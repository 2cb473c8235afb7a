"""Expenses and the forms over a real server: ``record_expense`` (docs/PROTOCOL.md
"Expenses"), its refusals each changing nothing, ``GET /api/reports`` and the forms' CSV
and PDF files, whose figures are the projections' to the cent (docs/FORMS.md)."""

from __future__ import annotations

import asyncio
import csv
import io
from datetime import date, timedelta
from typing import Any

import pypdf

from services.aggregates import EXPENSES
from services.reports.due import local_date
from services.reports.form import Amount
from tests.support import LiveServer, dealer_token, player_token, token

MIC = token("member_in_charge", "mic-1")
AUDITOR = token("auditor")
PERIOD = "2026-11-01_2026-12-31"
EXPENSE: dict[str, Any] = {
    "payee": "Acme Gaming Supply",
    "address": "1 Main St, Albany NY 12207",
    "description": "Roulette layout cloth",
    "amount": 12_345,
    "category": "equipment_and_supplies",
}


async def caught_up(server: LiveServer) -> None:
    for _ in range(200):
        if await server.runtime.runner.caught_up():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the projections did not catch up")


async def play_a_round(server: LiveServer) -> None:
    """p-1 buys $100, wins a straight on 17 (35 to 1) and loses $5 on red, cashes $20."""
    cashier = await server.connect(token("cashier"))
    dealer = await server.connect(dealer_token("roulette-1"))
    player = await server.connect(player_token("p-1"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=10_000))["ok"]
    assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
    straight = {"kind": "straight", "numbers": ["17"]}
    for bet, amount in ((straight, 200), ({"kind": "red"}, 500)):
        placed = await player.cmd(
            "place_bet", table="roulette-1", player="p-1", bet=bet, amount=amount
        )
        assert placed["ok"], placed
    assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
    done = await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "17"})
    assert done["ok"], done
    assert (await cashier.cmd("cash_out", player="p-1", amount=2_000))["ok"]


async def test_an_expense_is_recorded_once_and_shows_on_the_gc7(server: LiveServer) -> None:
    await play_a_round(server)
    mic = await server.connect(MIC)
    first = await mic.send({"op": "record_expense", "id": "e-1", **EXPENSE})
    assert first["ok"], first
    assert first["result"]["expense"] == 1 and first["result"]["amount"] == 12_345
    again = await mic.send({"op": "record_expense", "id": "e-1", **EXPENSE})
    assert again["result"] == first["result"]  # the same command: applied once
    rent = {**EXPENSE, "payee": "Hall Co", "category": "rent", "amount": 50_000}
    assert (
        await mic.send(
            {
                "op": "record_expense",
                "id": "e-2",
                **rent,
                "covers": "license_period",
                "license_period": PERIOD,
            }
        )
    )["ok"]
    events = await server.runtime.store.read(EXPENSES)
    assert [e.data["number"] for e in events] == [1, 2]
    assert events[0].data["occasion"] == "night-1" and events[1].data["occasion"] is None
    # Each on the GC-7 of its period: the occasion's, and the one named.
    ran = server.runtime.cash_control.occasions["night-1"]
    for e in events:
        assert (e.data["period_start"], e.data["period_end"]) == (
            ran["period_start"],
            ran["period_end"],
        )
        assert f"{e.data['period_start']}_{e.data['period_end']}" == PERIOD
    await caught_up(server)

    status, listing = await server.get("/api/reports", MIC)
    assert status == 200
    lines = {(r["form"], r["key"]): r for r in listing["reports"]}
    gc7 = lines[("gc7", PERIOD)]
    assert gc7["due"] == "2027-01-07" and "4624.1" in gc7["due_rule"]
    # The night's GC-7B: 7 days after the day the occasion began (it has no window), or
    # the GC-7's date if that is earlier (docs/RULES.md "Expenses and the forms", item 9).
    night = lines[("gc7b", "night-1")]
    zone = server.runtime.night.timezone
    began = local_date(server.runtime.cash_control.occasions["night-1"]["started"], zone)
    assert night["period"].endswith(began.isoformat())
    assert night["due"] == min(began + timedelta(days=7), date(2027, 1, 7)).isoformat()

    async with server.session.get(
        server.base + gc7["csv"], headers={"Authorization": f"Bearer {MIC}"}
    ) as r:
        assert r.status == 200 and r.content_type == "text/csv"
        rows = list(csv.reader(io.StringIO(await r.text())))
    values = {row[2]: row[4] for row in rows if row[0] == "line"}
    table = server.runtime.bankrolls.tables["roulette-1"]
    assert table == {**table, "handle": 700, "paid_out": 7_200}
    assert values["A1"] == Amount(cents=table["handle"]).plain()
    assert values["A2"] == Amount(cents=table["paid_out"]).plain()
    assert values["B1"] == "123.45" and values["B2"] == "500.00" and values["B6"] == "623.45"
    assert values["D3"] == Amount(cents=700 - 7_200 - 62_345).plain()
    payees = [row[4] for row in rows if row[0] == "row" and row[1].startswith("Part B")]
    assert payees == ["Acme Gaming Supply", "Hall Co"]

    async with server.session.get(
        server.base + lines[("gc7b", "night-1")]["pdf"],
        headers={"Authorization": f"Bearer {AUDITOR}"},
    ) as r:
        assert r.status == 200 and r.content_type == "application/pdf"
        pdf = pypdf.PdfReader(io.BytesIO(await r.read()))
    text = " ".join(page.extract_text() for page in pdf.pages)
    assert "GC-7B" in text and "Cash Control Summary" in text
    assert "100.00" in text and "20.00" in text  # chips issued, redeemed
    assert "-65.00" in text  # the table's house result: 7.00 - 72.00


async def expenses_head(server: LiveServer) -> tuple[int, int]:
    head = (await server.runtime.store.head(EXPENSES)).version
    return head, len(server.runtime.expenses.items)


async def test_a_bad_expense_is_bad_request_and_changes_nothing(server: LiveServer) -> None:
    mic = await server.connect(MIC)
    before = await expenses_head(server)
    bad: list[dict[str, Any]] = [
        {**EXPENSE, "amount": -100},
        {**EXPENSE, "amount": 0},
        {**EXPENSE, "amount": 12.5},
        {k: v for k, v in EXPENSE.items() if k != "payee"},
        {**EXPENSE, "payee": ""},
        {**EXPENSE, "category": "prizes"},
        {**EXPENSE, "address": "   "},
        {**EXPENSE, "covers": "license_period", "occasion": "night-1"},
    ]
    for i, fields in enumerate(bad):
        reply = await mic.send({"op": "record_expense", "id": f"bad-{i}", **fields})
        assert not reply["ok"] and reply["error"]["code"] == "bad_request", (fields, reply)
    others = [token(r) for r in ("cashier", "auditor", "ops", "seller")]
    for tok in [*others, player_token("p-1"), dealer_token("roulette-1")]:
        client = await server.connect(tok)
        reply = await client.send({"op": "record_expense", "id": "x", **EXPENSE})
        assert reply["error"]["code"] == "forbidden", reply
        assert reply["error"]["message"] == "record_expense is for the member in charge"
    # An occasion the log did not start, a period it did not record: refused by the rules.
    unknown: list[tuple[dict[str, Any], str]] = [
        ({**EXPENSE, "occasion": "night-0"}, "unknown_occasion"),
        (
            {**EXPENSE, "covers": "license_period", "license_period": "2025-01-01_2025-12-31"},
            "unknown_license_period",
        ),
        ({**EXPENSE, "license_period": PERIOD}, "bad_request"),  # an occasion's is its own
        ({**EXPENSE, "covers": "license_period", "license_period": 7}, "bad_request"),
    ]
    for i, (fields, code) in enumerate(unknown):
        reply = await mic.send({"op": "record_expense", "id": f"unknown-{i}", **fields})
        assert not reply["ok"] and reply["error"]["code"] == code, (fields, reply)
    assert await expenses_head(server) == before == (0, 0)
    # A refused id is not spent on a refusal: the good command under it is applied.
    assert (await mic.send({"op": "record_expense", "id": "bad-0", **EXPENSE}))["ok"]


async def test_the_reports_api_refuses_with_stable_codes(server: LiveServer) -> None:
    for path in ("/api/reports", f"/api/reports/gc7/{PERIOD}.csv"):
        for role in ("cashier", "dealer", "seller"):
            status, body = await server.get(path, token(role))
            assert (status, body["error"]["code"]) == (403, "forbidden")
        status, body = await server.get(path, player_token("p-1"))
        assert (status, body["error"]["code"]) == (403, "forbidden")
    cases = {
        f"/api/reports/gc9/{PERIOD}.csv": (404, "unknown_form"),
        "/api/reports/gc7/2025-01-01_2025-12-31.pdf": (404, "unknown_report"),
        "/api/reports/gc7b/no-such-night.csv": (404, "unknown_report"),
        f"/api/reports/gc7/{PERIOD}.xlsx": (400, "bad_request"),
        f"/api/reports/gc7/{PERIOD}": (400, "bad_request"),
    }
    for path, (want_status, want_code) in cases.items():
        status, body = await server.get(path, AUDITOR)
        assert (status, body["error"]["code"]) == (want_status, want_code), path
