"""GC-7R, the raffle financial statement (9 NYCRR 4624.1; GML 195-f(2)), built from the raffle
projection (``projections.raffles``).

The statute asks, for each raffle: the tickets printed, the tickets sold, their price, the
tickets returned to or kept by the organization as unsold, and a description and the fair
market value of each prize actually awarded; within 30 days after the conclusion of the
occasion during which the raffle was conducted (docs/FORMS.md "GC-7R").

One statement covers one **round** of a raffle: the tickets sold for one drawing and what
that drawing awarded. A standard raffle and a 50/50 have one round (every drawing of a
standard raffle draws from the same tickets); each week of a Search for the Queen of Hearts
(4620.23(b)(3), (b)(5): a week's tickets are for that week's drawing only) and each
occasion of a Treasure Chest (4620.24(b)(10): "a new raffle" each occasion) is a round of
its own, so a raffle over many weeks has a statement for each, due 30 days after the
occasion of that round's drawing (docs/RULES.md "Raffles", reading 30).

Pure: the projection's view, the organization's time zone and the occasions' windows come
in as data; no I/O, clock or randomness.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Final
from zoneinfo import ZoneInfo

from services.aggregates import RuleError
from services.bell_jars.quarters import local_date
from services.reports.form import Amount, Form, Line, Section, Table, Value

FILING_DAYS: Final = 30
"""The statement is filed "within thirty days after the conclusion of an occasion during
which a raffle was conducted", 9 NYCRR 4624.1; GML 195-f(2)."""

CODE: Final = "GC-7R"
TITLE: Final = "Raffle Financial Statement"
DUE_RULE: Final = (
    f"within {FILING_DAYS} days after the conclusion of the occasion during which the raffle "
    "was conducted (9 NYCRR 4624.1; GML 195-f(2))"
)

ROUND_NAMES: Final[Mapping[str, str]] = {"queen_of_hearts": "week", "treasure_chest": "occasion"}
"""What a round is called: the week of a Queen of Hearts (4620.23(b)(3)), the occasion of a
Treasure Chest (4620.24(b)(10)); the other kinds have one round, the raffle itself."""

KIND_NAMES: Final[Mapping[str, str]] = {
    "standard": "Raffle (4620.22)",
    "fifty_fifty": "50/50 raffle (4620.22(a)(2))",
    "queen_of_hearts": "Search for the Queen of Hearts (4620.23)",
    "treasure_chest": "Treasure Chest (4620.24)",
}

PRIZE_NAMES: Final[Mapping[str, str]] = {
    "prize": "prize",
    "fifty_fifty": "50/50 prize",
    "consolation": "consolation prize",
    "grand": "grand prize",
    "primary": "primary prize",
    "secondary": "treasure chest",
}
"""How the statement names each kind of prize ``PrizeAwarded`` records (events/raffles.py)."""

Window = tuple[int | None, int | None]
"""An occasion's window, unix ms (``OccasionStarted``'s ``starts_at``, ``ends_at``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StatementDue:
    """One GC-7R a raffle owes: its round, the day the occasion of the round's drawing
    concluded, the filing deadline, and whether the round is over (its figures final)."""

    raffle: str
    round: int
    concluded_on: date
    due: date
    concluded: bool


def due_date(concluded_on: date) -> date:
    """The GC-7R's deadline: :data:`FILING_DAYS` days after the day the occasion concluded,
    4624.1 (calendar days; a deadline on a weekend is not moved: the earlier date is never
    late)."""
    return concluded_on + timedelta(days=FILING_DAYS)


def occasion_concluded_on(drawn_at: int, timezone: str, windows: Iterable[Window] = ()) -> date:
    """The day the occasion of a drawing held at ``drawn_at`` (unix ms) concluded, in the
    organization's ``timezone``: the last day of the occasion window that holds the drawing
    (an occasion may run past midnight: docs/RULES.md "The license and the night", item 4),
    else the drawing's own day (an occasion without a window, or a drawing outside every
    window, as a raffle's may be, 4620.22(b)(5))."""
    zone = ZoneInfo(timezone)
    for starts_at, ends_at in windows:
        if ends_at is None or (starts_at is not None and drawn_at < starts_at):
            continue
        if drawn_at < ends_at:
            return local_date(ends_at - 1, zone)
    return local_date(drawn_at, zone)


def _results(view: Mapping[str, Any], round_: int) -> Mapping[str, Any] | None:
    results: Mapping[str, Mapping[str, Any]] = view["round_results"]
    return results.get(str(round_))


def rounds_drawn(view: Mapping[str, Any]) -> list[int]:
    """The rounds of the raffle in which a drawing was held, in order: each owes a GC-7R."""
    return sorted(
        int(k)
        for k, r in view["round_results"].items()
        if r["drawings"] and r["drawn_at"] is not None
    )


