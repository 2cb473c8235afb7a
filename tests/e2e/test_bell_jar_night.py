"""A bell jar night through the real ``casino-night serve``, across a calendar quarter's end,
with a ``kill -9`` in the middle (docs/PROTOCOL.md "Bell jar deals", docs/RULES.md "Bell
jars").

The server takes every time from its clock, so it runs under Debian's libfaketime: it
starts at 23:50 on 31 March in New York (the organization's zone), in the first quarter,
and after the kill it is started again at 00:10 on 1 April, in the second. Four deals: A
sold out in the first quarter; B removed in the second once 75 % of its prizes by count
and by value were awarded; C1 and C2 commingled in one receptacle and bank, sold out in
the second. The server is killed while a burst of commands is in flight; sent again with
the same ids after the restart, each is applied once. The test keeps its own books of
what it sent and what the server acknowledged, and computes every deal's bank and every
line of the GC-7Q from them; the HTTP reports must equal those figures and what
``casino-night replay --show`` rebuilds; a player's flare shows the prizes awarded and
nothing of the sales; ``casino-night verify`` finds every chain intact.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.serve import EXE, ServeProcess, night_toml, wait_until_dead
from tests.support import WsClient

ORG = "e2e-bell-jars"
VERIFIER = Path(__file__).resolve().parents[2] / "tools" / "verify_export.py"
ZONE = ZoneInfo("America/New_York")
Q1_START = "@2026-04-01 03:50:00"
"""The first run's clock (UTC): 23:50 on 31 March in New York, ten minutes before Q2."""
Q2_START = "@2026-04-01 04:10:00"
"""The clock after the restart: 00:10 on 1 April in New York."""
Q2_BEGINS_MS = 1_775_016_000_000
"""2026-04-01 00:00 in New York (04:00 UTC, daylight time): the first instant of Q2."""
FEE_PERCENT = 5
FLARE_KEYS = {"deal", "kind", "serial_number", "form_number", "ticket_price", "prizes"}
FLARE_LINE_KEYS = {"line", "value", "count", "kind", "description", "awarded"}


def libfaketime() -> str:
    """The path of Debian's libfaketime.so.1 (package ``libfaketime``, brought by
    ``faketime``, which ``make test`` installs); the test fails, saying so, without it."""
    found: list[str] = []
    try:
        listed = subprocess.run(
            ["dpkg", "-L", "libfaketime"], capture_output=True, text=True, check=False
        )
        found = [p for p in listed.stdout.split() if p.endswith("/libfaketime.so.1")]
    except OSError:
        pass
    found += [str(p) for p in sorted(Path("/usr/lib").glob("*/faketime/libfaketime.so.1"))]
    for path in found:
        if Path(path).is_file():
            return path
    pytest.fail(
        "libfaketime is not installed: this test runs the server under it across a calendar "
        "quarter's end. Run `make test` (it installs Debian's faketime) or "
        "`apt-get install faketime`."
    )


def fake_clock(start: str) -> dict[str, str]:
    """The environment that starts the server's clock (and its redis-server child's) at
    ``start`` and lets it advance. The monotonic clock is faked too: with
    FAKETIME_DONT_FAKE_MONOTONIC, libfaketime 0.9.10 (Debian 12) turns the absolute
    CLOCK_MONOTONIC deadline of Python 3.11's ``time.sleep`` into a negative one and every
    sleep fails with EINVAL (fixed upstream in 0.9.11); faked, it advances at the real rate,
    so asyncio's timers keep their real durations."""
    return {"LD_PRELOAD": libfaketime(), "FAKETIME": start, "TZ": "UTC"}


def night_text() -> str:
    text = night_toml(ORG, [{"id": "roulette-1"}], ["p-1"])
    text = text.replace(
        'games = ["roulette"]',
        'games = ["roulette", "bell_jar", "coin_board", "merchandise_board", "seal_card"]',
    )
    text = text.replace('period_start = "2026-11-01"', 'period_start = "2025-10-01"')
    text = text.replace(
        f'name = "End-to-end test organization {ORG}"',
        f'name = "End-to-end test organization {ORG}"\ntimezone = "America/New_York"',
    )
    return text


def cash(*lines: tuple[int, int]) -> list[dict[str, Any]]:
    return [{"value": value, "count": count, "kind": "cash"} for value, count in lines]


