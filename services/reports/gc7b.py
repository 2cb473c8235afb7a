"""The GC-7B, Cash Control Summary for Games of Chance, for one occasion.

The form's field list was not found in any source consulted (docs/FORMS.md "GC-7B"): by its
name and by 4622.13 ("the cash control report form (GC-7B)") it is the occasion's cash
control, so this lays out, per table and for the cage, what the bankroll projection holds
(chips issued and redeemed, the drop, what was paid, the house result) in numbered lines
and one row per table, so that a real blank form can be matched line by line later.
Pure: built from the cash control by occasion (``projections.cash_control``) and the
night's configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

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
    """An occasion's cash control: the cage, every table, and the chips the players came to
    hold over it (all cents; a player's chips bought at an earlier occasion and played at
    this one count negative). It reconciles when ``difference`` is 0: the cage's net cash
    equals the tables' house result plus the chips the players came to hold."""

    issued: int
    redeemed: int
    tables: tuple[TableFigures, ...]
    held_by_players: int

    @property
    def cage_net(self) -> int:
        return self.issued - self.redeemed

    @property
    def house_result(self) -> int:
        return sum(t.house_result for t in self.tables)

    @property
    def difference(self) -> int:
        return self.cage_net - self.house_result - self.held_by_players


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
    """The occasion's cash control from its bankrolls: the cage's chips issued and
    redeemed (its ``organization`` row), each table's drop, paid and rounds, and the sum
    of the players' balances, each summed separately so that the reconciliation checks."""
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
        held_by_players=sum(p["balance"] for p in b.players.values()),
    )


def build_gc7b(
    occasion: str, *, cash_control: CashControl, organization: str, timezone: str
) -> Form:
    """The GC-7B of ``occasion``: Section 1 the cage, Section 2 each table, Section 3 the
    reconciliation (0 when the cage's net cash is the tables' house result plus the chips
    the players still hold); due 7 days after the occasion concluded (:func:`due`)."""
    summary = cash_summary(cash_control, occasion)
    info = cash_control.occasions[occasion]
    start = info.get("starts_at") or info["started"]
    day = local_date(start, timezone)
    key = period_key(info.get("period_start", ""), info.get("period_end", ""))
    cage = Section(
        title="Section 1. The cage",
        lines=(
            Line(number="1", label="Chips issued (sold)", value=Amount(cents=summary.issued)),
            Line(
                number="2",
                label="Chips redeemed (cashed out)",
                value=Amount(cents=summary.redeemed),
            ),
            Line(
                number="3",
                label="Net cash at the cage (1 - 2)",
                value=Amount(cents=summary.cage_net),
            ),
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
            Line(
                number="4",
                label="Drop, all tables",
                value=Amount(cents=sum(t.drop for t in summary.tables)),
            ),
            Line(
                number="5",
                label="Paid, all tables",
                value=Amount(cents=sum(t.paid for t in summary.tables)),
            ),
            Line(
                number="6",
                label="House result, all tables (4 - 5)",
                value=Amount(cents=summary.house_result),
            ),
        ),
        note="Drop: the chips wagered at the table; paid: the chips paid back to winners.",
    )
    reconciliation = Section(
        title="Section 3. Reconciliation",
        lines=(
            Line(
                number="7", label="Net cash at the cage (3)", value=Amount(cents=summary.cage_net)
            ),
            Line(
                number="8",
                label="House result of the tables (6)",
                value=Amount(cents=summary.house_result),
            ),
            Line(
                number="9",
                label="Chips held by players: at the end less at the start",
                value=Amount(cents=summary.held_by_players),
            ),
            Line(
                number="10",
                label="Difference (7 - 8 - 9; 0 when it reconciles)",
                value=Amount(cents=summary.difference),
            ),
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
        sections=(cage, tables, reconciliation),
        notes=(
            "The GC-7B's field list was not found: these lines are laid out from the "
            "bankroll projection, to be matched against the blank form (docs/FORMS.md).",
            "Donated merchandise prizes are not deducted (4622.13); the merchandise wheels' "
            "inventory control sheets need not be filed with this form (4620.10(e)).",
        ),
    )