def round_concluded(view: Mapping[str, Any], round_: int) -> bool:
    """Whether a round is over, so its statement's figures are final: the raffle ended; or,
    for a Queen of Hearts, every winner of the week searched (a prize for each,
    4620.23(b)(7)-(8)); for a Treasure Chest, the chest carried over from that occasion
    (4620.24(b)(8)-(10))."""
    if view["ended"]:
        return True
    results = _results(view, round_)
    if results is None or not results["drawings"]:
        return False
    if view["kind"] == "queen_of_hearts":
        awarded = sum(1 for p in view["prizes"] if p["round"] == round_)
        winners: int = results["winners"]
        return awarded >= winners
    if view["kind"] == "treasure_chest":
        return any(c["round"] == round_ for c in view["carry_overs"])
    return False


def statements_due(
    view: Mapping[str, Any], timezone: str, windows: Iterable[Window] = ()
) -> list[StatementDue]:
    """Every GC-7R the raffle owes so far, one per round with a drawing, with its deadline
    (:func:`due_date` of :func:`occasion_concluded_on` the round's last drawing)."""
    spans = list(windows)
    out = []
    for n in rounds_drawn(view):
        results = _results(view, n)
        assert results is not None
        day = occasion_concluded_on(results["drawn_at"], timezone, spans)
        out.append(
            StatementDue(
                raffle=view["raffle"],
                round=n,
                concluded_on=day,
                due=due_date(day),
                concluded=round_concluded(view, n),
            )
        )
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundFigures:
    """A round's figures as the statement shows them (cents; counts of tickets).

    ``brought_forward + sales == prizes_cash + prizes_merchandise + profit_kept +
    carried_forward``: the money of the round reconciles to the cent."""

    tickets_printed: int | None
    tickets_sold: int
    tickets_sold_to_date: int
    tickets_unsold: int | None
    sales: int
    brought_forward: int
    prizes_cash: int
    prizes_merchandise: int
    profit_kept: int
    carried_forward: int
    prizes: tuple[Mapping[str, Any], ...]


def round_figures(view: Mapping[str, Any], round_: int) -> RoundFigures:
    """The figures of one round from the projection's view: the round's tickets and sales
    (``rounds``), the tickets sold in this and every earlier round, the unsold tickets (the
    printed serials not sold by the end of the round, when ``tickets_printed`` is set,
    4620.22(a)(1)(iii)), the prizes the round awarded at their value (merchandise at its fair
    market value, 4620.22(b)(11)), the profit it kept, and the money held for later prizes
    before and after it (the Queen of Hearts pool, the chest, a standard raffle's sales not
    yet allocated)."""
    rounds: Mapping[str, Mapping[str, int]] = view["rounds"]
    results: Mapping[str, Mapping[str, Any]] = view["round_results"]

    def sold(n: int) -> Mapping[str, int]:
        return rounds.get(str(n), {"tickets": 0, "sales": 0})

    def left_over(n: int) -> int:
        """The money of round ``n`` not paid out or kept: what it adds to the pool."""
        row = results.get(str(n), {"prizes_paid": 0, "profit_kept": 0})
        paid: int = row["prizes_paid"] + row["profit_kept"]
        return sold(n)["sales"] - paid

    earlier = [int(k) for k in {*rounds, *results} if int(k) < round_]
    brought = sum(left_over(n) for n in earlier)
    to_date = sum(sold(n)["tickets"] for n in earlier) + sold(round_)["tickets"]
    prizes = tuple(p for p in view["prizes"] if p["round"] == round_)
    cash = sum(p["amount"] for p in prizes if p["cash"])
    merchandise = sum(p["amount"] for p in prizes if not p["cash"])
    row = results.get(str(round_), {"profit_kept": 0})
    printed: int | None = view["tickets_printed"]
    return RoundFigures(
        tickets_printed=printed,
        tickets_sold=sold(round_)["tickets"],
        tickets_sold_to_date=to_date,
        tickets_unsold=None if printed is None else printed - to_date,
        sales=sold(round_)["sales"],
        brought_forward=brought,
        prizes_cash=cash,
        prizes_merchandise=merchandise,
        profit_kept=row["profit_kept"],
        carried_forward=brought + left_over(round_),
        prizes=prizes,
    )


def _prices(view: Mapping[str, Any]) -> tuple[Line, ...]:
    lines = [Line(number="3", label="Price of one ticket", value=Amount(cents=view["price"]))]
    for b in view["bundles"]:
        lines.append(
            Line(
                number="3",
                label=f"Price of a book of {b['tickets']} tickets",
                value=Amount(cents=b["price"]),
            )
        )
    return tuple(lines)