DEALS: dict[str, dict[str, Any]] = {
    # Sold out in Q1: 100 tickets at $1, a small flare.
    "a": {
        "ticket_count": 100,
        "ticket_price": 100,
        "cost": 1_800,
        "invoice_date": "2026-03-02",
        "form_number": "F-100",
        "prizes": cash((2_000, 1), (1_000, 2), (200, 5)),
    },
    # Removed in Q2: 500 tickets at $1, a larger flare (37 prizes, $370).
    "b": {
        "ticket_count": 500,
        "ticket_price": 100,
        "cost": 3_290,
        "invoice_date": "2026-03-16",
        "form_number": "F-200",
        "prizes": cash((10_000, 1), (5_000, 2), (2_500, 4), (500, 10), (100, 20)),
    },
    # Two identical complete deals, bought in Q4 2025, commingled in one receptacle.
    "c1": {
        "ticket_count": 60,
        "ticket_price": 200,
        "cost": 1_500,
        "invoice_date": "2025-12-12",
        "form_number": "F-300",
        "prizes": cash((3_000, 1), (1_000, 3), (400, 5)),
    },
    "c2": {
        "ticket_count": 60,
        "ticket_price": 200,
        "cost": 1_500,
        "invoice_date": "2025-12-12",
        "form_number": "F-300",
        "prizes": cash((3_000, 1), (1_000, 3), (400, 5)),
    },
}
LEAD = {"a": "a", "b": "b", "c1": "c1", "c2": "c1"}
"""Whose bank each deal's sales go into (C2's into C1's)."""


def registration(deal: str) -> dict[str, Any]:
    facts = DEALS[deal]
    serial = f"SN-{deal.upper()}-2026"
    return {
        "deal": deal,
        "kind": "bell_jar",
        "supplier": "Empire Pull-Tabs",
        "supplier_license": "SUP-4620",
        "invoice_number": f"INV-{deal}",
        "serial_number": serial,
        "ticket_serial": serial,
        "flare_serial": serial,
        "invoice_serial": serial,
        **facts,
    }


@dataclass
class Books:
    """What the test sent and the server acknowledged, per deal."""

    sold: Counter[str] = field(default_factory=Counter)
    """Tickets sold into each bank (by lead)."""
    awarded: dict[str, Counter[int]] = field(default_factory=lambda: {d: Counter() for d in DEALS})
    """Prizes awarded per deal and flare line."""
    closed: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Each closed deal's reason and the unsold tickets its closing recorded."""
    retained: dict[str, str] = field(default_factory=dict)
    """Each redeemed ticket's retention date."""

    def cash(self, deal: str) -> int:
        prizes = DEALS[deal]["prizes"]
        return sum(prizes[line]["value"] * n for line, n in self.awarded[deal].items())

    def count(self, deal: str) -> int:
        return sum(self.awarded[deal].values())

    def members(self, lead: str) -> list[str]:
        return [d for d in DEALS if LEAD[d] == lead]

    def receptacle(self, lead: str) -> int:
        return sum(DEALS[d]["ticket_count"] for d in self.members(lead))

    def sales(self, lead: str) -> int:
        return self.sold[lead] * DEALS[lead]["ticket_price"]


def ok(reply: dict[str, Any]) -> dict[str, Any]:
    assert reply["ok"], reply
    result: dict[str, Any] = reply["result"]
    return result


def refused(reply: dict[str, Any], code: str) -> str:
    assert not reply["ok"] and reply["error"]["code"] == code, reply
    message: str = reply["error"]["message"]
    return message


def claims(tok: str) -> dict[str, Any]:
    """A token's payload (a client may read it without the key)."""
    part = tok.split(".")[1]
    payload: dict[str, Any] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return payload


