"""The GC-7R and GC-7Q builders are pure (docs/ARCHITECTURE.md, "Data flow"): they reach no
I/O, clock or randomness through any module of the project, and their calendar arithmetic
(``datetime`` dates) never reads the clock (the checks of tests/unit/test_purity.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.unit.test_purity import CLOCK_READS, FORBIDDEN, ROOT, imports, project_module

BUILDERS = [ROOT / "services" / "reports" / f"{name}.py" for name in ("gc7r", "gc7q")]
CALENDAR = {
    *BUILDERS,
    ROOT / "services" / "reports" / "form.py",
    ROOT / "services" / "bell_jars" / "quarters.py",
}
"""The modules a builder reaches that may use ``datetime``'s dates (never its clock)."""


@pytest.mark.parametrize("path", BUILDERS, ids=lambda p: p.name)
def test_a_form_builder_reaches_no_io_clock_or_randomness(path: Path) -> None:
    seen: set[Path] = set()
    todo = [path]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for name in imports(current):
            if current in CALENDAR and name == "datetime":
                continue
            assert name.split(".")[0] not in FORBIDDEN, f"{current.relative_to(ROOT)}: {name}"
            inner = project_module(name)
            if inner is not None:
                todo.append(inner)
    assert ROOT / "services" / "reports" / "form.py" in seen


@pytest.mark.parametrize("path", sorted(CALENDAR), ids=lambda p: p.name)
def test_their_calendar_arithmetic_never_reads_the_clock(path: Path) -> None:
    reads = [
        node.attr
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in CLOCK_READS
    ]
    assert reads == [], f"{path.relative_to(ROOT)} reads the clock: {reads}"
