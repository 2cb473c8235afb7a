"""The GC-7B, Cash Control Summary for Games of Chance, for one occasion.

The form's field list was not found in any source consulted (docs/FORMS.md "GC-7B"): by its
name and by 4622.13 ("the cash control report form (GC-7B)") it is the occasion's cash
control, so this lays out, per table and for the cage, what the bankroll projection holds
(chips issued and redeemed, the drop, what was paid, the house result) in numbered lines
and one row per table, so that a real blank form can be matched line by line later.
Pure: built from the cash control by occasion (``projections.cash_control``), held to the
bankroll projection (``projections.bankroll``, a fold of its own: what ``/api/bankrolls``
shows), and the night's configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from projections.bankroll import Bankrolls
from projections.cash_control import CashControl
from projections.expenses import period_key
from services.reports.due import GC7B_DUE_RULE, gc7b_due, local_date, parse_day
from services.reports.form import Amount, Form, Line, Section, Table
from services.reports.gc7 import game_name
from services.reports.gc7r import occasion_concluded_on

CODE: Final = "GC-7B"
TITLE: Final = "Cash Control Summary for Games of Chance"


class UnknownOccasion(KeyError):
    """No occasion of that id was started."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TableFigures:
    """One table's cash control over one occasion (cents)."""

    table: str
    game: str
    drop: int
    """Chips wagered at the table (bets placed and wagers added, less bets taken back)."""
    paid: int
    """Chips paid back to the winners (stake and winnings)."""
    rounds: int

    @property
    def house_result(self) -> int:
        return self.drop - self.paid


@dataclass(frozen=True, slots=True, kw_only=True)
class CashSummary:
    """An occasion's cash control: the cage and every table (all cents)."""

    issued: int
    redeemed: int
    tables: tuple[TableFigures, ...]

    @property
    def cage_net(self) -> int:
        return self.issued - self.redeemed

    @property
    def drop(self) -> int:
        return sum(t.drop for t in self.tables)

    @property
    def paid(self) -> int:
        return sum(t.paid for t in self.tables)

    @property
    def house_result(self) -> int:
        return sum(t.house_result for t in self.tables)


