"""The raffle rules are pure like every game's (DESIGN.md "Rules are pure"): they reach no
I/O, clock or randomness, directly or through the project's own modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_purity import FORBIDDEN, ROOT, imports, project_module

PURE = [
    ROOT / "events" / "raffles.py",
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
        )
    ),
    ROOT / "projections" / "raffles.py",
]


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_raffle_rule_module_reaches_no_io_clock_or_randomness(path: Path) -> None:
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