def local(at_ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(at_ms / 1000, ZONE)


class Night:
    """The clients of the night and the books they keep."""

    def __init__(self, server: ServeProcess) -> None:
        self.server = server
        self.books = Books()
        self.mic_token = server.token("member_in_charge", "mic-1")
        self.seller_token = server.token("seller", "seller-1")
        self.auditor = server.token("auditor", "audit-1")
        self.player = server.player_token("p-1")

    async def connect(self) -> None:
        self.mic: WsClient = await self.server.connect(self.mic_token)
        self.seller: WsClient = await self.server.connect(self.seller_token)

    async def sell(self, deal: str, count: int) -> dict[str, Any]:
        price = DEALS[deal]["ticket_price"]
        sent = await self.seller.cmd("record_sale", deal=deal, count=count, amount=count * price)
        result = ok(sent)
        assert result["sold"] == count
        self.books.sold[deal] += count
        if "closed" in result:
            self.close(deal, result)
        return result

    def close(self, deal: str, result: dict[str, Any]) -> None:
        for member in self.books.members(deal):
            self.books.closed[member] = (
                result["closed"],
                result["unsold"] if member == deal else 0,
            )

    async def redeem(self, deal: str, prize: int, ticket: str) -> dict[str, Any]:
        result = ok(await self.seller.cmd("redeem_ticket", deal=deal, prize=prize, ticket=ticket))
        assert result["value"] == DEALS[deal]["prizes"][prize]["value"]
        assert result["kind"] == "cash"
        self.books.awarded[deal][prize] += 1
        self.books.retained[ticket] = result["retain_until"]
        return result

    async def wait_event(self, stream: str, check: Callable[[dict[str, Any]], bool]) -> None:
        """Until an event of ``stream`` that passes ``check`` is in the store."""
        deadline = time.monotonic() + 10
        while not any(check(e) for e in await self.events(stream)):
            assert time.monotonic() < deadline, f"no such event on {stream}"
            await asyncio.sleep(0.02)

    async def events(self, stream: str) -> list[dict[str, Any]]:
        status, body = await self.server.get(f"/api/streams/{stream}/events", self.auditor)
        assert status == 200, body
        events: list[dict[str, Any]] = body["events"]
        return events


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ServeProcess]:
    if not EXE.exists():
        pytest.fail(f"{EXE} is missing: install the project into this venv (make install)")
    process = ServeProcess(tmp_path / "night", night_text(), env=fake_clock(Q1_START))
    await process.start()
    yield process
    await process.aclose()


