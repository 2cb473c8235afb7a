"""The rules are pure (docs/ARCHITECTURE.md, "Data flow"): the event vocabulary, the game
and table rules, the cage and license rules and the projection folds import no I/O, clock or
randomness, directly or through the project's own modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
            assert name.split(".")[0] not in FORBIDDEN, (
                f"{current.relative_to(ROOT)} imports {name}"
            )
            inner = project_module(name)
            if inner is not None:
                todo.append(inner)
