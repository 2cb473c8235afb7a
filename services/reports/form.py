"""A regulator's form as data, and its two renderings: CSV for a spreadsheet and PDF to file.

Every form of the GC-7 family (docs/FORMS.md) is built by a pure function from the
projections into a :class:`Form`: a header (who files, what period, when it is due), then
sections of numbered lines and tables. Rendering knows nothing of any one form, so each
form's figures live in one place and a real blank form can be matched line by line."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Final

from fpdf import FPDF


@dataclass(frozen=True, slots=True, kw_only=True)
class Amount:
    """An amount in integer cents, shown as dollars (``1234`` → ``12.34``)."""

    cents: int

    def text(self) -> str:
        sign = "-" if self.cents < 0 else ""
        whole, part = divmod(abs(self.cents), 100)
        return f"{sign}{whole:,}.{part:02d}"

    def plain(self) -> str:
        """Dollars without a thousands separator, for CSV."""
        sign = "-" if self.cents < 0 else ""
        whole, part = divmod(abs(self.cents), 100)
        return f"{sign}{whole}.{part:02d}"


Value = str | int | Amount | None
"""A line's value: text, a count, an amount, or blank."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Line:
    """One numbered line of a form (``A7 Ideal net proceeds``)."""

    number: str
    label: str
    value: Value


@dataclass(frozen=True, slots=True, kw_only=True)
class Table:
    """A schedule: a header row and one row per item (a deal, a table, a payee)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Value, ...], ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    title: str
    lines: tuple[Line, ...] = ()
    table: Table | None = None
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Form:
    """One filled-in form."""

    code: str
    """``GC-7``, ``GC-7B``, ``GC-7R``, ``GC-7Q``."""
    title: str
    organization: str
    period: str
    """What it covers, readably (``Occasion night-1, 2026-12-05``, ``Q4 2026``)."""
    due: date
    """Its filing deadline."""
    due_rule: str
    """Why it is due then, with the cite (``within 7 days after the occasion, 4624.1``)."""
    sections: tuple[Section, ...]
    header: tuple[tuple[str, str], ...] = ()
    """Further header fields (license number, member in charge, …)."""
    notes: tuple[str, ...] = field(default=())
    """Notes printed at the foot (readings the operator must confirm)."""


FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet read a CSV cell as a formula (CSV injection): a text cell that
starts with one of these is written after a ``'``, which the spreadsheet shows as text."""


def _text(text: str) -> str:
    """A text cell for CSV: one that a spreadsheet would run as a formula is quoted with
    ``'`` (an expense's payee or description is typed by a user); a carriage return is
    written as a line break, which the writer quotes (a bare CR it leaves unquoted, and a
    reader would cut the row there)."""
    guarded = "'" + text if text.startswith(FORMULA_STARTS) else text
    return guarded.replace("\r\n", "\n").replace("\r", "\n")


def _cell(value: Value) -> str:
    if value is None:
        return ""
    if isinstance(value, Amount):
        return value.plain()  # a number: "-12.34" stays a number
    if isinstance(value, int):
        return str(value)
    return value


def _shown(value: Value) -> str:
    if isinstance(value, Amount):
        return value.text()
    return _cell(value)


def to_csv(form: Form) -> str:
    """The form as CSV: one row per header field, line and schedule row, each starting with
    what it is (``header``, ``line``, ``columns``, ``row``) and its section's title."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")

    def row(kind: str, section: str, *cells: Value) -> None:
        # Every text cell is guarded, whatever wrote it; amounts and counts are numbers.
        writer.writerow(
            [kind, _text(section), *(_text(c) if isinstance(c, str) else _cell(c) for c in cells)]
        )

    row("header", "", "form", form.code)
    row("header", "", "title", form.title)
    row("header", "", "organization", form.organization)
    row("header", "", "period", form.period)
    row("header", "", "due", form.due.isoformat())
    row("header", "", "due_rule", form.due_rule)
    for name, value in form.header:
        row("header", "", name, value)
    for section in form.sections:
        for line in section.lines:
            row("line", section.title, line.number, line.label, line.value)
        if section.table is not None:
            row("columns", section.title, *section.table.columns)
            for values in section.table.rows:
                row("row", section.title, *values)
    for note in form.notes:
        row("note", "", note)
    return out.getvalue()


_LATIN = str.maketrans({"—": "-", "–": "-", "…": "...", "×": "x", "≥": ">=", "≤": "<="})


def _latin(text: str) -> str:
    """Text the PDF's core fonts can draw (Latin-1): the few typographic marks the forms
    use are written plainly, anything else becomes ``?``."""
    return text.translate(_LATIN).encode("latin-1", "replace").decode("latin-1")


def to_pdf(form: Form) -> bytes:
    """The form as a PDF (A4 portrait; schedules with many columns in smaller type)."""
    pdf = FPDF(format="A4")
    # The same form gives the same bytes: the PDF's creation date is the form's due date,
    # not the clock's (a rendering reads no clock).
    pdf.set_creation_date(datetime.combine(form.due, time(0, 0), tzinfo=UTC))
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    width = pdf.w - pdf.l_margin - pdf.r_margin
    pdf.set_font("Helvetica", "B", 14)
    pdf.multi_cell(width, 7, _latin(f"{form.code}  {form.title}"), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    header = (
        ("Organization", form.organization),
        ("Period", form.period),
        ("Due", f"{form.due.isoformat()} ({form.due_rule})"),
        *form.header,
    )
    for name, value in header:
        pdf.multi_cell(width, 5, _latin(f"{name}: {value}"), new_x="LMARGIN", new_y="NEXT")
    for section in form.sections:
        pdf.ln(3)
        pdf.set_font("Helvetica", "B", 11)
        pdf.multi_cell(width, 6, _latin(section.title), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 10)
        for line in section.lines:
            pdf.cell(14, 5, _latin(line.number))
            pdf.cell(width - 14 - 40, 5, _latin(line.label))
            pdf.cell(40, 5, _latin(_shown(line.value)), align="R", new_x="LMARGIN", new_y="NEXT")
        if section.table is not None:
            _table(pdf, width, section.table)
        if section.note:
            pdf.set_font("Helvetica", "I", 9)
            pdf.multi_cell(width, 4.5, _latin(section.note), new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", "", 10)
    if form.notes:
        pdf.ln(3)
        pdf.set_font("Helvetica", "I", 8)
        for note in form.notes:
            pdf.multi_cell(width, 4, _latin(note), new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def _table(pdf: FPDF, width: float, table: Table) -> None:
    size = 9 if len(table.columns) <= 6 else 7
    pdf.set_font("Helvetica", "", size)
    with pdf.table(width=width, text_align="LEFT", line_height=size * 0.55) as grid:
        head = grid.row()
        for column in table.columns:
            head.cell(_latin(column))
        for values in table.rows:
            row = grid.row()
            for value in values:
                row.cell(_latin(_shown(value)))
    pdf.set_font("Helvetica", "", 10)
