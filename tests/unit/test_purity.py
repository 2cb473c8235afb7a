"""The rules are pure (docs/ARCHITECTURE.md, "Data flow"): the event vocabulary, the game
and table rules, the cage and license rules and the projection folds import no I/O, clock or
randomness, directly or through the project's own modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ("form", "due", "gc7", "gc7b", "gc7r", "catalog")
"""The forms' builders and their catalog (docs/FORMS.md): dates, never the clock."""
PURE = [
    *sorted((ROOT / "events").glob("*.py")),
    *sorted((ROOT / "services" / "games").glob("*.py")),
    ROOT / "services" / "tables" / "rules.py",
    ROOT / "services" / "aggregates.py",
    ROOT / "services" / "cage" / "rules.py",
    ROOT / "services" / "license.py",
    ROOT / "services" / "limits.py",
    ROOT / "projections" / "base.py",
    ROOT / "projections" / "bankroll.py",
    ROOT / "projections" / "control_sheets.py",
    ROOT / "projections" / "raffles.py",
    ROOT / "projections" / "bell_jars.py",
    ROOT / "projections" / "timeline.py",
    ROOT / "services" / "dashboard.py",
    ROOT / "services" / "expenses" / "rules.py",
    ROOT / "projections" / "expenses.py",
    ROOT / "projections" / "cash_control.py",
    *(ROOT / "services" / "reports" / f"{name}.py" for name in REPORTS),
    *(ROOT / "services" / "bell_jars" / f"{name}.py" for name in ("rules", "state", "views")),
    *(
        ROOT / "services" / "raffles" / f"{name}.py"
        for name in (
            "tickets",
            "serials",
            "state",
            "standard",
            "queen_of_hearts",
            "treasure_chest",
            "rules",
            "purchasers",
        )
    ),
]
CALENDAR = {
    ROOT / "services" / "bell_jars" / "quarters.py",
    *(ROOT / "services" / "reports" / f"{name}.py" for name in REPORTS),
}
"""Modules that do calendar arithmetic: they may import ``datetime`` (dates, zones) but
never read the clock (checked below)."""
CLOCK_READS = {"now", "today", "utcnow", "time", "time_ns", "monotonic", "perf_counter"}
FORBIDDEN = {
    "asyncio", "redis", "aiohttp", "structlog", "time", "random", "uuid", "secrets",
    "datetime", "os", "socket", "subprocess", "prometheus_client",
}  # fmt: skip


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def project_module(name: str) -> Path | None:
    path = ROOT.joinpath(*name.split("."))
    if path.with_suffix(".py").exists():
        return path.with_suffix(".py")
    if (path / "__init__.py").exists():
        return path / "__init__.py"
    return None


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_pure_module_reaches_no_io_clock_or_randomness(path: Path) -> None:
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
            assert name.split(".")[0] not in FORBIDDEN, (
                f"{current.relative_to(ROOT)} imports {name}"
            )
            inner = project_module(name)
            if inner is not None:
                todo.append(inner)


@pytest.mark.parametrize("path", sorted(CALENDAR), ids=lambda p: str(p.relative_to(ROOT)))
def test_calendar_arithmetic_never_reads_the_clock(path: Path) -> None:
    """A calendar module is handed its instants: no ``datetime.now()``, ``date.today()``
    or the like anywhere in it."""
    reads = [
        node.attr
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr in CLOCK_READS
    ]
    assert reads == [], f"{path.relative_to(ROOT)} reads the clock: {reads}"
