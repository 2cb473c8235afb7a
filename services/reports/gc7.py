"""The GC-7, Financial Statement of Games of Chance Operations, for one license period.

Pure: built from the projections (the cash control by occasion, the expenses, the
merchandise wheels' control sheets) and the night's configuration, never from the store.
What GML 195-f(1) asks the statement to show: the gross receipts, each item of expense
other than prizes with the name and address of each payee and what was bought, the net
proceeds and the use to which they have been or are to be applied. The parts follow the
form as the predecessor rule 9 NYCRR 5624.21 describes it (Part B expenses by category,
Part C additional license fees, Part E the use of the proceeds); docs/FORMS.md "GC-7".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from projections.cash_control import CashControl
from projections.expenses import period_key
from services.expenses.rules import CATEGORIES
from services.reports.due import GC7_DUE_RULE, gc7_due, local_date, parse_day
from services.reports.form import Amount, Form, Line, Section, Table

CODE: Final = "GC-7"
TITLE: Final = "Financial Statement of Games of Chance Operations"
TO_FILL_IN: Final = "(to fill in)"


class UnknownPeriod(KeyError):
    """No license period of that key was recorded."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Period:
    """A license period: its key, first and last day, and the license it is under."""

    key: str
    start: date
    end: date
    license_number: str


def periods(cash_control: CashControl) -> list[Period]:
    """Every license period the license stream recorded (its dates readable), in key
    order."""
    out = []
    for key, info in sorted(cash_control.periods.items()):
        start, end = parse_day(info["period_start"]), parse_day(info["period_end"])
        if start is not None and end is not None:
            out.append(Period(key=key, start=start, end=end, license_number=info["license_number"]))
    return out


def period(cash_control: CashControl, key: str) -> Period:
    """The license period ``key`` (:class:`UnknownPeriod` when none was recorded)."""
    for p in periods(cash_control):
        if p.key == key:
            return p
    raise UnknownPeriod(key)


def game_name(game: str) -> str:
    """A game's name as a form shows it (``black_jack`` → ``Black jack``)."""
    return game.replace("_", " ").capitalize()


@dataclass(frozen=True, slots=True, kw_only=True)
class GameFigures:
    """One game's figures over a license period (cents)."""

    game: str
    tables: int
    gross_receipts: int
    """Chips wagered at its tables (the handle, less bets taken back)."""
    prizes: int
    """Chips paid back to the winners (stake and winnings)."""

    @property
    def net(self) -> int:
        return self.gross_receipts - self.prizes


def game_figures(cash_control: CashControl, occasions: Sequence[str]) -> list[GameFigures]:
    """Each game's gross receipts and prizes over ``occasions``, summed from the tables'
    figures of each occasion (the bankroll fold, ``projections.cash_control``)."""
    by_game: dict[str, list[int]] = {}
    tables: dict[str, set[str]] = {}
    for occasion in occasions:
        for table, row in cash_control.occasion_bankrolls(occasion).tables.items():
            game = cash_control.games.get(table, "unknown")
            figures = by_game.setdefault(game, [0, 0])
            figures[0] += row["handle"]
            figures[1] += row["paid_out"]
            tables.setdefault(game, set()).add(table)
    return [
        GameFigures(game=g, tables=len(tables[g]), gross_receipts=f[0], prizes=f[1])
        for g, f in sorted(by_game.items())
    ]


def merchandise_awarded(
    sheets: Sequence[Mapping[str, Any]], start: date, end: date, timezone: str
) -> tuple[int, int]:
    """The merchandise awarded at the wheels from ``start`` to ``end`` (the dates in the
    organization's time zone): (purchased, at cost to the licensee; donated, at current
    retail price). A donated prize's value is not deducted (4622.13, our reading for the
    GC-7 as for the GC-7B), so it is shown apart (4620.10(e): the control sheet's values)."""
    purchased = donated = 0
    for sheet in sheets:
        for award in sheet["awarded"]:
            if not start <= local_date(award["at"], timezone) <= end:
                continue
            if award["donated"]:
                donated += award["value"]
            else:
                purchased += award["value"]
    return purchased, donated


