"""``casino-night forms`` against a real server's store: it writes each form's CSV and PDF,
the same forms the server's ``/api/reports`` files hold (docs/FORMS.md)."""

from __future__ import annotations

import io
import json
from datetime import date, timedelta

import pypdf

from tests.e2e.conftest import ServeFactory

TABLES = [{"id": "roulette-1", "outcome_mode": "dealer", "options": {}}]
PERIOD = "2026-11-01_2026-12-31"


async def test_the_command_writes_the_forms_the_server_serves(serve: ServeFactory) -> None:
    server = await serve("forms-cli", TABLES, ["p-1"])
    cashier = await server.connect(server.token("cashier"))
    dealer = await server.connect(server.dealer_token("roulette-1"))
    mic = await server.connect(server.token("member_in_charge", "mic-1"))
    assert (await cashier.cmd("buy_chips", player="p-1", amount=5_000))["ok"]
    assert (await dealer.cmd("open_round", table="roulette-1"))["ok"]
    bet = {"kind": "red"}
    placed = await dealer.cmd("place_bet", table="roulette-1", player="p-1", bet=bet, amount=400)
    assert placed["ok"], placed
    assert (await dealer.cmd("no_more_bets", table="roulette-1"))["ok"]
    assert (await dealer.cmd("record_outcome", table="roulette-1", outcome={"pocket": "2"}))["ok"]
    expense = await mic.cmd(
        "record_expense",
        payee="Hall Co",
        address="9 Elm St, Troy NY",
        description="Hall rent for the night",
        amount=25_000,
        category="rent",
    )
    assert expense["ok"], expense
    await server.wait_ready()
    served = {}
    assert server.session is not None
    for name in (f"gc7/{PERIOD}.csv", "gc7b/e2e-night.csv"):
        async with server.session.get(
            f"{server.base}/api/reports/{name}",
            headers={"Authorization": f"Bearer {server.token('auditor')}"},
        ) as r:
            assert r.status == 200
            served[name] = await r.text()

    out = server.data_dir.parent / "forms"
    written = await server.cli("forms", "--out", str(out))
    assert written.returncode == 0, written.stderr
    assert (out / f"GC-7-{PERIOD}.csv").read_text() == served[f"gc7/{PERIOD}.csv"]
    assert (out / "GC-7B-e2e-night.csv").read_text() == served["gc7b/e2e-night.csv"]
    pdf = pypdf.PdfReader(io.BytesIO((out / f"GC-7-{PERIOD}.pdf").read_bytes()))
    text = " ".join(p.extract_text() for p in pdf.pages)
    assert "Hall Co" in text and "9 Elm St, Troy NY" in text and "250.00" in text

    listed = await server.cli("forms", "--list", "--form", "gc7b")
    assert listed.returncode == 0, listed.stderr
    reports = json.loads(listed.stdout)["reports"]
    assert [(r["code"], r["key"]) for r in reports] == [("GC-7B", "e2e-night")]
    # 7 days after the day the night began (it has no window), or the GC-7's if earlier.
    began = date.fromisoformat(reports[0]["period"].rsplit(", ", 1)[1])
    assert reports[0]["due"] == min(began + timedelta(days=7), date(2027, 1, 7)).isoformat()
    unknown = await server.cli(
        "forms", "--form", "gc7", "--key", "2020-01-01_2020-12-31", "--out", str(out)
    )
    assert unknown.returncode == 2 and "no instance" in unknown.stderr, unknown.stderr
    # The night audits clean, its expense chain-checked and held to the expense rules.
    report = await server.audited_live("forms-cli")
    [expenses] = [c for c in report.checks if c.name == "expenses"]
    assert expenses.checked == {"expenses": 1}
