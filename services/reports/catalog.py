"""The catalog of the forms: every form instance that is or will be due, and its builder.

Each form is one :class:`FormEntry`: its name in URLs and on the command line, its code and
title, what one instance covers (an occasion, a license period, a raffle, a quarter),
which instances exist (each with its key and deadline) and how one is built. A further form
plugs in with one entry in :data:`CATALOG`. Pure: the inputs are the projections and the
night's configuration (:class:`ReportInputs`), and the day it is enters as data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from projections.bankroll import Bankrolls
from projections.bell_jars import BellJars
from projections.cash_control import CashControl
from projections.control_sheets import ControlSheets
from projections.expenses import Expenses
from projections.raffles import Raffles
from services.reports import gc7, gc7b, gc7q, gc7r
from services.reports.due import GC7_DUE_RULE, GC7B_DUE_RULE, gc7_due, local_date
from services.reports.form import Form


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportInputs:
    """What every form is built from: the projections and the night's configuration.

    ``raffles`` and ``bell_jars`` are the raffle and bell jar projections, for the forms
    built from them (the GC-7R, the GC-7Q); ``bankrolls`` the bankroll projection the
    GC-7B is reconciled with."""

    organization: str
    timezone: str
    cash_control: CashControl
    bankrolls: Bankrolls
    expenses: Expenses
    control_sheets: ControlSheets
    member_in_charge: str = ""
    use_of_proceeds: str = ""
    raffles: Raffles = field(default_factory=Raffles)
    bell_jars: BellJars = field(default_factory=BellJars)


@dataclass(frozen=True, slots=True, kw_only=True)
class Instance:
    """One form that is or will be due: its key (unique within its form), what it covers
    readably, its deadline and why."""

    key: str
    period: str
    due: date
    due_rule: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FormEntry:
    """One form of the catalog (see the module docstring)."""

    form: str
    """Its name in URLs and on the command line (``gc7``)."""
    code: str
    title: str
    covers: str
    """``occasion``, ``license_period``, ``raffle`` or ``quarter``."""
    instances: Callable[[ReportInputs], Sequence[Instance]]
    build: Callable[[ReportInputs, str], Form]
    """Builds the instance of that key (KeyError when there is none)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DueReport:
    """A catalog line: a form instance with its deadline, and whether it is past it."""

    entry: FormEntry
    instance: Instance
    overdue: bool
    days_left: int

    def view(self) -> dict[str, Any]:
        """As ``GET /api/reports`` lists it (with the paths of its two files)."""
        e, i = self.entry, self.instance
        base = f"/api/reports/{e.form}/{i.key}"
        return {
            "form": e.form,
            "code": e.code,
            "title": e.title,
            "covers": e.covers,
            "key": i.key,
            "period": i.period,
            "due": i.due.isoformat(),
            "due_rule": i.due_rule,
            "overdue": self.overdue,
            "days_left": self.days_left,
            "csv": f"{base}.csv",
            "pdf": f"{base}.pdf",
        }


class UnknownForm(KeyError):
    """No form of that name in the catalog."""


class UnknownReport(KeyError):
    """The form has no instance of that key."""


def _gc7_instances(inputs: ReportInputs) -> list[Instance]:
    return [
        Instance(
            key=p.key,
            period=f"license period {p.start.isoformat()} to {p.end.isoformat()}",
            due=gc7_due(p.end),
            due_rule=GC7_DUE_RULE,
        )
        for p in gc7.periods(inputs.cash_control)
    ]


def _gc7(inputs: ReportInputs, key: str) -> Form:
    return gc7.build_gc7(
        key,
        cash_control=inputs.cash_control,
        expenses=inputs.expenses.items,
        control_sheets=inputs.control_sheets.all_sheets(),
        organization=inputs.organization,
        timezone=inputs.timezone,
        member_in_charge=inputs.member_in_charge,
        use_of_proceeds=inputs.use_of_proceeds,
    )


def _gc7b_instances(inputs: ReportInputs) -> list[Instance]:
    out = []
    for occasion, info in inputs.cash_control.occasions.items():
        day = local_date(info.get("starts_at") or info["started"], inputs.timezone)
        out.append(
            Instance(
                key=occasion,
                period=f"occasion {occasion} ({info['name']}), {day.isoformat()}",
                due=gc7b.due(info, inputs.timezone),
                due_rule=GC7B_DUE_RULE,
            )
        )
    return out


def _gc7b(inputs: ReportInputs, key: str) -> Form:
    return gc7b.build_gc7b(
        key,
        cash_control=inputs.cash_control,
        bankrolls=inputs.bankrolls,
        organization=inputs.organization,
        timezone=inputs.timezone,
    )