def build_gc7(
    key: str,
    *,
    cash_control: CashControl,
    expenses: Sequence[Mapping[str, Any]],
    control_sheets: Sequence[Mapping[str, Any]],
    organization: str,
    timezone: str,
    member_in_charge: str = "",
    use_of_proceeds: str = "",
) -> Form:
    """The GC-7 of the license period ``key`` (``<start>_<end>``): Part A the gross
    receipts and prizes by game, Part B each expense by category with its payee and
    address, Part C the additional license fees (blank: the server does not compute
    them), Part D the net proceeds, Part E their use (``use_of_proceeds``, else blank);
    due :func:`services.reports.due.gc7_due` (4624.1; GML 195-f(1)). ``expenses`` are
    the expense projection's items; only those of this period count."""
    p = period(cash_control, key)
    occasions = cash_control.of_period(key)
    games = game_figures(cash_control, occasions)
    gross = sum(g.gross_receipts for g in games)
    cash_prizes = sum(g.prizes for g in games)
    purchased, donated = merchandise_awarded(control_sheets, p.start, p.end, timezone)
    prizes = cash_prizes + purchased
    gross_profit = gross - prizes
    items = [e for e in expenses if period_key(e["period_start"], e["period_end"]) == key]
    by_category = {c: sum(e["amount"] for e in items if e["category"] == c) for c in CATEGORIES}
    total_expenses = sum(by_category.values())
    part_a = Section(
        title="Part A. Gross receipts and prizes, by game",
        table=Table(
            columns=("Game", "Tables", "Gross receipts", "Prizes paid", "Net"),
            rows=tuple(
                (
                    game_name(g.game),
                    g.tables,
                    Amount(cents=g.gross_receipts),
                    Amount(cents=g.prizes),
                    Amount(cents=g.net),
                )
                for g in games
            ),
        ),
        lines=(
            Line(number="A1", label="Gross receipts, all games", value=Amount(cents=gross)),
            Line(number="A2", label="Prizes paid in chips", value=Amount(cents=cash_prizes)),
            Line(
                number="A3",
                label="Merchandise prizes awarded, at cost",
                value=Amount(cents=purchased),
            ),
            Line(number="A4", label="Total prizes (A2 + A3)", value=Amount(cents=prizes)),
            Line(number="A5", label="Gross profit (A1 - A4)", value=Amount(cents=gross_profit)),
            Line(
                number="A6",
                label="Donated merchandise awarded (not deducted)",
                value=Amount(cents=donated),
            ),
        ),
        note=(
            "Gross receipts are the chips wagered at the tables, prizes the chips paid back "
            "(stake and winnings) and the merchandise awarded. Raffles are reported on the "
            "GC-7R, bell jars on the GC-7Q. Donated merchandise is not deducted (4622.13)."
        ),
    )
    part_b = Section(
        title="Part B. Expenses solely and directly for games of chance",
        lines=(
            *(
                Line(number=f"B{i}", label=label, value=Amount(cents=by_category[c]))
                for i, (c, label) in enumerate(CATEGORIES.items(), start=1)
            ),
            Line(
                number=f"B{len(CATEGORIES) + 1}",
                label="Total expenses",
                value=Amount(cents=total_expenses),
            ),
        ),
        table=Table(
            columns=("No.", "Category", "Payee", "Address", "Description", "For", "Amount"),
            rows=tuple(
                (
                    e["number"],
                    CATEGORIES[e["category"]],
                    e["payee"],
                    e["address"],
                    e["description"],
                    e["occasion"] if e["covers"] == "occasion" else "license period",
                    Amount(cents=e["amount"]),
                )
                for e in items
            ),
        ),
        note="Each payee with its address and what was bought or paid for (GML 195-f(1)).",
    )
    part_c = Section(
        title="Part C. Additional license fees",
        lines=(Line(number="C1", label="Additional license fee due", value=None),),
        note=f"{TO_FILL_IN}: the server does not compute the additional license fee.",
    )
    part_d = Section(
        title="Part D. Net proceeds",
        lines=(
            Line(number="D1", label="Gross profit (A5)", value=Amount(cents=gross_profit)),
            Line(number="D2", label="Total expenses (B6)", value=Amount(cents=total_expenses)),
            Line(
                number="D3",
                label="Net proceeds before additional license fees (D1 - D2)",
                value=Amount(cents=gross_profit - total_expenses),
            ),
        ),
    )
    part_e = Section(
        title="Part E. Use of the net proceeds",
        lines=(
            Line(
                number="E1",
                label="Use to which the proceeds have been or are to be applied",
                value=use_of_proceeds or TO_FILL_IN,
            ),
        ),
    )
    return Form(
        code=CODE,
        title=TITLE,
        organization=organization,
        period=f"License period {p.start.isoformat()} to {p.end.isoformat()}",
        due=gc7_due(p.end),
        due_rule=GC7_DUE_RULE,
        header=(
            ("License number", p.license_number),
            ("Occasions", ", ".join(occasions) or "none"),
            ("Member in charge", member_in_charge or TO_FILL_IN),
        ),
        sections=(part_a, part_b, part_c, part_d, part_e),
        notes=(
            "Subscribed by the member in charge and affirmed as true under the penalties of "
            "perjury (GML 195-f(1)); file the original with the clerk or department, a copy "
            "with the Commission, and keep a copy (4624.1).",
            "Parts as 9 NYCRR 5624.21 (the predecessor of 4624.1) describes the form: match "
            "the lines against the current blank form before filing.",
        ),
    )