@dataclass(frozen=True, slots=True, kw_only=True)
class TableToDate:
    """One table over every occasion to date: what the GC-7Bs show summed, and what the
    bankroll projection holds for it (cents)."""

    table: str
    drop_on_forms: int
    paid_on_forms: int
    drop_projected: int
    paid_projected: int

    @property
    def difference(self) -> int:
        """The house result on the forms less the projection's (0 when they agree)."""
        return (self.drop_on_forms - self.paid_on_forms) - (
            self.drop_projected - self.paid_projected
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Reconciliation:
    """The GC-7B's figures held to the bankroll projection (``projections.bankroll``,
    what ``/api/bankrolls`` shows), a fold of its own: for this occasion, its totals of
    the occasion; over every occasion to date, the organization's cage and each table.
    Money that moved outside every occasion (before the log's first ``OccasionStarted``)
    is on no GC-7B but is the projection's: it shows in the to-date differences."""

    occasion_cage_net: int
    """The projection's chips issued less redeemed in this occasion."""
    occasion_house_result: int
    """The projection's house result of this occasion."""
    cage_net_on_forms: int
    """Line 3 of every occasion's GC-7B, summed."""
    cage_net_projected: int
    """The projection's chips issued less redeemed, every occasion and none."""
    tables: tuple[TableToDate, ...]

    @property
    def house_result_on_forms(self) -> int:
        return sum(t.drop_on_forms - t.paid_on_forms for t in self.tables)

    @property
    def house_result_projected(self) -> int:
        return sum(t.drop_projected - t.paid_projected for t in self.tables)


def _amount(number: str, label: str, cents: int) -> Line:
    """A numbered line of an amount in cents."""
    return Line(number=number, label=label, value=Amount(cents=cents))


def concluded_on(info: Mapping[str, Any], timezone: str) -> date:
    """The day an occasion concluded, in the organization's ``timezone``: the last day of
    its window (one that runs past midnight concludes the next day: docs/RULES.md "The
    license and the night", item 4), else the day it began (its ``starts_at``, or when it
    was started): the earliest day it can have concluded, so that its deadline is never
    late. ``info`` is the cash control's record of the occasion."""
    began = info.get("starts_at") or info["started"]
    return occasion_concluded_on(began, timezone, [(info.get("starts_at"), info.get("ends_at"))])


def due(info: Mapping[str, Any], timezone: str) -> date:
    """The occasion's GC-7B deadline (:func:`services.reports.due.gc7b_due` of the day it
    concluded and its license period's end)."""
    return gc7b_due(concluded_on(info, timezone), parse_day(info.get("period_end", "")))


def cash_summary(cash_control: CashControl, occasion: str) -> CashSummary:
    """The occasion's cash control from its bankrolls in the cash control projection: the
    cage's chips issued and redeemed (its ``organization`` row), each table's drop, paid
    and rounds."""
    if occasion not in cash_control.occasions:
        raise UnknownOccasion(occasion)
    b = cash_control.occasion_bankrolls(occasion)
    tables = tuple(
        TableFigures(
            table=table,
            game=cash_control.games.get(table, "unknown"),
            drop=row["handle"],
            paid=row["paid_out"],
            rounds=row["rounds"],
        )
        for table, row in sorted(b.tables.items())
    )
    return CashSummary(
        issued=b.organization["issued"],
        redeemed=b.organization["redeemed"],
        tables=tables,
    )


def reconciliation(
    cash_control: CashControl, bankrolls: Bankrolls, occasion: str
) -> Reconciliation:
    """The occasion's cash control held to the bankroll projection ``bankrolls``: this
    occasion against the projection's totals of it, and every occasion's GC-7B summed
    against the projection's cage and tables (:class:`Reconciliation`)."""
    if occasion not in cash_control.occasions:
        raise UnknownOccasion(occasion)
    zero = dict.fromkeys(("issued", "redeemed", "house_win"), 0)
    own = bankrolls.occasions.get(occasion, zero)
    summaries = [cash_summary(cash_control, o) for o in cash_control.occasions]
    on_forms: dict[str, list[int]] = {}
    for summary in summaries:
        for t in summary.tables:
            row = on_forms.setdefault(t.table, [0, 0])
            row[0] += t.drop
            row[1] += t.paid
    tables = tuple(
        TableToDate(
            table=table,
            drop_on_forms=on_forms.get(table, [0, 0])[0],
            paid_on_forms=on_forms.get(table, [0, 0])[1],
            drop_projected=bankrolls.tables.get(table, {}).get("handle", 0),
            paid_projected=bankrolls.tables.get(table, {}).get("paid_out", 0),
        )
        for table in sorted(on_forms.keys() | bankrolls.tables.keys())
    )
    org = bankrolls.organization
    return Reconciliation(
        occasion_cage_net=own["issued"] - own["redeemed"],
        occasion_house_result=own["house_win"],
        cage_net_on_forms=sum(s.cage_net for s in summaries),
        cage_net_projected=org["issued"] - org["redeemed"],
        tables=tables,
    )


def build_gc7b(
    occasion: str,
    *,
    cash_control: CashControl,
    bankrolls: Bankrolls,
    organization: str,
    timezone: str,
) -> Form:
    """The GC-7B of ``occasion``: Section 1 the cage, Section 2 each table, Sections 3 and
    4 the reconciliation with the bankroll projection ``bankrolls`` (:func:`reconciliation`:
    this occasion, and every occasion to date); due 7 days after the occasion concluded
    (:func:`due`)."""
    summary = cash_summary(cash_control, occasion)
    info = cash_control.occasions[occasion]
    start = info.get("starts_at") or info["started"]
    day = local_date(start, timezone)
    key = period_key(info.get("period_start", ""), info.get("period_end", ""))
    cage = Section(
        title="Section 1. The cage",
        lines=(
            _amount("1", "Chips issued (sold)", summary.issued),
            _amount("2", "Chips redeemed (cashed out)", summary.redeemed),
            _amount("3", "Net cash at the cage (1 - 2)", summary.cage_net),
        ),
    )
    tables = Section(
        title="Section 2. The tables",
        table=Table(
            columns=("Table", "Game", "Rounds", "Drop", "Paid", "House result"),
            rows=tuple(
                (
                    t.table,
                    game_name(t.game),
                    t.rounds,
                    Amount(cents=t.drop),
                    Amount(cents=t.paid),
                    Amount(cents=t.house_result),
                )
                for t in summary.tables
            ),
        ),
        lines=(
            _amount("4", "Drop, all tables", summary.drop),
            _amount("5", "Paid, all tables", summary.paid),
            _amount("6", "House result, all tables (4 - 5)", summary.house_result),
        ),
        note="Drop: the chips wagered at the table; paid: the chips paid back to winners.",
    )
    held = reconciliation(cash_control, bankrolls, occasion)
    this_occasion = Section(
        title="Section 3. Reconciliation with the bankroll projection: this occasion",
        lines=(
            _amount(
                "7", "Net cash at the cage, per the bankroll projection", held.occasion_cage_net
            ),
            _amount(
                "8",
                "Difference at the cage (3 - 7; 0 when it reconciles)",
                summary.cage_net - held.occasion_cage_net,
            ),
            _amount(
                "9",
                "House result of the tables, per the bankroll projection",
                held.occasion_house_result,
            ),
            _amount(
                "10",
                "Difference at the tables (6 - 9; 0 when it reconciles)",
                summary.house_result - held.occasion_house_result,
            ),
        ),
    )
    to_date = Section(
        title="Section 4. Reconciliation with the bankroll projection: every occasion to date",
        table=Table(
            columns=(
                "Table",
                "Drop, GC-7Bs",
                "Drop, projection",
                "Paid, GC-7Bs",
                "Paid, projection",
                "Difference",
            ),
            rows=tuple(
                (
                    t.table,
                    Amount(cents=t.drop_on_forms),
                    Amount(cents=t.drop_projected),
                    Amount(cents=t.paid_on_forms),
                    Amount(cents=t.paid_projected),
                    Amount(cents=t.difference),
                )
                for t in held.tables
            ),
        ),
        lines=(
            _amount(
                "11",
                "Net cash at the cage, line 3 of every occasion's GC-7B",
                held.cage_net_on_forms,
            ),
            _amount(
                "12", "Net cash at the cage, per the bankroll projection", held.cage_net_projected
            ),
            _amount(
                "13",
                "Difference at the cage (11 - 12; 0 when it reconciles)",
                held.cage_net_on_forms - held.cage_net_projected,
            ),
            _amount(
                "14",
                "House result of the tables, line 6 of every occasion's GC-7B",
                held.house_result_on_forms,
            ),
            _amount(
                "15",
                "House result of the tables, per the bankroll projection",
                held.house_result_projected,
            ),
            _amount(
                "16",
                "Difference at the tables (14 - 15; 0 when it reconciles)",
                held.house_result_on_forms - held.house_result_projected,
            ),
        ),
        note=(
            "A difference in lines 13 or 16 is money the bankroll projection holds that no "
            "occasion's GC-7B shows: chips sold or bets made before the log's first "
            "occasion began."
        ),
    )
    return Form(
        code=CODE,
        title=TITLE,
        organization=organization,
        period=f"Occasion {occasion} ({info['name']}), {day.isoformat()}",
        due=due(info, timezone),
        due_rule=GC7B_DUE_RULE,
        header=(
            ("License number", info.get("license_number", "")),
            ("License period", key.replace("_", " to ")),
        ),
        sections=(cage, tables, this_occasion, to_date),
        notes=(
            "The GC-7B's field list was not found: these lines are laid out from the "
            "bankroll projection, to be matched against the blank form (docs/FORMS.md).",
            "Donated merchandise prizes are not deducted (4622.13); the merchandise wheels' "
            "inventory control sheets need not be filed with this form (4620.10(e)).",
        ),
    )