GC7 = FormEntry(
    form="gc7",
    code=gc7.CODE,
    title=gc7.TITLE,
    covers="license_period",
    instances=_gc7_instances,
    build=_gc7,
)
GC7B = FormEntry(
    form="gc7b",
    code=gc7b.CODE,
    title=gc7b.TITLE,
    covers="occasion",
    instances=_gc7b_instances,
    build=_gc7b,
)

ROUND_KEY = "-round-"
"""A GC-7R's key: the raffle and its round (``qoh-1-round-3``), one statement each
(docs/RULES.md, GC-7R)."""


def _windows(inputs: ReportInputs) -> list[gc7r.Window]:
    return [(o.get("starts_at"), o.get("ends_at")) for o in inputs.cash_control.occasions.values()]


def _gc7r_instances(inputs: ReportInputs) -> list[Instance]:
    out = []
    windows = _windows(inputs)
    # Read in place, not copied: the dashboard lists what is due on every push.
    for raffle in sorted(inputs.raffles.raffles):
        view = inputs.raffles.raffles[raffle]
        for due in gc7r.statements_due(view, inputs.timezone, windows):
            state = "" if due.concluded else ", not concluded yet"
            out.append(
                Instance(
                    key=f"{due.raffle}{ROUND_KEY}{due.round}",
                    period=f"raffle {due.raffle}, round {due.round}{state}",
                    due=due.due,
                    due_rule=gc7r.DUE_RULE,
                )
            )
    return out


def _gc7r(inputs: ReportInputs, key: str) -> Form:
    raffle, _, number = key.rpartition(ROUND_KEY)
    view = inputs.raffles.view(raffle)
    if view is None or not number.isdigit():
        raise UnknownReport(key)
    return gc7r.build(
        view,
        timezone=inputs.timezone,
        round_number=int(number),
        windows=_windows(inputs),
        organization=inputs.organization,
    )


def _quarters(inputs: ReportInputs) -> list[gc7q.StatementDue]:
    """Every calendar quarter of every license period the license stream recorded."""
    seen: dict[str, gc7q.StatementDue] = {}
    for p in gc7.periods(inputs.cash_control):
        for due in gc7q.statements_due(p.start, p.end):
            seen.setdefault(due.quarter, due)
    return [seen[q] for q in sorted(seen)]


def _gc7q_instances(inputs: ReportInputs) -> list[Instance]:
    return [
        Instance(
            key=due.quarter,
            period=f"calendar quarter {due.n} of {due.year}",
            due=due.due,
            due_rule=gc7q.DUE_RULE,
        )
        for due in _quarters(inputs)
    ]


def _gc7q(inputs: ReportInputs, key: str) -> Form:
    for due in _quarters(inputs):
        if due.quarter == key:
            figures = inputs.bell_jars.quarter(due.year, due.n)
            return gc7q.build(figures, organization=inputs.organization)
    raise UnknownReport(key)


GC7R = FormEntry(
    form="gc7r",
    code=gc7r.CODE,
    title=gc7r.TITLE,
    covers="raffle",
    instances=_gc7r_instances,
    build=_gc7r,
)
GC7Q = FormEntry(
    form="gc7q",
    code=gc7q.CODE,
    title=gc7q.TITLE,
    covers="quarter",
    instances=_gc7q_instances,
    build=_gc7q,
)

CATALOG: tuple[FormEntry, ...] = (GC7, GC7B, GC7R, GC7Q)
"""Every form the server files (one entry each; docs/FORMS.md "What is due")."""


def entry(form: str) -> FormEntry:
    """The catalog's entry named ``form`` (:class:`UnknownForm` otherwise)."""
    for e in CATALOG:
        if e.form == form:
            return e
    raise UnknownForm(form)


def due_reports(inputs: ReportInputs, today: date) -> list[DueReport]:
    """Every form instance that is or will be due, soonest deadline first; one whose
    deadline is before ``today`` (the organization's date) is ``overdue``. Whether it was
    filed the server cannot know: past its deadline it stays flagged."""
    out = [
        DueReport(
            entry=e,
            instance=i,
            overdue=i.due < today,
            days_left=(i.due - today).days,
        )
        for e in CATALOG
        for i in e.instances(inputs)
    ]
    out.sort(key=lambda r: (r.instance.due, r.entry.form, r.instance.key))
    return out


def build(inputs: ReportInputs, form: str, key: str) -> Form:
    """The instance ``key`` of ``form``, filled in (:class:`UnknownForm`,
    :class:`UnknownReport`)."""
    e = entry(form)
    if key not in {i.key for i in e.instances(inputs)}:
        raise UnknownReport(key)
    return e.build(inputs, key)