async def real_clock_cli(server: ServeProcess, *args: str) -> subprocess.CompletedProcess[str]:
    """``casino-night ARGS`` for the server's data directory, on the real clock (as an
    operator would run it months later: the figures come from the events alone)."""
    env = {k: v for k, v in server.env().items() if k not in ("LD_PRELOAD", "FAKETIME")}
    command = [str(EXE), *args, "--night", str(server.night), "--data-dir", str(server.data_dir)]
    return await asyncio.to_thread(
        subprocess.run,
        command,
        env=env,
        cwd=server.workdir,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def expected_line(books: Books, deal: str) -> dict[str, Any]:
    """Schedule 1's line of ``deal``, from the books: the lead (or a deal alone) carries the
    receptacle's tickets sold and unsold; a commingled deal carries none."""
    facts = DEALS[deal]
    handle = facts["ticket_count"] * facts["ticket_price"]
    lead = LEAD[deal]
    sold = books.sold[deal] if lead == deal else 0
    unsold = books.receptacle(deal) - sold if lead == deal else 0
    unsold_value = unsold * facts["ticket_price"]
    return {
        "deal": deal,
        "lead": None if lead == deal else lead,
        "kind": "bell_jar",
        "supplier": "Empire Pull-Tabs",
        "invoice_number": f"INV-{deal}",
        "serial_number": f"SN-{deal.upper()}-2026",
        "form_number": facts["form_number"],
        "closed_reason": books.closed[deal][0],
        "ticket_count": facts["ticket_count"],
        "ticket_price": facts["ticket_price"],
        "ideal_handle": handle,
        "tickets_sold": sold,
        "tickets_unsold": unsold,
        "unsold_value": unsold_value,
        "cash_prizes": books.cash(deal),
        "merchandise": 0,
        "cost": facts["cost"],
        "ideal_net": handle - books.cash(deal) - unsold_value - facts["cost"],
    }


def check_quarter(
    report: dict[str, Any], books: Books, closed: list[str], bought: list[str], closed_on: str
) -> None:
    """A quarter's GC-7Q figures as the books give them: A1-A4 over the deals it closed, A5
    over those invoiced in it, A6 = A3 + A4 + A5, A7 = A2 - A6, B8 5 % of a positive A7
    rounded up to the cent, B9 = A7 - B8."""
    lines = [expected_line(books, d) for d in closed]
    got = report["schedule_1"]
    assert [x["deal"] for x in got] == closed
    assert [{k: v for k, v in x.items() if k != "closed_on"} for x in got] == lines
    assert {x["closed_on"] for x in got} <= {closed_on}
    a2 = sum(x["ideal_handle"] for x in lines)
    a3 = sum(x["cash_prizes"] for x in lines)
    a4 = sum(x["unsold_value"] for x in lines)
    a5 = sum(DEALS[d]["cost"] for d in bought)
    a7 = a2 - (a3 + a4 + a5)
    b8 = (a7 * FEE_PERCENT + 99) // 100 if a7 > 0 else 0
    figures = {k: report[k] for k in ("A1", "A2", "A3", "A4", "A5", "A6", "A7", "B8", "B9")}
    assert figures == {
        "A1": len(closed), "A2": a2, "A3": a3, "A4": a4, "A5": a5, "A6": a3 + a4 + a5,
        "A7": a7, "B8": b8, "B9": a7 - b8,
    }  # fmt: skip
    assert [p["deal"] for p in report["purchases"]] == bought
    assert report["merchandise"] == 0 and report["anomalies"] == []
    assert report["timezone"] == "America/New_York"


async def test_a_bell_jar_night_over_two_quarters_survives_a_kill_and_replays(
    server: ServeProcess,
) -> None:
    night = Night(server)
    books = night.books
    await server.wait_ready()
    await night.connect()
    mic, seller = night.mic, night.seller

    # -- The first quarter: 23:50 on 31 March in New York. ---------------------------------
    for deal in DEALS:
        assert ok(await mic.cmd("register_deal", **registration(deal)))["deal"] == deal
    registered = (await night.events("deal:a"))[0]
    assert registered["type"] == "DealRegistered"
    at = registered["data"]["at"]
    assert local(at).date() == dt.date(2026, 3, 31) and at < Q2_BEGINS_MS, (
        f"the server's clock is not the faked one: DealRegistered at {local(at)}"
    )
    # The tokens carry the test's real time: their iat lies ahead of the server's clock
    # (it is not checked) and their exp after it, so the server takes them.
    for tok in (night.mic_token, night.seller_token, night.auditor, night.player):
        assert claims(tok)["iat"] * 1000 > at and claims(tok)["exp"] * 1000 > Q2_BEGINS_MS

    assert ok(await mic.cmd("put_deal_in_play", deal="a", container="jar"))["deals"] == ["a"]
    played = ok(
        await mic.cmd("put_deal_in_play", deal="b", container="vending_machine", column="m1/1")
    )
    assert played["deals"] == ["b"]
    played = ok(await mic.cmd("put_deal_in_play", deal="c1", container="jar", commingle=["c2"]))
    assert played["deals"] == ["c1", "c2"]

    await night.sell("a", 30)
    await night.redeem("a", 1, "A-1")
    await night.redeem("a", 2, "A-2")
    await night.sell("a", 30)
    await night.redeem("a", 2, "A-3")
    await night.sell("b", 50)
    for i in range(3):
        await night.redeem("b", 3, f"B-5-{i}")
    for i in range(5):
        await night.redeem("b", 4, f"B-1-{i}")
    await night.sell("c1", 20)
    await night.redeem("c2", 1, "C2-1")  # paid from C1's bank
    await night.redeem("c1", 2, "C1-1")
    assert (await night.sell("a", 40))["closed"] == "sold_out"
    await night.redeem("a", 0, "A-4")  # sold before the sell-out, redeemed in its quarter
    await night.sell("b", 50)
    await night.sell("c1", 30)
    refused(await seller.cmd("record_sale", deal="c2", count=1, amount=200), "deal_commingled")

    # A player sees B's flare with the prizes awarded, and nothing of its sales.
    status, flare = await server.get("/api/deals/b/flare", night.player)
    assert status == 200 and set(flare) == FLARE_KEYS
    assert all(set(line) == FLARE_LINE_KEYS for line in flare["prizes"])
    assert [line["awarded"] for line in flare["prizes"]] == [0, 0, 0, 3, 5]

    q1_tickets = set(books.retained)

    # -- kill -9 in the middle of a command stream. ----------------------------------------
    # The first command is applied (its event is on the stream) but the test never reads its
    # reply; the next two are sent, and the server is killed at once.
    burst = [
        {"op": "record_sale", "id": "burst-1", "deal": "b", "count": 40, "amount": 4_000},
        {"op": "redeem_ticket", "id": "burst-2", "deal": "b", "prize": 2, "ticket": "B-25-0"},
        {"op": "record_sale", "id": "burst-3", "deal": "c1", "count": 10, "amount": 2_000},
    ]
    await seller.ws.send_str(json.dumps(burst[0]))
    await night.wait_event("deal:b", lambda e: e["causation"] == "burst-1")
    for msg in burst[1:]:
        await seller.ws.send_str(json.dumps(msg))
    redis_pid = server.redis_pid
    server.kill9()
    assert await wait_until_dead(redis_pid, 10)
    await server.close_clients()

    # -- The second quarter: 00:10 on 1 April in New York. ---------------------------------
    server.extra_env["FAKETIME"] = Q2_START
    await server.restart()
    await server.wait_ready()
    await night.connect()
    mic, seller = night.mic, night.seller
    # The interrupted commands, sent again with their ids: each is applied once.
    replies = [ok(await seller.send(dict(msg))) for msg in burst]
    assert replies[0]["sold"] == 40 and replies[1]["value"] == 2_500 and replies[2]["sold"] == 10
    books.sold["b"] += 40
    books.awarded["b"][2] += 1
    books.retained["B-25-0"] = replies[1]["retain_until"]
    books.sold["c1"] += 10
    assert [ok(await seller.send(dict(msg))) for msg in burst] == replies
    sales_b = [e for e in await night.events("deal:b") if e["type"] == "TicketsSold"]
    assert [e["data"]["count"] for e in sales_b] == [50, 50, 40]
    assert sales_b[-1]["data"]["at"] < Q2_BEGINS_MS  # applied once, before the kill
    assert [
        e["data"]["count"] for e in await night.events("deal:c1") if e["type"] == "TicketsSold"
    ] == [20, 30, 10]

    player = await server.connect(night.player)
    watched = ok(await player.cmd("subscribe", view="flare", deal="b"))
    assert watched["data"]["prizes"][2]["awarded"] == 1

    # B: too few prizes awarded to take it out of play (9 of 37 by count, 4,500 of 37,000
    # cents by value); then by count but not by value; then by both.
    message = refused(await mic.cmd("remove_deal", deal="b"), "too_few_prizes_awarded")
    assert "9 of 37" in message and "4500 of 37000" in message
    await night.sell("b", 50)
    for i in range(15):
        await night.redeem("b", 4, f"B-1-{5 + i}")
    for i in range(7):
        await night.redeem("b", 3, f"B-5-{3 + i}")
    await night.sell("b", 50)
    message = refused(await mic.cmd("remove_deal", deal="b"), "too_few_prizes_awarded")
    assert "31 of 37" in message and "9500 of 37000" in message
    await night.redeem("b", 0, "B-100-0")
    await night.redeem("b", 1, "B-50-0")
    await night.redeem("b", 1, "B-50-1")
    await night.sell("b", 50)
    removed = ok(await mic.cmd("remove_deal", deal="b"))
    assert removed["closed"] == "removed" and removed["unsold"] == 500 - books.sold["b"]
    night.close("b", removed)
    # A ticket sold before the removal is still redeemed within the quarter.
    await night.redeem("b", 2, "B-25-1")
    refused(await seller.cmd("record_sale", deal="b", count=1, amount=100), "deal_closed")
    pushed = await player.wait_view(lambda d: d["prizes"][2]["awarded"] == 2)
    assert set(pushed) == FLARE_KEYS
    assert [line["awarded"] for line in pushed["prizes"]] == [
        books.awarded["b"][i] for i in range(5)
    ]

    # C1 + C2: redemptions on both, then the receptacle sells out and both close.
    await night.redeem("c2", 0, "C2-2")
    await night.redeem("c1", 1, "C1-2")
    left = books.receptacle("c1") - books.sold["c1"]
    sold_out = await night.sell("c1", left)
    assert sold_out["closed"] == "sold_out" and sold_out["unsold"] == 0
    # A closed in Q1, which is over: its figures are reported, it redeems nothing more.
    refused(await seller.cmd("redeem_ticket", deal="a", prize=2, ticket="A-5"), "deal_reported")

    # The retention dates, one year on in New York: 31 March for Q1's, 1 April for Q2's.
    for ticket, until in books.retained.items():
        if ticket in q1_tickets:
            assert until == "2027-03-31", ticket
        elif ticket != "B-25-0":  # its first attempt may have run before the kill
            assert until == "2027-04-01", ticket

    # -- The reports. -------------------------------------------------------------------
    await server.wait_ready()
    reports = {}
    for q in ("2025-Q4", "2026-Q1", "2026-Q2"):
        status, reports[q] = await server.get(f"/api/bell-jars/quarters/{q}", night.auditor)
        assert status == 200, reports[q]
    status, deals = await server.get("/api/bell-jars/deals", night.auditor)
    assert status == 200
    views = {v["deal"]: v for v in deals["deals"]}
    assert deals["unknown_deal_anomalies"] == []

    check_quarter(reports["2025-Q4"], books, [], ["c1", "c2"], "")
    check_quarter(reports["2026-Q1"], books, ["a"], ["a", "b"], "2026-03-31")
    check_quarter(reports["2026-Q2"], books, ["b", "c1", "c2"], [], "2026-04-01")
    assert reports["2025-Q4"]["B8"] == 0 and reports["2025-Q4"]["B9"] < 0  # a loss: no fee
    assert reports["2026-Q1"]["A7"] % 20 != 0  # B8 needed rounding up
    assert reports["2026-Q1"]["from"] == "2026-01-01" and reports["2026-Q1"]["to"] == "2026-03-31"

    # Every deal's bank: its sales less the cash prizes paid from it (C2's from C1's).
    for deal, view in views.items():
        assert view["state"] == "closed" and view["closed_reason"] == books.closed[deal][0]
        assert view["cash_prizes"] == books.cash(deal)
        assert view["prizes"]["awarded_count"] == books.count(deal)
        assert [f["awarded"] for f in view["flare"]] == [
            books.awarded[deal][i] for i in range(len(DEALS[deal]["prizes"]))
        ]
        assert view["unsold_recorded"] == books.closed[deal][1]
        if LEAD[deal] != deal:
            assert view["bank"] is None and view["lead"] == LEAD[deal]
            continue
        members = books.members(deal)
        paid = sum(books.cash(m) for m in members)
        cost = sum(DEALS[m]["cost"] for m in members)
        assert view["bank"] == {
            "deals": members,
            "tickets": books.receptacle(deal),
            "sold": books.sold[deal],
            "unsold": books.receptacle(deal) - books.sold[deal],
            "sales": books.sales(deal),
            "cash_prizes": paid,
            "balance": books.sales(deal) - paid,
            "merchandise": 0,
            "cost": cost,
            "profit": books.sales(deal) - paid - cost,
        }
        # The staff's live view of the deal shows the same bank.
        status, live = await server.get(f"/api/deals/{deal}", night.mic_token)
        assert status == 200 and live["receptacle"]["bank"] == {
            "sales": books.sales(deal),
            "cash_prizes": paid,
            "balance": books.sales(deal) - paid,
        }
    assert views["a"]["closed_on"] == "2026-03-31"
    assert views["b"]["seventy_five_percent"]["met"]
    assert {views[d]["closed_on"] for d in ("b", "c1", "c2")} == {"2026-04-01"}

    # A player's flares: the prizes awarded, nothing of the sales.
    status, flares = await server.get("/api/deals", night.player)
    assert status == 200 and [f["deal"] for f in flares["deals"]] == sorted(DEALS)
    for flare in flares["deals"]:
        assert set(flare) == FLARE_KEYS
        assert all(set(line) == FLARE_LINE_KEYS for line in flare["prizes"])
        deal = flare["deal"]
        assert [line["awarded"] for line in flare["prizes"]] == [
            books.awarded[deal][i] for i in range(len(DEALS[deal]["prizes"]))
        ]

    # replay rebuilds the same figures from the log, on the real clock.
    replayed = await real_clock_cli(server, "replay", "--show")
    assert replayed.returncode == 0, replayed.stderr
    rebuilt = json.loads(replayed.stdout)["bell_jars"]
    assert rebuilt["deals"] == deals["deals"]
    assert rebuilt["quarters"] == reports
    assert rebuilt["unknown"] == []

    # Every chain intact, with the server stopped.
    await server.close_clients()
    redis_pid = server.redis_pid
    assert await server.terminate() == 0
    assert await wait_until_dead(redis_pid, 10)
    verified = await real_clock_cli(server, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "BROKEN" not in verified.stdout
    audited = await real_clock_cli(server, "audit", "--no-progress")
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "- Result: **clean**" in audited.stdout
    # The night's export passes the standalone verifier, whose banks are the ledger's
    # (docs/AUDIT.md, "The export and the standalone verifier").
    export = server.workdir / "night.jsonl"
    exported = await real_clock_cli(server, "export", "--out", str(export))
    assert exported.returncode == 0, exported.stderr
    checked = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-I", str(VERIFIER), str(export), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert checked.returncode == 0, checked.stdout
    banks = json.loads(checked.stdout)["totals"]["bell_jar_deals"]
    assert {name.removeprefix("deal:"): d["bank"] for name, d in banks.items()} == {
        d["deal"]: None if d["bank"] is None else d["bank"]["balance"] for d in rebuilt["deals"]
    }
