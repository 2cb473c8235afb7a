"""GC-7Q, the quarterly statement of bell jar operations (9 NYCRR 4624.1), built from the bell
jar projection's quarter figures (``BellJars.quarter``, projections/bell_jars.py).

Header (calendar year, quarter, organization, Games of Chance ID, street address), Section
A (A1 closed deals … A7 ideal net proceeds), Section B (B8 the additional license fee, B9
net profit) and Schedule 1 (the deals sold, one line each, with the totals the form calls
boxes T, Q, R and S). Filed for every calendar quarter of the license period, with zeros
when nothing was sold, within 15 days after the quarter's end (docs/FORMS.md "GC-7Q").

Pure: the figures, the license period and the organization's particulars come in as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Final

from projections.bell_jars import ADDITIONAL_LICENSE_FEE_PERCENT, quarter_name
from services.bell_jars.quarters import quarter_first_day, quarter_of_day
from services.reports.form import Amount, Form, Line, Section, Table, Value

FILING_DAYS: Final = 15
"""The statement is filed within 15 days after the end of each calendar quarter, 9 NYCRR
4624.1 (and the form: "this report must be filed even if no tickets were sold")."""

CODE: Final = "GC-7Q"
TITLE: Final = "Quarterly Statement of Bell Jar Operations"
DUE_RULE: Final = (
    f"within {FILING_DAYS} days after the end of the calendar quarter (9 NYCRR 4624.1); "
    "filed even if no tickets were sold"
)

QUARTER_SPANS: Final[Mapping[int, str]] = {
    1: "January 1 - March 31",
    2: "April 1 - June 30",
    3: "July 1 - September 30",
    4: "October 1 - December 31",
}
"""The quarters as the form names them."""

SECTION_A: Final = (
    ("A1", "Total number of closed deals (Schedule 1, box T)"),
    ("A2", "Ideal handle: total ticket value (Schedule 1, box Q)"),
    ("A3", "Total cash prizes (Schedule 1, box R)"),
    ("A4", "Total value of unsold tickets (Schedule 1, box S)"),
    ("A5", "Cost of deals, coin boards and merchandise boards purchased this quarter"),
    ("A6", "Total of A3, A4 and A5"),
    ("A7", "Ideal net proceeds (A2 minus A6)"),
)
SECTION_B: Final = (
    ("B8", f"Additional license fee: {ADDITIONAL_LICENSE_FEE_PERCENT}% of A7, payable to the"),
    ("B9", "Net profit (A7 minus B8)"),
)


def quarter_last_day(year: int, n: int) -> date:
    """The last calendar day of quarter ``n`` (1-4) of ``year``."""
    following = quarter_first_day(year + 1, 1) if n == 4 else quarter_first_day(year, n + 1)
    return following - timedelta(days=1)


def due_date(year: int, n: int) -> date:
    """The GC-7Q's deadline: :data:`FILING_DAYS` days after the last day of the quarter,
    4624.1 (calendar days; a deadline on a weekend is not moved: the earlier date is never
    late)."""
    return quarter_last_day(year, n) + timedelta(days=FILING_DAYS)


def quarters_of_period(period_start: date, period_end: date) -> list[tuple[int, int]]:
    """Every calendar quarter that holds a day of the license period, in order: a GC-7Q is
    filed for each, whether or not a deal was sold in it (4624.1 and the form). Empty when
    the period ends before it starts."""
    out: list[tuple[int, int]] = []
    if period_end < period_start:
        return out
    year, n = quarter_of_day(period_start)
    last = quarter_of_day(period_end)
    while (year, n) <= last:
        out.append((year, n))
        year, n = (year + 1, 1) if n == 4 else (year, n + 1)
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class StatementDue:
    """One GC-7Q the organization owes: the quarter (``YYYY-Qn``), its year and number, and
    the filing deadline."""

    quarter: str
    year: int
    n: int
    due: date


def statements_due(period_start: date, period_end: date) -> list[StatementDue]:
    """Every GC-7Q of the license period, one per calendar quarter holding a day of it
    (:func:`quarters_of_period`), with its deadline (:func:`due_date`)."""
    return [
        StatementDue(quarter=quarter_name(year, n), year=year, n=n, due=due_date(year, n))
        for year, n in quarters_of_period(period_start, period_end)
    ]


def _schedule(figures: Mapping[str, Any]) -> Table:
    """Schedule 1, Bell Jar Deals Sold: one line per deal closed in the quarter, and the
    totals: box T (deals), Q (ideal handle), R (cash prizes), S (value of unsold tickets)."""
    lines: list[Mapping[str, Any]] = figures["schedule_1"]
    rows: list[tuple[Value, ...]] = []
    for x in lines:
        deal = x["deal"] if x["lead"] is None else f"{x['deal']} (with {x['lead']})"
        rows.append(
            (
                deal,
                x["serial_number"],
                x["form_number"],
                x["closed_on"],
                x["ticket_count"],
                Amount(cents=x["ticket_price"]),
                Amount(cents=x["ideal_handle"]),
                Amount(cents=x["cash_prizes"]),
                x["tickets_unsold"],
                Amount(cents=x["unsold_value"]),
            )
        )
    rows.append(
        (
            f"T = {len(lines)}",
            "",
            "",
            "",
            sum(x["ticket_count"] for x in lines),
            "",
            Amount(cents=sum(x["ideal_handle"] for x in lines)),
            Amount(cents=sum(x["cash_prizes"] for x in lines)),
            sum(x["tickets_unsold"] for x in lines),
            Amount(cents=sum(x["unsold_value"] for x in lines)),
        )
    )
    return Table(
        columns=(
            "Deal",
            "Serial",
            "Form",
            "Closed",
            "Tickets",
            "Price",
            "Q Ideal handle",
            "R Cash prizes",
            "Unsold",
            "S Unsold value",
        ),
        rows=tuple(rows),
    )


def _purchases(figures: Mapping[str, Any]) -> Table:
    """The deals whose invoice falls in the quarter, behind line A5."""
    rows: list[tuple[Value, ...]] = [
        (
            p["deal"],
            p["serial_number"],
            p["supplier"],
            p["invoice_number"],
            p["invoice_date"],
            Amount(cents=p["cost"]),
        )
        for p in figures["purchases"]
    ]
    rows.append(("Total", "", "", "", "", Amount(cents=figures["A5"])))
    return Table(
        columns=("Deal", "Serial", "Supplier", "Invoice", "Invoice date", "Cost"),
        rows=tuple(rows),
    )


def build(
    figures: Mapping[str, Any],
    *,
    organization: str,
    games_of_chance_id: str | None = None,
    address: str | None = None,
    license_number: str | None = None,
) -> Form:
    """The GC-7Q of one quarter from ``figures`` (``BellJars.quarter(year, n)``: its lines
    A1-A7, B8, B9, Schedule 1 and the purchases behind A5), due :func:`due_date`. Every
    figure is the projection's, to the cent; a quarter with no deal has zeros. A Games of
    Chance ID or an address not given is left blank for the member in charge to fill in."""
    year, n = int(figures["quarter"][:4]), int(figures["quarter"][-1])
    header: tuple[tuple[str, str], ...] = (
        ("Calendar year", str(year)),
        ("Quarter", f"{n} ({QUARTER_SPANS[n]})"),
        ("Games of Chance ID", games_of_chance_id or ""),
        ("Street address", address or ""),
        *((("License number", license_number),) if license_number else ()),
        ("Time zone of the quarter", figures["timezone"]),
    )
    section_a = Section(
        title="Section A: Quarterly proceeds",
        lines=tuple(
            Line(number=k, label=label, value=figures[k] if k == "A1" else Amount(cents=figures[k]))
            for k, label in SECTION_A
        ),
        note=(
            "Merchandise prizes awarded from the closed deals (at cost, or fair market value "
            f"when donated): {Amount(cents=figures['merchandise']).text()}; not a cash prize, "
            "so not on A3 (docs/RULES.md, the GC-7Q figures)."
        ),
    )
    section_b = Section(
        title="Section B: Net profit",
        lines=(
            Line(
                number="B8",
                label=SECTION_B[0][1] + " NYS Gaming Commission",
                value=Amount(cents=figures["B8"]),
            ),
            Line(number="B9", label=SECTION_B[1][1], value=Amount(cents=figures["B9"])),
        ),
        note="No fee is owed on a loss (A7 at or below zero); a fraction of a cent is rounded up.",
    )
    schedule = Section(
        title="Schedule 1: Bell jar deals sold (closed this quarter)",
        table=_schedule(figures),
        note=(
            "A deal is reported in the quarter in which it was completely sold or removed from "
            "sale. A combination's tickets sold and unsold are on its lead deal's line."
        ),
    )
    purchases = Section(title="Deals purchased this quarter (line A5)", table=_purchases(figures))
    notes = [
        "Attach: a list of every check written in the quarter, and the three monthly "
        "statements of the special games of chance checking account (4624.1).",
        "Section C (statement of net proceeds) is not generated: the copy of the form the "
        "project holds is cut off there (docs/FORMS.md).",
    ]
    for a in figures["anomalies"]:
        notes.append(f"Anomaly on deal {a['deal']} ({a['code']}): {a['message']}")
    return Form(
        code=CODE,
        title=TITLE,
        organization=organization,
        period=f"{quarter_name(year, n)} ({figures['from']} to {figures['to']})",
        due=due_date(year, n),
        due_rule=DUE_RULE,
        sections=(section_a, section_b, schedule, purchases),
        header=header,
        notes=tuple(notes),
    )
