"""The rule checkers are pure (docs/AUDIT.md): no I/O, clock or randomness, directly or
through the project's own modules, by the same walk as the rules' own purity test."""

from __future__ import annotations

import pytest

from tests.unit.test_purity import ROOT
from tests.unit.test_purity import (
    test_a_pure_module_reaches_no_io_clock_or_randomness as reaches_no_io,
)

CHECKERS = ("base", "checking", "rules", "settlements", "awards", "raffles", "deals")
CHECKERS += ("commitments", "sources")


@pytest.mark.parametrize("name", CHECKERS)
def test_a_rule_checker_reaches_no_io_clock_or_randomness(name: str) -> None:
    reaches_no_io(ROOT / "services" / "audit" / f"{name}.py")
