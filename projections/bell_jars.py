"""Bell jars: every deal's ledger and the quarter's GC-7Q figures, folded from the org log.

A deal is the stream ``deal:<id>`` (``events.bell_jars``). Per deal (cents): what was
registered (supplier, invoice, serial and form numbers, ticket count and price, cost, the
flare); its ``state`` (``registered``, ``commingled`` into ``lead``, ``in_play``,
``closed`` with ``closed_reason`` ``sold_out`` or ``removed``); the flare with the prizes
awarded per line (count and value); the cash prizes paid and the merchandise awarded (at its
value); the progress to the 75 % rule (4620.19(c)(18)) by count and by value; and, on the
deal that holds the bank (a deal alone, or the lead of a combination, 4620.19(c)(15), (20)),
the bank: tickets of the receptacle, sold, unsold, sales in, cash prizes of every deal of
the combination out, ``balance`` = sales − cash prizes, and ``profit`` = sales − cash
prizes − merchandise − cost of every deal of the combination.

Per calendar quarter of the organization's time zone (:meth:`BellJars.quarter`), the
GC-7Q figures: a deal counts in the quarter its ``DealClosed`` falls in (A1-A4, Schedule 1)
and its cost in the quarter of its ``invoice_date`` (A5); A6 = A3 + A4 + A5, A7 = A2 − A6,
B8 the 5 % additional license fee of a positive A7 rounded up to the cent, B9 = A7 − B8.
The quarters are computed from the deals when asked, so the folded state does not depend on
the time zone and a quarter with no deal has zero figures.

What the events say that the rules forbid (a prize the flare does not hold, a sale whose
amount is not count × price, more tickets sold than the receptacle holds, an event on a
deal never registered) is counted as the events say and listed in ``anomalies``, for the
auditor. A pure fold: the same events give the same figures, live, from a checkpoint or by
``casino-night replay``.
"""

from __future__ import annotations

import copy
import re
from typing import Any
from zoneinfo import ZoneInfo

from services.aggregates import DEAL_PREFIX, deal_stream
from services.bell_jars.limits import DEFAULT_TIMEZONE
from services.bell_jars.quarters import (
    local_date,
    quarter_bounds,
    quarter_first_day,
    quarter_of_date,
)

BELL_JAR_EVENT_TYPES = frozenset(
    {
        "DealRegistered",
        "DealCommingled",
        "DealPutInPlay",
        "TicketsSold",
        "TicketRedeemed",
        "DealClosed",
    }
)
"""The event types of a deal's stream (``events.bell_jars``), the ones this projection folds."""

ADDITIONAL_LICENSE_FEE_PERCENT = 5
"""GC-7Q line B8: the additional license fee, in percent of the quarter's ideal net
proceeds (A7), payable to the Gaming Commission."""

MAX_ANOMALIES = 100
"""Anomalies kept per deal (and for events on unknown deals); later ones are only counted
(``anomalies_dropped``), so a log full of them cannot grow the state without bound."""

SEVENTY_FIVE = (3, 4)
"""The 75 % rule of 4620.19(c)(18) as the exact ratio 3/4 (by count and by value)."""

QUARTER_PATTERN = re.compile(r"^(\d{4})-Q([1-4])$")
"""A quarter as the reports name it: ``YYYY-Qn``, n from 1 to 4."""


def parse_quarter(text: str) -> tuple[int, int] | None:
    """``(year, n)`` of a quarter named ``YYYY-Qn`` (year 1970-9998, n 1-4), else None."""
    m = QUARTER_PATTERN.match(text)
    if m is None:
        return None
    year, n = int(m.group(1)), int(m.group(2))
    if not 1970 <= year <= 9998:
        return None
    return year, n


def quarter_name(year: int, n: int) -> str:
    """The name of quarter ``n`` of ``year``: ``YYYY-Qn``."""
    return f"{year:04d}-Q{n}"


