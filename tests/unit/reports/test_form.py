"""The form model's renderings (services/reports/form.py)."""

from __future__ import annotations

import io
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