def build(
    view: Mapping[str, Any],
    *,
    timezone: str,
    round_number: int = 1,
    windows: Iterable[Window] = (),
    organization: str | None = None,
    address: str | None = None,
) -> Form:
    """The GC-7R of one round of a raffle (``view``: ``Raffles.view``), due
    :func:`due_date` after the occasion of the round's last drawing concluded
    (:func:`occasion_concluded_on`, in ``timezone`` and the occasions' ``windows``).

    ``organization`` replaces the name the raffle's tickets carry, ``address`` is printed
    when given. A round with no drawing owes no statement yet: ``RuleError`` ``not_drawn``
    (``no_such_round`` for a round the raffle never had)."""
    results = _results(view, round_number)
    if round_number < 1 or (results is None and str(round_number) not in view["rounds"]):
        raise RuleError("no_such_round", f"raffle {view['raffle']} has no round {round_number}")
    if results is None or not results["drawings"] or results["drawn_at"] is None:
        raise RuleError(
            "not_drawn",
            f"round {round_number} of raffle {view['raffle']} has had no drawing: "
            "no statement is due for it yet",
        )
    kind: str = view["kind"]
    concluded_on = occasion_concluded_on(results["drawn_at"], timezone, windows)
    drawn_on = local_date(results["drawn_at"], ZoneInfo(timezone))
    concluded = round_concluded(view, round_number)
    f = round_figures(view, round_number)
    round_name = ROUND_NAMES.get(kind)
    several = round_name is not None
    period = f"Raffle {view['raffle']} ({view['name']})"
    if several:
        period += f", {round_name} {round_number}"
    period += f", drawn {drawn_on.isoformat()}"
    header: list[tuple[str, str]] = [
        ("Raffle", f"{view['raffle']}: {view['name']}"),
        ("Kind", KIND_NAMES.get(kind, kind)),
        ("Games of Chance ID", view["identification_number"] or "(not on the raffle's tickets)"),
        ("Location of the drawing", view["location"] or ""),
    ]
    if address is not None:
        header.append(("Address", address))
    if several:
        header.append(("Round", f"{round_name} {round_number}"))
    header += [
        ("Last drawing of the round", drawn_on.isoformat()),
        ("Occasion concluded", concluded_on.isoformat()),
        ("Status", "concluded" if concluded else "not concluded: the figures may still change"),
    ]
    printed_label = "Tickets printed (serials 1 to this number)"
    tickets = Section(
        title="Tickets",
        lines=(
            Line(number="1", label=printed_label, value=f.tickets_printed),
            Line(number="2", label="Tickets sold for this drawing", value=f.tickets_sold),
            *(
                (Line(number="2a", label="Tickets sold to date", value=f.tickets_sold_to_date),)
                if several
                else ()
            ),
            *_prices(view),
            Line(
                number="4",
                label="Unsold tickets returned to or kept by the organization",
                value=f.tickets_unsold,
            ),
        ),
        note=(
            ""
            if f.tickets_printed is not None
            else "The raffle does not record how many tickets were printed (tickets_printed): "
            "lines 1 and 4 are to be filled in from the printer's invoice."
        ),
    )
    money_lines: list[Line] = [
        Line(number="5", label="Gross receipts of the tickets sold", value=Amount(cents=f.sales))
    ]
    if several:
        money_lines.append(
            Line(
                number="5a",
                label="Brought forward for prizes from earlier rounds",
                value=Amount(cents=f.brought_forward),
            )
        )
    money_lines += [
        Line(number="6", label="Cash prizes awarded", value=Amount(cents=f.prizes_cash)),
        Line(
            number="7",
            label="Merchandise prizes awarded (fair market value)",
            value=Amount(cents=f.prizes_merchandise),
        ),
        Line(
            number="8",
            label="Kept by the organization as profit",
            value=Amount(cents=f.profit_kept),
        ),
        Line(
            number="9",
            label="Held for later prizes (pool, chest, or not yet allocated)",
            value=Amount(cents=f.carried_forward),
        ),
    ]
    money = Section(
        title="Receipts and their use",
        lines=tuple(money_lines),
        note="Line 5" + (" + 5a" if several else "") + " = 6 + 7 + 8 + 9, to the cent.",
    )
    rows: list[tuple[Value, ...]] = [
        (
            p["serial"],
            PRIZE_NAMES.get(p["prize"], p["prize"]),
            p.get("description") or "",
            "cash" if p["cash"] else "merchandise",
            Amount(cents=p["amount"]),
        )
        for p in f.prizes
    ]
    rows.append(("", "Total", "", "", Amount(cents=f.prizes_cash + f.prizes_merchandise)))
    prizes = Section(
        title="Prizes actually awarded",
        table=Table(
            columns=("Ticket", "Prize", "Description", "Paid as", "Fair market value"),
            rows=tuple(rows),
        ),
    )
    notes = [
        "Subscribed by the member in charge and affirmed as true under the penalties of perjury "
        "(GML 195-f(2)).",
    ]
    if kind == "queen_of_hearts":
        notes.append(
            "A consolation prize is paid from the organization's share, so line 8 is negative "
            "while the search goes on (docs/RULES.md, Queen of Hearts reading 22)."
        )
    return Form(
        code=CODE,
        title=TITLE,
        organization=organization or view["organization"] or "",
        period=period,
        due=due_date(concluded_on),
        due_rule=DUE_RULE,
        sections=(tickets, money, prizes),
        header=tuple(header),
        notes=tuple(notes),
    )