def additional_license_fee(ideal_net: int) -> int:
    """GC-7Q B8: :data:`ADDITIONAL_LICENSE_FEE_PERCENT` of the ideal net proceeds (A7), in
    cents, a fraction of a cent rounded up (the fee is never under the percentage); zero
    when A7 is zero or negative (a loss owes no fee, and is not carried to another
    quarter)."""
    if ideal_net <= 0:
        return 0
    return -(-ideal_net * ADDITIONAL_LICENSE_FEE_PERCENT // 100)


def _new(deal: str, data: dict[str, Any]) -> dict[str, Any]:
    ticket_count = data["ticket_count"]
    return {
        "deal": deal,
        "kind": data["kind"],
        "supplier": data["supplier"],
        "supplier_license": data["supplier_license"],
        "invoice_number": data["invoice_number"],
        "invoice_date": data["invoice_date"],
        "serial_number": data["serial_number"],
        "form_number": data["form_number"],
        "ticket_count": ticket_count,
        "ticket_price": data["ticket_price"],
        "cost": data["cost"],
        "invoice_quarter": quarter_of_date(data["invoice_date"]),
        "registered_at": data["at"],
        "flare": [
            {
                "line": i,
                "value": p["value"],
                "count": p["count"],
                "kind": p["kind"],
                "description": p["description"],
                "value_basis": p["value_basis"],
                "awarded": 0,
                "awarded_value": 0,
            }
            for i, p in enumerate(data["prizes"])
        ],
        "lead": None,
        "selling": False,
        "commingled_at": None,
        "deals": [],
        "receptacle": ticket_count,
        "container": None,
        "column": None,
        "in_play_at": None,
        "closed_reason": None,
        "closed_at": None,
        "unsold_recorded": None,
        "tickets_sold": 0,
        "sales": 0,
        "paid_out": 0,
        "cash_prizes": 0,
        "merchandise": 0,
        "awarded_count": 0,
        "awarded_value": 0,
        "anomalies": [],
        "anomalies_dropped": 0,
    }


def _flag(holder: dict[str, Any], code: str, deal: str, at: int, message: str) -> None:
    """Note an anomaly on ``holder`` (a deal, or the projection's list for unknown deals)."""
    if len(holder["anomalies"]) < MAX_ANOMALIES:
        holder["anomalies"].append({"code": code, "deal": deal, "at": at, "message": message})
    else:
        holder["anomalies_dropped"] += 1


def _needed(awarded: int, total: int) -> int:
    """How much more must be awarded for ``awarded`` to reach 75 % of ``total``."""
    num, den = SEVENTY_FIVE
    return max(0, -(-total * num // den) - awarded)


class BellJars:
    """The bell jar projection (see the module docstring for every figure's meaning).

    ``timezone`` is the IANA name of the organization's time zone, whose calendar quarters
    :meth:`quarter` reports (:data:`DEFAULT_TIMEZONE` by default)."""

    name = "bell_jars"
    types = BELL_JAR_EVENT_TYPES
    """Every event type of a deal's stream: the runner hands this projection only those."""

    def __init__(self, timezone: str = DEFAULT_TIMEZONE) -> None:
        self.timezone = timezone
        self.zone = ZoneInfo(timezone)
        self.deals: dict[str, dict[str, Any]] = {}
        self._streams: dict[str, dict[str, Any]] = {}
        """The same records by stream name (``deal:<id>``), for the fold's one lookup."""
        self.unknown: dict[str, Any] = {"anomalies": [], "anomalies_dropped": 0}
        """Anomalies of events on deals never registered."""

    # -- the fold ---------------------------------------------------------------------

    def apply(self, type_: str, stream: str, data: dict[str, Any], ts: int = 0) -> None:
        """Fold one event of a deal's stream (any other stream is skipped). Times are the
        events' own ``at``; ``ts`` is not needed."""
        d = self._streams.get(stream)
        if d is None:
            self._first(type_, stream, data)
        elif type_ == "TicketsSold":
            # The common case, kept inline: a sale that breaks no rule costs a few lookups.
            count = data["count"]
            amount = data["amount"]
            before = d["tickets_sold"]
            d["tickets_sold"] = sold = before + count
            d["sales"] += amount
            if amount != count * d["ticket_price"] or sold > d["receptacle"] or not d["selling"]:
                self._sale_anomalies(d, data, before)
        elif type_ == "TicketRedeemed":
            self._redeemed(d["deal"], d, data)
        elif type_ == "DealPutInPlay":
            self._in_play(d["deal"], d, data)
        elif type_ == "DealCommingled":
            d["lead"] = data["lead"]
            d["commingled_at"] = data["at"]
            d["selling"] = False
        elif type_ == "DealClosed":
            d["closed_reason"] = data["reason"]
            d["closed_at"] = data["at"]
            d["unsold_recorded"] = data["unsold"]
            d["selling"] = False
        elif type_ == "DealRegistered":
            _flag(
                d,
                "registered_twice",
                d["deal"],
                data["at"],
                "a second DealRegistered; the first kept",
            )

    def _first(self, type_: str, stream: str, data: dict[str, Any]) -> None:
        """An event of a stream with no deal yet: its registration, or an anomaly."""
        if not stream.startswith(DEAL_PREFIX):
            return
        deal = stream[len(DEAL_PREFIX) :]
        if type_ != "DealRegistered":
            _flag(
                self.unknown,
                "unknown_deal",
                deal,
                data.get("at", 0),
                f"{type_} on a deal never registered",
            )
            return
        d = self.deals[deal] = self._streams[stream] = _new(deal, data)
        if d["invoice_quarter"] is None:
            _flag(
                d,
                "bad_invoice_date",
                deal,
                data["at"],
                f"invoice date {data['invoice_date']!r} is not YYYY-MM-DD: no quarter"
                " counts its cost",
            )

    def _sale_anomalies(self, d: dict[str, Any], data: dict[str, Any], before: int) -> None:
        """What is wrong with a sale already counted (``before``: the tickets sold before)."""
        deal = d["deal"]
        count = data["count"]
        amount = data["amount"]
        if amount != count * d["ticket_price"]:
            _flag(
                d,
                "sale_amount_mismatch",
                deal,
                data["at"],
                f"{count} tickets recorded for {amount}, not {count * d['ticket_price']}",
            )
        if d["lead"] is not None:
            _flag(
                d,
                "sale_on_commingled_deal",
                deal,
                data["at"],
                f"sales of a commingled deal belong on its lead {d['lead']}",
            )
        elif d["in_play_at"] is None or d["closed_reason"] is not None:
            _flag(d, "sale_not_in_play", deal, data["at"], "tickets sold while not in play")
        if d["tickets_sold"] > d["receptacle"] >= before:
            _flag(
                d,
                "oversold",
                deal,
                data["at"],
                f"{d['tickets_sold']} tickets sold of the {d['receptacle']} the receptacle holds",
            )

    def _redeemed(self, deal: str, d: dict[str, Any], data: dict[str, Any]) -> None:
        value = data["value"]
        line = data["prize"]
        flare = d["flare"]
        if 0 <= line < len(flare):
            f = flare[line]
            f["awarded"] += 1
            f["awarded_value"] += value
            if f["awarded"] > f["count"]:
                _flag(
                    d,
                    "prize_over_flare",
                    deal,
                    data["at"],
                    f"line {line} awarded {f['awarded']} times; the flare holds {f['count']}",
                )
            if value != f["value"] or data["kind"] != f["kind"]:
                _flag(
                    d,
                    "prize_not_as_flare",
                    deal,
                    data["at"],
                    f"line {line} paid {value} ({data['kind']}); the flare says"
                    f" {f['value']} ({f['kind']})",
                )
        else:
            _flag(d, "prize_not_on_flare", deal, data["at"], f"the flare has no line {line}")
        d["awarded_count"] += 1
        d["awarded_value"] += value
        if data["kind"] == "cash":
            d["cash_prizes"] += value
            holder = self.deals.get(d["lead"]) if d["lead"] is not None else d
            (d if holder is None else holder)["paid_out"] += value
        else:
            d["merchandise"] += value

    def _in_play(self, deal: str, d: dict[str, Any], data: dict[str, Any]) -> None:
        deals = [x for x in data["deals"] if x in self.deals] or [deal]
        if deals[0] != deal:  # a member's own record of the combination it joined
            d["in_play_at"] = data["at"]
            d["container"], d["column"] = data["container"], data["column"]
            return
        d["deals"] = deals
        d["receptacle"] = sum(self.deals[x]["ticket_count"] for x in deals)
        d["selling"] = d["closed_reason"] is None and d["lead"] is None
        for x in deals:
            member = self.deals[x]
            member["in_play_at"] = data["at"]
            member["container"], member["column"] = data["container"], data["column"]
            if x != deal:
                if member["lead"] not in (None, deal):
                    _flag(
                        member,
                        "lead_mismatch",
                        x,
                        data["at"],
                        f"commingled into {member['lead']}, put in play by {deal}",
                    )
                member["lead"] = deal
                member["selling"] = False

    # -- views ------------------------------------------------------------------------

    def _members(self, holder: dict[str, Any]) -> list[dict[str, Any]]:
        return [self.deals[x] for x in holder["deals"] if x in self.deals] or [holder]

    def _bank(self, d: dict[str, Any]) -> dict[str, Any] | None:
        """The bank of the receptacle ``d`` holds (None for a member of a combination)."""
        if d["lead"] is not None and d["lead"] in self.deals:
            return None
        members = self._members(d)
        tickets = d["receptacle"]
        sold = d["tickets_sold"]
        cash = sum(m["cash_prizes"] for m in members)
        merchandise = sum(m["merchandise"] for m in members)
        cost = sum(m["cost"] for m in members)
        return {
            "deals": [m["deal"] for m in members],
            "tickets": tickets,
            "sold": sold,
            "unsold": max(0, tickets - sold),
            "sales": d["sales"],
            "cash_prizes": d["paid_out"],
            "balance": d["sales"] - d["paid_out"],
            "merchandise": merchandise,
            "cost": cost,
            "profit": d["sales"] - cash - merchandise - cost,
        }

    def _state(self, d: dict[str, Any]) -> str:
        if d["closed_reason"] is not None:
            return "closed"
        if d["in_play_at"] is not None:
            return "in_play"
        if d["lead"] is not None:
            return "commingled"
        return "registered"

    def _derived_anomalies(self, d: dict[str, Any], bank: dict[str, Any] | None) -> list[Any]:
        """What only the whole combination shows: the unsold tickets its closings recorded
        against the ledger's (the receptacle's tickets less those sold)."""
        if bank is None or d["closed_reason"] is None:
            return []
        members = self._members(d)
        if any(m["closed_reason"] is None for m in members):
            return []
        recorded = {d["unsold_recorded"], sum(m["unsold_recorded"] for m in members)}
        if bank["unsold"] in recorded:
            return []
        message = f"closing recorded {d['unsold_recorded']} unsold; the ledger has {bank['unsold']}"
        return [
            {"code": "unsold_mismatch", "deal": d["deal"], "at": d["closed_at"], "message": message}
        ]

    def view(self, deal: str) -> dict[str, Any] | None:
        """One deal's figures as the reports show them (None for an unknown deal)."""
        d = self.deals.get(deal)
        if d is None:
            return None
        bank = self._bank(d)
        total_count = sum(f["count"] for f in d["flare"])
        total_value = sum(f["count"] * f["value"] for f in d["flare"])
        need_count = _needed(d["awarded_count"], total_count)
        need_value = _needed(d["awarded_value"], total_value)
        closed_on = None if d["closed_at"] is None else local_date(d["closed_at"], self.zone)
        return {
            "deal": deal,
            "state": self._state(d),
            "closed_reason": d["closed_reason"],
            "kind": d["kind"],
            "supplier": d["supplier"],
            "supplier_license": d["supplier_license"],
            "invoice_number": d["invoice_number"],
            "invoice_date": d["invoice_date"],
            "serial_number": d["serial_number"],
            "form_number": d["form_number"],
            "ticket_count": d["ticket_count"],
            "ticket_price": d["ticket_price"],
            "ideal_handle": d["ticket_count"] * d["ticket_price"],
            "cost": d["cost"],
            "registered_at": d["registered_at"],
            "lead": d["lead"] if d["lead"] in self.deals else None,
            "commingled_at": d["commingled_at"],
            "container": d["container"],
            "column": d["column"],
            "in_play_at": d["in_play_at"],
            "closed_at": d["closed_at"],
            "closed_on": None if closed_on is None else closed_on.isoformat(),
            "unsold_recorded": d["unsold_recorded"],
            "flare": [{**f, "left": max(0, f["count"] - f["awarded"])} for f in d["flare"]],
            "prizes": {
                "count": total_count,
                "value": total_value,
                "awarded_count": d["awarded_count"],
                "awarded_value": d["awarded_value"],
            },
            "cash_prizes": d["cash_prizes"],
            "merchandise": d["merchandise"],
            "seventy_five_percent": {
                "met": need_count == 0 and need_value == 0,
                "count_needed": need_count,
                "value_needed": need_value,
            },
            "bank": bank,
            "anomalies": copy.deepcopy(d["anomalies"]) + self._derived_anomalies(d, bank),
            "anomalies_dropped": d["anomalies_dropped"],
        }

    def views(self) -> list[dict[str, Any]]:
        """Every deal's figures, by deal id."""
        return [v for k in sorted(self.deals) if (v := self.view(k)) is not None]

    def unknown_anomalies(self) -> list[dict[str, Any]]:
        """Anomalies of events on deals that were never registered."""
        return copy.deepcopy(self.unknown["anomalies"])

    def _line(self, d: dict[str, Any]) -> dict[str, Any]:
        """A deal's line of Schedule 1: the receptacle's sold and unsold tickets on the deal
        that holds the bank, none on the other deals of a combination."""
        bank = self._bank(d)
        handle = d["ticket_count"] * d["ticket_price"]
        sold = 0 if bank is None else bank["sold"]
        unsold = 0 if bank is None else bank["unsold"]
        unsold_value = unsold * d["ticket_price"]
        assert d["closed_at"] is not None
        return {
            "deal": d["deal"],
            "lead": d["lead"] if bank is None else None,
            "kind": d["kind"],
            "supplier": d["supplier"],
            "invoice_number": d["invoice_number"],
            "serial_number": d["serial_number"],
            "form_number": d["form_number"],
            "closed_on": local_date(d["closed_at"], self.zone).isoformat(),
            "closed_reason": d["closed_reason"],
            "ticket_count": d["ticket_count"],
            "ticket_price": d["ticket_price"],
            "ideal_handle": handle,
            "tickets_sold": sold,
            "tickets_unsold": unsold,
            "unsold_value": unsold_value,
            "cash_prizes": d["cash_prizes"],
            "merchandise": d["merchandise"],
            "cost": d["cost"],
            "ideal_net": handle - d["cash_prizes"] - unsold_value - d["cost"],
        }

    def quarter(self, year: int, n: int) -> dict[str, Any]:
        """The GC-7Q figures of quarter ``n`` (1-4) of ``year`` in the projection's time
        zone: Section A (A1 closed deals, A2 ideal handle, A3 cash prizes, A4 value of
        unsold tickets, all of the deals closed in the quarter; A5 cost of the deals bought
        in the quarter by invoice date; A6 = A3 + A4 + A5; A7 ideal net proceeds = A2 − A6),
        Section B (B8 :func:`additional_license_fee` of A7, B9 net profit = A7 − B8),
        Schedule 1 (one line per closed deal, in order of closing) and the purchases behind
        A5. Zeros for a quarter without any."""
        start, end = quarter_bounds(year, n, self.zone)
        closed = sorted(
            (
                d
                for d in self.deals.values()
                if d["closed_at"] is not None and start <= d["closed_at"] < end
            ),
            key=lambda d: (d["closed_at"], d["deal"]),
        )
        lines = [self._line(d) for d in closed]
        bought = sorted(
            (d for d in self.deals.values() if d["invoice_quarter"] == [year, n]),
            key=lambda d: (d["invoice_date"], d["deal"]),
        )
        a2 = sum(x["ideal_handle"] for x in lines)
        a3 = sum(x["cash_prizes"] for x in lines)
        a4 = sum(x["unsold_value"] for x in lines)
        a5 = sum(d["cost"] for d in bought)
        a6 = a3 + a4 + a5
        a7 = a2 - a6
        b8 = additional_license_fee(a7)
        anomalies = []
        for d in closed:
            v = self.view(d["deal"])
            assert v is not None
            anomalies += v["anomalies"]
        first = quarter_first_day(year, n)
        last = local_date(end - 1, self.zone)
        return {
            "quarter": quarter_name(year, n),
            "timezone": self.timezone,
            "from": first.isoformat(),
            "to": last.isoformat(),
            "A1": len(lines),
            "A2": a2,
            "A3": a3,
            "A4": a4,
            "A5": a5,
            "A6": a6,
            "A7": a7,
            "B8": b8,
            "B9": a7 - b8,
            "merchandise": sum(x["merchandise"] for x in lines),
            "schedule_1": lines,
            "purchases": [
                {
                    "deal": d["deal"],
                    "supplier": d["supplier"],
                    "invoice_number": d["invoice_number"],
                    "invoice_date": d["invoice_date"],
                    "serial_number": d["serial_number"],
                    "cost": d["cost"],
                }
                for d in bought
            ],
            "anomalies": anomalies,
        }

    def quarters(self) -> list[str]:
        """Every quarter in which a deal was bought or closed, in order."""
        seen = {(q[0], q[1]) for d in self.deals.values() if (q := d["invoice_quarter"])}
        for d in self.deals.values():
            if d["closed_at"] is not None:
                day = local_date(d["closed_at"], self.zone)
                seen.add((day.year, (day.month - 1) // 3 + 1))
        return [quarter_name(y, n) for y, n in sorted(seen)]

    def report(self) -> dict[str, Any]:
        """Everything, as ``casino-night replay --show`` prints it: every deal, the
        quarters in which any deal was bought or closed, and the anomalies of unknown
        deals."""
        quarters = {}
        for name in self.quarters():
            parsed = parse_quarter(name)
            assert parsed is not None
            quarters[name] = self.quarter(*parsed)
        return {"deals": self.views(), "quarters": quarters, "unknown": self.unknown_anomalies()}

    # -- checkpoints ------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        return {"deals": copy.deepcopy(self.deals), "unknown": copy.deepcopy(self.unknown)}

    def restore(self, data: dict[str, Any]) -> None:
        self.deals = copy.deepcopy(data["deals"])
        self._streams = {deal_stream(k): d for k, d in self.deals.items()}
        self.unknown = copy.deepcopy(data["unknown"])
